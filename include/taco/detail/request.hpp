#pragma once
// The invocation message: object address + bound call + continuation. It runs
// on the destination core, straight from the channel buffer, and hands the
// result (or the exception) to the continuation, which sends it on.
#include <optional>
#include <type_traits>

#include <taco/remote_error.hpp>
#include <taco/runtime.hpp>
#include <taco/this_core.hpp>

namespace taco::detail {

/// Continuation of fire-and-forget invocations: results are dropped on
/// purpose, exceptions go to the uncaught-error handler.
struct no_continuation {
    template <class... V>
    void deliver(V&&...) const noexcept {}
    void fail(const error_info& e) const { uncaught_handler.load(std::memory_order_relaxed)(e); }
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

template <class T, class Call, class Cont>
struct request {
    [[no_unique_address]] object_ref<T> target;
    Call call;
    [[no_unique_address]] Cont cont; // no_continuation takes no space

    void operator()() {
        using R = typename Call::template result_type<T>;
        if constexpr (std::is_same_v<Cont, no_continuation>) {
            try {
                call.template apply<T>(target.get());
            } catch (const stopped_error&) {
                throw; // unwinds to the core's loop, which is leaving
            } catch (...) {
                cont.fail(error_info::current(this_core()));
            }
        } else if constexpr (std::is_void_v<R>) {
            bool ok = true;
            error_info err;
            try {
                call.template apply<T>(target.get());
            } catch (...) {
                ok = false;
                err = error_info::current(this_core());
            }
            // Deliver outside the try: an error while delivering is not the method's error.
            if (ok) cont.deliver(); else cont.fail(err);
        } else {
            std::optional<R> result;
            error_info err;
            try {
                result.emplace(call.template apply<T>(target.get()));
            } catch (...) {
                err = error_info::current(this_core());
            }
            if (result) cont.deliver(*result); else cont.fail(err);
        }
    }
};

} // namespace taco::detail
