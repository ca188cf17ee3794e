#pragma once
// MESH memory management (MESH paper, section III.A): allocators for shared
// memory in each mode and for core-private memory, all at logical addresses
// that are the same on every core. The platform reserves the address ranges
// before the cores start (memory_platform.hpp); which parts are in use is
// decided by one allocator on the home core, which every other core asks
// through a TACO invocation, so no lock is shared between cores and the same
// code runs where cores share no atomics (the SCC's off-chip memory).
#include <cstddef>
#include <cstdint>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <mesh/detail/block_pool.hpp>
#include <mesh/detail/range_allocator.hpp>
#include <taco/async.hpp>
#include <taco/platform/memory_endpoint.hpp>
#include <taco/runtime/core.hpp>
#include <taco/this_core.hpp>
#include <taco/usage_error.hpp>

namespace mesh {

/// The core whose allocator owns the logical address ranges.
inline constexpr taco::core_id home_core = 0;

/// Thrown when a region has no free block large enough.
class out_of_memory : public std::bad_alloc {
public:
    explicit out_of_memory(std::string what) : what_(std::move(what)) {}
    const char* what() const noexcept override { return what_.c_str(); }

private:
    std::string what_;
};

/// How shared memory is cached (the platform's memory modes).
using taco::memory_mode;

namespace detail {

/// MESH's memory exists only while the run that reserved it does: after
/// taco::run has returned it is unmapped, so a proxy, a destroy or an
/// allocation through a sharing_ptr kept from that run would fault on it
/// (or abort in the runtime) instead of saying what is wrong. Every entry
/// point that needs the runtime asks here first: one thread-local load.
inline void require_run(const char* what) {
    if (!taco::detail::tls_runtime) [[unlikely]]
        throw taco::usage_error(std::string(what) +
                                " outside taco::run (no core runs here): MESH's shared objects and memory live only "
                                "during the run that made them (taco::run unmaps them when it returns); use them "
                                "inside the function given to taco::run");
}

/// The running core, as MESH's way to its platform's memory
/// (taco/runtime/memory_port.hpp) and its short pause.
inline taco::detail::core& memory() { return taco::detail::runtime(); }

/// A logical address as an invocation argument or result (raw pointers are
/// rejected there because they usually mean core-private memory; these do not).
struct address {
    void* p = nullptr;
};

enum class region_kind : std::uint8_t { cached, non_cached, write_through, core_private };

inline const char* region_name(region_kind k) noexcept {
    switch (k) {
    case region_kind::cached: return "cached shared memory";
    case region_kind::non_cached: return "non-cached shared memory";
    case region_kind::write_through: return "write-through shared memory";
    default: return "core-private memory";
    }
}

/// Where a platform backs write-through memory: a region of its own (the
/// SCC's MPBT+WT pages), or its cached or non-cached one (POSIX: non-cached).
inline region_kind write_through_kind() {
    const std::byte* wt = memory().region(memory_mode::write_through).data();
    if (wt == memory().region(memory_mode::cached).data()) return region_kind::cached;
    if (wt == memory().region(memory_mode::non_cached).data()) return region_kind::non_cached;
    return region_kind::write_through;
}

/// The allocators, on the home core only (a taco::core_local there).
class home_allocators {
public:
    home_allocators()
        : cached_(span_of(memory().region(memory_mode::cached))),
          non_cached_(span_of(memory().region(memory_mode::non_cached))),
          write_through_(write_through_kind() == region_kind::write_through
                             ? span_of(memory().region(memory_mode::write_through))
                             : range_allocator{nullptr, 0}),
          private_(span_of(memory().private_region())), on_chip_(memory().on_chip_regions(), fast_block_bytes) {}

    /// Size and alignment of the blocks fast_block gives: one control block.
    static constexpr std::size_t fast_block_bytes = 64;

