#pragma once
// The scheduler of a run, chosen at start-up: one policy, or tiers under a
// top-level policy (hierarchical.hpp). One variant over all four, so a run
// without tiers pays one dispatch per task, as before tiers existed (not
// two, through single.hpp's own variant). It counts its tasks itself, so
// that the runtime's "anything ready?" test in every round is one load.
#include <variant>

#include <taco/scheduling_policy.hpp>
#include <taco/schedulers/edf.hpp>
#include <taco/schedulers/fifo.hpp>
#include <taco/schedulers/hierarchical.hpp>
#include <taco/schedulers/priority.hpp>
#include <taco/schedulers/single.hpp>

namespace taco::schedulers {

class any {
public:
    explicit any(policy p = policy::fifo, const scheduling_tiers& tiers = {}) {
        if (tiers.count != 0) s_.emplace<hierarchical>(p, tiers);
        else detail::emplace_policy(s_, p);
    }
    void push(task& t) {
        std::visit([&](auto& s) { s.push(t); }, s_);
        ++size_;
    }
    task* pop() {
        if (size_ == 0) return nullptr;
        --size_;
        return std::visit([](auto& s) { return s.pop(); }, s_);
    }
    bool empty() const noexcept { return size_ == 0; }
    std::size_t size() const noexcept { return size_; }

private:
    std::variant<fifo, priority, edf, hierarchical> s_;
    std::size_t size_ = 0;
};
static_assert(scheduler<any>);

} // namespace taco::schedulers
