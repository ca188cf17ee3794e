#pragma once
// Size arithmetic on counts a user passed: a product or sum that does not
// fit std::size_t is an empty optional, never a wrapped value (a wrapped
// byte count once made a 64-byte buffer for SIZE_MAX elements, and the fill
// that followed wrote over the whole shared region). Callers turn an empty
// result into an error that names what was asked and the limit.
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>

namespace mesh::detail {

[[nodiscard]] constexpr std::optional<std::size_t> checked_mul(std::size_t a, std::size_t b) noexcept {
    std::size_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
    return r;
}
[[nodiscard]] constexpr std::optional<std::size_t> checked_add(std::size_t a, std::size_t b) noexcept {
    std::size_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
    return r;
}
/// v rounded up to a multiple of a (a > 0).
[[nodiscard]] constexpr std::optional<std::size_t> checked_round_up(std::size_t v, std::size_t a) noexcept {
    const std::optional<std::size_t> up = checked_add(v, a - 1);
    if (!up) return std::nullopt;
    return *up / a * a;
}

/// The length_error a container throws for a count beyond its max_size(),
/// e.g. "mesh::vector<T>::resize(n): n = 18446744073709551615 elements of 4
/// bytes is more than max_size() = ...": what was asked, and the limit.
[[noreturn]] inline void throw_too_many(const char* what, std::size_t n, std::size_t element_bytes,
                                        std::size_t max) {
    throw std::length_error(std::string(what) + ": n = " + std::to_string(n) + " elements of " +
                            std::to_string(element_bytes) + " bytes is more than max_size() = " +
                            std::to_string(max) + " (n * " + std::to_string(element_bytes) +
                            " bytes would overflow, or pass the largest buffer a shared container may have)");
}
/// Refuse n beyond max (the container is not touched: callers check first).
inline void check_count(std::size_t n, std::size_t max, std::size_t element_bytes, const char* what) {
    if (n > max) [[unlikely]]
        throw_too_many(what, n, element_bytes, max);
}

} // namespace mesh::detail
