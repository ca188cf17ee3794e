#pragma once
#include <concepts>
#include <cstddef>
#include <iterator>
#include <ranges>
#include <string>
#include <type_traits>

#include <taco/usage_error.hpp>

namespace taco {

/// A combiner merges two partial results of a reduction: an ordinary callable
/// C(R, R) -> R that travels in messages (so trivially copyable: a stateless
/// lambda, std::plus<R>, a function object with small fields). Reductions
/// apply it in rank order (see reduce()), so it must be associative; it need
/// not be commutative. The accumulated value is passed as an rvalue: a
/// combiner that takes its first parameter by value, R(R acc, const R& v),
/// can merge into it and return it, so a large value (a vector) is never
/// copied.
template <class C, class R>
concept combiner = std::is_trivially_copyable_v<C> && std::is_invocable_v<const C&, const R&, const R&> &&
                   std::convertible_to<std::invoke_result_t<const C&, const R&, const R&>, R>;

/// Merges two arrays or vectors element by element with `op`: what
/// taco::elementwise(op) returns (e.g. elementwise(std::plus<>{}) sums
/// histograms). The first operand is the accumulator, merged in place.
/// Vectors of different lengths are an error (a usage_error, which reaches
/// the reduction's future).
template <class Op>
struct elementwise_combiner {
    [[no_unique_address]] Op op;

    template <class R>
        requires std::ranges::random_access_range<R> && std::ranges::sized_range<R> &&
                 std::is_invocable_r_v<std::ranges::range_value_t<R>, const Op&, std::ranges::range_reference_t<R>,
                                       std::ranges::range_reference_t<const R>>
    R operator()(R acc, const R& v) const {
        const auto n = std::ranges::size(acc);
        if (n != std::ranges::size(v)) [[unlikely]]
            throw usage_error("taco::elementwise: vectors of lengths " + std::to_string(n) + " and " +
                              std::to_string(std::ranges::size(v)) + " differ");
        auto a = std::ranges::begin(acc);
        auto b = std::ranges::begin(v);
        for (std::size_t i = 0; i < std::size_t(n); ++i) a[i] = op(a[i], b[i]);
        return acc;
    }
};

/// A combiner for taco::reduce over arrays or vectors (std::array<long, 64>,
/// std::vector<double>, ...): op applied to each pair of elements.
template <class Op>
constexpr elementwise_combiner<Op> elementwise(Op op) {
    return {op};
}

namespace detail {
template <class C, class R>
constexpr void check_combiner() {
    static_assert(std::is_invocable_v<const C&, const R&, const R&>,
                  "taco::reduce: the combiner must be callable as combiner(R, R) with the method's result type R "
                  "(for arrays and vectors merged element by element: taco::elementwise(op))");
    if constexpr (std::is_invocable_v<const C&, const R&, const R&>)
        static_assert(std::convertible_to<std::invoke_result_t<const C&, const R&, const R&>, R>,
                      "taco::reduce: the combiner must return the method's result type R");
    static_assert(std::is_trivially_copyable_v<C>,
                  "taco::reduce: the combiner travels in messages and must be trivially copyable "
                  "(a lambda without captures, std::plus<>, or a struct of plain values)");
}
} // namespace detail

} // namespace taco
