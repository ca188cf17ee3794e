#pragma once
// One emulated SCC core's hardware (the scc::hardware concept): the chip's
// shared parts (chip.hpp) seen through what is private to a core, modelled
// closely enough that software which forgets the SCC's rules fails here:
//
//  - L1 for MPBT lines: a line read stays in L1, and later reads return it,
//    stale, until cl1invmb() (Xipx thesis, section 4.3: "MPBT lines must be
//    explicitly invalidated"). L1 capacity is not modelled: a line stays
//    until invalidated, which is stricter than the chip (an evicted line
//    would be read fresh), never kinder.
//  - The write-combine buffer: one line; stores collect there and reach the
//    MPB only when the line is full or a store to another MPBT line (or
//    flush_wcb()) pushes it out. A partial line is invisible until then,
//    to every core, its writer included.
//  - L2 for DCM memory: 256 KB, 4-way, 32-byte lines, the pseudo-LRU
//    replacement of the thesis' Appendix B, write-back, no allocation on a
//    store miss. A modified line reaches DRAM only when evicted, and a
//    cached line is refreshed only when evicted: flush_l2() is the
//    Appendix B routine itself (four reads per set from a flush area that
//    no other data shares, alternating between two areas), so it works
//    here for the reason it works on the chip. (L1 for DCM lines is not
//    modelled, so WBINVD's part in the routine, B.3, is not reproduced.)
//  - Cycles: each operation adds its cost (cost_model.hpp) to the core's
//    count; a line written by another core cannot be read before the cycle
//    its write reached memory, an interrupt not before it was raised plus
//    its latency. A wait that found nothing (idle_since) costs nothing, so
//    the count is what the core would show on the chip however the host
//    scheduled its threads.
#include <algorithm>
#include <array>
#include <chrono>
#include <string>
#include <stdexcept>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include <tacomesh/scc/emulated/chip.hpp>
#include <tacomesh/scc/emulated/plru.hpp>
#include <tacomesh/scc/hardware.hpp>

namespace tacomesh::scc::emulated {

class hardware {
public:
    static constexpr core_index max_cores = emulated::max_cores;

    hardware(chip& c, core_index me)
        : chip_(&c), me_(me), costs_(c.costs()), shape_(c.shape()), mpb_lines_(c.shape().mpb_bytes / line_bytes), l1_(c.cores()),
          l2_(l2_sets * l2_ways), plru_(l2_sets, 0) {
        if (me >= c.cores()) throw std::out_of_range("scc::emulated::hardware: no core " + std::to_string(me));
    }

    core_index core() const noexcept { return me_; }
    core_index core_count() const noexcept { return chip_->cores(); }
    chip_shape shape() const noexcept { return chip_->shape(); }

