// The PC stand-in's start-up (README "Booting under QEMU"): what the SCC's
// boot code does before it calls tacomesh_scc_start on every core (chip/
// start.cpp lists it), done on a multiprocessor PC: an IDT whose LINT0
// vector runs tacomesh_scc_lint_handler, the local APIC enabled and its
// timer armed periodically, interrupts on; and first the part a PC needs
// that sccKit did for the SCC: bringing up the other cores (INIT, then two
// startup IPIs that send them to the trampoline at 0x8000, boot.S).
//
// The core count comes from the kernel command line (`-append cores=N`,
// N = QEMU's -smp); the boot waits for exactly that many cores and checks
// that their APIC IDs are 0..N-1, so that an ID is a core index.
//
// Freestanding, 32-bit, no paging (the PC has no LUTs to honour, and the
// identity map the chip's interface asks for is what flat segments give).
#include <cstddef>
#include <cstdint>

#include <tacomesh/scc/pc/console.hpp>
#include <tacomesh/scc/pc/hardware.hpp>

using tacomesh::scc::core_index;
namespace pc = tacomesh::scc::pc;

extern "C" {
[[noreturn]] void tacomesh_pc_boot(std::uint32_t magic, const std::uint32_t* info) noexcept;
[[noreturn]] void tacomesh_pc_ap_boot(core_index id) noexcept;
[[noreturn]] void tacomesh_pc_exception(std::uint32_t vector, std::uint32_t error, std::uint32_t eip) noexcept;
[[noreturn]] void tacomesh_scc_start(void) noexcept;
void tacomesh_pc_lint_stub();
void tacomesh_pc_timer_stub();
void tacomesh_pc_preempt_stub();
void tacomesh_pc_spurious_stub();
extern void (*const tacomesh_pc_exception_stubs[32])();
extern const std::byte __trampoline_load[];
extern const std::byte __trampoline_bytes[]; // its address is the size (linker script)
extern void (*const __init_array_start[])();
extern void (*const __init_array_end[])();
}
// The hosted C++ runtime (runtime.cpp), if the image links it.
namespace tacomesh::scc::pc::detail {
[[gnu::weak]] void start_runtime(std::uint32_t ram_top) noexcept;
[[gnu::weak]] void start_core(std::uint32_t core) noexcept;
} // namespace tacomesh::scc::pc::detail

// The hooks of the timer and preemption interrupts (pc/hardware.hpp).
extern "C" {
void (*tacomesh_pc_timer_hook)(std::uint32_t) noexcept = nullptr;
void (*tacomesh_pc_preempt_hook)(std::uint32_t) noexcept = nullptr;
}

namespace {

struct [[gnu::packed]] idt_gate {
    std::uint16_t offset_low, selector;
    std::uint8_t zero, type; // 0x8E: present, ring 0, 32-bit interrupt gate (IF cleared on entry)
    std::uint16_t offset_high;
};
struct [[gnu::packed]] idt_descriptor {
    std::uint16_t limit;
    const idt_gate* base;
};

idt_gate idt[256];
std::uint32_t checked_in = 0; // application processors that reached C++
std::uint32_t go = 0;         // set once every core checked in: all start together
std::uint32_t bad_id = 0;     // an application processor whose APIC ID is not below the core count, plus one

constexpr std::uintptr_t trampoline_address = 0x8000;
/// The local APIC timer's period in its ticks (bus clock / 16): under QEMU
/// about 1 ms. It only bounds halt()'s overshoot.
constexpr std::uint32_t timer_ticks = 62'500;

void set_gate(unsigned vector, void (*stub)()) {
    const auto a = reinterpret_cast<std::uintptr_t>(stub);
    idt[vector] = {std::uint16_t(a), 0x08, 0, 0x8E, std::uint16_t(a >> 16)};
}

void delay(std::uint64_t cycles) {
    const std::uint64_t start = pc::detail::rdtsc();
    while (pc::detail::rdtsc() - start < cycles) asm volatile("pause");
}

/// This core's part: the shared IDT, its local APIC on (spurious vector, the
/// legacy LINT pins masked: the PC's 8259 is off), the timer periodic,
/// interrupts on.
void local_setup() {
    const idt_descriptor d{sizeof idt - 1, idt};
    asm volatile("lidt %0" ::"m"(d));
    using namespace pc::apic;
    reg(svr) = 0x100u | pc::spurious_vector;
    reg(lvt_lint0) = 1u << 16;
    reg(lvt_lint1) = 1u << 16;
    reg(lvt_error) = 1u << 16;
    reg(timer_divide) = 0x3; // divide by 16
    reg(lvt_timer) = (1u << 17) | pc::timer_vector; // periodic
    reg(timer_initial) = timer_ticks;
    asm volatile("sti" ::: "memory");
}

[[noreturn]] void fail(const char* what, std::uint32_t a = 0, std::uint32_t b = 0) {
    pc::print("pc boot: ", what, " (", a, ", ", b, ")\n");
    pc::power_off(false);
}

/// `cores=N` from the multiboot command line, 0 if absent.
core_index cores_from(const std::uint32_t* info) {
    if (!(info[0] & (1u << 2))) return 0; // no command line
    const char* s = reinterpret_cast<const char*>(std::uintptr_t(info[4]));
    for (; *s; ++s) {
        const char* key = "cores=";
        const char* p = s;
        while (*key && *p == *key) ++p, ++key;
        if (*key) continue;
        core_index n = 0;
        while (*p >= '0' && *p <= '9') n = n * 10 + core_index(*p++ - '0');
        return n;
    }
    return 0;
}

} // namespace

