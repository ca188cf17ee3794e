#pragma once
// What plain loads and stores cost on the SCC, by where the bytes live: the
// part of the modelled clock that the hardware operations (hardware.hpp)
// leave out. The emulation keeps MESH's shared objects and each core's
// private data in host memory, where every access is a host access; this
// model says what the same access would have cost a P54C core on the chip:
//
//  - private memory and DCM: the core's 16 KB L1 and 256 KB L2 (4-way,
//    32-byte lines, pseudo-LRU: Xipx thesis, Appendix B), write-back, no
//    allocation on a store miss (MESH paper, section IV.A); a miss reads a
//    line from the DRAM behind one of the memory controllers;
//  - MPBT+WT (MESH's write-through maps): L1 only; stores go out through
//    the write-combine buffer, one line at a time;
//  - NCM: not cached, every access is a DRAM transaction;
//  - on-chip SRAM mapped uncached (MESH's control blocks): an MPB access.
//
// Prices: the MESH paper's Table I (cost_model.hpp, memory_prices).
//
// The memory controllers queue. MESH paper, Figure 4: up to three readers
// of one controller do not slow each other, past three each read takes
// linearly longer. A controller here serves a request every read / 3
// cycles (memory_prices::controller_service): its service slots are a
// calendar in modelled cycles, and a request takes the first free slot at
// or after its cycle. A calendar rather than a "busy until" time because
// the host runs the emulated cores' threads in any order: a request that
// comes late in host time but early in modelled time still finds the gap
// it would have used on the chip, and does not queue behind requests from
// its future.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <tacomesh/scc/emulated/cost_model.hpp>
#include <tacomesh/scc/emulated/plru.hpp>
#include <tacomesh/scc/geometry.hpp>

namespace tacomesh::scc::emulated {

/// Where an access's bytes live.
enum class memory_kind : std::uint8_t {
    private_memory, ///< the core's own data: cached in L1 and L2
    dcm,            ///< shared, cached in L1 and L2 (MESH flushes and invalidates by range)
    write_through,  ///< shared, MPBT+WT: L1 only, stores through the write-combine buffer
    ncm,            ///< shared, not cached
    on_chip,        ///< the MPB's spare bytes, mapped uncached
};

/// The chip's memory controllers: a calendar of service slots each.
class memory_controllers {
public:
    /// `service`: cycles per line a controller needs; `horizon`: slots each
    /// calendar remembers (requests further apart in modelled time than
    /// horizon x service do not see each other).
    memory_controllers(std::uint32_t controllers, std::uint64_t service, std::size_t horizon = std::size_t(1) << 16)
        : service_(std::max<std::uint64_t>(service, 1)), horizon_(horizon),
          slots_(std::make_unique<std::atomic<std::uint64_t>[]>(std::size_t(std::max(controllers, 1u)) * horizon)),
          controllers_(std::max(controllers, 1u)) {}

    /// The chip's controllers (chip_shape::controllers: the SCC's four by default).
    explicit memory_controllers(const memory_prices& p, std::uint32_t controllers = chip_shape{}.controllers)
        : memory_controllers(controllers, p.controller_service) {}

    std::uint32_t count() const noexcept { return controllers_; }
    std::uint64_t service() const noexcept { return service_; }

    /// Take controller c's first free slot at or after cycle t: the cycles
    /// the request waits for it.
    std::uint64_t serve(std::uint32_t c, std::uint64_t t) noexcept {
        std::atomic<std::uint64_t>* cal = slots_.get() + std::size_t(c % controllers_) * horizon_;
        // A cell holds the slot number + 1 that took it (0: never used). A
        // smaller number is a slot a whole horizon ago: free again. A larger
        // one is a request from a horizon ahead; the slot is left to it and
        // counted as free for this one (the cores are too far apart in
        // modelled time to meet at this controller).
        const std::uint64_t first = t / service_;
        for (std::uint64_t k = first; k < first + horizon_; ++k) {
            std::atomic<std::uint64_t>& cell = cal[k % horizon_];
            std::uint64_t seen = cell.load(std::memory_order_relaxed);
            for (;;) {
                if (seen == k + 1) break; // taken: try the next slot
                const std::uint64_t start = std::max(k * service_, t);
                if (seen > k + 1) return start - t;
                if (cell.compare_exchange_weak(seen, k + 1, std::memory_order_relaxed)) return start - t;
            }
        }
        return horizon_ * service_; // the whole calendar is booked: as long a queue as it can hold
    }

private:
    std::uint64_t service_;
    std::size_t horizon_;
    std::unique_ptr<std::atomic<std::uint64_t>[]> slots_;
    std::uint32_t controllers_;
};

namespace detail {

/// A 4-way set-associative cache of line tags (no data: the bytes are the
/// host's), pseudo-LRU.
class tag_cache {
public:
    struct line {
        std::uint64_t tag = 0; ///< the line's address / line_bytes
        bool valid = false, dirty = false, write_through = false;
    };
    explicit tag_cache(std::size_t bytes) : sets_(bytes / line_bytes / ways), lines_(sets_ * ways), plru_(sets_, 0) {}

