#pragma once
// The emulated SCC's shared hardware: the MPB SRAM of every core, the DCM
// DRAM, the LOCK registers, the LUTs and the interrupt lines. One object
// for the whole chip; each emulated core reaches it through its own
// emulated::hardware (hardware.hpp), which adds what is private to a core:
// its L1, its write-combine buffer, its L2 and its cycle count.
//
// Memory is kept in 32-byte lines of relaxed atomic words, and a line moves
// whole, as on the chip, where a write-combine buffer flush and an L1 line
// fill are each one 32-byte mesh transaction: a per-line sequence count
// (odd while a write is in progress) makes a reader retry rather than see
// half of a write. Without it, a reader could see a header line's new
// sequence number beside its old length (the words are written one after
// the other) and copy too little of the payload. Each line also remembers
// the modelled cycle at which its last write reached memory: a core that
// reads it cannot have seen it earlier (emulated::hardware::cycles).
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <tacomesh/scc/emulated/cost_model.hpp>
#include <tacomesh/scc/geometry.hpp>
#include <tacomesh/scc/mpb_channel.hpp>

namespace tacomesh::scc::emulated {

/// A line of MPB or DRAM.
struct memory_line {
    std::array<std::atomic<std::uint32_t>, line_bytes / 4> words{};
    std::atomic<std::uint64_t> ready_at{0}; ///< modelled cycle of the write that left these words
    std::atomic<std::uint32_t> writes{0};   ///< odd while a write is in progress (a seqlock)
    /// Cycles before ready_at that its writer raised the line's core's
    /// interrupt (0: after it; idle_policy::halt_overlapped). In what was
    /// the struct's padding: DRAM's lines cost no more for it.
    std::atomic<std::uint32_t> announced_ahead{0};