    // ---- MPB: L1 (MPBT lines) and the write-combine buffer ----
    void mpb_load(core_index c, std::size_t off, void* dst, std::size_t n) {
        auto* out = static_cast<std::byte*>(dst);
        for_lines(off, n, [&](std::size_t line_off, std::size_t from, std::size_t len) {
            const memory_line& source = chip_->mpb_line(c, line_off); // range check first
            const std::size_t line = std::size_t(c) * mpb_lines_ + line_off / line_bytes;
            cached_line& l = l1_line(line);
            if (!l.valid) {
                std::uint64_t ready = 0;
                std::uint32_t ahead = 0;
                source.read(l.data.data(), ready, ahead);
                if (asleep_ && ready > cycles_) {
                    // The line's writer raised our interrupt: after the
                    // write, or `ahead` cycles before it, when the wake-up
                    // overlaps the transfer and the core, awake, waits on
                    // for the line.
                    cycles_ = std::max(ready, ready - ahead + costs_.interrupt_latency);
                    asleep_ = false;
                }
                cycles_ = std::max(cycles_, ready) + costs_.mpb_line_read + hop_cycles(c);
                l.valid = true;
                in_l1_.push_back(line);
            } else {
                cycles_ += costs_.cache_hit;
            }
            std::memcpy(out, l.data.data() + from, len);
            out += len;
        });
    }
    /// MPB bytes as they are now, at no modelled cost and past the caches:
    /// the emulation's own look, never the core's.
    void mpb_peek(core_index c, std::size_t off, void* dst, std::size_t n) const {
        auto* out = static_cast<std::byte*>(dst);
        for_lines(off, n, [&](std::size_t line_off, std::size_t from, std::size_t len) {
            std::array<std::byte, line_bytes> line;
            std::uint64_t ready = 0;
            chip_->mpb_line(c, line_off).read(line.data(), ready);
            std::memcpy(out, line.data() + from, len);
            out += len;
        });
    }
    void mpb_store(core_index c, std::size_t off, const void* src, std::size_t n) {
        const auto* in = static_cast<const std::byte*>(src);
        for_lines(off, n, [&](std::size_t line_off, std::size_t from, std::size_t len) {
            const std::size_t line = std::size_t(c) * mpb_lines_ + line_off / line_bytes;
            (void)chip_->mpb_line(c, line_off); // range check before buffering
            if (wcb_.valid && wcb_.line != line) flush_wcb();
            wcb_.valid = true;
            wcb_.line = line;
            std::memcpy(wcb_.data.data() + from, in, len);
            wcb_.mask |= len == line_bytes ? ~0u : ((1u << len) - 1) << from;
            // A write hit updates the L1 copy too: a core reads its own flushed writes.
            if (cached_line* l = l1_held(line); l && l->valid) std::memcpy(l->data.data() + from, in, len);
            in += len;
            if (wcb_.mask == ~0u) flush_wcb();
        });
    }
    void flush_wcb() {
        if (!wcb_.valid) return;
        if (ordered_writes_) turn_(turn_context_, cycles_);
        const core_index c = core_index(wcb_.line / mpb_lines_);
        cycles_ += costs_.mpb_line_write + hop_cycles(c);
        const std::uint32_t ahead =
            announced_ && announced_to_ == c ? std::uint32_t(std::min<std::uint64_t>(cycles_ - announced_at_, UINT32_MAX)) : 0;
        chip_->mpb_line(c, wcb_.line % mpb_lines_ * line_bytes).write(wcb_.data.data(), wcb_.mask, cycles_, ahead);
        wcb_.valid = false;
        wcb_.mask = 0;
    }
    void cl1invmb() {
        cycles_ += costs_.cl1invmb;
        for (const std::size_t line : in_l1_) l1_held(line)->valid = false; // the lines held, not every line
        in_l1_.clear();
    }

    // ---- tile registers ----
    bool test_and_set(core_index c) {
        cycles_ += costs_.register_access;
        return chip_->test_and_set(c);
    }
    void unlock(core_index c) {
        cycles_ += costs_.register_access;
        chip_->unlock(c);
    }
    void interrupt(core_index c) {
        cycles_ += costs_.register_access;
        chip_->raise(c, cycles_);
    }
    /// The CCI paper's latency hiding (section V): core c's interrupt is
    /// raised now, before the message to it is composed and written, so
    /// that its wake-up overlaps the transfer. Its modelled half only: the
    /// writes to c's MPB up to unannounce() carry the raise's cycle (a core
    /// asleep wakes from it, and waits on for the line); the emulation
    /// raises the host's line once the message is there (raise_only()), or
    /// a host thread woken early could sleep again past the message.
    void announce(core_index c) {
        announced_at_ = cycles_;
        cycles_ += costs_.register_access;
        announced_to_ = c;
        announced_ = true;
    }
    void unannounce() noexcept { announced_ = false; }
    /// The interrupt's host half, at no modelled cost (announce() paid it).
    void raise_only(core_index c) { chip_->raise(c, cycles_); }
    bool take_interrupt() {
        std::uint64_t raised = 0;
        if (!chip_->take(me_, raised)) return false;
        cycles_ = std::max(cycles_, raised + costs_.interrupt_latency);
        return true;
    }
    /// hlt until an interrupt or `limit` cycles (800 MHz: host time is the
    /// limit / 0.8 ns, so a timer in cycles means the same here). The
    /// interrupt stays pending for take_interrupt(), which sets the clock.
    void halt(std::uint64_t limit) {
        if (chip_->wait(me_, std::chrono::nanoseconds(std::uint64_t(double(limit) / 0.8)))) return;
        cycles_ += limit;
    }

    lut_entry lut(core_index c, unsigned i) const { return chip_->lut(c, i); }
    void set_lut(core_index c, unsigned i, lut_entry e) {
        cycles_ += costs_.register_access;
        chip_->set_lut(c, i, e);
    }