extern "C" [[noreturn]] void tacomesh_pc_boot(std::uint32_t magic, const std::uint32_t* info) noexcept {
    pc::init_console();
    if (magic != 0x2BADB002u) fail("not started by a multiboot loader: magic", magic, 0x2BADB002u);
    const core_index cores = cores_from(info);
    if (cores < 1 || cores > pc::hardware::max_cores)
        fail("give the core count on the kernel command line, -append cores=N with N QEMU's -smp, "
             "1 <= N <= 48; got N, max",
             cores, pc::hardware::max_cores);
    if (pc::apic::self() != 0) fail("the boot processor's APIC ID is not 0", pc::apic::self(), 0);
    pc::detail::booted_cores = cores;
    for (unsigned v = 0; v < 32; ++v) set_gate(v, tacomesh_pc_exception_stubs[v]);
    set_gate(pc::lint_vector, tacomesh_pc_lint_stub);
    set_gate(pc::timer_vector, tacomesh_pc_timer_stub);
    set_gate(pc::preempt_vector, tacomesh_pc_preempt_stub);
    set_gate(pc::spurious_vector, tacomesh_pc_spurious_stub);
    pc::detail::outb(0x21, 0xFF); // the 8259s masked: the local APICs take every interrupt
    pc::detail::outb(0xA1, 0xFF);
    local_setup();
    // The C++ runtime after the IDT: a fault in a static constructor is reported.
    if (pc::detail::start_runtime) {
        // The memory above 1 MB, from the loader's map (flags bit 0: mem_upper in KB).
        if (!(info[0] & 1u)) fail("the multiboot loader gave no memory size", info[0], 1);
        pc::detail::start_runtime(0x10'0000u + info[2] * 1024u);
    } else if (+__init_array_start != +__init_array_end) {
        fail("static constructors in an image without runtime.cpp, which would run them: constructors",
             std::uint32_t(__init_array_end - __init_array_start), 0);
    }

    if (cores > 1) {
        const auto size = reinterpret_cast<std::uintptr_t>(__trampoline_bytes);
        pc::detail::store(reinterpret_cast<void*>(trampoline_address), __trampoline_load, size);
        // INIT to all others, then the startup IPI twice (the MP
        // specification's sequence; QEMU takes the first), vector = page.
        using pc::apic::send;
        send(0, 0x000C'4500u);
        delay(10'000'000);
        for (int i = 0; i < 2; ++i) {
            send(0, 0x000C'4600u | std::uint32_t(trampoline_address >> 12));
            delay(1'000'000);
        }
        auto no_extra_core = [&] {
            if (const std::uint32_t id = __atomic_load_n(&bad_id, __ATOMIC_ACQUIRE))
                fail("a core's APIC ID is not below cores= (QEMU's -smp more than cores=?): ID, cores", id - 1, cores);
        };
        std::uint64_t waited = 0;
        while (__atomic_load_n(&checked_in, __ATOMIC_ACQUIRE) < cores - 1) {
            no_extra_core();
            delay(1'000'000);
            // Some 20-60 s of host time (QEMU's 48 virtual CPUs on a loaded
            // host of two take seconds to start): -smp is less than cores=.
            if (++waited == 60'000)
                fail("cores checked in, of", __atomic_load_n(&checked_in, __ATOMIC_ACQUIRE) + 1, cores);
        }
        delay(10'000'000); // time for cores beyond cores=, if QEMU has any, to show
        no_extra_core();
    }
    pc::print("pc boot: ", cores, " cores up\n");
    __atomic_store_n(&go, 1u, __ATOMIC_RELEASE);
    tacomesh_scc_start();
}

extern "C" [[noreturn]] void tacomesh_pc_ap_boot(core_index id) noexcept {
    if (id >= pc::detail::booted_cores) {
        __atomic_store_n(&bad_id, id + 1, __ATOMIC_RELEASE);
        for (;;) asm volatile("cli\n\thlt");
    }
    local_setup();
    if (pc::detail::start_core) pc::detail::start_core(id);
    __atomic_fetch_add(&checked_in, 1u, __ATOMIC_ACQ_REL);
    while (__atomic_load_n(&go, __ATOMIC_ACQUIRE) == 0) asm volatile("pause");
    tacomesh_scc_start();
}

// The four functions a freestanding C++ program may still call (GCC's and
// Clang's code generators emit memcpy and memset for aggregate copies and
// zeroing). String instructions, which no compiler turns back into a call
// of the function being defined.
extern "C" void* memcpy(void* to, const void* from, std::size_t n) noexcept {
    void* d = to;
    asm volatile("rep movsb" : "+D"(d), "+S"(from), "+c"(n)::"memory");
    return to;
}
extern "C" void* memmove(void* to, const void* from, std::size_t n) noexcept {
    if (to <= from || static_cast<const char*>(from) + n <= static_cast<char*>(to)) return memcpy(to, from, n);
    void* d = static_cast<char*>(to) + n - 1;
    const void* s = static_cast<const char*>(from) + n - 1;
    asm volatile("std\n\trep movsb\n\tcld" : "+D"(d), "+S"(s), "+c"(n)::"memory", "cc");
    return to;
}
extern "C" void* memset(void* to, int value, std::size_t n) noexcept {
    void* d = to;
    asm volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(value) : "memory");
    return to;
}
extern "C" int memcmp(const void* a, const void* b, std::size_t n) noexcept {
    const auto* x = static_cast<const unsigned char*>(a);
    const auto* y = static_cast<const unsigned char*>(b);
    for (std::size_t i = 0; i < n; ++i)
        if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
    return 0;
}

extern "C" [[noreturn]] void tacomesh_pc_exception(std::uint32_t vector, std::uint32_t error, std::uint32_t eip) noexcept {
    pc::print("pc: core ", pc::apic::self(), ": exception ", vector, ", error code ", error, ", at eip ", eip, "\n");
    pc::power_off(false);
}
