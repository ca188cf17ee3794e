#pragma once
#include <concepts>
#include <type_traits>

namespace taco {

/// A combiner merges two partial results of a reduction: an ordinary callable
/// C(R, R) -> R that travels in messages (so trivially copyable: a stateless
/// lambda, std::plus<R>, a function object with small fields). Reductions
/// apply it in rank order (see reduce()), so it must be associative; it need
/// not be commutative.
template <class C, class R>
concept combiner = std::is_trivially_copyable_v<C> && std::is_invocable_v<const C&, const R&, const R&> &&
                   std::convertible_to<std::invoke_result_t<const C&, const R&, const R&>, R>;

namespace detail {
template <class C, class R>
constexpr void check_combiner() {
    static_assert(std::is_invocable_v<const C&, const R&, const R&>,
                  "taco::reduce: the combiner must be callable as combiner(R, R) with the method's result type R");
    if constexpr (std::is_invocable_v<const C&, const R&, const R&>)
        static_assert(std::convertible_to<std::invoke_result_t<const C&, const R&, const R&>, R>,
                      "taco::reduce: the combiner must return the method's result type R");
    static_assert(std::is_trivially_copyable_v<C>,
                  "taco::reduce: the combiner travels in messages and must be trivially copyable "
                  "(a lambda without captures, std::plus<>, or a struct of plain values)");
}
} // namespace detail

} // namespace taco