    // ---- DCM memory: L2 ----
    void dram_load(std::size_t addr, void* dst, std::size_t n) {
        auto* out = static_cast<std::byte*>(dst);
        for_lines(addr, n, [&](std::size_t line_addr, std::size_t from, std::size_t len) {
            cached_line& l = l2_fill(line_addr / line_bytes);
            std::memcpy(out, l.data.data() + from, len);
            out += len;
        });
    }
    void dram_store(std::size_t addr, const void* src, std::size_t n) {
        const auto* in = static_cast<const std::byte*>(src);
        for_lines(addr, n, [&](std::size_t line_addr, std::size_t from, std::size_t len) {
            const std::size_t line = line_addr / line_bytes;
            if (cached_line* l = l2_find(line)) { // write hit: the line is modified in L2
                std::memcpy(l->data.data() + from, in, len);
                l->dirty = true;
                cycles_ += costs_.cache_hit;
            } else { // no allocation on a store miss: straight to DRAM
                std::array<std::byte, line_bytes> part{};
                std::memcpy(part.data() + from, in, len);
                cycles_ += costs_.dram_line_write;
                chip_->dram_line(line).write(part.data(), len == line_bytes ? ~0u : ((1u << len) - 1) << from, cycles_);
            }
            in += len;
        });
    }
    /// WBINVD. L1 for DCM lines is not modelled (see the top): only its cost.
    void invalidate_l1() { cycles_ += costs_.cache_hit; }
    /// The Appendix B routine over every set.
    void flush_l2() {
        cycles_ += costs_.flush_call;
        for (std::size_t set = 0; set < l2_sets; ++set) flush_set(set);
    }
    /// The routine over the sets [addr, addr + n) maps to (MESH paper: a
    /// range of N lines costs about 300 N + 7 500).
    void flush_l2_range(std::size_t addr, std::size_t n) {
        if (n == 0) return;
        const std::size_t first = addr / line_bytes, last = (addr + n - 1) / line_bytes;
        if (last - first + 1 >= l2_sets) return flush_l2();
        cycles_ += costs_.flush_call;
        for (std::size_t line = first; line <= last; ++line) flush_set(line % l2_sets);
    }

    // ---- time ----
    std::uint64_t cycles() const noexcept { return cycles_; }
    /// A wait since cycle `t` that found nothing: not counted (see the top).
    void idle_since(std::uint64_t t) noexcept { cycles_ = std::min(cycles_, t); }
    /// Instructions the core ran between hardware operations (the platform
    /// measures them, platform.hpp): the chip's TSC counts them too.
    void elapse(std::uint64_t c) noexcept { cycles_ += c; }
    /// While set, an MPB line read that has to wait for its writer is
    /// taken to wake this core from hlt: it costs the interrupt's latency
    /// from the write, once. For a scan by a core with nothing else to do,
    /// which on the chip would sleep until the sender's interrupt: its
    /// cycles then do not depend on whether the host thread had got to
    /// hlt before the message came.
    void sleeping(bool on) noexcept { asleep_ = on; }
    /// In modelled-time order (time_order.hpp): `turn(context, t)` waits
    /// for this core's turn at cycle t; while ordered_writes(true), each
    /// MPB write takes one before it leaves the write-combine buffer. For
    /// writes that no turn precedes otherwise: an acknowledgement written
    /// in a scan after the handlers of earlier messages moved the clock on.
    /// Without the turn, a sender that read the acknowledgement line at an
    /// earlier cycle found it there or not as the host's threads ran, and
    /// queued its message or sent it.
    using turn_hook = void (*)(void* context, std::uint64_t t);
    void order_with(turn_hook turn, void* context) noexcept {
        turn_ = turn;
        turn_context_ = context;
    }
    void ordered_writes(bool on) noexcept { ordered_writes_ = on && turn_; }

private:
    struct cached_line {
        std::array<std::byte, line_bytes> data{};
        std::size_t tag = 0; ///< L2: the DRAM line (or flush-area line) held
        bool valid = false, dirty = false;
    };
    struct wcb_state {
        std::array<std::byte, line_bytes> data{};
        std::size_t line = 0;
        std::uint32_t mask = 0;
        bool valid = false;
    };

    template <class F>
    static void for_lines(std::size_t off, std::size_t n, F&& f) {
        while (n > 0) {
            const std::size_t from = off % line_bytes, len = std::min(n, line_bytes - from);
            f(off - from, from, len);
            off += len;
            n -= len;
        }
    }

