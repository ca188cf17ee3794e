// The C library that the C++ runtime (GCC's libstdc++, libsupc++, libgcc
// and its unwinder, linked statically from the 32-bit multilib) calls into,
// for images that run TACO bare metal on the PC stand-in (README "TACO
// bare metal"). Only what those libraries and the runtime reach, each piece
// as bare metal has it:
//   - memory: malloc and friends over the RAM above the image, one lock;
//     mmap of anonymous memory (coroutine stacks) on top of it, mprotect a
//     no-op (no paging: a coroutine stack has no guard page here);
//   - output: stdio's write paths go to the serial console; abort and a
//     failed assert end the run as failed;
//   - threads: a core is a thread; pthread mutexes are spin locks, the
//     stack a core asks for is its boot stack;
//   - time: clock_gettime from the time-stamp counter, calibrated against
//     the PC's interval timer at boot (boot.cpp);
//   - exceptions: the unwinder finds the image's .eh_frame_hdr through
//     _dl_find_object, as it would find a shared object's.
// Everything else a program might call is left undefined on purpose: the
// link says what is missing instead of a stub that does the wrong thing.
#include <cerrno>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <ctime>

#include <boost/context/stack_traits.hpp>

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>
#include <sys/mman.h>

#include <tacomesh/scc/pc/console.hpp>
#include <tacomesh/scc/pc/hardware.hpp>
#include <tacomesh/scc/pc/runtime.hpp>

namespace pc = tacomesh::scc::pc;

extern "C" {
// image.ld and boot.S
extern std::byte __heap_start[];
extern const std::byte __eh_frame_hdr_start[];
extern const std::byte __image_start[], __image_end[];
extern const std::byte __tdata_start[], __tdata_end[], __tbss_end[], __tls_align[];
extern void (*const __init_array_start[])();
extern void (*const __init_array_end[])();
extern std::byte tacomesh_pc_stacks[];
extern std::uint64_t tacomesh_pc_gdt[];
}

