#pragma once
#include <taco/schedulers/ordered.hpp>

namespace taco::schedulers {

namespace detail {
struct higher_priority {
    bool operator()(const task& a, const task& b) const { return a.sched.priority > b.sched.priority; }
};
} // namespace detail

/// Fixed priority: the highest schedule::priority first, FCFS among equals.
using priority = detail::ordered<detail::higher_priority>;
static_assert(scheduler<priority>);

} // namespace taco::schedulers