    void read(std::byte* out, std::uint64_t& ready) const noexcept {
        std::uint32_t ahead = 0;
        read(out, ready, ahead);
    }
    void read(std::byte* out, std::uint64_t& ready, std::uint32_t& ahead) const noexcept {
        for (;;) {
            const std::uint32_t before = writes.load(std::memory_order_acquire);
            if (before & 1) { // a write is in progress (its host thread may be off its CPU)
                std::this_thread::yield();
                continue;
            }
            ready = ready_at.load(std::memory_order_relaxed);
            ahead = announced_ahead.load(std::memory_order_relaxed);
            for (std::size_t w = 0; w < words.size(); ++w) {
                const std::uint32_t v = words[w].load(std::memory_order_relaxed);
                for (std::size_t b = 0; b < 4; ++b) out[w * 4 + b] = std::byte(v >> (8 * b));
            }
            // Acquire: the loads above are done before the count is read again.
            std::atomic_thread_fence(std::memory_order_acquire);
            if (writes.load(std::memory_order_relaxed) == before) return;
        }
    }
    /// Write the bytes `mask` selects (bit i: byte i), at modelled cycle `at`.
    /// The others stay as they are (the mesh's byte enables: senders share a
    /// line of flags); writers of one line take turns. `ahead`: the writer
    /// raised the interrupt of the line's core that many cycles before `at`.
    void write(const std::byte* in, std::uint32_t mask, std::uint64_t at, std::uint32_t ahead = 0) noexcept {
        std::uint32_t count = writes.load(std::memory_order_relaxed);
        while ((count & 1) || !writes.compare_exchange_weak(count, count + 1, std::memory_order_acquire)) {
            if (count & 1) std::this_thread::yield();
            count = writes.load(std::memory_order_relaxed);
        }
        // Release: the odd count is seen before any word below.
        std::atomic_thread_fence(std::memory_order_release);
        for (std::size_t w = 0; w < words.size(); ++w) {
            const std::uint32_t m = mask >> (w * 4) & 0xf;
            if (!m) continue;
            std::uint32_t v = words[w].load(std::memory_order_relaxed);
            for (std::size_t b = 0; b < 4; ++b)
                if (m >> b & 1) v = (v & ~(0xffu << (8 * b))) | std::uint32_t(in[w * 4 + b]) << (8 * b);
            words[w].store(v, std::memory_order_relaxed);
        }
        if (at > ready_at.load(std::memory_order_relaxed)) {
            ready_at.store(at, std::memory_order_relaxed);
            announced_ahead.store(ahead, std::memory_order_relaxed);
        }
        writes.store(count + 2, std::memory_order_release); // a reader that sees it sees these words
    }
};

// Two million of them back 64 MB of DCM: the announcement must stay free.
static_assert(sizeof(memory_line) <= 48, "memory_line: keep announced_ahead in the padding after the seqlock count");

/// The most cores an emulated chip may have (sizes the channels' per-peer
/// counters, mpb_channel.hpp; 32 x 16 tiles of two cores).
inline constexpr core_index max_cores = 1024;

/// What is wrong with a chip of `shape` running `cores` (empty: nothing).
inline std::string shape_error(const chip_shape& shape, core_index cores) {
    if (shape.mesh_x == 0 || shape.mesh_y == 0 || shape.cores_per_tile == 0)
        return "the chip shape needs at least one tile and one core per tile";
    if (shape.cores() > max_cores)
        return "the emulation models chips of up to " + std::to_string(max_cores) + " cores, not " +
               std::to_string(shape.cores()) + " (" + std::to_string(shape.mesh_x) + " x " + std::to_string(shape.mesh_y) +
               " tiles of " + std::to_string(shape.cores_per_tile) + ")";
    if (cores == 0 || cores > shape.cores())
        return "this chip has 1 to " + std::to_string(shape.cores()) + " cores, not " + std::to_string(cores);
    if (shape.mpb_bytes % line_bytes != 0 || shape.mpb_bytes < mpb_layout::bytes_needed(shape.cores()))
        return "a chip of " + std::to_string(shape.cores()) + " cores needs at least " +
               std::to_string(mpb_layout::bytes_needed(shape.cores())) +
               " bytes of MPB per core (a whole number of 32-byte lines) for a channel slot per sender, not " +
               std::to_string(shape.mpb_bytes) + ": use emulated::grid(), which sizes it";
    if (shape.controllers == 0) return "the chip needs at least one memory controller";
    if (shape.controllers > 1 && (shape.controllers % 2 != 0 || shape.mesh_x < 2))
        return "the memory controllers sit on the mesh's left and right edges: 1, or an even number on a mesh at "
               "least 2 tiles wide, not " + std::to_string(shape.controllers);
    return {};
}

/// A chip of `x` x `y` tiles with the SCC's cores, caches and prices: the
/// MPB per core the SCC's 8 KB or, where that cannot hold a channel slot per
/// sender, the least that can (in whole KB); a memory controller per 12
/// cores as on the SCC, at most two per row of tiles (one at each edge).
inline chip_shape grid(core_index x, core_index y, core_index cores_per_tile = scc::cores_per_tile) {
    chip_shape s{x, y, cores_per_tile};
    s.mpb_bytes = std::max<std::size_t>(mpb_bytes_per_core, (mpb_layout::bytes_needed(s.cores()) + 1023) / 1024 * 1024);
    const std::uint32_t by_cores = std::max<std::uint32_t>(1, (s.cores() + 11) / 12);
    s.controllers = std::min<std::uint32_t>(by_cores + by_cores % 2, 2 * y);
    if (s.controllers > by_cores && by_cores == 1) s.controllers = 1;
    return s;
}

class chip {
public:
    /// `cores` of the chip `shape` (shape_error); `dram_bytes` of DCM memory, a whole number of lines.
    explicit chip(core_index cores, std::size_t dram_bytes = std::size_t(1) << 20, cost_model costs = {},
                  chip_shape shape = {})
        : cores_(cores), shape_(checked(shape, cores)), costs_(costs),
          mpb_(std::size_t(cores) * shape.mpb_bytes / line_bytes), dram_(dram_bytes / line_bytes), locks_(cores),
          luts_(std::size_t(cores) * lut_entries), irq_(cores) {
        if (dram_bytes % line_bytes != 0)
            throw std::invalid_argument("scc::emulated::chip: DRAM must be a whole number of 32-byte lines");
        for (auto& l : locks_) l.store(false, std::memory_order_relaxed);
    }
    chip(const chip&) = delete;
    chip& operator=(const chip&) = delete;

