#pragma once
// Objects on other cores: construct there (on that core's heap, by that
// core, as its private memory demands) and get its global pointer back.
#include <type_traits>

#include <taco/async.hpp>
#include <taco/future.hpp>
#include <taco/global_ptr.hpp>
#include <taco/detail/argument_check.hpp>
#include <taco/detail/construct.hpp>

namespace taco {

namespace detail {
template <class T, class... A>
global_ptr<T> construct_here(A... args) {
    return to_global(make_new<T>(args...));
}
template <class T>
void delete_here(global_ptr<T> p) {
    delete p.get();
}
} // namespace detail

/// `new T(args...)` on core `core`; the future gets the object's global
/// pointer (or the constructor's exception). Constructor arguments travel in
/// a message like any invocation argument.
template <class T, class... A>
[[nodiscard]] future<global_ptr<T>> new_on(core_id core, A&&... args) {
    static_assert(detail::constructible_v<T, std::decay_t<A>&...>,
                  "taco::new_on: T cannot be constructed from these arguments");
    return call(core, &detail::construct_here<T, std::decay_t<A>...>, std::forward<A>(args)...);
}

/// `delete` the object on its core; waits until it is gone.
template <class T>
void delete_on(global_ptr<T> p) {
    if (p) sync(p.core(), &detail::delete_here<T>, p);
}

} // namespace taco