    /// L1's copy of an MPB line: each core's MPB gets its L1 lines on the
    /// first read from it (a core reads few MPBs: its own, the control
    /// blocks'; 1024 cores of 165 KB each would be 500 MB per core).
    cached_line& l1_line(std::size_t line) {
        auto& block = l1_.at(line / mpb_lines_);
        if (!block) block = std::make_unique<cached_line[]>(mpb_lines_);
        return block[line % mpb_lines_];
    }
    cached_line* l1_held(std::size_t line) noexcept {
        auto& block = l1_[line / mpb_lines_];
        return block ? &block[line % mpb_lines_] : nullptr;
    }

    /// The mesh's share of an access to core c's MPB (cost_model::mesh_hop_cycles).
    std::uint64_t hop_cycles(core_index c) const noexcept { return costs_.mesh_hop_cycles * shape_.hops(me_, c); }

    std::size_t victim(std::size_t set) const noexcept { return detail::plru4::victim(plru_[set]); }
    void touch(std::size_t set, std::size_t way) noexcept { detail::plru4::touch(plru_[set], way); }
    cached_line* l2_find(std::size_t tag) {
        const std::size_t set = tag % l2_sets;
        for (std::size_t w = 0; w < l2_ways; ++w)
            if (cached_line& l = l2_[set * l2_ways + w]; l.valid && l.tag == tag) {
                touch(set, w);
                return &l;
            }
        return nullptr;
    }
    /// Bring `tag` into L2 (evicting the PLRU way); DRAM lines are read,
    /// flush-area lines (tags past DRAM) only displace.
    cached_line& l2_fill(std::size_t tag) {
        if (cached_line* hit = l2_find(tag)) {
            cycles_ += costs_.cache_hit;
            return *hit;
        }
        const std::size_t set = tag % l2_sets, way = victim(set);
        cached_line& l = l2_[set * l2_ways + way];
        if (l.valid && l.dirty) {
            cycles_ += costs_.dirty_write_back;
            chip_->dram_line(l.tag).write(l.data.data(), ~0u, cycles_);
        }
        l.valid = true;
        l.dirty = false;
        l.tag = tag;
        if (tag < chip_->dram_lines()) {
            std::uint64_t ready = 0;
            chip_->dram_line(tag).read(l.data.data(), ready);
            cycles_ = std::max(cycles_, ready) + costs_.dram_line_read;
        } else {
            cycles_ += costs_.flush_read;
        }
        touch(set, way);
        return l;
    }
    /// Four reads of a flush area's lines that map to `set`, at way-size
    /// strides. The two areas lie past DRAM (their lines displace, they hold
    /// nothing) and alternate per set, not per routine: range flushes touch
    /// some sets more often than others, and a set must never be flushed
    /// with the area it was last flushed with, whose lines may still be
    /// there (a hit evicts nothing). So every read misses, and four misses
    /// replace the whole set (Appendix B.2).
    void flush_set(std::size_t set) {
        const bool area = flush_area_[set] = !flush_area_[set];
        const std::size_t base = (chip_->dram_lines() + l2_sets - 1) / l2_sets * l2_sets + (area ? l2_sets * l2_ways : 0);
        for (std::size_t k = 0; k < l2_ways; ++k) l2_fill(base + k * l2_sets + set);
    }

    chip* chip_;
    core_index me_;
    cost_model costs_;
    chip_shape shape_;
    std::size_t mpb_lines_;
    std::vector<std::unique_ptr<cached_line[]>> l1_; ///< per core's MPB, per line (l1_line)
    std::vector<std::size_t> in_l1_; ///< the valid ones
    wcb_state wcb_;
    std::vector<cached_line> l2_;
    std::vector<std::uint8_t> plru_;
    std::vector<bool> flush_area_ = std::vector<bool>(l2_sets); ///< per set: the area its last flush read
    std::uint64_t cycles_ = 0;
    bool asleep_ = false;
    bool announced_ = false; ///< see announce()
    core_index announced_to_ = 0;
    std::uint64_t announced_at_ = 0;
    turn_hook turn_ = nullptr;
    void* turn_context_ = nullptr;
    bool ordered_writes_ = false;
};

static_assert(scc::hardware<hardware>);

} // namespace tacomesh::scc::emulated
