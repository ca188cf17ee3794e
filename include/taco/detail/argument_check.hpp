#pragma once
// What may travel inside an invocation message: values copied byte for byte
// to another core, so trivially copyable, and never a raw object pointer (an
// address that is only meaningful on the sender; in process mode and on the
// SCC it points into another core's private memory). The texts are shared
// by every entry point (m2f, async, results, then).
#include <type_traits>

namespace taco::detail {

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

} // namespace taco::detail