    line* find(std::uint64_t tag) noexcept {
        const std::size_t set = tag % sets_;
        for (std::size_t w = 0; w < ways; ++w)
            if (line& l = lines_[set * ways + w]; l.valid && l.tag == tag) {
                plru4::touch(plru_[set], w);
                return &l;
            }
        return nullptr;
    }
    /// Put `tag` in (it is not there): the line it displaced, as it was.
    line fill(std::uint64_t tag, bool write_through) noexcept {
        const std::size_t set = tag % sets_, way = plru4::victim(plru_[set]);
        line& l = lines_[set * ways + way];
        const line old = l;
        l = {tag, true, false, write_through};
        plru4::touch(plru_[set], way);
        return old;
    }
    /// Each valid line whose tag is in [first, last]: f(line&).
    template <class F>
    void for_range(std::uint64_t first, std::uint64_t last, F&& f) {
        if (last - first + 1 >= sets_) { // the whole cache: no set is left out
            for (line& l : lines_)
                if (l.valid && l.tag >= first && l.tag <= last) f(l);
            return;
        }
        for (std::uint64_t tag = first; tag <= last; ++tag) {
            const std::size_t set = tag % sets_;
            for (std::size_t w = 0; w < ways; ++w)
                if (line& l = lines_[set * ways + w]; l.valid && l.tag == tag) f(l);
        }
    }
    template <class F>
    void for_each(F&& f) {
        for (line& l : lines_)
            if (l.valid) f(l);
    }

private:
    static constexpr std::size_t ways = 4;
    std::size_t sets_;
    std::vector<line> lines_;
    std::vector<std::uint8_t> plru_;
};

} // namespace detail

/// What a core's priced accesses came to: where the cycles went.
struct memory_counts {
    std::uint64_t loads = 0, stores = 0;   ///< lines touched
    std::uint64_t l1_hits = 0, l2_hits = 0;
    std::uint64_t dram_reads = 0;          ///< lines read from memory (cached misses, NCM and on-chip words)
    std::uint64_t dram_writes = 0;         ///< posted writes to memory (store misses, NCM, the WCB's lines)
    std::uint64_t write_backs = 0;         ///< modified lines written back
    std::uint64_t queued_cycles = 0;       ///< waited at the memory controllers
};

/// One core's caches and buses, pricing its loads and stores.
class core_memory {
public:
    const memory_counts& counts() const noexcept { return n_; }

    /// Core `core` of a chip of `shape`, whose private memory is at the
    /// controller nearest to its tile (chip_shape::controller_of).
    core_memory(const memory_prices& p, memory_controllers& mcs, core_index core, const chip_shape& shape = {})
        : p_(p), mcs_(&mcs), own_controller_(shape.controller_of(core) % mcs.count()), l1_(l1_bytes), l2_(l2_bytes) {}

    /// Called with the cycle of each request before it takes its slot
    /// (the platform's modelled-time order: time_order.hpp).
    using request_hook = void (*)(void* context, std::uint64_t cycle);
    void before_requests(request_hook f, void* context) noexcept {
        hook_ = f;
        hook_context_ = context;
    }
    std::uint32_t controller_of(std::uintptr_t addr, memory_kind k) const noexcept {
        if (k == memory_kind::private_memory) return own_controller_;
        return std::uint32_t(addr / std::max<std::size_t>(p_.interleave_bytes, 1) % mcs_->count());
    }

    /// The cycles a load of [addr, addr + n) costs at cycle `now`.
    std::uint64_t load(std::uintptr_t addr, std::size_t n, memory_kind k, std::uint64_t now) {
        std::uint64_t cost = 0;
        for_lines(addr, n, [&](std::uint64_t tag, std::size_t bytes) { cost += load_line(tag, bytes, k, now + cost); });
        return cost;
    }
    /// The cycles a store to [addr, addr + n) costs at cycle `now`.
    std::uint64_t store(std::uintptr_t addr, std::size_t n, memory_kind k, std::uint64_t now) {
        std::uint64_t cost = 0;
        for_lines(addr, n, [&](std::uint64_t tag, std::size_t bytes) { cost += store_line(tag, bytes, k, now + cost); });
        return cost;
    }

