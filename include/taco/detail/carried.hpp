#pragma once
// Arguments carried by value although their bytes are not in the object:
// std::string, std::vector<T> and taco::view<T> of trivially copyable T.
// The sender copies their elements into one buffer, in the order of the
// arguments and each aligned for its element type, and leaves a reference
// (offset, count) in the invocation's place; the buffer travels ahead of the
// invocation (runtime/bulk.hpp) and the receiver rebuilds the arguments from
// it: a new string or vector, or a view into the buffer.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <taco/usage_error.hpp>
#include <taco/view.hpp>

namespace taco {

/// The bytes the carried arguments (strings, vectors, views) of one
/// invocation may hold together. Larger data belongs in a MESH shared object.
inline constexpr std::size_t max_carried_bytes = std::size_t(256) << 20;

namespace detail {

/// How an argument type is carried, if it is (element type, its elements,
/// how the receiver rebuilds it).
template <class A>
struct carried {
    static constexpr bool value = false;
};
template <class C, class Traits>
struct carried<std::basic_string<C, Traits, std::allocator<C>>> {
    static constexpr bool value = true;
    using element = C;
    using type = std::basic_string<C, Traits, std::allocator<C>>;
    static std::span<const C> elements(const type& s) noexcept { return {s.data(), s.size()}; }
    static type rebuild(const C* p, std::size_t n) { return type(p, n); }
};
template <class T>
struct carried<std::vector<T, std::allocator<T>>> {
    static constexpr bool value = true;
    using element = T;
    static std::span<const T> elements(const std::vector<T>& v) noexcept { return {v.data(), v.size()}; }
    static std::vector<T> rebuild(const T* p, std::size_t n) { return std::vector<T>(p, p + n); }
};
template <class T>
struct carried<view<T>> {
    static constexpr bool value = true;
    using element = T;
    static std::span<const T> elements(const view<T>& v) noexcept { return v; }
    static view<T> rebuild(const T* p, std::size_t n) noexcept { return view<T>(p, n); }
};

/// A plain value too large for the message it is appended to (a result
/// passed on to a taco::then continuation), carried as its bytes. It
/// converts to the value, so the continuation takes a V (or a const V&).
template <class V>
struct carried_value {
    V value;
    operator const V&() const noexcept { return value; }
};
template <class V>
struct carried<carried_value<V>> {
    static constexpr bool value = true;
    using element = std::byte; // rebuilt by memcpy: any offset will do
    static std::span<const std::byte> elements(const carried_value<V>& v) noexcept {
        return std::as_bytes(std::span(&v.value, 1));
    }
    static carried_value<V> rebuild(const std::byte* p, std::size_t n) {
        if (n != sizeof(V)) throw std::logic_error("taco: a carried value's bytes are not one value");
        alignas(V) std::byte raw[sizeof(V)];
        std::memcpy(raw, p, sizeof(V));
        return {*std::launder(reinterpret_cast<V*>(raw))};
    }
};

template <class A>
inline constexpr bool is_carried_v = carried<A>::value;

/// The buffer the receiver gets is aligned at least this much.
inline constexpr std::size_t carried_align = alignof(std::max_align_t);

/// Where a carried argument's elements are in the buffer.
struct carried_ref {
    std::uint32_t offset;
    std::uint32_t count;
};

template <class A>
using wire_of = std::conditional_t<is_carried_v<A>, carried_ref, A>;

/// The sender's buffer of carried elements.
class carried_writer {
public:
    template <class E>
    carried_ref add(std::span<const E> e) {
        const std::size_t at = (bytes_.size() + alignof(E) - 1) / alignof(E) * alignof(E);
        const std::size_t n = e.size_bytes();
        if (n > max_carried_bytes || at + n > max_carried_bytes)
            throw usage_error("taco: the strings, vectors and views of one invocation hold more than " +
                              std::to_string(max_carried_bytes >> 20) + " MiB (taco::max_carried_bytes); put "
                              "large data in a MESH shared object and pass its sharing_ptr");
        bytes_.resize(at + n);
        if (n != 0) std::memcpy(bytes_.data() + at, e.data(), n);
        return {std::uint32_t(at), std::uint32_t(e.size())};
    }
    std::span<const std::byte> bytes() const noexcept { return bytes_; }
    /// The buffer itself, for a transport that hands it over whole.
    std::vector<std::byte> take() && noexcept { return std::move(bytes_); }

private:
    std::vector<std::byte> bytes_;
};

template <class A>
wire_of<A> to_wire(const A& a, carried_writer& w) {
    if constexpr (is_carried_v<A>) return w.add(carried<A>::elements(a));
    else return a;
}

template <class A>
A from_wire(const wire_of<A>& x, std::span<const std::byte> bytes) {
    if constexpr (is_carried_v<A>) {
        using E = typename carried<A>::element;
        // Our own sender wrote both: a mismatch is a runtime defect, not misuse.
        if (std::size_t(x.offset) + std::size_t(x.count) * sizeof(E) > bytes.size())
            throw std::logic_error("taco: a carried argument reaches past the bytes received for it");
        return carried<A>::rebuild(reinterpret_cast<const E*>(bytes.data() + x.offset), x.count);
    } else {
        return x;
    }
}

} // namespace detail
} // namespace taco
