#pragma once
// Per-core timers (CCI paper, section II.A: "the caller creates a timeout
// invocation that will be carried out by the runtime environment after a
// specified time"): tasks that wait in a due-time-ordered intrusive set and
// move to the scheduler when due.
#include <chrono>

#include <boost/intrusive/set.hpp>

#include <taco/task.hpp>

namespace taco::detail {

class timer_task : public task {
public:
    task_clock::time_point due;
    boost::intrusive::set_member_hook<> timer_hook;
    /// Free a timer that was cancelled before it ran.
    virtual void discard() = 0;

protected:
    timer_task(task_clock::time_point when, schedule s) : task(task_kind::activity, s), due(when) {}
    ~timer_task() = default;
};

class timer_queue {
public:
    void add(timer_task& t) { q_.insert(t); }
    void cancel(timer_task& t) { q_.erase(q_.iterator_to(t)); }
    bool empty() const { return q_.empty(); }
    std::size_t size() const { return q_.size(); }
    task_clock::time_point next_due() const { return q_.begin()->due; }

    /// Remove and return the first timer due at `now`, or nullptr.
    timer_task* pop_due(task_clock::time_point now) {
        if (q_.empty() || q_.begin()->due > now) return nullptr;
        timer_task& t = *q_.begin();
        q_.erase(q_.begin());
        return &t;
    }

private:
    struct by_due {
        bool operator()(const timer_task& a, const timer_task& b) const { return a.due < b.due; }
    };
    using hook = boost::intrusive::member_hook<timer_task, boost::intrusive::set_member_hook<>, &timer_task::timer_hook>;
    boost::intrusive::multiset<timer_task, hook, boost::intrusive::compare<by_due>,
                               boost::intrusive::constant_time_size<true>>
        q_;
};

} // namespace taco::detail
