#pragma once
// m2f, "method to functor" (CCI paper, section III; TACO [20]): binds a
// pointer-to-member (or a function, or a trivially copyable callable) and its
// argument values into one trivially copyable functor that can travel in a
// message and is applied on the destination object there. Code addresses
// in it travel image-relative (image_ptr.hpp).
#include <cstddef>
#include <functional>
#include <type_traits>
#include <utility>

#include <taco/image_ptr.hpp>
#include <taco/detail/argument_check.hpp>

namespace taco {

namespace detail {

// std::tuple is not trivially copyable (user-provided assignment), so the
// bound arguments live in an aggregate of leaves instead.
template <std::size_t I, class T>
struct arg_leaf {
    [[no_unique_address]] T value; // empty arguments (combiners, tags) take no message space
};
template <class Seq, class... A>
struct arg_pack_impl;
template <std::size_t... I, class... A>
struct arg_pack_impl<std::index_sequence<I...>, A...> : arg_leaf<I, A>... {
    /// f(front..., stored..., back...)
    template <class F, class... Front>
    decltype(auto) apply(F&& f, Front&&... front) {
        return std::invoke(std::forward<F>(f), std::forward<Front>(front)...,
                           static_cast<arg_leaf<I, A>&>(*this).value...);
    }
    /// The pack with `v` appended (a continuation's bound arguments + the result).
    template <class V>
    auto append(const V& v) const {
        return arg_pack_impl<std::index_sequence<I..., sizeof...(A)>, A..., V>{
            {static_cast<const arg_leaf<I, A>&>(*this).value}..., {v}};
    }
};
template <class... A>
using arg_pack = arg_pack_impl<std::index_sequence_for<A...>, A...>;

// Outside bound_call, so that it is looked at only once the call type is complete.
template <class Call, class T>
struct call_result {
    using type = std::decay_t<decltype(std::declval<Call&>().template apply<T>(nullptr))>;
};

} // namespace detail

/// A bound invocation: callable + argument values, applied as
/// `obj->*fn(args...)` for a pointer-to-member, `fn(obj, args...)` for a
/// callable taking the object first, or `fn(args...)` otherwise.
template <class F, class... A>
struct bound_call {
    using callable_type = F;
    detail::portable_callable<F> fn;
    [[no_unique_address]] detail::arg_pack<A...> args; // none bound: no space (8 message bytes less)

    template <class T>
    static constexpr bool applies_to = [] {
        if constexpr (std::is_void_v<T>)
            return std::is_invocable_v<F&, A&...>;
        else if constexpr (std::is_member_pointer_v<F>)
            return std::is_invocable_v<F&, T*, A&...>;
        else
            return std::is_invocable_v<F&, T&, A&...> || std::is_invocable_v<F&, A&...>;
    }();

    /// Apply on `obj` (T = void: a function invocation on a core, no object).
    template <class T>
    decltype(auto) apply([[maybe_unused]] T* obj) {
        if constexpr (std::is_void_v<T>)
            return args.apply(fn.get());
        else if constexpr (std::is_member_pointer_v<F>)
            return args.apply(fn.get(), obj);
        else if constexpr (std::is_invocable_v<F&, T&, A&...>)
            return args.apply(fn.get(), *obj);
        else
            return args.apply(fn.get());
    }

    template <class T>
    using result_type = typename detail::call_result<bound_call, T>::type;

    /// The same call with one more argument at the end.
    template <class V>
    bound_call<F, A..., V> with_last(const V& v) const {
        return {fn, args.append(v)};
    }
};

template <class T>
inline constexpr bool is_bound_call_v = false;
template <class F, class... A>
inline constexpr bool is_bound_call_v<bound_call<F, A...>> = true;

/// Bind `fn` and `args` into one trivially copyable functor. Rejects, at
/// compile time, arguments that cannot travel in a message.
template <class F, class... A>
constexpr auto m2f(F fn, A&&... args) {
    static_assert(std::is_trivially_copyable_v<F>,
                  "taco::m2f: the callable is not trivially copyable (a lambda with non-trivial "
                  "captures?). Bind a pointer-to-member or a function, or capture only trivially "
                  "copyable values.");
    (detail::check_invocation_argument<detail::travelling_t<A>>(), ...);
    return bound_call<F, detail::travelling_t<A>...>{detail::portable_callable<F>(fn),
                                                      {{detail::travelling(std::forward<A>(args))}...}};
}

} // namespace taco
