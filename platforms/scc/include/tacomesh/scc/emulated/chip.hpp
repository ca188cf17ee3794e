#pragma once
// The emulated SCC's shared hardware: the MPB SRAM of every core, the DCM
// DRAM, the LOCK registers, the LUTs and the interrupt lines. One object
// for the whole chip; each emulated core reaches it through its own
// emulated::hardware (hardware.hpp), which adds what is private to a core:
// its L1, its write-combine buffer, its L2 and its cycle count.
//
// Memory is kept in 32-byte lines of relaxed atomic words (cores are host
// threads: a torn line is possible on the real mesh too, so the protocols
// must not rely on a line arriving whole) and each line remembers the
// modelled cycle at which its last write reached memory: a core that reads
// it cannot have seen it earlier (emulated::hardware::cycles).
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
#include <vector>

#include <tacomesh/scc/emulated/cost_model.hpp>
#include <tacomesh/scc/geometry.hpp>

namespace tacomesh::scc::emulated {

/// A line of MPB or DRAM.
struct memory_line {
    std::array<std::atomic<std::uint32_t>, line_bytes / 4> words{};
    std::atomic<std::uint64_t> ready_at{0}; ///< modelled cycle of the write that left these words

    void read(std::byte* out, std::uint64_t& ready) const noexcept {
        ready = ready_at.load(std::memory_order_acquire);
        for (std::size_t w = 0; w < words.size(); ++w) {
            const std::uint32_t v = words[w].load(std::memory_order_relaxed);
            for (std::size_t b = 0; b < 4; ++b) out[w * 4 + b] = std::byte(v >> (8 * b));
        }
    }
    /// Write the bytes `mask` selects (bit i: byte i), at modelled cycle `at`.
    /// The others stay as they are, whoever writes them meanwhile (the
    /// mesh's byte enables: senders share a line of flags).
    void write(const std::byte* in, std::uint32_t mask, std::uint64_t at) noexcept {
        for (std::size_t w = 0; w < words.size(); ++w) {
            const std::uint32_t m = mask >> (w * 4) & 0xf;
            if (!m) continue;
            std::uint32_t keep = 0, bits = 0;
            for (std::size_t b = 0; b < 4; ++b)
                if (m >> b & 1) bits |= std::uint32_t(in[w * 4 + b]) << (8 * b);
                else keep |= 0xffu << (8 * b);
            std::uint32_t v = words[w].load(std::memory_order_relaxed);
            while (!words[w].compare_exchange_weak(v, (v & keep) | bits, std::memory_order_relaxed)) {}
        }
        // Release: a reader that sees this cycle sees these words.
        std::uint64_t prev = ready_at.load(std::memory_order_relaxed);
        while (!ready_at.compare_exchange_weak(prev, prev > at ? prev : at, std::memory_order_release)) {}
    }
};

class chip {
public:
    /// `cores` in [1, 48]; `dram_bytes` of DCM memory, a whole number of lines.
    explicit chip(core_index cores, std::size_t dram_bytes = std::size_t(1) << 20, cost_model costs = {})
        : cores_(cores), costs_(costs), mpb_(std::size_t(cores) * mpb_bytes_per_core / line_bytes),
          dram_(dram_bytes / line_bytes), locks_(cores), luts_(std::size_t(cores) * lut_entries), irq_(cores) {
        if (cores == 0 || cores > max_cores)
            throw std::invalid_argument("scc::emulated::chip: the SCC has 1 to 48 cores, not " + std::to_string(cores));
        if (dram_bytes % line_bytes != 0)
            throw std::invalid_argument("scc::emulated::chip: DRAM must be a whole number of 32-byte lines");
        for (auto& l : locks_) l.store(false, std::memory_order_relaxed);
    }
    chip(const chip&) = delete;
    chip& operator=(const chip&) = delete;

    core_index cores() const noexcept { return cores_; }
    const cost_model& costs() const noexcept { return costs_; }
    std::size_t dram_bytes() const noexcept { return dram_.size() * line_bytes; }

    memory_line& mpb_line(core_index c, std::size_t offset) {
        if (c >= cores_ || offset >= mpb_bytes_per_core)
            throw std::out_of_range("scc::emulated: MPB access outside core " + std::to_string(c) + "'s 8 KB");
        return mpb_[(std::size_t(c) * mpb_bytes_per_core + offset) / line_bytes];
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

    core_index cores_;
    cost_model costs_;
    std::vector<memory_line> mpb_, dram_;
    std::vector<std::atomic<bool>> locks_;
    mutable std::mutex lut_mutex_;
    std::vector<lut_entry> luts_;
    std::vector<line> irq_;
};

} // namespace tacomesh::scc::emulated
