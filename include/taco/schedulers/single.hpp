#pragma once
// One policy chosen at start-up, dispatched with a switch (no virtual call
// on the per-task path): each tier and the top level of a hierarchy. (A run
// without tiers holds its policy directly in any.hpp's variant.)
#include <variant>

#include <taco/scheduling_policy.hpp>
#include <taco/schedulers/edf.hpp>
#include <taco/schedulers/fifo.hpp>
#include <taco/schedulers/priority.hpp>

namespace taco::schedulers {

namespace detail {
/// The scheduler of policy p into a variant that holds the three (and here
/// single's and any's variants).
template <class Variant>
void emplace_policy(Variant& v, policy p) {
    switch (p) {
    case policy::fifo: v.template emplace<fifo>(); break;
    case policy::priority: v.template emplace<priority>(); break;
    case policy::edf: v.template emplace<edf>(); break;
    }
}
} // namespace detail

class single {
public:
    explicit single(policy p = policy::fifo) { use(p); }
    /// Switch to policy p; only while empty.
    void use(policy p) { detail::emplace_policy(s_, p); }
    void push(task& t) {
        std::visit([&](auto& s) { s.push(t); }, s_);
    }
    task* pop() {
        return std::visit([](auto& s) { return s.pop(); }, s_);
    }
    task* front() const {
        return std::visit([](const auto& s) { return s.front(); }, s_);
    }
    void erase(task& t) {
        std::visit([&](auto& s) { s.erase(t); }, s_);
    }
    bool empty() const {
        return std::visit([](const auto& s) { return s.empty(); }, s_);
    }
    std::size_t size() const {
        return std::visit([](const auto& s) { return s.size(); }, s_);
    }

private:
    std::variant<fifo, priority, edf> s_;
};
static_assert(scheduler<single>);

} // namespace taco::schedulers
