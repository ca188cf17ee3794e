#pragma once
// What a bare-metal program on the PC stand-in (pc/hardware.hpp) has to
// talk to the world: the first serial port, which QEMU connects to its
// standard output (-serial stdio), and QEMU's isa-debug-exit device, whose
// port ends the emulator with a status the test reads. Freestanding: port
// I/O and a spin lock, nothing else.
#include <cstdint>

#include <tacomesh/scc/pc/hardware.hpp>

namespace tacomesh::scc::pc {

namespace detail {
inline void outb(std::uint16_t port, std::uint8_t value) noexcept {
    asm volatile("outb %0, %1" ::"a"(value), "Nd"(port) : "memory");
}
inline std::uint8_t inb(std::uint16_t port) noexcept {
    std::uint8_t value;
    asm volatile("inb %1, %0" : "=a"(value) : "Nd"(port) : "memory");
    return value;
}
inline constexpr std::uint16_t com1 = 0x3F8;
/// One writer at a time, so that each print's text stays whole on the line.
inline std::uint32_t console_lock = 0;
/// Interrupts off while the lock is held: a handler on this core that
/// printed would spin on it for ever.
inline std::uintptr_t lock_console() noexcept {
    const std::uintptr_t flags = save_flags_cli();
    while (__atomic_exchange_n(&console_lock, 1u, __ATOMIC_ACQUIRE) != 0) asm volatile("pause");
    return flags;
}
inline void unlock_console(std::uintptr_t flags) noexcept {
    __atomic_store_n(&console_lock, 0u, __ATOMIC_RELEASE);
    restore_flags(flags);
}
inline void put(char c) noexcept {
    while ((inb(com1 + 5) & 0x20) == 0) asm volatile("pause"); // transmitter holding register empty
    outb(com1, std::uint8_t(c));
}
inline void put(const char* s) noexcept {
    for (; *s; ++s) put(*s);
}
/// Decimal, with 32-bit divisions only (a 64-bit one would call libgcc's
/// __udivmoddi4, which a freestanding image does not have): the high half
/// first, then its remainder and the low half through divl, whose quotient
/// fits 32 bits because the remainder is below 10.
inline void put(std::uint64_t v) noexcept {
    char digits[20];
    int k = 0;
    do {
        std::uint32_t hi = std::uint32_t(v >> 32), lo = std::uint32_t(v), rem = hi % 10;
        hi /= 10;
        asm("divl %[ten]" : "+a"(lo), "+d"(rem) : [ten] "r"(10u));
        digits[k++] = char('0' + rem);
        v = (std::uint64_t(hi) << 32) | lo;
    } while (v != 0);
    while (k > 0) put(digits[--k]);
}
inline void put(std::uint32_t v) noexcept { put(std::uint64_t(v)); }
inline void put(int v) noexcept {
    if (v < 0) {
        put('-');
        put(std::uint64_t(-std::int64_t(v)));
    } else {
        put(std::uint64_t(v));
    }
}
} // namespace detail

/// COM1 at 115200 baud, 8N1, FIFOs on (QEMU ignores the rate; real UARTs do not).
inline void init_console() noexcept {
    using detail::outb, detail::com1;
    outb(com1 + 1, 0x00); // no UART interrupts: output is polled
    outb(com1 + 3, 0x80); // divisor latch
    outb(com1 + 0, 0x01); // 115200 / 1
    outb(com1 + 1, 0x00);
    outb(com1 + 3, 0x03); // 8 bits, no parity, one stop bit
    outb(com1 + 2, 0xC7); // FIFOs on and cleared
}

/// Write each argument (C strings, chars, integers) as one uninterrupted
/// piece of console output.
template <class... Args>
void print(const Args&... args) noexcept {
    const std::uintptr_t flags = detail::lock_console();
    (detail::put(args), ...);
    detail::unlock_console(flags);
}

/// End the run: QEMU's isa-debug-exit (-device isa-debug-exit,iobase=0xf4,
/// iosize=4) exits with status (value << 1) | 1, so 33 for passed and 35 for
/// failed, which no other way out of QEMU produces. Without the device
/// (another machine) the core stops.
[[noreturn]] inline void power_off(bool passed) noexcept {
    detail::outb(0xF4, passed ? 0x10 : 0x11);
    for (;;) asm volatile("cli\n\thlt");
}

} // namespace tacomesh::scc::pc