namespace {

// ---- memory ---------------------------------------------------------------
//
// Size classes of powers of two from 16 bytes, each with a free list; a
// block keeps its class in a 16-byte header (16: operator new's alignment).
// Blocks above the largest class are carved from the same bump region and
// kept on a first-fit list when freed. One spin lock: the
// runtime allocates off its hot paths.

struct header {
    std::uint32_t size;    // usable bytes (a class's size, or a large block's)
    std::uint32_t offset;  // aligned allocations: bytes back to the block's header; else 0
    header* next;          // on a free list
    std::uint32_t magic;
};
static_assert(sizeof(header) == 16);
constexpr std::uint32_t live = 0x11FE'A110, dead = 0xDEAD'B10C;
constexpr unsigned classes = 20; // 16 B .. 8 MB
header* free_lists[classes];
header* large_free;
std::byte* bump;
std::byte* heap_end;
std::uint32_t heap_lock;

struct heap_guard {
    std::uintptr_t flags;
    heap_guard() noexcept : flags(pc::detail::save_flags_cli()) {
        while (__atomic_exchange_n(&heap_lock, 1u, __ATOMIC_ACQUIRE) != 0) asm volatile("pause");
    }
    ~heap_guard() {
        __atomic_store_n(&heap_lock, 0u, __ATOMIC_RELEASE);
        pc::detail::restore_flags(flags);
    }
};

unsigned class_of(std::size_t n) noexcept {
    unsigned c = 0;
    while ((std::size_t(16) << c) < n) ++c;
    return c;
}

[[noreturn]] void out_of_memory(std::size_t n) {
    pc::print("pc runtime: out of memory: ", std::uint32_t(n), " bytes asked, ",
              std::uint32_t(heap_end - bump), " left above the image (give QEMU more: -m)\n");
    pc::power_off(false);
}

void* allocate(std::size_t n) {
    if (n == 0) n = 1;
    heap_guard g;
    header* h = nullptr;
    if (const unsigned c = class_of(n); c < classes) {
        const std::size_t size = std::size_t(16) << c;
        if ((h = free_lists[c]) != nullptr) {
            free_lists[c] = h->next;
        } else {
            if (std::size_t(heap_end - bump) < size + sizeof(header)) out_of_memory(n);
            h = reinterpret_cast<header*>(bump);
            bump += size + sizeof(header);
            h->size = std::uint32_t(size);
        }
    } else {
        const std::size_t size = (n + 4095) & ~std::size_t(4095);
        for (header** p = &large_free; *p; p = &(*p)->next)
            if ((*p)->size >= size) {
                h = *p;
                *p = h->next;
                break;
            }
        if (!h) {
            if (std::size_t(heap_end - bump) < size + sizeof(header)) out_of_memory(n);
            h = reinterpret_cast<header*>(bump);
            bump += size + sizeof(header);
            h->size = std::uint32_t(size);
        }
    }
    h->offset = 0;
    h->next = nullptr;
    h->magic = live;
    return h + 1;
}

header* header_of(void* p) {
    auto* h = static_cast<header*>(p) - 1;
    if (h->offset) h = reinterpret_cast<header*>(reinterpret_cast<std::byte*>(h) - h->offset);
    if (h->magic != live) {
        pc::print("pc runtime: free or realloc of a pointer malloc did not return, or freed twice: ",
                  std::uint32_t(reinterpret_cast<std::uintptr_t>(p)), "\n");
        pc::power_off(false);
    }
    return h;
}

void release(void* p) {
    if (!p) return;
    header* h = header_of(p);
    heap_guard g;
    h->magic = dead;
    if (const unsigned c = class_of(h->size); c < classes && (std::size_t(16) << c) == h->size) {
        h->next = free_lists[c];
        free_lists[c] = h;
    } else {
        h->next = large_free;
        large_free = h;
    }
}

void* allocate_aligned(std::size_t align, std::size_t n) {
    if (align <= 16) return allocate(n);
    auto* raw = static_cast<std::byte*>(allocate(n + align));
    auto* h = reinterpret_cast<header*>(raw) - 1;
    std::byte* p = reinterpret_cast<std::byte*>((reinterpret_cast<std::uintptr_t>(raw) + align - 1) & ~(align - 1));
    if (p == raw) return p;
    auto* inner = reinterpret_cast<header*>(p) - 1; // room: p - raw >= 16 since both are 16-aligned and differ
    inner->offset = std::uint32_t(reinterpret_cast<std::byte*>(inner) - reinterpret_cast<std::byte*>(h));
    inner->magic = live;
    return p;
}

std::uint32_t errno_of[pc::hardware::max_cores];

// ---- time -----------------------------------------------------------------

using pc::detail::rdtsc;

} // namespace

namespace {

std::uint64_t tsc_rate = 1, tsc_at_boot = 0;

/// The time-stamp counter against channel 2 of the PC's interval timer
/// (1,193,182 Hz on every PC): ticks during 10 ms of the timer.
void calibrate_tsc() noexcept {
    using pc::detail::inb, pc::detail::outb;
    constexpr std::uint32_t pit_hz = 1'193'182, count = pit_hz / 100;
    outb(0x61, std::uint8_t((inb(0x61) & ~0x02) & ~0x01)); // gate low, speaker off
    outb(0x43, 0xB0);                                         // channel 2, both bytes, mode 0 (out rises at 0)
    outb(0x42, std::uint8_t(count & 0xFF));
    outb(0x42, std::uint8_t(count >> 8));
    outb(0x61, std::uint8_t(inb(0x61) | 0x01)); // gate high: counting starts
    const std::uint64_t t0 = rdtsc();
    while ((inb(0x61) & 0x20) == 0) {}
    const std::uint64_t ticks = rdtsc() - t0;
    tsc_rate = ticks * pit_hz / count;
    tsc_at_boot = t0;
}

/// x86's variant II thread-local storage (as the i386 ELF ABI lays it out
/// for an executable): the block [tp - size, tp) holds .tdata's copy, then
/// .tbss zeroed; tp points at its own address (%gs:0), and %gs is a segment
/// based at tp, one GDT entry per core.
void make_thread_block(std::uint32_t core) noexcept {
    const std::size_t align = reinterpret_cast<std::uintptr_t>(__tls_align) < 16 ? 16
                            : reinterpret_cast<std::uintptr_t>(__tls_align);
    const std::size_t data = std::size_t(__tdata_end - __tdata_start), all = std::size_t(__tbss_end - __tdata_start);
    const std::size_t size = (all + align - 1) & ~(align - 1);
    auto* block = static_cast<std::byte*>(allocate_aligned(align, size + 16));
    __builtin_memcpy(block, __tdata_start, data);
    __builtin_memset(block + data, 0, size - data);
    std::byte* tp = block + size;
    *reinterpret_cast<std::byte**>(tp) = tp;
    const auto base = std::uint64_t(reinterpret_cast<std::uintptr_t>(tp));
    // Present, ring 0, read/write data, 4 GB limit in pages, 32-bit.
    tacomesh_pc_gdt[3 + core] = 0x00CF'9200'0000'FFFFull | ((base & 0xFF'FFFF) << 16) | ((base >> 24) << 56);
    const std::uint16_t selector = std::uint16_t((3 + core) * 8);
    asm volatile("mov %0, %%gs" ::"r"(selector) : "memory");
}

} // namespace

