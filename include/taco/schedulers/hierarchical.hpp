#pragma once
// Hierarchical scheduling (CCI paper, section IV.B): schedulers stacked, a
// scheduler whose tasks are schedulers, one policy per level. Each tier is
// a scheduler of one policy that stands in the top level as one task, a
// proxy: the top level picks a tier by its policy, the tier picks the task.
// A task goes to the tier its schedule names (schedule::tier; one beyond
// the last goes to the last).
//
// What the top level sees of a tier, its proxy's schedule:
//   priority  the tier's own, fixed (tier::priority): a priority top level
//             runs the highest tier that has work;
//   deadline  the deadline of the task the tier runs next, kept current as
//             tasks come and go: an EDF top level runs the tier whose next
//             task is due first;
//   order     a tier goes behind the others after each task it gives: a
//             FIFO top level, and tiers of equal priority, take turns.
// Nothing allocates: the tiers and their proxies live in the object, and
// both levels are intrusive containers over the tasks' hooks (a task sits
// in its tier, a proxy in the top level: no hook is used twice).
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include <taco/schedulers/single.hpp>
#include <taco/scheduling_policy.hpp>

namespace taco::schedulers {

namespace detail {
/// A tier as the top level sees it: a task that never runs (the hierarchy
/// hands out the tier's next task in its place).
class tier_proxy final : public task {
public:
    tier_proxy() noexcept : task(task_kind::activity) {}
    void run() override { std::abort(); } // unreachable: hierarchical::pop never returns a proxy
};
} // namespace detail

class hierarchical {
public:
    /// `top` orders the tiers; tiers.tier[i] is tier i's policy and priority.
    hierarchical(policy top, const scheduling_tiers& tiers) : top_(top), by_deadline_(top == policy::edf), count_(tiers.count) {
        if (count_ == 0 || count_ > scheduling_tiers::max)
            throw usage_error("taco::schedulers::hierarchical: give 1 to 4 tiers (no tiers: use the policy alone)");
        for (std::size_t i = 0; i < count_; ++i) {
            tiers_[i].use(tiers.tier[i].kind);
            proxies_[i].sched.priority = tiers.tier[i].priority;
        }
    }
    hierarchical(const hierarchical&) = delete;
    hierarchical& operator=(const hierarchical&) = delete;

    void push(task& t) {
        const std::size_t i = tier_of(t);
        tiers_[i].push(t);
        rekey(i);
        ++size_;
    }
    task* pop() {
        task* proxy = top_.front();
        if (!proxy) return nullptr;
        const std::size_t i = index_of(*proxy);
        task* t = tiers_[i].pop();
        requeue(i);
        --size_;
        return t;
    }
    task* front() const {
        const task* proxy = top_.front();
        return proxy ? tiers_[index_of(*proxy)].front() : nullptr;
    }
    void erase(task& t) {
        const std::size_t i = tier_of(t);
        tiers_[i].erase(t);
        rekey(i);
        --size_;
    }
    bool empty() const noexcept { return size_ == 0; }
    std::size_t size() const noexcept { return size_; }

private:
    std::size_t tier_of(const task& t) const noexcept { return t.sched.tier < count_ ? t.sched.tier : count_ - 1; }
    std::size_t index_of(const task& proxy) const noexcept {
        return std::size_t(static_cast<const detail::tier_proxy*>(&proxy) - proxies_.data());
    }
    /// After a push or an erase in tier i: its proxy keeps its place in the
    /// top level unless its key changed (an EDF top level, a new next task
    /// due at another time), or the tier has just got or lost its work.
    /// Moving it back at every push would let a tier that is fed between
    /// two pops lose its turn for ever under a FIFO top level.
    void rekey(std::size_t i) {
        const task& proxy = proxies_[i];
        const task* next = tiers_[i].front();
        if (proxy.queued() && next && (!by_deadline_ || next->sched.deadline == proxy.sched.deadline)) return;
        requeue(i);
    }
    /// Put tier i's proxy where its next task says, at the back of its
    /// equals, or take it out if the tier is empty. Out and in again: the
    /// top level's containers place an element by its key at insertion.
    void requeue(std::size_t i) {
        task& proxy = proxies_[i];
        if (proxy.queued()) top_.erase(proxy);
        const task* next = tiers_[i].front();
        if (!next) return;
        proxy.sched.deadline = next->sched.deadline;
        top_.push(proxy);
    }

    single top_;
    bool by_deadline_; ///< the top level is EDF: a proxy's key is its tier's next deadline
    std::array<single, scheduling_tiers::max> tiers_;
    std::array<detail::tier_proxy, scheduling_tiers::max> proxies_;
    std::size_t count_;
    std::size_t size_ = 0;
};
static_assert(scheduler<hierarchical>);

} // namespace taco::schedulers
