#pragma once
// The spin-wait hint: tells the CPU that this core is spinning, so that it
// yields pipeline resources to its hyperthread sibling and saves power (x86
// `pause`, ARM `yield`). Elsewhere a compiler barrier, so the loop around it
// still re-reads memory.
namespace tacomesh::posix::detail {

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    asm volatile("yield" ::: "memory");
#else
    asm volatile("" ::: "memory");
#endif
}

} // namespace tacomesh::posix::detail
