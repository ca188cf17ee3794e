#pragma once
// The invocation API (CCI paper, section III): one family of three entries,
// async (fire and forget, or into a completion), call (returns the future)
// and sync (waits for the result), over every kind of target:
//
//   taco::async(target, callable, args...);                        // fire and forget
//   taco::async(target, taco::m2f(callable, args...), with...);    // + completion and options
//   auto f = taco::call(target, callable, args...);                // future<R>
//   auto f = taco::call(target, taco::m2f(callable, args...), options...);
//   R r = taco::sync(target, callable, args...);                   // waits, serving invocations
//   R r = taco::sync(target, taco::m2f(callable, args...), options...);
//
// target:   a taco::global_ptr<T> (the method runs on the object's core), a
//           core id (a function runs there), or a taco::group<T> (every
//           member; see collective.hpp, where at_each is the paper's name).
// callable: a pointer to member, a function, or a trivially copyable
//           function object; a non-member callable on an object target may
//           take the object first (fn(T&, args...)).
// with...:  a completion and options, in any order (invocation_options.hpp).
//
// Completions and options follow an m2f-bound call only, so that trailing
// method arguments and a completion can never be confused.
#include <concepts>
#include <string>
#include <type_traits>
#include <utility>

#include <taco/channel.hpp>
#include <taco/config.hpp>
#include <taco/continuation.hpp>
#include <taco/future.hpp>
#include <taco/global_ptr.hpp>
#include <taco/invocation_options.hpp>
#include <taco/m2f.hpp>
#include <taco/runtime/bulk.hpp>
#include <taco/runtime/core.hpp>
#include <taco/usage_error.hpp>
#include <taco/detail/argument_check.hpp>
#include <taco/detail/carried_result.hpp>
#include <taco/detail/request.hpp>
#include <taco/detail/stack_address_check.hpp>
#include <taco/detail/task_request.hpp>
#include <taco/detail/timed_continuation.hpp>

