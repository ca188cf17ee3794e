#pragma once
// One policy chosen at start-up: one of the schedulers, dispatched with a
// switch (no virtual call on the per-task path). A run's scheduler when it
// has no tiers, and each tier and the top level of a hierarchy.
#include <variant>

#include <taco/scheduling_policy.hpp>
#include <taco/schedulers/edf.hpp>
#include <taco/schedulers/fifo.hpp>
#include <taco/schedulers/priority.hpp>

namespace taco::schedulers {

class single {
public:
    explicit single(policy p = policy::fifo) { use(p); }
    /// Switch to policy p; only while empty.
    void use(policy p) {
        switch (p) {
        case policy::fifo: s_.emplace<fifo>(); break;
        case policy::priority: s_.emplace<priority>(); break;
        case policy::edf: s_.emplace<edf>(); break;
        }
    }
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
