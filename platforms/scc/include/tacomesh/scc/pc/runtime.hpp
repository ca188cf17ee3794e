#pragma once
// The C++ runtime on the PC stand-in (platforms/scc/pc/runtime.cpp): what
// the boot code and the TACO platform (pc/platform.hpp) need of it. An image
// that links runtime.cpp runs hosted C++ (the heap, exceptions,
// thread_local, static constructors, clocks) on every core; one that does
// not stays freestanding.
#include <cstddef>
#include <cstdint>

namespace tacomesh::scc::pc {

/// Each core's boot stack (boot.S's STACK_BYTES).
inline constexpr std::size_t stack_bytes = std::size_t(1) << 16;

namespace detail {
/// The heap from the image's end to `ram_top`; the time-stamp counter's
/// rate, from the PC's interval timer; then, on the boot core, its
/// thread-local block and the static constructors. Called once by the boot
/// code, on core 0, before the other cores start.
void start_runtime(std::uint32_t ram_top) noexcept;
/// A core's own thread-local block (its %gs), before it runs C++ that may
/// touch a thread_local. Core 0's is made by start_runtime.
void start_core(std::uint32_t core) noexcept;
/// Nanoseconds since boot at time-stamp counter value `tsc`.
std::uint64_t tsc_to_ns(std::uint64_t tsc) noexcept;
/// The time-stamp counter's ticks per second (calibrated at boot).
std::uint64_t tsc_hz() noexcept;
} // namespace detail

} // namespace tacomesh::scc::pc
