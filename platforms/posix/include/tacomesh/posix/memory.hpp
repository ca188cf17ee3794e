#pragma once
// The memory MESH manages on POSIX, for both execution modes.
//
// threads:   one address space with coherent caches. Cached and non-cached
//            regions are plain shared memory; cache control is a fence.
//            Core-private memory is one slab per core, so a private logical
//            address p is core k's instance at p + k * private_bytes.
// processes: the emulation that makes incoherence real. The *canonical*
//            copy of cached memory is MAP_SHARED; each process sees cached
//            memory through a MAP_PRIVATE mapping of the same size (its
//            "cache", its view), mapped before the fork, so it
//            sits at the same address in every core. invalidate copies
//            canonical -> view, write-back view -> canonical, of exactly the
//            range asked for. Non-cached memory is the shared mapping itself.
//            Private memory is a MAP_PRIVATE slab: the same address, a
//            separate instance in each process.
// Write-through maps to non-cached on POSIX: an x86 core cannot write
// through to another process's copy, and the SCC's write-combine semantics
// (visible at the next message) are weaker than non-cached, never stronger.
#include <atomic>
#include <cstddef>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>

#include <taco/platform/memory_endpoint.hpp>
#include <taco/core_id.hpp>
#include <tacomesh/posix/arena.hpp>

namespace tacomesh::posix::detail {

class memory_regions {
public:
    memory_regions(std::size_t non_cached, std::size_t cached, std::size_t private_bytes, taco::core_id cores,
                   bool processes)
        : processes_(processes), private_stride_(round_up(private_bytes, page_bytes)),
          non_cached_(non_cached, mapping::sharing::shared, "non-cached shared memory", setting("non_cached_bytes", non_cached)),
          canonical_(cached, mapping::sharing::shared, "cached shared memory (canonical copy)",
                     setting("cached_bytes", cached)),
          view_(processes ? mapping(cached, mapping::sharing::private_, "cached shared memory (per-core view)",
                                    setting("cached_bytes", cached))
                          : mapping()),
          private_(private_stride_ * (processes ? 1 : cores), mapping::sharing::private_, "core-private memory",
                   setting("private_bytes", private_bytes) +
                       (processes ? std::string(" (per core process)") : " per core, for " + std::to_string(cores) + " cores")) {}

    std::span<std::byte> region(taco::memory_mode m) const noexcept {
        if (m == taco::memory_mode::cached) {
            const mapping& v = processes_ ? view_ : canonical_;
            return {v.data(), v.size()};
        }
        return {non_cached_.data(), non_cached_.size()};
    }
    std::span<std::byte> private_region() const noexcept { return {private_.data(), private_stride_}; }
    std::ptrdiff_t private_offset(taco::core_id me) const noexcept {
        return processes_ ? 0 : std::ptrdiff_t(me) * std::ptrdiff_t(private_stride_);
    }
    bool coherent() const noexcept { return !processes_; }

    void invalidate(const void* p, std::size_t n) {
        if (!processes_) return std::atomic_thread_fence(std::memory_order_acquire);
        if (!view_.contains(p)) return; // non-cached or private memory: nothing cached
        std::byte* v = checked(p, n, "invalidate");
        std::memcpy(v, canonical_.data() + (v - view_.data()), n);
    }
    void write_back(const void* p, std::size_t n) {
        if (!processes_) return std::atomic_thread_fence(std::memory_order_release);
        if (!view_.contains(p)) return;
        std::byte* v = checked(p, n, "write_back");
        std::memcpy(canonical_.data() + (v - view_.data()), v, n);
    }

    /// The canonical copy of a cached address (process mode), for tests that
    /// look behind the emulation.
    const std::byte* canonical(const void* p) const noexcept {
        if (!processes_ || !view_.contains(p)) return static_cast<const std::byte*>(p);
        return canonical_.data() + (static_cast<const std::byte*>(p) - view_.data());
    }

private:
    static std::string setting(const char* name, std::size_t bytes) {
        return std::string("config.") + name + " = " + std::to_string(bytes);
    }
    std::byte* checked(const void* p, std::size_t n, const char* op) const {
        auto* v = const_cast<std::byte*>(static_cast<const std::byte*>(p));
        if (n > std::size_t(view_.data() + view_.size() - v))
            throw std::out_of_range(std::string("tacomesh::posix: ") + op + " of " + std::to_string(n) +
                                    " bytes runs past the end of cached shared memory");
        return v;
    }

    bool processes_;
    std::size_t private_stride_;
    mapping non_cached_, canonical_, view_, private_;
};

} // namespace tacomesh::posix::detail
