#pragma once
// The invocation message: object address + bound call + continuation. It runs
// on the destination core, straight from the channel buffer, and hands the
// result (or the exception) to the continuation, which sends it on.
#include <optional>
#include <type_traits>

#include <taco/remote_error.hpp>
#include <taco/stopped_error.hpp>
#include <taco/uncaught_error.hpp>
#include <taco/detail/core_identity.hpp>

namespace taco::detail {

/// Continuation of fire-and-forget invocations: results are dropped on
/// purpose, exceptions go to the uncaught-error handler.
struct no_continuation {
    template <class... V>
    void deliver(V&&...) const noexcept {}
    void fail(const error_info& e) const { report_uncaught(e); }
};

/// The target object; invocations on a core (T = void) carry none.
template <class T>
struct object_ref {
    T* ptr;
    T* get() const noexcept { return ptr; }
};
template <>
struct object_ref<void> {
    void* get() const noexcept { return nullptr; }
};

/// Stand-in result of methods returning void.
struct unit {};
template <class R>
using value_or_unit = std::conditional_t<std::is_void_v<R>, unit, R>;

/// What applying an invocation gave: a value, or the exception it threw.
template <class R>
struct outcome {
    std::optional<value_or_unit<R>> value;
    error_info error; // meaningful when !value
};

/// Apply `call` on `object` and capture the result or the exception. A
/// stopped_error passes through: it unwinds to the core's loop, which is
/// leaving. Discard: ignore the result (collectives that only count).
template <class T, bool Discard = false, class Call>
auto apply_captured(Call& call, T* object) {
    using R = std::conditional_t<Discard, void, typename Call::template result_type<T>>;
    outcome<R> o;
    try {
        if constexpr (std::is_void_v<R>) {
            call.template apply<T>(object);
            o.value.emplace();
        } else {
            o.value.emplace(call.template apply<T>(object));
        }
    } catch (const stopped_error&) {
        throw;
    } catch (...) {
        o.error = error_info::current(this_core());
    }
    return o;
}

template <class T, class Call, class Cont>
struct request {
    [[no_unique_address]] object_ref<T> target;
    Call call;
    [[no_unique_address]] Cont cont; // no_continuation takes no space

    void operator()() {
        auto o = apply_captured<T>(call, target.get());
        // Deliver outside the capture: an error while delivering is not the method's error.
        if (!o.value)
            cont.fail(o.error);
        else if constexpr (std::is_void_v<typename Call::template result_type<T>>)
            cont.deliver();
        else
            cont.deliver(*o.value);
    }
};

} // namespace taco::detail
