#pragma once
// Continuations (CCI paper, section II.A, "continuation passing"): passed
// along with an invocation, they are themselves invocations that carry the
// result onwards, to a future on the caller's core or to a method of any
// object.
#include <concepts>
#include <type_traits>

#include <taco/future.hpp>
#include <taco/global_ptr.hpp>
#include <taco/invocation_argument.hpp>
#include <taco/m2f.hpp>
#include <taco/detail/request.hpp>

namespace taco {

namespace detail {

template <class R>
struct future_set_message {
    future<R>* target;
    R value;
    void operator()() { target->set_value(value); }
};
template <>
struct future_set_message<void> {
    future<void>* target;
    void operator()() { target->set_value(); }
};
template <class R>
struct future_fail_message {
    future<R>* target;
    error_info error;
    void operator()() { target->set_error(error); }
};

/// Assigns a future on its core: the invocation's result message.
template <class R>
struct future_continuation {
    core_id core;
    future<R>* target;

    template <class... V>
    void deliver(V&&... v) const {
        current_runtime<R>().template send<future_set_message<R>>(core, target, std::forward<V>(v)...);
    }
    void fail(const error_info& e) const {
        current_runtime<R>().template send<future_fail_message<R>>(core, target, e);
    }
};

/// Invokes `method` on `target` with the result; errors go to the
/// uncaught-error handler of the core where they happened.
template <class U, class M>
struct method_continuation {
    global_ptr<U> target;
    M method;

    template <class... V>
    void deliver(V&&... v) const {
        using call = bound_call<M, std::decay_t<V>...>;
        current_runtime<U>().template send<request<U, call, no_continuation>>(
            target.core(), object_ref<U>{target.address()}, call{method, {{std::forward<V>(v)}...}}, no_continuation{});
    }
    void fail(const error_info& e) const { no_continuation{}.fail(e); }
};

template <class C>
inline constexpr bool is_continuation_v = false;
template <class R>
inline constexpr bool is_continuation_v<future_continuation<R>> = true;
template <class U, class M>
inline constexpr bool is_continuation_v<method_continuation<U, M>> = true;

} // namespace detail

/// A continuation that invokes `method` on `*target` with the result (or with
/// no argument for a void result), on target's core.
template <class U, class M>
    requires std::is_member_function_pointer_v<M>
constexpr detail::method_continuation<U, M> then(global_ptr<U> target, M method) noexcept {
    return {target, method};
}

/// Anything async accepts as its continuation: a future<R>& on the calling
/// core, or a continuation made by taco::then.
template <class C>
concept continuation = detail::is_continuation_v<std::remove_cvref_t<C>> ||
                       requires(const std::remove_cvref_t<C>& c) { c.arm().slot; } || // taco::within
                       requires { typename std::remove_cvref_t<C>::value_type; } &&
                           std::is_same_v<std::remove_cvref_t<C>, future<typename std::remove_cvref_t<C>::value_type>>;

} // namespace taco
