#pragma once
#include <taco/schedulers/ordered.hpp>

namespace taco::schedulers {

namespace detail {
struct earlier_deadline {
    bool operator()(const task& a, const task& b) const { return a.sched.deadline < b.sched.deadline; }
};
} // namespace detail

/// Earliest deadline first (CCI paper [35], [34]); tasks without a deadline
/// come last, FCFS among equals.
using edf = detail::ordered<detail::earlier_deadline>;
static_assert(scheduler<edf>);

} // namespace taco::schedulers
