#pragma once
#include <type_traits>

namespace taco {

/// A value that can travel inside an invocation message: copied byte for byte
/// to another core, so it must be trivially copyable, and it must not be a
/// raw object pointer (an address that is only meaningful on the sender; in
/// process mode and on the SCC it points into another core's private memory).
template <class T>
concept invocation_argument =
    std::is_trivially_copyable_v<T> &&
    !(std::is_pointer_v<T> && !std::is_function_v<std::remove_pointer_t<T>>);

namespace detail {
// static_assert texts are shared by every entry point (m2f, async, results).
template <class T>
constexpr void check_invocation_argument() {
    static_assert(std::is_trivially_copyable_v<T>,
                  "taco: an invocation argument (or result) is not trivially copyable. Invocations copy "
                  "their arguments byte for byte into a fixed-size message to another core. Pass a "
                  "taco::global_ptr to the object and invoke a method on it instead, or keep large or "
                  "owning data (strings, vectors) in a MESH shared object and pass its sharing_ptr.");
    static_assert(!(std::is_pointer_v<T> && !std::is_function_v<std::remove_pointer_t<T>>),
                  "taco: an invocation argument (or result) is a raw pointer, which is only meaningful "
                  "on the sending core. Pass a taco::global_ptr<T> (or a MESH sharing_ptr) instead.");
}
} // namespace detail

} // namespace taco
