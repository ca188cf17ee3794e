#pragma once
// Results (and reduced or gathered values) of any size. What fits the
// message that delivers it travels inside it, as always; a std::string, a
// std::vector<T> of plain values, a taco::view<T> and a trivially copyable
// value too large for that message travel as carried bytes instead: sent
// ahead in pieces through the same channel (runtime/bulk.hpp), followed by
// the message that rebuilds the value on the receiving core and hands it on.
//
// What the receiver gets, its delivered type: the method's result type,
// except that a taco::view<T> into the callee's object arrives as an owning
// std::vector<T> (a view can only point into memory of the core that holds
// it: the elements are copied when the result is sent, so the method's view
// need only stay valid until it returns).
#include <cstddef>
#include <cstring>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <taco/remote_error.hpp>
#include <taco/detail/core_identity.hpp>
#include <taco/view.hpp>
#include <taco/detail/carried.hpp>
#include <taco/runtime/message.hpp>

namespace taco::detail {

template <class R>
struct delivered {
    using type = R;
};
template <class T>
struct delivered<view<T>> {
    using type = std::vector<T>;
};
/// The type a result of type R reaches its future, continuation or
/// collective as.
template <class R>
using delivered_t = typename delivered<R>::type;

template <class V>
inline constexpr bool is_view_v = false;
template <class T>
inline constexpr bool is_view_v<view<T>> = true;

/// The delivered value made of what a method returned: a view's elements
/// copied into a vector, anything else passed on (moved when it may be).
template <class D, class V>
decltype(auto) to_delivered(V&& v) {
    if constexpr (is_view_v<std::remove_cvref_t<V>>) return D(v.begin(), v.end());
    else return std::forward<V>(v);
}

/// Whether a value of type V travels carried when Msg would deliver it:
/// always for strings, vectors and views, and for plain values that would
/// make Msg larger than a message. Msg is only looked at for plain values
/// (it cannot even hold a string).
template <class V, template <class> class Msg>
constexpr bool travels_carried() {
    if constexpr (is_carried_v<V>) return true;
    else return message_length<Msg<V>> > message_bytes;
}

/// The bytes a value travels as: a range's elements, or a plain value's object.
template <class V>
std::span<const std::byte> value_bytes(const V& v) noexcept {
    if constexpr (is_carried_v<V>) return std::as_bytes(carried<V>::elements(v));
    else return {reinterpret_cast<const std::byte*>(&v), sizeof v};
}

/// Rebuild a value of type D from the bytes received for it.
template <class D>
D value_from_bytes(std::span<const std::byte> b) {
    if constexpr (is_carried_v<D>) {
        using E = typename carried<D>::element;
        // Our own sender wrote them: a mismatch is a runtime defect, not misuse.
        if (b.size() % sizeof(E) != 0) throw std::logic_error("taco: a carried result's bytes are not whole elements");
        const E* first = reinterpret_cast<const E*>(b.data());
        return carried<D>::rebuild(first, b.size() / sizeof(E));
    } else {
        // Trivially copyable (checked where results are): its bytes are a value.
        return carried<carried_value<D>>::rebuild(b.data(), b.size()).value;
    }
}

/// The error a continuation reports instead of a value beyond
/// taco::max_carried_bytes: the callee has run, so the value cannot be
/// refused before anything is sent; its core goes on, and the caller's
/// future (or the collective's) holds this error.
inline error_info too_large_result() {
    error_info e{this_core(), 0, {}};
    // error_info holds 80 characters: the advice must be short.
    e.assign("taco: result beyond taco::max_carried_bytes (" + std::to_string(max_carried_bytes >> 20) +
             " MiB): return a global_ptr to it");
    return e;
}

} // namespace taco::detail