    /// DCM invalidate of [addr, addr + n): its lines leave L1 and L2 (what
    /// the flush routine does to them; the routine's own cycles are the
    /// hardware's, flush_l2_range). Modified lines are written back first:
    /// the cycles that takes (the routine's "80 more" per modified line).
    std::uint64_t drop(std::uintptr_t addr, std::size_t n, std::uint64_t now) { return evict(addr, n, now, true); }
    /// DCM write-back of [addr, addr + n): modified lines go to memory and
    /// stay, clean; the cycles it takes.
    std::uint64_t clean(std::uintptr_t addr, std::size_t n, std::uint64_t now) { return evict(addr, n, now, false); }
    /// CL1INVMB: every MPBT line leaves L1 (the write-through maps' lines too).
    void drop_write_through() {
        l1_.for_each([](detail::tag_cache::line& l) {
            if (l.write_through) l.valid = false;
        });
    }
    /// The write-combine buffer's line goes out (a store to another MPBT
    /// line, or the core's flush): the cycles it takes.
    std::uint64_t flush_wcb(std::uint64_t now) {
        if (!wcb_valid_) return 0;
        wcb_valid_ = false;
        ++n_.dram_writes;
        (void)request(controller_of(wcb_tag_ * line_bytes, memory_kind::write_through), now);
        return posted_write(p_.wt_write, p_.wt_write_gap, now);
    }

private:
    std::uint64_t request(std::uint32_t controller, std::uint64_t now) {
        if (hook_) hook_(hook_context_, now);
        return mcs_->serve(controller, now);
    }
    template <class F>
    static void for_lines(std::uintptr_t addr, std::size_t n, F&& f) {
        if (n == 0) return;
        const std::uint64_t first = addr / line_bytes, last = (addr + n - 1) / line_bytes;
        for (std::uint64_t tag = first; tag <= last; ++tag) {
            const std::uint64_t lo = std::max<std::uint64_t>(tag * line_bytes, addr);
            const std::uint64_t hi = std::min<std::uint64_t>((tag + 1) * line_bytes, addr + n);
            f(tag, std::size_t(hi - lo));
        }
    }
    /// A write the core issues and does not wait for (WGR model): it takes
    /// w cycles, and the next may issue only g after it.
    std::uint64_t posted_write(std::uint64_t w, std::uint64_t g, std::uint64_t now) {
        // The P54C has two write buffers: a store waits at most for the two
        // writes before it. (Also bounds what writes priced while the clock
        // stood still, an emulation's wait, could leave behind.)
        next_write_ = std::min(next_write_, now + 2 * g);
        const std::uint64_t issue = std::max(now, next_write_);
        next_write_ = issue + g;
        return issue - now + w;
    }
    std::uint64_t dram_read(std::uint64_t tag, memory_kind k, std::uint64_t latency, std::uint64_t now) {
        const std::uint64_t wait = request(controller_of(tag * line_bytes, k), now);
        ++n_.dram_reads;
        n_.queued_cycles += wait;
        return wait + latency;
    }
    /// A line leaving L2 modified goes to memory: its write and its slot.
    std::uint64_t write_back(const detail::tag_cache::line& l, std::uint64_t now) {
        if (!l.valid || !l.dirty) return 0;
        ++n_.write_backs;
        (void)request(controller_of(l.tag * line_bytes, memory_kind::dcm), now);
        return p_.dirty_write_back;
    }
    /// L1's victim: modified, it goes down to L2 (which may push a line of
    /// its own out to memory).
    std::uint64_t l1_victim(const detail::tag_cache::line& v, std::uint64_t now) {
        if (!v.valid || !v.dirty || v.write_through) return 0;
        if (detail::tag_cache::line* below = l2_.find(v.tag)) {
            below->dirty = true;
            return 0;
        }
        detail::tag_cache::line out = l2_.fill(v.tag, false);
        l2_.find(v.tag)->dirty = true;
        return write_back(out, now);
    }

