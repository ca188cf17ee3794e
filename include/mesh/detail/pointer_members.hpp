#pragma once
// Does an aggregate hold a raw object pointer, directly or inside a member
// aggregate or array? A trivially copyable struct with a `long*` member
// passes every type trait, yet on another core the pointer leads into that
// core's private memory (a heap, a stack). C++20 has no reflection, but
// aggregate initialisation sees every leaf: T{a0, ..., aN} is well-formed
// for N up to the number of leaves once braces are elided, and `any` below
// converts to every leaf type but refuses aggregates (so the compiler elides
// into them and reaches their leaves too). A probe that converts only to
// object pointers, placed last, tells whether leaf N is one.
//
// Leaves past max_leaves (a large array member) are not probed. Classes that
// are not aggregates (private members, constructors) cannot be looked into;
// they are trusted, as is anything that opted in.
//
// The probe takes a check that is instantiated with each leaf's type as the
// compiler deduces the conversion (member_rules.hpp refuses the leaves that
// own private memory that way: a hard error names the type).
#include <cstddef>
#include <type_traits>
#include <utility>

namespace mesh::detail {

inline constexpr std::size_t max_leaves = 64;

/// Check::template leaf<U> is instantiated for every type the probe is
/// asked to convert to (leaves, and the aggregates elided into); an
/// aggregate for which Check::template whole<U> holds is taken as one leaf
/// (no elision into it: the check looks into it by itself).
struct unchecked {
    template <class U>
    static constexpr bool leaf = true;
    template <class U>
    static constexpr bool whole = false;
};
template <class Check>
struct any_leaf_of {
    template <class U, bool = Check::template leaf<U>>
        requires(!std::is_aggregate_v<U> || Check::template whole<U>)
    operator U() const noexcept;
};
using any_leaf = any_leaf_of<unchecked>;
struct pointer_leaf {
    template <class U>
        requires(std::is_pointer_v<U> && !std::is_function_v<std::remove_pointer_t<U>>)
    operator U() const noexcept;
};

template <std::size_t, class Leaf = any_leaf>
using any_leaf_at = Leaf;

template <class T, class Leaf = any_leaf, std::size_t... I>
constexpr bool initialisable_with(std::index_sequence<I...>) {
    return requires { T{any_leaf_at<I, Leaf>{}...}; };
}

/// How many leaves T has, counting at most `limit` (limit + 1: more).
template <class T, class Leaf, std::size_t limit, std::size_t N = 0>
constexpr std::size_t leaf_count() {
    if constexpr (N > limit) return N;
    else if constexpr (initialisable_with<T, Leaf>(std::make_index_sequence<N + 1>{})) return leaf_count<T, Leaf, limit, N + 1>();
    else return N;
}
template <class T, std::size_t... I>
constexpr bool pointer_after(std::index_sequence<I...>) {
    return requires { T{any_leaf_at<I>{}..., pointer_leaf{}}; };
}

template <class T, std::size_t N = 0>
constexpr bool has_pointer_leaf() {
    if constexpr (N >= max_leaves) {
        return false;
    } else if constexpr (pointer_after<T>(std::make_index_sequence<N>{})) {
        return true;
    } else if constexpr (initialisable_with<T>(std::make_index_sequence<N + 1>{})) {
        return has_pointer_leaf<T, N + 1>();
    } else {
        return false; // no leaf N: all seen
    }
}

/// An aggregate with a raw object pointer among its leaves.
template <class T>
inline constexpr bool holds_raw_pointer = std::is_aggregate_v<T> && has_pointer_leaf<T>();

} // namespace mesh::detail
