#pragma once
// The continuation of an invocation with a timeout (CCI paper, section II.A:
// "the caller creates a timeout invocation that will be carried out by the
// runtime environment after a specified time ... either the real
// continuation or the timeout will be processed first"). The result
// addresses a {slot, generation} on the caller's core, never the future
// itself, which may be gone when a late result arrives (call_slots.hpp).
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>

#include <taco/future.hpp>
#include <taco/remote_error.hpp>
#include <taco/runtime/bulk.hpp>
#include <taco/runtime/core.hpp>
#include <taco/detail/carried_result.hpp>
#include <taco/detail/clock_arithmetic.hpp>
#include <taco/detail/core_identity.hpp>
#include <taco/detail/request.hpp>
#include <taco/detail/timer_queue.hpp>

namespace taco::detail {

/// The future of slot {slot, generation} if the result is in time (and
/// cancel its timeout timer), else nullptr: the result is late.
template <class R>
future_state<R>* claim_future(std::uint32_t slot, std::uint32_t generation) {
    auto& rt = runtime();
    auto* s = rt.slots().claim(slot, generation);
    if (!s) {
        rt.count_late_result();
        return nullptr;
    }
    if (s->timer->timer_hook.is_linked()) {
        rt.cancel_timer(*s->timer);
        s->timer->discard();
    } // else it is due and queued: it will find the slot closed and do nothing
    return static_cast<future_state<R>*>(s->future);
}

template <class R>
struct timed_set_message {
    std::uint32_t slot, generation;
    value_or_unit<R> value;
    void operator()() {
        if (auto* f = claim_future<R>(slot, generation)) {
            if constexpr (std::is_void_v<R>) f->set_value(); else f->set_value(value);
        }
    }
};
template <class R>
struct timed_fail_message {
    std::uint32_t slot, generation;
    error_info error;
    void operator()() {
        if (auto* f = claim_future<R>(slot, generation)) f->set_error(error);
    }
};

/// Assigns a carried result (bulk_value's finish), if it is in time.
template <class R>
struct timed_set_finish {
    std::uint32_t slot, generation;
    void operator()(R&& v) const {
        if (auto* f = claim_future<R>(slot, generation)) f->set_value(std::move(v));
    }
};

/// R: the future's value type (carried_result.hpp).
template <class R>
struct timed_future_continuation {
    core_id core;
    std::uint32_t slot, generation;
    template <class... V>
    void deliver(V&&... v) const {
        if constexpr (sizeof...(V) == 1 && travels_carried<R, timed_set_message>())
            send_carried_value<R>(core, v..., timed_set_finish<R>{slot, generation},
                                  [this](const error_info& e) { fail(e); });
        else
            runtime().send<timed_set_message<R>>(core, slot, generation, value_or_unit<R>{std::forward<V>(v)...});
    }
    void fail(const error_info& e) const { runtime().send<timed_fail_message<R>>(core, slot, generation, e); }
};

template <class R>
class timeout_timer final : public timer_task {
public:
    explicit timeout_timer(task_clock::time_point due) : timer_task(due, {}) {}
    std::uint32_t slot = 0, generation = 0;
    void discard() override { delete this; }
    void run() override {
        std::unique_ptr<timeout_timer> self(this);
        if (auto* s = runtime().slots().claim(slot, generation)) static_cast<future_state<R>*>(s->future)->set_timeout();
    }
};

/// A refused invocation with a timeout: close its slot and stop its timer
/// (the timer would otherwise time out a state that may serve another
/// future by then), and disarm the future.
template <class R>
void disarm(const timed_future_continuation<R>& c) noexcept {
    auto& rt = runtime();
    if (auto* s = rt.slots().claim(c.slot, c.generation)) {
        if (s->timer->timer_hook.is_linked()) {
            rt.cancel_timer(*s->timer);
            s->timer->discard();
        }
        static_cast<future_state<R>*>(s->future)->disarm();
    }
}

/// Arm `f`, open its slot and start the timeout timer.
template <class R>
timed_future_continuation<R> arm_with_timeout(future<R>& f, task_clock::duration limit) {
    auto& rt = runtime();
    future_state<R>* state = f.arm();
    auto* timer = new timeout_timer<R>(saturating_add(task_clock::now(), limit));
    const auto [slot, generation] = rt.slots().open(state, timer);
    timer->slot = slot;
    timer->generation = generation;
    rt.add_timer(*timer);
    return {this_core(), slot, generation};
}

} // namespace taco::detail