void tacomesh::scc::pc::detail::start_runtime(std::uint32_t ram_top) noexcept {
    bump = reinterpret_cast<std::byte*>((reinterpret_cast<std::uintptr_t>(__heap_start) + 15) & ~std::uintptr_t(15));
    heap_end = reinterpret_cast<std::byte*>(std::uintptr_t(ram_top));
    calibrate_tsc();
    make_thread_block(0);
    for (auto* f = __init_array_start; f != __init_array_end; ++f) (*f)();
}

void tacomesh::scc::pc::detail::start_core(std::uint32_t core) noexcept { make_thread_block(core); }

std::uint64_t tacomesh::scc::pc::detail::tsc_hz() noexcept { return tsc_rate; }

std::uint64_t tacomesh::scc::pc::detail::tsc_to_ns(std::uint64_t tsc) noexcept {
    const std::uint64_t t = tsc - tsc_at_boot; // split so that nothing overflows 64 bits
    return t / tsc_rate * 1'000'000'000ull + t % tsc_rate * 1'000'000'000ull / tsc_rate;
}

extern "C" {

// ---- memory ---------------------------------------------------------------
void* malloc(std::size_t n) { return allocate(n); }
void free(void* p) { release(p); }
void* calloc(std::size_t k, std::size_t n) {
    if (n && k > std::size_t(-1) / n) return nullptr;
    void* p = allocate(k * n);
    __builtin_memset(p, 0, k * n);
    return p;
}
void* realloc(void* p, std::size_t n) {
    if (!p) return allocate(n);
    header* h = header_of(p);
    const std::size_t usable = h->size - (static_cast<std::byte*>(p) - reinterpret_cast<std::byte*>(h + 1));
    if (n <= usable) return p;
    void* q = allocate(n);
    __builtin_memcpy(q, p, usable);
    release(p);
    return q;
}
void* aligned_alloc(std::size_t align, std::size_t n) { return allocate_aligned(align, n); }
int posix_memalign(void** out, std::size_t align, std::size_t n) {
    *out = allocate_aligned(align, n);
    return 0;
}
void* memalign(std::size_t align, std::size_t n) { return allocate_aligned(align, n); }

void* mmap(void*, std::size_t n, int, int flags, int, off_t) {
    if (!(flags & MAP_ANONYMOUS)) {
        errno_of[pc::apic::self()] = ENODEV;
        return MAP_FAILED;
    }
    void* p = allocate_aligned(4096, n);
    __builtin_memset(p, 0, n);
    return p;
}
int munmap(void* p, std::size_t) {
    release(p);
    return 0;
}
int mprotect(void*, std::size_t, int) { return 0; } // no paging, no guard pages
long sysconf(int name) { return name == _SC_PAGESIZE ? 4096 : -1; }

} // extern "C"

