#pragma once
#include <boost/intrusive/list.hpp>

#include <taco/scheduler.hpp>

namespace taco::schedulers {

/// First come, first served: enough for short tasks, and the cheapest.
class fifo {
public:
    void push(task& t) { q_.push_back(t); }
    task* pop() {
        if (q_.empty()) return nullptr;
        task& t = q_.front();
        q_.pop_front();
        return &t;
    }
    task* front() const { return q_.empty() ? nullptr : const_cast<task*>(&q_.front()); }
    void erase(task& t) { q_.erase(q_.iterator_to(t)); }
    bool empty() const { return q_.empty(); }
    std::size_t size() const { return q_.size(); }

private:
    using hook = boost::intrusive::member_hook<task, boost::intrusive::list_member_hook<>, &task::fifo_hook>;
    boost::intrusive::list<task, hook, boost::intrusive::constant_time_size<true>> q_;
};
static_assert(scheduler<fifo>);

} // namespace taco::schedulers
