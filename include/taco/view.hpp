#pragma once
// taco::view<T>: a contiguous range passed by value to another core, like
// upcxx::view. The sender's view points at its own data (a vector, an array,
// a string), which is copied into the invocation when it is sent; the
// receiver's view points into the received bytes and is valid while the
// invoked method runs (copy what must outlive it). Use it where a
// std::span or std::string_view would be wrong: those carry the sender's
// address, which means nothing on another core (or in another process).
#include <cstddef>
#include <ranges>
#include <span>
#include <type_traits>

namespace taco {

template <class T>
class view : public std::span<const T> {
public:
    using std::span<const T>::span;
    constexpr view() noexcept = default;
    constexpr view(std::span<const T> s) noexcept : std::span<const T>(s) {}
};

template <std::ranges::contiguous_range R>
view(R&&) -> view<std::remove_cv_t<std::ranges::range_value_t<R>>>;
template <class T>
view(const T*, std::size_t) -> view<T>;

} // namespace taco
