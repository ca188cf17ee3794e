#pragma once
// Continuations (CCI paper, section II.A, "continuation passing"): passed
// along with an invocation, they are themselves invocations that carry the
// result onwards, to a future on the caller's core or to a method (or a
// function) with bound arguments on any core.
//
//   taco::then(gp, &U::on_result)          // gp->on_result(result)
//   taco::then(gp, &U::on_result, a, b)    // gp->on_result(a, b, result)
//   taco::then(core, &on_result, a)        // on_result(a, result) on `core`
//
// A void result calls the continuation with the bound arguments only.
//
// An error continuation (the paper's continuation for the failure case) is
// chained on one: it runs instead when the invocation throws, with its own
// bound arguments and then the failure, as the taco::error_info the
// uncaught-error handler gets (origin core and text: trivially copyable, so
// it travels as a result does):
//
//   taco::then(gp, &U::on_result).on_error(gp2, &V::on_failure, a)
//                                          // gp2->on_failure(a, error)
//   taco::then(gp, &U::on_result).on_error(core, &on_failure)
//
// Without one, a failure goes to the uncaught-error handler of the core
// where it happened, as before. An exception thrown by a continuation
// itself (either kind) goes there too: it is an invocation with no
// continuation of its own.
#include <exception>
#include <type_traits>
#include <utility>

#include <taco/core_id.hpp>
#include <taco/future.hpp>
#include <taco/global_ptr.hpp>
#include <taco/m2f.hpp>
#include <taco/uncaught_error.hpp>
#include <taco/usage_error.hpp>
#include <taco/runtime/message.hpp>
#include <taco/runtime/bulk.hpp>
#include <taco/runtime/core.hpp>
#include <taco/detail/carried_result.hpp>
#include <taco/detail/core_identity.hpp>
#include <taco/detail/wire_call.hpp>
#include <taco/detail/request.hpp>
#include <taco/detail/task_request.hpp>

namespace taco {

namespace detail {

template <class R>
struct future_set_message {
    future_state<R>* target;
    R value;
    void operator()() { target->set_value(value); }
};
template <>
struct future_set_message<void> {
    future_state<void>* target;
    void operator()() { target->set_value(); }
};
template <class R>
struct future_fail_message {
    future_state<R>* target;
    error_info error;
    void operator()() { target->set_error(error); }
};

/// Assigns a carried result (bulk_value's finish).
template <class R>
struct future_set_finish {
    future_state<R>* target;
    void operator()(R&& v) const { target->set_value(std::move(v)); }
};

/// Assigns a future on its core: the invocation's result message, or a
/// carried result (carried_result.hpp). R is the future's value type, what
/// the result is delivered as. (The address of the future's state travels
/// raw: it is only ever used on its own core.)
template <class R>
struct future_continuation {
    core_id core;
    future_state<R>* target;

    // On the future's own core (a call on an object of this core, a
    // collective whose root is here) the future is assigned at once: a
    // message to ourselves would only wait in our own channel for the next
    // poll round. Safe: assigning is what that message would do on this
    // core, and the state is alive (a pending future waits in its
    // destructor before it lets its state go). A string or vector is moved
    // in then, never carried.
    template <class... V>
    void deliver(V&&... v) const {
        if (core == this_core())
            target->set_value(to_delivered<R>(std::forward<V>(v))...);
        else if constexpr (sizeof...(V) == 1 && travels_carried<R, future_set_message>())
            send_carried_value<R>(core, v..., future_set_finish<R>{target}, [this](const error_info& e) { fail(e); });
        else
            runtime().send<future_set_message<R>>(core, target, std::forward<V>(v)...);
    }
    void fail(const error_info& e) const {
        if (core == this_core()) target->set_error(e);
        else runtime().send<future_fail_message<R>>(core, target, e);
    }
};

/// What a refused invocation undoes (the completion's arm), so that its
/// future does not wait for a result that will never come: a guard made
/// right after the continuation, active while the invocation is sent.
template <class Cont>
void disarm(const Cont&) noexcept {}
template <class R>
void disarm(const future_continuation<R>& c) noexcept {
    if (c.core == this_core()) c.target->disarm();
}
template <class Cont>
class disarm_on_throw {
public:
    explicit disarm_on_throw(const Cont& c) noexcept : c_(c) {}
    disarm_on_throw(const disarm_on_throw&) = delete;
    disarm_on_throw& operator=(const disarm_on_throw&) = delete;
    ~disarm_on_throw() {
        if (std::uncaught_exceptions() > unwinding_) disarm(c_);
    }

private:
    const Cont& c_;
    int unwinding_ = std::uncaught_exceptions();
};

/// Invokes `call` (with the result appended to its bound arguments) on
/// `target` (T = void: on core `core`, no object); errors go to the
/// uncaught-error handler of the core where they happened. A result that
/// does not fit the invocation (a string, a vector, a view, which arrives as
/// a vector, or a large plain value) is carried, as arguments are.
template <class T, class Call>
struct then_continuation {
    static_assert(!carries_v<Call>,
                  "taco::then: a continuation's bound arguments travel inside every message that passes it "
                  "on: plain values only, not a std::string, std::vector or taco::view (bind a "
                  "taco::global_ptr to where the data is, or send it in a further invocation)");
    static constexpr bool is_taco_continuation = true;
    core_id core;
    object_ref<T> target;
    Call call;

