#pragma once
// Debug check (TACO_DEBUG_CHECKS): an invocation to another core whose bytes
// hold an address on the sender's live stack. Such an address cannot be used
// there (in process mode and on the SCC it is another core's memory, and in
// any mode the frame may be gone when it runs); the usual source is a lambda
// capturing by reference, which the type system cannot see: its closure is
// trivially copyable like any other.
//
// The scan reads the 8-byte words of the callable (a closure's captures) and
// of each argument: a pointer member is 8-aligned in any object aligned to
// 8, and an object aligned to less holds none.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include <taco/m2f.hpp>
#include <taco/runtime/core.hpp>
#include <taco/detail/carried.hpp>
#include <taco/detail/thread_stack.hpp>
#include <taco/usage_error.hpp>

namespace taco::detail {

/// From this function's own frame to the top of the stack it runs on: every
/// frame of its callers. Not inlined: within one frame the compiler places
/// locals in any order, so only a callee's frame is surely below them all.
[[gnu::noinline]] inline std::span<const std::byte> live_stack() noexcept {
    const void* here = __builtin_frame_address(0);
    const auto in = [here](std::span<const std::byte> s) {
        return !s.empty() && static_cast<const std::byte*>(here) >= s.data() &&
               static_cast<const std::byte*>(here) < s.data() + s.size();
    };
    std::span<const std::byte> s;
    if (core* rt = tls_runtime; rt && rt->current_task() && in(rt->current_task()->own_stack()))
        s = rt->current_task()->own_stack();
    else if (in(thread_stack()))
        s = thread_stack();
    else
        return {};
    const auto* from = static_cast<const std::byte*>(here);
    return {from, std::size_t(s.data() + s.size() - from)};
}

/// One value of the call, read in 8-byte words. Its padding bytes are
/// whatever was in memory before (an old stack address, perhaps), so they
/// are cleared in a copy first; a compiler without __builtin_clear_padding
/// reads only types that have none. Carried values are copied, not sent as
/// they are.
template <class V>
void check_value(const V& v, std::uintptr_t lo, std::uintptr_t hi, core_id self) {
    constexpr std::size_t word_bytes = sizeof(std::uintptr_t);
    if constexpr (!is_carried_v<V> && alignof(V) >= word_bytes && std::is_class_v<V>) {
        alignas(V) std::byte bytes[sizeof(V)];
        std::memcpy(bytes, &v, sizeof(V));
#if defined(__has_builtin) && __has_builtin(__builtin_clear_padding)
        __builtin_clear_padding(reinterpret_cast<V*>(bytes));
#else
        if constexpr (!std::has_unique_object_representations_v<V>) return;
#endif
        std::uintptr_t before = ~std::uintptr_t(0);
        for (std::size_t at = 0; at + word_bytes <= sizeof(V); at += word_bytes) {
            std::uintptr_t word;
            std::memcpy(&word, bytes + at, word_bytes);
            // A global_ptr to a local names this core, which may use it:
            // [core id, zeroed padding][address].
            if (word >= lo && word < hi && before != std::uintptr_t(self))
                throw usage_error("taco: an invocation to another core holds an address on the sending core's "
                                  "stack (a lambda capturing by reference, [&]? a pointer to a local inside an "
                                  "argument?). The receiving core cannot use it: capture and pass values, a "
                                  "taco::global_ptr (taco::to_global(&x)), or the data itself (std::vector, "
                                  "std::string, taco::view). (A debug check: TACO_DEBUG_CHECKS.)");
            before = word;
        }
    }
}

/// The callable (a closure's captures) and each argument of `call`.
template <class F, class... A>
void check_no_stack_address(const bound_call<F, A...>& call, core_id self) {
    const auto live = live_stack();
    if (live.empty()) return;
    const auto lo = reinterpret_cast<std::uintptr_t>(live.data()), hi = lo + live.size();
    check_value(call.fn.fn, lo, hi, self);
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        (check_value(static_cast<const arg_leaf<I, A>&>(call.args).value, lo, hi, self), ...);
    }(std::index_sequence_for<A...>{});
}

} // namespace taco::detail
