#pragma once
// Objects on other cores: construct there (on that core's heap, by that
// core, as its private memory demands) and get its global pointer back.
#include <type_traits>

#include <taco/async.hpp>
#include <taco/future.hpp>
#include <taco/global_ptr.hpp>
#include <taco/detail/argument_check.hpp>
#include <taco/detail/construct.hpp>
#include <taco/detail/object_registry.hpp>

namespace taco {

namespace detail {
template <class T, class... A>
global_ptr<T> construct_here(A... args) {
    global_ptr<T> p = to_global(make_new<T>(args...));
#if TACO_DEBUG_CHECKS
    generation_access::set(p, objects().made(p.address()));
#endif
    return p;
}
template <class T>
void delete_here(global_ptr<T> p) {
#if TACO_DEBUG_CHECKS
    object_registry& r = objects();
    r.check_delete(p.address(), generation_access::get(p));
    if constexpr (quarantinable_v<T>) {
        T* object = p.get();
        object->~T();
        r.retire(object, sizeof(T));
        return;
    }
#endif
    delete p.get();
}
} // namespace detail

/// `new T(args...)` on core `core`; the future gets the object's global
/// pointer (or the constructor's exception). Constructor arguments travel in
/// a message like any invocation argument.
template <class T, class... A>
[[nodiscard]] future<global_ptr<T>> new_on(core_id core, A&&... args) {
    static_assert(detail::constructible_v<T, detail::travelling_t<A>&...>,
                  "taco::new_on: T cannot be constructed from these arguments");
    return call(core, &detail::construct_here<T, detail::travelling_t<A>...>, std::forward<A>(args)...);
}

/// `delete` the object on its core; waits until it is gone. Debug builds
/// refuse a second delete and later invocations on the object (see
/// detail/object_registry.hpp).
template <class T>
void delete_on(global_ptr<T> p) {
    if (p) sync(p.core(), &detail::delete_here<T>, p);
}

} // namespace taco
