#pragma once
// The invocation path (CCI paper, section III): async binds method and
// arguments into one message (m2f) and sends it to the object's core; a
// continuation carries the result on; sync = async + future + wait.
//
//   taco::async(gp, &T::m, args...);                  // fire and forget
//   taco::async(gp, taco::m2f(&T::m, args...), fut);  // result assigns future<R> fut
//   taco::async(gp, taco::m2f(&T::m, args...), taco::then(other, &U::on_result));
//   auto f = taco::call(gp, &T::m, args...);          // returns future<R>
//   R r = taco::sync(gp, &T::m, args...);             // waits, serving invocations
//
// Continuations always follow an m2f-bound call, so trailing method arguments
// and a continuation can never be confused.
#include <stdexcept>
#include <type_traits>
#include <utility>

#include <taco/continuation.hpp>
#include <taco/coroutine.hpp>
#include <taco/future.hpp>
#include <taco/global_ptr.hpp>
#include <taco/invocation_argument.hpp>
#include <taco/m2f.hpp>
#include <taco/runtime.hpp>
#include <taco/detail/request.hpp>

namespace taco {

namespace detail {

template <class R, class C>
auto make_continuation(C&& c) {
    using CC = std::remove_cvref_t<C>;
    if constexpr (is_continuation_v<CC>) {
        return CC(c);
    } else if constexpr (requires { c.arm().slot; }) { // taco::within(future, limit)
        static_assert(std::is_same_v<typename CC::value_type, R>,
                      "taco::async: the future's value type differs from the method's result type");
        return c.arm();
    } else {
        static_assert(std::is_same_v<typename CC::value_type, R>,
                      "taco::async: the future's value type differs from the method's result type");
        static_assert(!std::is_const_v<std::remove_reference_t<C>>, "taco::async: the future must not be const");
        return future_continuation<R>{c.arm(), &c};
    }
}

template <class T, class Call, class Cont>
void send_request(core_id dest, T* object, const Call& call, const Cont& cont) {
    static_assert(Call::template applies_to<T>,
                  "taco::async: the bound method/function cannot be called with these arguments "
                  "(on this object type); check the argument types against its signature");
    using R = typename Call::template result_type<T>;
    if constexpr (!std::is_void_v<R> && !std::is_same_v<Cont, no_continuation>) check_invocation_argument<R>();
    object_ref<T> target{};
    if constexpr (!std::is_void_v<T>) target.ptr = object;
    current_runtime<T>().template send<request<T, Call, Cont>>(dest, target, call, cont);
}

template <class T, class Call>
using result_of = typename Call::template result_type<T>;

/// An invocation that becomes a task on arrival (CCI paper, section IV.B:
/// "simpler invocations can then invoke longer running actions by
/// enqueueing tasks"). It is taken from the channel in order like any other;
/// the task then runs when the core's policy picks it.
template <class Req>
struct task_request {
    Req req;
    task_spec spec;
    void operator()() {
        auto body = [r = req]() mutable { r(); };
        auto& rt = current_runtime<Req>();
        if (spec.kind == task_kind::coroutine)
            rt.schedule(*new coroutine_task<decltype(body)>(std::move(body), spec.sched, coroutine_stack_size));
        else
            rt.schedule(*new activity_task<decltype(body)>(std::move(body), spec.sched));
    }
};

template <class T, class Call, class Cont>
void send_task_request(core_id dest, T* object, const Call& call, const Cont& cont, task_spec spec) {
    static_assert(Call::template applies_to<T>,
                  "taco::async: the bound method/function cannot be called with these arguments "
                  "(on this object type); check the argument types against its signature");
    if (spec.kind == task_kind::protothread)
        throw std::invalid_argument("taco::async: an invocation runs as an activity or a coroutine; "
                                    "protothreads are started with taco::start");
    object_ref<T> target{};
    if constexpr (!std::is_void_v<T>) target.ptr = object;
    using req = request<T, Call, Cont>;
    current_runtime<T>().template send<task_request<req>>(dest, req{target, call, cont}, spec);
}

} // namespace detail

// ---- on objects (remote method invocations) -------------------------------

/// Fire-and-forget: run `call` on `*target`, on target's core.
template <class T, class F, class... A>
void async(global_ptr<T> target, const bound_call<F, A...>& call) {
    detail::send_request(target.core(), target.address(), call, detail::no_continuation{});
}

/// Run `call` on `*target`; its result (or exception) goes to `cont`: a
/// future<R>& on the calling core, or taco::then(object, &U::method).
template <class T, class F, class... A, continuation C>
void async(global_ptr<T> target, const bound_call<F, A...>& call, C&& cont) {
    using R = detail::result_of<T, bound_call<F, A...>>;
    detail::send_request(target.core(), target.address(), call, detail::make_continuation<R>(cont));
}

/// Marks an invocation urgent (the CCI paper's preemptive invocations, as far
/// as POSIX allows): it runs straight from the channel like any plain
/// invocation, and in addition the receiver is woken if it sleeps and its
/// urgent flag is raised, so long-running code on it that calls
/// taco::urgent_point() runs the invocation there, ahead of queued tasks.
/// Nothing interrupts code that makes no such call: POSIX has no safe way
/// to run an invocation inside an arbitrary running thread. If the channel
/// is full, the message waits in the sender's queue and may miss the flag:
/// it then runs at the receiver's next ordinary scheduling point.
struct urgent_t {};
inline constexpr urgent_t urgent{};

template <class T, class F, class... A>
void async(global_ptr<T> target, const bound_call<F, A...>& call, urgent_t) {
    async(target, call);
    detail::current_runtime<T>().signal_urgent(target.core());
}
template <class T, class F, class... A, continuation C>
void async(global_ptr<T> target, const bound_call<F, A...>& call, C&& cont, urgent_t) {
    async(target, call, std::forward<C>(cont));
    detail::current_runtime<T>().signal_urgent(target.core());
}

/// As above, run on arrival as a task (taco::as_activity(schedule) with a
/// priority or deadline, or taco::as_coroutine() so the method may block).
template <class T, class F, class... A>
void async(global_ptr<T> target, const bound_call<F, A...>& call, task_spec spec) {
    detail::send_task_request(target.core(), target.address(), call, detail::no_continuation{}, spec);
}
template <class T, class F, class... A, continuation C>
void async(global_ptr<T> target, const bound_call<F, A...>& call, C&& cont, task_spec spec) {
    using R = detail::result_of<T, bound_call<F, A...>>;
    if constexpr (!std::is_void_v<R>) detail::check_invocation_argument<R>();
    detail::send_task_request(target.core(), target.address(), call, detail::make_continuation<R>(cont), spec);
}
template <class F, class... A, continuation C>
void async(core_id core, const bound_call<F, A...>& call, C&& cont, task_spec spec) {
    using R = detail::result_of<void, bound_call<F, A...>>;
    if constexpr (!std::is_void_v<R>) detail::check_invocation_argument<R>();
    detail::send_task_request<void>(core, nullptr, call, detail::make_continuation<R>(cont), spec);
}

/// Fire-and-forget shorthand: async(gp, &T::method, args...); also takes a
/// function or trivially copyable callable applied as fn(T&, args...).
template <class T, class M, class... A>
    requires(!is_bound_call_v<std::remove_cvref_t<M>>)
void async(global_ptr<T> target, M method, A&&... args) {
    async(target, m2f(method, std::forward<A>(args)...));
}

/// Start the invocation and return the future of its result.
template <class T, class F, class... A>
auto call(global_ptr<T> target, const bound_call<F, A...>& bound) {
    using R = detail::result_of<T, bound_call<F, A...>>;
    return future<R>(detail::start_tag{}, [&](future<R>& f) { async(target, bound, f); });
}
template <class T, class M, class... A>
    requires(!is_bound_call_v<std::remove_cvref_t<M>>)
auto call(global_ptr<T> target, M method, A&&... args) {
    return call(target, m2f(method, std::forward<A>(args)...));
}

/// Synchronous invocation: waits for the result while this core keeps serving
/// invocations; rethrows the remote exception as taco::remote_error.
template <class T, class F, class... A>
auto sync(global_ptr<T> target, const bound_call<F, A...>& bound) {
    return call(target, bound).get();
}
template <class T, class M, class... A>
    requires(!is_bound_call_v<std::remove_cvref_t<M>>)
auto sync(global_ptr<T> target, M method, A&&... args) {
    return call(target, m2f(method, std::forward<A>(args)...)).get();
}

// ---- on cores (remote procedure calls) -----------------------------------

/// Fire-and-forget: run `call` (a function + bound arguments) on core `core`.
template <class F, class... A>
void async(core_id core, const bound_call<F, A...>& call) {
    detail::send_request<void>(core, nullptr, call, detail::no_continuation{});
}
template <class F, class... A, continuation C>
void async(core_id core, const bound_call<F, A...>& call, C&& cont) {
    using R = detail::result_of<void, bound_call<F, A...>>;
    detail::send_request<void>(core, nullptr, call, detail::make_continuation<R>(cont));
}
template <class F, class... A>
    requires(!is_bound_call_v<std::remove_cvref_t<F>>)
void async(core_id core, F fn, A&&... args) {
    async(core, m2f(fn, std::forward<A>(args)...));
}
template <class F, class... A>
auto call(core_id core, const bound_call<F, A...>& bound) {
    using R = detail::result_of<void, bound_call<F, A...>>;
    return future<R>(detail::start_tag{}, [&](future<R>& f) { async(core, bound, f); });
}
template <class F, class... A>
    requires(!is_bound_call_v<std::remove_cvref_t<F>>)
auto sync(core_id core, F fn, A&&... args) {
    return call(core, m2f(fn, std::forward<A>(args)...)).get();
}

} // namespace taco