// The part of Boost.Context that is compiled (its stack_traits.cpp), as
// bare metal answers: TACO's coroutine stacks ask it for the page size, and
// the stacks are only bounded by the heap.
bool boost::context::stack_traits::is_unbounded() noexcept { return false; }
std::size_t boost::context::stack_traits::page_size() noexcept { return 4096; }
std::size_t boost::context::stack_traits::default_size() noexcept { return 64 * 1024; }
std::size_t boost::context::stack_traits::minimum_size() noexcept { return 8 * 1024; }
std::size_t boost::context::stack_traits::maximum_size() noexcept { return 64 * 1024 * 1024; }

extern "C" {

// ---- strings --------------------------------------------------------------
std::size_t strlen(const char* s) {
    std::size_t n = 0;
    while (s[n]) ++n;
    return n;
}
int strcmp(const char* a, const char* b) {
    while (*a && *a == *b) ++a, ++b;
    return int(static_cast<unsigned char>(*a)) - int(static_cast<unsigned char>(*b));
}
int strncmp(const char* a, const char* b, std::size_t n) {
    for (; n; --n, ++a, ++b)
        if (*a != *b || !*a) return int(static_cast<unsigned char>(*a)) - int(static_cast<unsigned char>(*b));
    return 0;
}
void* memchr(const void* p, int c, std::size_t n) {
    const auto* s = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i)
        if (s[i] == static_cast<unsigned char>(c)) return const_cast<unsigned char*>(s + i);
    return nullptr;
}
char* gettext(const char* msgid) { return const_cast<char*>(msgid); }
char* strerror(int e) {
    switch (e) {
    case ENOENT: return const_cast<char*>("no such file or directory (bare metal has no files)");
    case EBADF: return const_cast<char*>("bad file descriptor (bare metal has only the console)");
    case ENOSYS: return const_cast<char*>("not implemented on bare metal");
    case ENOMEM: return const_cast<char*>("out of memory");
    case EBUSY: return const_cast<char*>("busy");
    default: return const_cast<char*>("error (bare metal: no text for this number)");
    }
}

// What the compilers call of libm where they do not inline it (clang for
// Boost.Context's page count: ceil of a float).
float ceilf(float x) {
    if (!(x > -8388608.0f && x < 8388608.0f)) return x; // already whole (2^23 and up), infinite or NaN
    const float whole = float(int(x));
    return whole < x ? whole + 1.0f : whole;
}
double ceil(double x) {
    if (!(x > -4503599627370496.0 && x < 4503599627370496.0)) return x; // 2^52 and up are whole
    const double whole = double((long long)x);
    return whole < x ? whole + 1.0 : whole;
}

// ---- errors and output ----------------------------------------------------
int* __errno_location() { return reinterpret_cast<int*>(&errno_of[pc::apic::self()]); }
char __libc_single_threaded = 0; // many cores: libstdc++'s reference counts stay atomic

void abort() {
    pc::print("pc runtime: abort() on core ", pc::apic::self(), "\n");
    pc::power_off(false);
}
void __assert_fail(const char* expr, const char* file, unsigned line, const char* function) {
    pc::print("pc runtime: assertion failed on core ", pc::apic::self(), ": ", expr, " (", file, ":", line, ", ",
              function, ")\n");
    pc::power_off(false);
}

// stdio: the streams are tokens; every write goes to the console.
FILE* stderr = reinterpret_cast<FILE*>(2);
FILE* stdout = reinterpret_cast<FILE*>(1);
std::size_t fwrite(const void* p, std::size_t size, std::size_t n, FILE*) {
    const auto* s = static_cast<const char*>(p);
    char chunk[128];
    std::size_t left = size * n, k = 0;
    while (left) {
        chunk[k++] = *s++;
        --left;
        if (k == sizeof chunk - 1 || !left) {
            chunk[k] = 0;
            pc::print(static_cast<const char*>(chunk));
            k = 0;
        }
    }
    return n;
}
int fputs(const char* s, FILE*) {
    pc::print(s);
    return 0;
}
int fputc(int c, FILE*) {
    pc::print(char(c));
    return c;
}
int fflush(FILE*) { return 0; }

