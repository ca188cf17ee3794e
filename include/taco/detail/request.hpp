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
#include <taco/detail/object_registry.hpp>

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

/// Apply `call` on `object`, then pass the result (unit for void) to
/// `on_value`, or the exception it threw to `on_error`. A stopped_error
/// passes through: it unwinds to the core's loop, which is leaving. Discard:
/// ignore the result (collectives that only count).
///
/// An error while delivering is not the method's error: on_error runs after
/// the catch block, and an exception from on_value is rethrown unchanged. Yet
/// on_value is called inside the try, straight with the call's result: a
/// value that had to outlive the try block would live in memory with an
/// "engaged" flag (the compiler keeps objects that are live across an
/// exception edge out of registers), which cost a few stores and a test on
/// every invocation.
template <class T, bool Discard = false, class Call, class OnValue, class OnError>
void apply_captured(Call& call, T* object, OnValue&& on_value, OnError&& on_error) {
    using R = std::conditional_t<Discard, void, typename Call::template result_type<T>>;
    error_info error;
    bool delivering = false;
    try {
        // Objects that report a deleted target to their own continuation
        // (a group's tree nodes, whose steps carry the collective's sink).
        if constexpr (!std::is_void_v<T> && !requires { typename T::checks_own_liveness; }) check_target_alive(object);
        if constexpr (std::is_void_v<R>) {
            call.template apply<T>(object);
            delivering = true;
            on_value(unit{});
        } else {
            auto value = call.template apply<T>(object);
            delivering = true;
            on_value(value);
        }
        return;
    } catch (const stopped_error&) {
        throw;
    } catch (...) {
        if (delivering) throw;
        error = error_info::current(this_core());
    }
    on_error(error);
}

template <class T, class Call, class Cont>
struct request {
    [[no_unique_address]] object_ref<T> target;
    Call call;
    [[no_unique_address]] Cont cont; // no_continuation takes no space

    void operator()() {
        apply_captured<T>(
            call, target.get(),
            // The result is the call's own temporary: moved on (a string or
            // vector handed over on the same core is not copied).
            [this](auto&& value) {
                if constexpr (std::is_void_v<typename Call::template result_type<T>>) cont.deliver();
                else cont.deliver(std::move(value));
            },
            [this](const error_info& e) { cont.fail(e); });
    }
};

} // namespace taco::detail