    /// Call with the bound arguments followed by `v...` (the result; a
    /// gather adds the member's rank before it).
    template <class... V>
    void deliver(const V&... v) const {
        deliver_or_fail(*this, v...);
    }
    void fail(const error_info& e) const { no_continuation{}.fail(e); }

    /// This continuation, and `target->*fn(bound..., error)` on target's
    /// core when the invocation fails (the header says more).
    template <class U, class F, class... B>
    auto on_error(global_ptr<U> target, F fn, B&&... bound) const;
    /// This continuation, and `fn(bound..., error)` on core `core` when the
    /// invocation fails.
    template <class F, class... B>
    auto on_error(core_id core, F fn, B&&... bound) const;

protected:
    /// deliver, whose result too large to carry goes to `failure.fail`.
    template <class Failure, class... V>
    void deliver_or_fail(const Failure& failure, const V&... v) const {
        if constexpr (fits_plainly<delivered_t<V>...>()) {
            send_request(extend(call, v...));
        } else {
            // Pieces first, then the invocation: a size beyond
            // taco::max_carried_bytes is refused before anything is sent.
            try {
                const auto full = extend(call, carry_if_large(to_delivered<delivered_t<V>>(v))...);
                send_carried(runtime(), core, target, full, no_continuation{}, run_straight{});
            } catch (const usage_error&) {
                failure.fail(too_large_result());
            }
        }
    }

private:
    template <class... V>
    static constexpr bool fits_plainly() {
        using full = decltype(extend(std::declval<const Call&>(), std::declval<const V&>()...));
        if constexpr (carries_v<full>) return false;
        else return message_length<request<T, full, no_continuation>> <= message_bytes;
    }
    template <class C>
    void send_request(const C& full) const {
        runtime().send<request<T, C, no_continuation>>(core, target, full, no_continuation{});
    }
    template <class V>
    static decltype(auto) carry_if_large(V&& v) {
        using D = std::remove_cvref_t<V>;
        if constexpr (!is_carried_v<D> && sizeof(D) > sizeof(carried_ref)) return carried_value<D>{v};
        else return std::forward<V>(v);
    }
    template <class C>
    static C extend(const C& c) {
        return c;
    }
    template <class C, class V, class... Vs>
    static auto extend(const C& c, const V& v, const Vs&... vs) {
        return extend(c.with_last(v), vs...);
    }
};

/// A value continuation with an error continuation: the failure goes to
/// `error` as its result would have (so a failure's text too large for a
/// message is carried, as results are).
template <class T, class Call, class E, class ErrorCall>
struct then_or_else : then_continuation<T, Call> {
    then_continuation<E, ErrorCall> error;

    template <class... V>
    void deliver(const V&... v) const {
        this->deliver_or_fail(*this, v...);
    }
    void fail(const error_info& e) const { error.deliver(e); }

    template <class... X>
    void on_error(X&&...) const {
        static_assert(!std::is_same_v<then_or_else, then_or_else>, // false, but only once instantiated
                      "taco::then: this continuation has its error continuation already; one per continuation "
                      "(a handler can pass the failure on)");
    }
};

template <class T, class Call, class E, class ErrorCall>
auto with_error(const then_continuation<T, Call>& value, const then_continuation<E, ErrorCall>& error) {
    constexpr bool callable = decltype(error.call.with_last(std::declval<error_info>()))::template applies_to<E>;
    static_assert(callable,
                  "taco::then(...).on_error: the error continuation cannot be called with (bound arguments..., "
                  "taco::error_info); give it a last parameter const taco::error_info& (or taco::error_info)");
    if constexpr (callable) return then_or_else<T, Call, E, ErrorCall>{value, error};
    else return value; // the static_assert has said it: no cascade of errors from the call's instantiation
}

template <class T, class Call>
template <class U, class F, class... B>
auto then_continuation<T, Call>::on_error(global_ptr<U> target, F fn, B&&... bound) const {
    auto call = m2f(fn, std::forward<B>(bound)...);
    return with_error(*this, then_continuation<U, decltype(call)>{target.core(), {target.address()}, call});
}

template <class T, class Call>
template <class F, class... B>
auto then_continuation<T, Call>::on_error(core_id core, F fn, B&&... bound) const {
    static_assert(!std::is_member_pointer_v<F>,
                  "taco::then(...).on_error: a method needs an object: pass a taco::global_ptr to it, not a core id");
    auto call = m2f(fn, std::forward<B>(bound)...);
    return with_error(*this, then_continuation<void, decltype(call)>{core, {}, call});
}

} // namespace detail

/// A continuation that invokes `method` on `*target`, on target's core, with
/// `bound...` and then the result as arguments.
template <class U, class F, class... B>
auto then(global_ptr<U> target, F fn, B&&... bound) {
    auto call = m2f(fn, std::forward<B>(bound)...);
    return detail::then_continuation<U, decltype(call)>{target.core(), {target.address()}, call};
}
/// A continuation that calls `fn(bound..., result)` on core `core`.
template <class F, class... B>
auto then(core_id core, F fn, B&&... bound) {
    static_assert(!std::is_member_pointer_v<F>,
                  "taco::then: a method needs an object: pass a taco::global_ptr to it, not a core id");
    auto call = m2f(fn, std::forward<B>(bound)...);
    return detail::then_continuation<void, decltype(call)>{core, {}, call};
}

} // namespace taco