    std::uint64_t load_line(std::uint64_t tag, std::size_t bytes, memory_kind k, std::uint64_t now) {
        ++n_.loads;
        switch (k) {
        case memory_kind::ncm:
            // Uncached: a bus transaction per 8 bytes (the P54C's data bus).
            return (bytes + 7) / 8 * dram_read(tag, k, p_.ncm_read, now);
        case memory_kind::on_chip: n_.dram_reads += (bytes + 7) / 8; return (bytes + 7) / 8 * p_.sram_read;
        case memory_kind::write_through:
            if (l1_.find(tag)) return ++n_.l1_hits, p_.l1_hit;
            {
                const std::uint64_t c = dram_read(tag, k, p_.wt_line_read, now);
                return c + l1_victim(l1_.fill(tag, true), now + c);
            }
        case memory_kind::private_memory:
        case memory_kind::dcm:
            if (l1_.find(tag)) return ++n_.l1_hits, p_.l1_hit;
            std::uint64_t c = p_.l2_hit;
            if (!l2_.find(tag)) c = dram_read(tag, k, p_.dcm_line_read, now) + write_back(l2_.fill(tag, false), now);
            else ++n_.l2_hits;
            return c + l1_victim(l1_.fill(tag, false), now + c);
        }
        return 0;
    }
    std::uint64_t store_line(std::uint64_t tag, std::size_t bytes, memory_kind k, std::uint64_t now) {
        ++n_.stores;
        switch (k) {
        case memory_kind::ncm: {
            std::uint64_t c = 0;
            for (std::size_t i = 0; i < (bytes + 7) / 8; ++i) {
                ++n_.dram_writes;
                (void)request(controller_of(tag * line_bytes, k), now + c);
                c += posted_write(p_.ncm_write, p_.ncm_write_gap, now + c);
            }
            return c;
        }
        case memory_kind::on_chip: {
            std::uint64_t c = 0;
            for (std::size_t i = 0; i < (bytes + 7) / 8; ++i) c += posted_write(p_.sram_write, p_.sram_write_gap, now + c);
            return c;
        }
        case memory_kind::write_through: {
            // The L1 copy, if any, is updated as the store passes (write
            // through: never modified in L1); the WCB collects the line.
            (void)l1_.find(tag);
            std::uint64_t c = 0;
            if (wcb_valid_ && wcb_tag_ != tag) c = flush_wcb(now);
            wcb_valid_ = true;
            wcb_tag_ = tag;
            return c + p_.l1_hit;
        }
        case memory_kind::private_memory:
        case memory_kind::dcm:
            if (detail::tag_cache::line* l = l1_.find(tag)) {
                l->dirty = true;
                ++n_.l1_hits;
                return p_.l1_hit;
            }
            if (detail::tag_cache::line* l = l2_.find(tag)) { // no allocation in L1 on a store miss
                l->dirty = true;
                ++n_.l2_hits;
                return p_.l2_hit;
            }
            // Nor in L2: the store goes to memory as a single word, as an
            // uncached one does (Table I's DCM w and g are whole lines).
            ++n_.dram_writes;
            (void)request(controller_of(tag * line_bytes, k), now);
            return posted_write(p_.ncm_write, p_.ncm_write_gap, now);
        }
        return 0;
    }

    std::uint64_t evict(std::uintptr_t addr, std::size_t n, std::uint64_t now, bool invalidate) {
        if (n == 0) return 0;
        const std::uint64_t first = addr / line_bytes, last = (addr + n - 1) / line_bytes;
        std::uint64_t c = 0;
        // L1's modified lines pass through L2 on their way out (WBINVD).
        l1_.for_range(first, last, [&](detail::tag_cache::line& l) {
            if (l.dirty && !l.write_through) {
                if (detail::tag_cache::line* below = l2_.find(l.tag)) below->dirty = true;
                else c += write_back(l, now + c);
            }
            l.dirty = false;
            if (invalidate) l.valid = false;
        });
        l2_.for_range(first, last, [&](detail::tag_cache::line& l) {
            c += write_back(l, now + c);
            l.dirty = false;
            if (invalidate) l.valid = false;
        });
        return c;
    }

    memory_prices p_;
    memory_controllers* mcs_;
    request_hook hook_ = nullptr;
    void* hook_context_ = nullptr;
    std::uint32_t own_controller_;
    detail::tag_cache l1_, l2_;
    memory_counts n_;
    std::uint64_t next_write_ = 0; ///< the first cycle the next posted write may issue
    std::uint64_t wcb_tag_ = 0;
    bool wcb_valid_ = false;
};

} // namespace tacomesh::scc::emulated