namespace taco {

namespace detail {

template <class T, class Call, bool = Call::template applies_to<T>>
struct checked_result {
    using type = void; // not callable: check_applies reports it, once
};
template <class T, class Call>
struct checked_result<T, Call, true> {
    using type = typename Call::template result_type<T>;
};
template <class T, class Call>
using result_of = typename checked_result<T, Call>::type;

/// One static_assert for a call that does not apply (no cascade); returns
/// whether it does.
template <class Call, class T>
constexpr bool check_applies() {
    if constexpr (std::is_void_v<T> && std::is_member_pointer_v<typename Call::callable_type>) {
        static_assert(!std::is_member_pointer_v<typename Call::callable_type>,
                      "taco: a method needs an object: invoke it on a taco::global_ptr to the object, not on a core id");
        return false;
    } else {
        static_assert(Call::template applies_to<T>,
                      "taco: the bound method/function cannot be called with these arguments (on this object "
                      "type); check the argument types against its signature");
        return Call::template applies_to<T>;
    }
}

/// The one completion among the modifiers (there is at most one).
template <class X, class... Rest>
decltype(auto) the_completion(X&& x, Rest&&... rest) {
    if constexpr (is_completion_v<X>) return std::forward<X>(x);
    else return the_completion(std::forward<Rest>(rest)...);
}

/// The continuation that carries a result of type R to the completion.
template <class R, class Mods, class... M>
auto make_continuation(const option_set& o, M&&... m) {
    if constexpr (Mods::completions == 0) {
        static_assert(!Mods::has_timeout,
                      "taco: taco::timeout needs a future to report the timeout to: pass a future variable, "
                      "or use taco::call / taco::sync");
        return no_continuation{};
    } else {
        auto&& c = the_completion(std::forward<M>(m)...);
        using C = bare<decltype(c)>;
        if constexpr (is_future_v<C>) {
            static_assert(std::is_same_v<typename C::value_type, delivered_t<R>>,
                          "taco: the future's value type differs from the method's result type (a "
                          "taco::view<T> result arrives as a std::vector<T>)");
            if constexpr (!std::is_void_v<R>) check_invocation_result<R>();
            if constexpr (Mods::has_timeout) return arm_with_timeout(c, o.limit);
            else return future_continuation<delivered_t<R>>{this_core(), c.arm()};
        } else if constexpr (is_channel_v<C>) {
            static_assert(!Mods::has_timeout,
                          "taco: taco::timeout needs a future to report the timeout to, not a channel");
            static_assert(!std::is_void_v<R>,
                          "taco: a method returning void has no result to write to a channel; use a "
                          "future<void> or taco::then to learn that it ran");
            if constexpr (!std::is_void_v<R>) {
                static_assert(std::is_same_v<typename C::value_type, delivered_t<R>>,
                              "taco: the channel's value type differs from the method's result type (a "
                              "taco::view<T> result arrives as a std::vector<T>)");
                check_invocation_result<R>();
            }
            return channel_continuation<typename C::value_type>{c};
        } else {
            static_assert(!Mods::has_timeout,
                          "taco: taco::timeout needs a future to report the timeout to, not a taco::then "
                          "continuation (wait on a future, then pass the value on)");
            using Then = C;
            using Call = decltype(c.call);
            using Target = decltype(c.target.get());
            using Object = std::remove_pointer_t<Target>;
            if constexpr (std::is_void_v<R>) {
                static_assert(Call::template applies_to<Object>,
                              "taco::then: the continuation cannot be called with its bound arguments "
                              "(the method returns void, so no result is appended)");
            } else {
                check_invocation_result<R>();
                static_assert(decltype(c.call.with_last(std::declval<delivered_t<R>>()))::template applies_to<Object>,
                              "taco::then: the continuation cannot be called with (bound arguments..., result); "
                              "check its parameters against the method's result type");
            }
            return Then(c);
        }
    }
}

template <class X>
void apply_modifier(option_set& o, const X& x) {
    if constexpr (is_option_v<X>) apply_option(o, x);
}

/// Where an invocation goes must exist: always checked, before the future
/// is armed or anything is sent. It costs a compare and a null test: the
/// runtime pointer it loads is the one the send needs anyway.
[[gnu::cold, noreturn]] inline void bad_destination(core_id dest, bool null_object) {
    if (!tls_runtime) outside_a_core();
    if (null_object)
        throw usage_error("taco: an invocation on a null global_ptr (default-constructed, or never assigned "
                          "the result of new_on?)");
    const core_id n = tls_runtime->core_count();
    throw usage_error("taco: an invocation on core " + std::to_string(dest) + ", but this run has " +
                      std::to_string(n) + " cores (0.." + std::to_string(n - 1) + ")");
}
template <class T>
core& checked_runtime(core_id dest, T* object) {
    core* rt = tls_runtime;
    const bool null_object = !std::is_void_v<T> && object == nullptr;
    if (!rt || dest >= rt->core_count() || null_object) [[unlikely]]
        bad_destination(dest, null_object);
    return *rt;
}

template <class T, class Call, class Mods, class... M>
void invoke_checked(core_id dest, T* object, const Call& call, M&&... m) {
    core& rt = checked_runtime(dest, object);
#if TACO_DEBUG_CHECKS
    if (dest != rt.id()) check_no_stack_address(call, rt.id());
#endif
    using R = result_of<T, Call>;
    option_set o;
    (apply_modifier(o, m), ...);
    const auto cont = make_continuation<R, Mods>(o, std::forward<M>(m)...);
    using Cont = std::remove_const_t<decltype(cont)>;
    const disarm_on_throw<Cont> refused(cont); // a carried size refused, a stop: the future must not wait
    using Req = request<T, Call, Cont>;
    object_ref<T> target{};
    if constexpr (!std::is_void_v<T>) target.ptr = object;
    if constexpr (carries_v<Call>) {
        if constexpr (Mods::as_task) send_carried(rt, dest, target, call, cont, run_as_task{o.spec});
        else send_carried(rt, dest, target, call, cont, run_straight{});
    } else if constexpr (Mods::as_task) {
        rt.send<task_request<Req>>(dest, Req{target, call, cont}, o.spec);
    } else {
        rt.send<Req>(dest, target, call, cont);
    }
    if constexpr (Mods::is_urgent) rt.urgent_sent(dest);
}

/// Send one invocation of `call` on `object` (T = void: on core `dest`).
template <class T, class Call, class Mods, class... M>
void invoke_single(core_id dest, T* object, const Call& call, M&&... m) {
    static_assert(Mods::valid());
    if constexpr (check_applies<Call, T>()) invoke_checked<T, Call, Mods>(dest, object, call, std::forward<M>(m)...);
}

/// What kind of target an invocation goes to. Specialised for global
/// pointers and core ids here, for groups in collective.hpp.
template <class X>
struct target_traits {};

template <class T>
struct target_traits<global_ptr<T>> {
    static constexpr bool single = true;
    using object = T;
    template <class Call>
    using result = delivered_t<result_of<T, Call>>;
    template <class Call, class... M>
    static void invoke(global_ptr<T> target, const Call& call, M&&... m) {
        invoke_single<T, Call, modifiers<M...>>(target.core(), target.address(), call, std::forward<M>(m)...);
    }
};

template <std::integral I>
    requires(!std::same_as<I, bool>)
struct target_traits<I> {
    static constexpr bool single = true;
    using object = void;
    template <class Call>
    using result = delivered_t<result_of<void, Call>>;
    template <class Call, class... M>
    static void invoke(I core, const Call& call, M&&... m) {
        invoke_single<void, Call, modifiers<M...>>(core_id(core), nullptr, call, std::forward<M>(m)...);
    }
};

template <class X>
concept invocation_target = requires { typename target_traits<bare<X>>::object; };

template <class Target>
constexpr void check_target() {
    static_assert(invocation_target<Target>,
                  "taco: the target of an invocation is a taco::global_ptr<T>, a core id, or a taco::group<T> "
                  "(include <taco/collective.hpp> for groups)");
}

/// The bound call of async(target, callable, args...) or of async(target, m2f(...), with...).
template <class F, class... Rest>
decltype(auto) bind_call(F&& fn, Rest&&... rest) {
    if constexpr (is_bound_call_v<bare<F>>) {
        return std::forward<F>(fn);
    } else {
        // A channel among them is an argument (continuation passing): as a
        // completion it follows an m2f-bound call, as all completions do.
        static_assert(!((is_modifier_v<Rest> && !is_channel_v<bare<Rest>>) || ...),
                      "taco: a completion or option among the method's arguments: bind the call first, "
                      "taco::async(target, taco::m2f(method, args...), completion, options...)");
        return m2f(fn, std::forward<Rest>(rest)...);
    }
}

/// Whether the callable was bound with m2f (then completions and options follow).
template <class F>
inline constexpr bool is_bound_form = is_bound_call_v<bare<F>>;

} // namespace detail

/// Run the call on the target; its result (or exception) goes to the
/// completion, if one is given (see the top of this file).
template <class Target, class F, class... Rest>
void async(Target target, F&& fn, Rest&&... rest) {
    detail::check_target<Target>();
    if constexpr (detail::invocation_target<Target>) {
        using traits = detail::target_traits<Target>;
        if constexpr (detail::is_bound_form<F>)
            traits::invoke(target, fn, std::forward<Rest>(rest)...);
        else
            traits::invoke(target, detail::bind_call(std::forward<F>(fn), std::forward<Rest>(rest)...));
    }
}

/// Start the call and return the future of its result (a group: of the
/// moment every member has run it).
template <class Target, class F, class... Rest>
[[nodiscard]] auto call(Target target, F&& fn, Rest&&... rest) {
    detail::check_target<Target>();
    using traits = detail::target_traits<Target>;
    decltype(auto) bound = detail::bind_call(std::forward<F>(fn), std::forward<Rest>(rest)...);
    using Call = detail::bare<decltype(bound)>;
    using R = typename traits::template result<Call>;
    return future<R>(detail::start_tag{}, [&](future<R>& f) {
        if constexpr (detail::is_bound_form<F>) {
            static_assert(detail::modifiers<Rest...>::completions == 0,
                          "taco::call returns the future itself; to deliver into your own future or a "
                          "taco::then continuation use taco::async(target, taco::m2f(...), completion)");
            traits::invoke(target, bound, f, std::forward<Rest>(rest)...);
        } else {
            traits::invoke(target, bound, f);
        }
    });
}

namespace detail {
/// f(args...) on `core`: a direct call when that is this core, a sync call
/// otherwise. For libraries' per-core services (MESH's allocator on its home
/// core, the published all-cores group), where skipping the message matters
/// and no ordering with earlier invocations does.
template <class F, class... A>
std::invoke_result_t<F, A...> call_on(core_id core, F f, A... args);
} // namespace detail

/// Run the call and wait for its result while this core keeps serving
/// invocations; rethrows a remote exception as taco::remote_error. (Not
/// [[nodiscard]]: a sync whose value is dropped still waited, as asked.)
template <class Target, class F, class... Rest>
auto sync(Target target, F&& fn, Rest&&... rest) {
    static_assert(!(detail::is_bound_form<F> && detail::modifiers<Rest...>::completions != 0),
                  "taco::sync returns the result itself; it takes options, not a completion");
    detail::require_can_wait();
    return call(target, std::forward<F>(fn), std::forward<Rest>(rest)...).get();
}

template <class F, class... A>
std::invoke_result_t<F, A...> detail::call_on(core_id core, F f, A... args) {
    if (core == this_core()) return f(args...);
    return sync(core, f, args...);
}

} // namespace taco
