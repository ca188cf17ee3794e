#pragma once
// A sink for a protothread or a coroutine (CCI paper, section III.C): values
// queue in the mailbox, and the task that waits on it is scheduled when one
// arrives, as a future's waiter is. Go's receive from a buffered channel,
// with the buffer unbounded (nothing written is dropped).
//
//   protothread:  TACO_PT_AWAIT(box); v = box.take();
//   coroutine:    v = box.receive();                    // suspends until a value is there
//   main:         v = box.receive();                    // serves invocations meanwhile
//
// One task waits on a mailbox at a time.
#include <cstddef>
#include <deque>
#include <utility>

#include <taco/runtime/core.hpp>
#include <taco/task.hpp>
#include <taco/usage_error.hpp>

namespace taco {

template <class T>
class mailbox {
public:
    using value_type = T;

    mailbox() = default;
    mailbox(const mailbox&) = delete;
    mailbox& operator=(const mailbox&) = delete;

    void accept(T&& v) {
        values_.push_back(std::move(v));
        if (task* w = waiter_) {
            waiter_ = nullptr;
            detail::runtime().make_ready(*w);
        }
    }

    /// A value is there to take (what TACO_PT_AWAIT tests).
    bool ready() const noexcept { return !values_.empty(); }
    std::size_t size() const noexcept { return values_.size(); }

    /// The oldest value; a usage_error when there is none.
    T take() {
        if (values_.empty()) [[unlikely]]
            throw usage_error("taco::mailbox::take: the mailbox is empty; wait first (TACO_PT_AWAIT(box), "
                              "box.receive()) or test box.ready()");
        T v = std::move(values_.front());
        values_.pop_front();
        return v;
    }

    /// Schedule `t` when a value is there (now, if one is): TACO_PT_AWAIT.
    void resume_when_ready(task& t) {
        if (ready()) return detail::runtime().make_ready(t);
        wait_by(t);
    }

    /// Wait for a value and take it: a coroutine suspends, main (or an
    /// invocation run straight) keeps serving invocations; an activity or a
    /// protothread cannot wait (taco::blocking_error says what to do).
    T receive() {
        if (values_.empty()) {
            auto& rt = detail::runtime();
            if (task* t = rt.current_task()) {
                if (t->kind() != task_kind::coroutine) t->block(); // throws: no stack to wait on
                while (values_.empty()) {
                    wait_by(*t);
                    t->block(); // resumed by accept()
                }
            } else {
                rt.wait_until([this] { return !values_.empty(); });
            }
        }
        return take();
    }

private:
    void wait_by(task& t) {
        if (waiter_ && waiter_ != &t) [[unlikely]]
            throw blocking_error("taco::mailbox: two tasks wait on one mailbox; give each its own");
        waiter_ = &t;
    }

    std::deque<T> values_;
    task* waiter_ = nullptr;
};

} // namespace taco