    range_allocator& of(region_kind k) noexcept {
        switch (k) {
        case region_kind::cached: return cached_;
        case region_kind::non_cached: return non_cached_;
        case region_kind::write_through: return write_through_;
        default: return private_;
        }
    }
    /// A block of on-chip memory while one is free, then of non-cached memory.
    void* allocate_fast_block() {
        if (std::byte* b = on_chip_.allocate()) return b;
        return non_cached_.allocate(fast_block_bytes, fast_block_bytes);
    }
    bool deallocate_fast_block(const void* p) { return on_chip_.deallocate(p) || non_cached_.deallocate(p); }
    const block_pool& on_chip() const noexcept { return on_chip_; }

private:
    static range_allocator span_of(std::span<std::byte> s) { return {s.data(), s.size()}; }
    range_allocator cached_, non_cached_, write_through_, private_;
    block_pool on_chip_;
};

inline address home_allocate(region_kind k, std::size_t bytes, std::size_t align) {
    return {taco::core_local<home_allocators>().of(k).allocate(bytes, align)};
}
inline bool home_deallocate(region_kind k, address a) { return taco::core_local<home_allocators>().of(k).deallocate(a.p); }
inline std::size_t home_largest_free(region_kind k) { return taco::core_local<home_allocators>().of(k).largest_free(); }
inline std::size_t home_bytes_in_use(region_kind k) { return taco::core_local<home_allocators>().of(k).bytes_in_use(); }

inline address home_allocate_fast_block() { return {taco::core_local<home_allocators>().allocate_fast_block()}; }
inline bool home_deallocate_fast_block(address a) {
    return taco::core_local<home_allocators>().deallocate_fast_block(a.p);
}
inline std::size_t home_on_chip_in_use() { return taco::core_local<home_allocators>().on_chip().in_use(); }

/// Run f(args...) on the home core (directly there, by a sync call elsewhere).
template <class F, class... A>
auto at_home(F f, A... args) {
    return taco::detail::call_on(home_core, f, args...);
}

/// Shared modes map to the region the platform backs them with.
inline region_kind kind_of(memory_mode m) {
    if (m == memory_mode::cached) return region_kind::cached;
    if (m == memory_mode::non_cached) return region_kind::non_cached;
    return write_through_kind();
}

/// The configuration setting that sizes a region, as every platform's
/// config names it (posix, scc and mpi alike), so the message fits all.
inline const char* setting_of(region_kind k) noexcept {
    switch (k) {
    case region_kind::cached: return "cached_bytes";
    case region_kind::non_cached: return "non_cached_bytes";
    case region_kind::write_through: return "write_through_bytes";
    default: return "private_bytes";
    }
}

inline void* allocate_in(region_kind k, std::size_t bytes, std::size_t align) {
    if (align == 0 || (align & (align - 1)) != 0)
        throw std::invalid_argument("mesh::allocate: alignment must be a power of two, got " + std::to_string(align));
    if (void* p = at_home(&home_allocate, k, bytes, align).p) return p;
    throw out_of_memory("mesh: out of " + std::string(region_name(k)) + ": asked for " + std::to_string(bytes) +
                        " bytes, the largest free block has " + std::to_string(at_home(&home_largest_free, k)) +
                        " (raise the platform's config." + setting_of(k) +
                        ", in the configuration given to taco::run)");
}

inline void deallocate_in(region_kind k, void* p) {
    if (!p) return;
    if (!at_home(&home_deallocate, k, address{p}))
        throw std::invalid_argument("mesh::deallocate: the address was not allocated in " +
                                    std::string(region_name(k)) + " (or was freed already)");
}

/// 64 bytes, 64-aligned, for what every acquire reads (a control block):
/// in the platform's on-chip memory while it has room (the SCC's MPB SRAM,
/// where the MESH paper keeps the Timestamp counters), else non-cached.
inline void* allocate_fast_block() {
    if (void* p = at_home(&home_allocate_fast_block).p) return p;
    throw out_of_memory("mesh: out of non-cached shared memory for a control block (raise the platform's "
                        "config.non_cached_bytes, in the configuration given to taco::run)");
}
inline void deallocate_fast_block(void* p) {
    if (p && !at_home(&home_deallocate_fast_block, address{p}))
        throw std::invalid_argument("mesh: a control block freed twice (or not from allocate_fast_block)");
}

/// Non-cached memory for MESH's own bookkeeping (part lists, change
/// stamps), which it keeps consistent itself also where each core has a
/// view of non-cached memory (shared_word.hpp); applications cannot there.
inline void* allocate_bookkeeping(std::size_t bytes, std::size_t align) {
    return allocate_in(region_kind::non_cached, bytes, align);
}
inline void deallocate_bookkeeping(void* p) { deallocate_in(region_kind::non_cached, p); }

/// Whether p lies in the platform's on-chip memory (taco::on_chip_memory_endpoint).
inline bool on_chip(const void* p) noexcept { return in_pieces(memory().on_chip_regions(), p); }
/// Blocks of on-chip memory in use (all cores together).
inline std::size_t on_chip_blocks_in_use() { return at_home(&home_on_chip_in_use); }

} // namespace detail

/// Whether plain loads and stores of non-cached memory reach every core of
/// this run (threads, core processes, the SCC), so that data placed there
/// by mesh::allocate(non_cached) needs no controller; false where each core
/// has a view of its own (MPI ranks), and allocate(non_cached) is refused.
inline bool non_cached_shared() {
    detail::require_run("mesh::non_cached_shared");
    return !detail::memory().remote_words;
}

/// Shared memory at the same logical address on every core, in `mode`,
/// aligned to at least a cache line (two allocations never share a line).
/// Must run on a TACO core. Cached memory needs a consistency controller
/// (or explicit invalidate / write_back) to be seen by other cores.
inline void* allocate(std::size_t bytes, memory_mode mode = memory_mode::cached, std::size_t align = 64) {
    detail::require_run("mesh::allocate");
    if (mode == memory_mode::non_cached && !non_cached_shared())
        throw taco::usage_error(
            "mesh::allocate: non-cached memory is not shared by this platform's cores (each has a view of its "
            "own, as the ranks of a cluster: taco::remote_memory_endpoint), so plain loads and stores of it "
            "would not reach the others. Keep the data in a shared object (cached memory, kept consistent by "
            "its controller): mesh::chunked_map with map_memory::dcm or wt instead of ncm, a mesh::vector "
            "instead of a std::vector with mesh::allocator<T, memory_mode::non_cached>");
    return detail::allocate_in(detail::kind_of(mode), bytes, align);
}
/// Free memory from mesh::allocate (with the same mode), from any core.
inline void deallocate(void* p, memory_mode mode = memory_mode::cached) {
    detail::require_run("mesh::deallocate");
    detail::deallocate_in(detail::kind_of(mode), p);
}

/// Core-private memory: one logical address, a separate instance on every
/// core (reach this core's with mesh::private_instance). Zeroed when first allocated;
/// reused memory keeps what the previous owner left.
inline void* allocate_private(std::size_t bytes, std::size_t align = 64) {
    detail::require_run("mesh::allocate_private");
    return detail::allocate_in(detail::region_kind::core_private, bytes, align);
}
inline void deallocate_private(void* p) {
    detail::require_run("mesh::deallocate_private");
    detail::deallocate_in(detail::region_kind::core_private, p);
}

/// The calling core's instance of a core-private logical address.
template <class T>
T* private_instance(T* logical) noexcept {
    return reinterpret_cast<T*>(reinterpret_cast<std::uintptr_t>(logical) +
                                std::uintptr_t(taco::detail::runtime().private_offset));
}

/// Bytes allocated in a mode's region (all cores together).
inline std::size_t bytes_in_use(memory_mode mode) {
    detail::require_run("mesh::bytes_in_use");
    return detail::at_home(&detail::home_bytes_in_use, detail::kind_of(mode));
}

/// Make this core's view of [p, p+n) match memory / memory match this
/// core's view. What consistency controllers do; use directly only for
/// memory outside shared objects.
inline void invalidate(const void* p, std::size_t n) {
    detail::require_run("mesh::invalidate");
    detail::memory().invalidate(p, n);
}
inline void write_back(const void* p, std::size_t n) {
    detail::require_run("mesh::write_back");
    detail::memory().write_back(p, n);
}

} // namespace mesh
