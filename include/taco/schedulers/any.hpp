#pragma once
// The scheduler of a run, chosen at start-up: one policy (single.hpp), or
// tiers under a top-level policy (hierarchical.hpp). It counts its tasks
// itself, so that the runtime's "anything ready?" test in every round is one
// load, not a dispatch.
#include <variant>

#include <taco/scheduling_policy.hpp>
#include <taco/schedulers/hierarchical.hpp>
#include <taco/schedulers/single.hpp>

namespace taco::schedulers {

class any {
public:
    explicit any(policy p = policy::fifo, const scheduling_tiers& tiers = {}) {
        if (tiers.count == 0) s_.emplace<single>(p);
        else s_.emplace<hierarchical>(p, tiers);
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
    std::variant<single, hierarchical> s_;
    std::size_t size_ = 0;
};
static_assert(scheduler<any>);

} // namespace taco::schedulers
