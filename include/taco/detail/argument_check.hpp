#pragma once
// What may travel inside an invocation message: values copied byte for byte
// to another core, so trivially copyable, and never an address that is only
// meaningful on the sender (in process mode and on the SCC it points into
// another core's private memory): raw pointers, and the trivially copyable
// references to the sender's memory, std::span and std::string_view. Strings,
// vectors and taco::view are carried (carried.hpp, carried_result.hpp). The
// texts are shared by every entry point (m2f, async, results, then).
#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include <taco/detail/carried.hpp>
#include <taco/usage_error.hpp>

namespace taco::detail {

template <class T>
inline constexpr bool is_span_v = false;
template <class T, std::size_t N>
inline constexpr bool is_span_v<std::span<T, N>> = true;
template <class T>
inline constexpr bool is_string_view_v = false;
template <class C, class Tr>
inline constexpr bool is_string_view_v<std::basic_string_view<C, Tr>> = true;
template <class T>
inline constexpr bool is_reference_wrapper_v = false;
template <class T>
inline constexpr bool is_reference_wrapper_v<std::reference_wrapper<T>> = true;
template <class T>
inline constexpr bool is_initializer_list_v = false;
template <class T>
inline constexpr bool is_initializer_list_v<std::initializer_list<T>> = true;

/// The elements of a carried argument or result (a vector, a view).
template <class C>
constexpr void check_carried_elements() {
    using E = typename carried<C>::element;
    static_assert(std::is_trivially_copyable_v<E> && !std::is_pointer_v<E> && !is_carried_v<E>,
                  "taco: the elements of a carried std::vector / taco::view (argument or result) must be "
                  "plain values (trivially copyable, no pointers, no nested strings or vectors): flatten "
                  "nested data into one vector plus offsets, or keep it in a MESH shared object.");
    static_assert(alignof(E) <= carried_align, "taco: carried elements aligned beyond alignof(std::max_align_t)");
}

/// A string literal or other char pointer spells text, and the text is what
/// travels: as the std::string it spells, which the method receives as a
/// std::string, const std::string& or std::string_view. (The pointer itself
/// would mean nothing on another core; a null one is refused at the call.)
template <class A>
inline constexpr bool is_text_pointer_v =
    std::is_pointer_v<std::decay_t<A>> && std::is_same_v<std::remove_cv_t<std::remove_pointer_t<std::decay_t<A>>>, char>;
template <class A>
using travelling_t = std::conditional_t<is_text_pointer_v<A>, std::string, std::decay_t<A>>;

template <class A>
constexpr decltype(auto) travelling(A&& a) {
    if constexpr (is_text_pointer_v<A>) {
        const char* text = a;
        if (!text)
            throw usage_error("taco: a null char pointer as an invocation argument (text travels as a std::string)");
        return std::string(text);
    } else {
        return std::forward<A>(a);
    }
}

/// Arguments: plain values, or carried ranges of plain values. One
/// static_assert fires per kind of mistake (no cascade).
template <class T>
constexpr void check_invocation_argument() {
    if constexpr (is_string_view_v<T> || is_span_v<T>) {
        static_assert(!is_string_view_v<T> && !is_span_v<T>,
                      "taco: a std::string_view or std::span argument holds the sender's address, which "
                      "means nothing on another core. Pass a std::string or std::vector (copied to the "
                      "receiver), or a taco::view<T> (copied; the receiver's view points into the message).");
    } else if constexpr (is_reference_wrapper_v<T> || is_initializer_list_v<T>) {
        static_assert(!is_reference_wrapper_v<T> && !is_initializer_list_v<T>,
                      "taco: a std::reference_wrapper or std::initializer_list argument refers to the "
                      "sender's memory. Pass the value itself, a std::vector or taco::view, or a "
                      "taco::global_ptr to the object.");
    } else if constexpr (is_carried_v<T>) {
        check_carried_elements<T>();
    } else {
        static_assert(std::is_trivially_copyable_v<T>,
                      "taco: an invocation argument is not trivially copyable (and not one of the types "
                      "carried by value: std::string, std::vector<T>, taco::view<T>). Invocations copy "
                      "their arguments byte for byte to another core. Pass a taco::global_ptr to the "
                      "object and invoke a method on it instead, or keep large or owning data in a MESH "
                      "shared object and pass its sharing_ptr.");
        static_assert(!(std::is_pointer_v<T> && !std::is_function_v<std::remove_pointer_t<T>>),
                      "taco: an invocation argument (or result) is a raw pointer, which is only meaningful "
                      "on the sending core. Pass a taco::global_ptr<T> (or a MESH sharing_ptr) instead, "
                      "or a taco::view<T> for a range of values.");
    }
}

/// Results: plain values of any size, or a std::string, std::vector or
/// taco::view of plain values (carried back when they do not fit one
/// message: carried_result.hpp).
template <class R>
constexpr void check_invocation_result() {
    if constexpr (is_string_view_v<R> || is_span_v<R>) {
        static_assert(!is_string_view_v<R> && !is_span_v<R>,
                      "taco: a std::string_view or std::span result holds the callee's address, which means "
                      "nothing on another core. Return a std::string or std::vector (copied to the caller), or "
                      "a taco::view<T> into the object's data (the caller receives a std::vector<T>).");
    } else if constexpr (is_carried_v<R>) {
        check_carried_elements<R>();
    } else {
        static_assert(std::is_trivially_copyable_v<R>,
                      "taco: an invocation result is not trivially copyable (and not one of the types carried "
                      "back by value: std::string, std::vector<T>, taco::view<T>). Results are copied byte for "
                      "byte back to the caller's core: return a plain value, a std::vector or std::string, or a "
                      "taco::global_ptr.");
        static_assert(!(std::is_pointer_v<R> && !std::is_function_v<std::remove_pointer_t<R>>),
                      "taco: an invocation result is a raw pointer, which is only meaningful on the core "
                      "that returns it. Return a taco::global_ptr<T> (taco::to_global(p)) instead.");
    }
}

} // namespace taco::detail