// The formatting libstdc++'s messages use (%s, %d, %u, %x, %zu, %lu, %%).
int vsnprintf(char* out, std::size_t cap, const char* f, va_list args) {
    std::size_t k = 0;
    auto put = [&](char c) {
        if (k + 1 < cap) out[k] = c;
        ++k;
    };
    auto number = [&](unsigned long long v, unsigned base, bool negative) {
        char d[24];
        int i = 0;
        do d[i++] = "0123456789abcdef"[v % base];
        while ((v /= base) != 0);
        if (negative) put('-');
        while (i) put(d[--i]);
    };
    for (; *f; ++f) {
        if (*f != '%') {
            put(*f);
            continue;
        }
        ++f;
        int longs = 0;
        while (*f == 'l' || *f == 'z') longs += *f++ == 'l' ? 1 : 0;
        switch (*f) {
        case 's':
            for (const char* s = va_arg(args, const char*); *s; ++s) put(*s);
            break;
        case 'd':
        case 'i': {
            const long long v = longs >= 2 ? va_arg(args, long long) : va_arg(args, long);
            number(v < 0 ? 0ull - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v), 10, v < 0);
            break;
        }
        case 'u':
        case 'x':
            number(longs >= 2 ? va_arg(args, unsigned long long) : va_arg(args, unsigned long), *f == 'u' ? 10 : 16,
                   false);
            break;
        case 'c':
            put(char(va_arg(args, int)));
            break;
        case '%':
            put('%');
            break;
        default: // a conversion this console does not have: say so in the text
            put('?');
            break;
        }
    }
    if (cap) out[k < cap ? k : cap - 1] = 0;
    return int(k);
}
int snprintf(char* out, std::size_t cap, const char* f, ...) {
    va_list a;
    va_start(a, f);
    const int n = vsnprintf(out, cap, f, a);
    va_end(a);
    return n;
}
int sprintf(char* out, const char* f, ...) {
    va_list a;
    va_start(a, f);
    const int n = vsnprintf(out, std::size_t(-1) / 2, f, a);
    va_end(a);
    return n;
}
int fprintf(FILE*, const char* f, ...) {
    char text[512];
    va_list a;
    va_start(a, f);
    const int n = vsnprintf(text, sizeof text, f, a);
    va_end(a);
    pc::print(static_cast<const char*>(text));
    return n;
}

// ---- threads: one per core ------------------------------------------------
// A mutex is its first word, taken with xchg (PTHREAD_MUTEX_INITIALIZER is
// all zeros: free).
int pthread_mutex_lock(pthread_mutex_t* m) {
    auto* w = reinterpret_cast<unsigned*>(m);
    while (__atomic_exchange_n(w, 1u, __ATOMIC_ACQUIRE) != 0) asm volatile("pause");
    return 0;
}
int pthread_mutex_trylock(pthread_mutex_t* m) {
    return __atomic_exchange_n(reinterpret_cast<unsigned*>(m), 1u, __ATOMIC_ACQUIRE) == 0 ? 0 : EBUSY;
}
int pthread_mutex_unlock(pthread_mutex_t* m) {
    __atomic_store_n(reinterpret_cast<unsigned*>(m), 0u, __ATOMIC_RELEASE);
    return 0;
}
pthread_t pthread_self() { return pthread_t(pc::apic::self() + 1); }
// The stack of the calling core (boot.S: tacomesh_pc_stack_bytes each).
int pthread_getattr_np(pthread_t, pthread_attr_t* attr) {
    auto* w = reinterpret_cast<std::uintptr_t*>(attr);
    w[0] = reinterpret_cast<std::uintptr_t>(tacomesh_pc_stacks) + pc::apic::self() * pc::stack_bytes;
    w[1] = pc::stack_bytes;
    return 0;
}
int pthread_attr_getstack(const pthread_attr_t* attr, void** low, std::size_t* size) {
    const auto* w = reinterpret_cast<const std::uintptr_t*>(attr);
    *low = reinterpret_cast<void*>(w[0]);
    *size = w[1];
    return 0;
}
int pthread_attr_destroy(pthread_attr_t*) { return 0; }