    core_index cores() const noexcept { return cores_; }
    const chip_shape& shape() const noexcept { return shape_; }
    const cost_model& costs() const noexcept { return costs_; }
    std::size_t dram_bytes() const noexcept { return dram_.size() * line_bytes; }

    memory_line& mpb_line(core_index c, std::size_t offset) {
        if (c >= cores_ || offset >= shape_.mpb_bytes)
            throw std::out_of_range("scc::emulated: MPB access outside core " + std::to_string(c) + "'s " +
                                    std::to_string(shape_.mpb_bytes) + " bytes");
        return mpb_[(std::size_t(c) * shape_.mpb_bytes + offset) / line_bytes];
    }
    memory_line& dram_line(std::size_t line) {
        if (line >= dram_.size()) throw std::out_of_range("scc::emulated: DRAM access past " + std::to_string(dram_bytes()) + " bytes");
        return dram_[line];
    }
    std::size_t dram_lines() const noexcept { return dram_.size(); }

    // LOCK registers: reading one sets it and returns whether this read took it.
    bool test_and_set(core_index c) { return !locks_.at(c).exchange(true, std::memory_order_acquire); }
    void unlock(core_index c) { locks_.at(c).store(false, std::memory_order_release); }

    lut_entry lut(core_index c, unsigned i) const {
        std::lock_guard g(lut_mutex_);
        return luts_.at(std::size_t(c) * lut_entries + i);
    }
    void set_lut(core_index c, unsigned i, lut_entry e) {
        if (i >= lut_entries) throw std::out_of_range("scc::emulated: LUT entry " + std::to_string(i) + " (256 per core)");
        std::lock_guard g(lut_mutex_);
        luts_.at(std::size_t(c) * lut_entries + i) = e;
    }

    // The LINT line of each core: raised with the sender's cycle, taken by
    // the core (its handler), which sleeps on it in hlt.
    void raise(core_index c, std::uint64_t at) {
        line& l = irq_.at(c);
        {
            std::lock_guard g(l.m);
            if (!l.pending || at < l.raised_at) l.raised_at = at;
            l.pending = true;
        }
        l.cv.notify_one();
    }
    /// Take the pending interrupt: its raise cycle, or false.
    bool take(core_index c, std::uint64_t& raised_at) {
        line& l = irq_.at(c);
        std::lock_guard g(l.m);
        if (!l.pending) return false;
        l.pending = false;
        raised_at = l.raised_at;
        return true;
    }
    /// Sleep until core c's line is raised (true) or `host_limit` passes.
    bool wait(core_index c, std::chrono::nanoseconds host_limit) {
        line& l = irq_.at(c);
        std::unique_lock g(l.m);
        return l.cv.wait_for(g, host_limit, [&] { return l.pending; });
    }

private:
    struct line {
        std::mutex m;
        std::condition_variable cv;
        bool pending = false;
        std::uint64_t raised_at = 0;
    };

    static const chip_shape& checked(const chip_shape& shape, core_index cores) {
        if (const std::string e = shape_error(shape, cores); !e.empty()) throw std::invalid_argument("scc::emulated::chip: " + e);
        return shape;
    }

    core_index cores_;
    chip_shape shape_;
    cost_model costs_;
    std::vector<memory_line> mpb_, dram_;
    std::vector<std::atomic<bool>> locks_;
    mutable std::mutex lut_mutex_;
    std::vector<lut_entry> luts_;
    std::vector<line> irq_;
};

} // namespace tacomesh::scc::emulated
