#pragma once
// Constructing T from arguments whether T has a constructor or is an
// aggregate (C++20's T(args...) for aggregates is not in every compiler yet).
#include <new>
#include <type_traits>
#include <utility>

namespace taco::detail {

template <class T, class... A>
T* construct_at_address(void* where, A&&... args) {
    if constexpr (std::is_constructible_v<T, A&&...>)
        return ::new (where) T(std::forward<A>(args)...);
    else
        return ::new (where) T{std::forward<A>(args)...};
}

template <class T, class... A>
T* make_new(A&&... args) {
    if constexpr (std::is_constructible_v<T, A&&...>)
        return new T(std::forward<A>(args)...);
    else
        return new T{std::forward<A>(args)...};
}

template <class T, class... A>
inline constexpr bool constructible_v = std::is_constructible_v<T, A...> ||
                                        requires(A&&... a) { T{std::forward<A>(a)...}; };

} // namespace taco::detail