// Function-local statics: one core initialises, the others wait (libsupc++'s
// own guards would take no lock: it sees no threads in a static link).
int __cxa_guard_acquire(long long* g) {
    auto* b = reinterpret_cast<unsigned char*>(g);
    for (;;) {
        if (__atomic_load_n(&b[0], __ATOMIC_ACQUIRE)) return 0; // done
        unsigned char expected = 0;
        if (__atomic_compare_exchange_n(&b[1], &expected, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return 1;
        asm volatile("pause");
    }
}
void __cxa_guard_release(long long* g) {
    auto* b = reinterpret_cast<unsigned char*>(g);
    __atomic_store_n(&b[0], 1, __ATOMIC_RELEASE);
}
void __cxa_guard_abort(long long* g) {
    auto* b = reinterpret_cast<unsigned char*>(g);
    __atomic_store_n(&b[1], 0, __ATOMIC_RELEASE);
}

// ---- time -----------------------------------------------------------------
int clock_gettime(clockid_t, struct timespec* t) {
    const std::uint64_t ns = pc::detail::tsc_to_ns(rdtsc());
    t->tv_sec = time_t(ns / 1'000'000'000ull);
    t->tv_nsec = long(ns % 1'000'000'000ull);
    return 0;
}

// ---- no signals -----------------------------------------------------------
// Nothing raises one on bare metal (a fault is an exception that ends the
// run, boot.S): installing a handler or an alternate stack fails with ENOSYS,
// which TACO's coroutine overflow report takes as "none" (and a coroutine
// stack here has no guard page to overflow into anyway).
int sigaction(int, const struct sigaction*, struct sigaction*) {
    errno_of[pc::apic::self()] = ENOSYS;
    return -1;
}
int sigaltstack(const stack_t*, stack_t*) {
    errno_of[pc::apic::self()] = ENOSYS;
    return -1;
}
int sigemptyset(sigset_t* set) {
    __builtin_memset(set, 0, sizeof *set);
    return 0;
}
sighandler_t signal(int, sighandler_t) {
    errno_of[pc::apic::self()] = ENOSYS;
    return SIG_ERR;
}
/// File descriptors 1 and 2 are the console; there are no others.
ssize_t write(int fd, const void* p, std::size_t n) {
    if (fd != 1 && fd != 2) {
        errno_of[pc::apic::self()] = EBADF;
        return -1;
    }
    return ssize_t(fwrite(p, 1, n, stderr));
}

// ---- no exit ---------------------------------------------------------------
// A bare-metal run ends by powering off, so static destructors never run:
// registering one is accepted and forgotten.
void* __dso_handle = &__dso_handle;
int __cxa_atexit(void (*)(void*), void*, void*) { return 0; }
int atexit(void (*)()) { return 0; }
int __cxa_thread_atexit_impl(void (*)(void*), void*, void*) { return 0; } // a core's thread never ends

// ---- no files, no entropy ------------------------------------------------
// libstdc++'s std::random_device comes along with its strings; bare metal has
// neither files nor an entropy source, so these fail as a system without
// them would: std::random_device then throws "random_device could not be
// initialized", a clear error.
int open(const char*, int, ...) {
    errno_of[pc::apic::self()] = ENOENT;
    return -1;
}
ssize_t read(int, void*, std::size_t) {
    errno_of[pc::apic::self()] = EBADF;
    return -1;
}
int close(int) {
    errno_of[pc::apic::self()] = EBADF;
    return -1;
}
int ioctl(int, unsigned long, ...) {
    errno_of[pc::apic::self()] = EBADF;
    return -1;
}
int getentropy(void*, std::size_t) {
    errno_of[pc::apic::self()] = ENOSYS;
    return -1;
}
std::uint32_t arc4random() {
    pc::print("pc runtime: arc4random: no entropy source on bare metal\n");
    pc::power_off(false);
}

// ---- exceptions -----------------------------------------------------------
// One object, the image: the unwinder looks a return address up here.
int _dl_find_object(void* pc_address, struct dl_find_object* result) {
    const auto* a = static_cast<const std::byte*>(pc_address);
    if (a < __image_start || a >= __image_end) return -1;
    *result = {};
    result->dlfo_map_start = const_cast<std::byte*>(__image_start);
    result->dlfo_map_end = const_cast<std::byte*>(__image_end);
    result->dlfo_eh_frame = const_cast<std::byte*>(__eh_frame_hdr_start);
    return 0;
}

} // extern "C"
