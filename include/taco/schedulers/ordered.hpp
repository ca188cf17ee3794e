#pragma once
// Shared shape of the priority and EDF schedulers: an intrusive red-black
// tree ordered by a key. Equal keys stay first come, first served because
// multiset::insert places a new element after its equals (upper bound), as
// std::multiset does; the scheduler tests check it.
#include <boost/intrusive/set.hpp>

#include <taco/scheduler.hpp>

namespace taco::schedulers::detail {

template <class Before>
class ordered {
public:
    void push(task& t) { q_.insert(t); }
    task* pop() {
        if (q_.empty()) return nullptr;
        task& t = *q_.begin();
        q_.erase(q_.begin());
        return &t;
    }
    task* front() const { return q_.empty() ? nullptr : const_cast<task*>(&*q_.begin()); }
    void erase(task& t) { q_.erase(q_.iterator_to(t)); }
    bool empty() const { return q_.empty(); }
    std::size_t size() const { return q_.size(); }

private:
    using compare = Before;
    using hook = boost::intrusive::member_hook<task, boost::intrusive::set_member_hook<>, &task::ordered_hook>;
    boost::intrusive::multiset<task, hook, boost::intrusive::compare<compare>, boost::intrusive::constant_time_size<true>> q_;
};

} // namespace taco::schedulers::detail
