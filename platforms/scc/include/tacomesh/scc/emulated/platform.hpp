#pragma once
// The SCC platform on the emulated chip (taco::platform): cores are host
// threads, each with its emulated::hardware; invocations travel through the
// MPB channels (mpb_channel.hpp), the same protocol code the chip runs;
// idle cores poll, or sleep in hlt and are woken by an inter-core
// interrupt with every message (the CCI paper's interrupt-driven mode).
//
// Memory for MESH is host memory at one address for every core, in three
// regions, one per SCC page mode, plus the on-chip pieces: the bytes of
// each core's MPB the channels leave free (mpb_channels::spare_offset),
// where MESH puts control blocks and so the Timestamp counters. The chip
// maps those uncached (no MPBT bit: every access reaches the SRAM, none is
// stale), which host memory shared by the core threads stands for here;
// they are host bytes beside the emulated MPB lines, not inside them, and
// their accesses are not priced (plain loads and stores never are). Cache
// control charges what the chip's would: DCM invalidate and write-back run
// the L2 flush routine over the range (emulated L2: 300 N + 7 500 cycles),
// MPBT+WT invalidates with CL1INVMB and writes back through the WCB, NCM
// needs nothing. The data
// itself is coherent here (threads of one process): MESH runs its
// controllers in full (coherent() is false) and pays their modelled
// cycles, while the staleness of each mechanism is shown at the hardware
// level (tests/test_emulation.cpp, test_mpb_channel.cpp).
//
// Each core's clock (config.report, cycles()) counts modelled cycles: the
// hardware operations at their cost (cost_model.hpp), and the instructions
// between them (cost_model::compute): the basic blocks the core thread ran,
// counted in a program built with tacomesh::scc_counted
// (counted_work.hpp), or else its host CPU time. Waiting is not counted: a poll that
// found nothing and the host time spent in pause() or idle() leave the
// clock where it was, and a message read moves it to the cycle the message
// arrived. So the clock is what the core would show on the chip, whatever
// the host's two CPUs did with 48 core threads (oversubscribed).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <taco/core_id.hpp>
#include <taco/platform/core_threads.hpp>
#include <taco/platform/host_preemption.hpp>
#include <taco/platform/host_memory.hpp>
#include <taco/platform/memory_endpoint.hpp>
#include <taco/platform/on_chip_memory.hpp>
#include <taco/platform/platform.hpp>
#include <taco/platform/preemption_endpoint.hpp>
#include <taco/usage_error.hpp>
#include <tacomesh/scc/emulated/cost_model.hpp>
#include <tacomesh/scc/emulated/counted_work.hpp>
#include <tacomesh/scc/emulated/hardware.hpp>
#include <tacomesh/scc/emulated/priced_memory.hpp>
#include <tacomesh/scc/emulated/time_order.hpp>
#include <tacomesh/scc/mpb_channel.hpp>

namespace tacomesh::scc::emulated {

enum class idle_policy {
    poll, ///< an idle core polls its MPB (a round trip of about 2 000 cycles on the chip)
    halt, ///< an idle core sleeps in hlt; every message raises the receiver's interrupt (about 3 000)
    /// As halt, but the sender raises the interrupt as soon as it has room
    /// for the message, before composing and writing it: the receiver's
    /// wake-up overlaps the transfer (CCI paper, section V, which "was able
    /// to hide the additional interrupt latency nearly completely"). The
    /// paper gave it up: its handler could look for the message too early
    /// and sleep again past it. Here a core woken early waits on, awake,
    /// for the line, as a chip's runtime would have to (poll until the
    /// announced message lands; a sender writes it in bounded time, with
    /// nothing to preempt it), and the figures' hlt rows stay the paper's
    /// measured way, the interrupt after the message.
    halt_overlapped,
};
/// The policy's name, as a program's options spell it.
constexpr const char* name(idle_policy p) noexcept {
    switch (p) {
    case idle_policy::poll: return "poll";
    case idle_policy::halt: return "halt";
    case idle_policy::halt_overlapped: return "halt_overlapped";
    }
    return "?";
}
/// What a core does when idle, in a sentence's words.
constexpr const char* describe(idle_policy p) noexcept {
    switch (p) {
    case idle_policy::poll: return "polling";
    case idle_policy::halt: return "asleep in hlt when idle";
    case idle_policy::halt_overlapped: return "asleep in hlt when idle, woken by an interrupt raised before the message";
    }
    return "?";
}
/// The name before idle_policy (the POSIX and MPI platforms' name for the
/// same choice); kept for one release so existing code still compiles.
using idle_mode [[deprecated("tacomesh::scc: idle_mode is now idle_policy")]] = idle_policy;

/// A memory setting the host cannot back (the emulation keeps the chip's
/// memory in host memory): what() names the setting, the bytes it asked
/// for and what the host has. A std::bad_alloc, as the refusal was before.
class memory_refused : public std::bad_alloc {
public:
    explicit memory_refused(std::string what) : what_(std::move(what)) {}
    const char* what() const noexcept override { return what_.c_str(); }

private:
    std::string what_;
};

/// Filled in when a run ends: each core's modelled cycles, and where its
/// priced loads and stores went (cost_model::price_memory).
struct run_report {
    std::vector<std::uint64_t> cycles;
    std::vector<memory_counts> memory;
    /// core_order::modelled: operations that waited for their turn, and
    /// those that waited config.order_patience and went ahead out of order
    /// (a wait outside the runtime's wait loop: the cycles may then depend
    /// on the host).
    std::uint64_t order_waits = 0, order_timeouts = 0;
    /// Urgent invocations that interrupted a computation (taco::preemptible)
    /// through the chip's interrupt, per core.
    std::vector<std::uint64_t> preemptions;
};

class platform;

struct config {
    using platform = emulated::platform;

    taco::core_id cores = 4; ///< 1 to shape.cores() (more cores than host CPUs: oversubscribed)
    /// The chip: the SCC's 48 cores by default, or a bigger one of the
    /// same cores (emulated::grid(x, y): "what would 1024 cores give").
    chip_shape shape{};
    idle_policy idle = idle_policy::poll;
    std::size_t cached_bytes = std::size_t(64) << 20;        ///< DCM
    std::size_t write_through_bytes = std::size_t(16) << 20; ///< MPBT + WT
    std::size_t non_cached_bytes = std::size_t(16) << 20;    ///< NCM
    std::size_t private_bytes = std::size_t(4) << 20;        ///< per core
    cost_model costs{};
    /// Modelled-time order (time_order.hpp): the cycles then do not depend
    /// on the host's scheduling of the core threads, at some host time.
    core_order order = core_order::host;
    std::uint64_t order_window = 0; ///< cycles a core may run ahead of one that could still write to it (0: exact)
    std::chrono::milliseconds order_patience{2000}; ///< host time an operation waits for its turn at most
    run_report* report = nullptr;
};

class endpoint;

namespace detail {

inline thread_local endpoint* this_core = nullptr;

/// What the calling thread's emulated core computed between two readings,
/// in cycles (cost_model::compute): the basic blocks it ran
/// (counted_work.hpp), or its CPU time however long the host kept it off a
/// CPU. Its own blocks are not counted: it is the emulation, not the core.
class compute_clock {
public:
    explicit compute_clock(const cost_model& c)
        : model_(c.compute),
          scale_(model_ == compute_model::counted_blocks ? c.cycles_per_block
                 : model_ == compute_model::host_time    ? c.compute_cycles_per_ns
                                                         : 0),
          last_(now()) {}
    /// Cycles computed since the last take() or skip(). The fraction of a
    /// cycle left over is carried, so that many short stretches of blocks
    /// add up to what one long one would.
    TACOMESH_SCC_NOT_COUNTED std::uint64_t take() noexcept {
        if (scale_ == 0) return 0;
        const std::int64_t t = now();
        std::int64_t d = t - last_;
        // Less the reading itself: a system call, the emulation's cost, not the core's.
        if (model_ == compute_model::host_time) d -= reading_cost();
        last_ = t;
        if (d <= 0) return 0;
        carried_ += double(d) * scale_;
        const auto whole = std::uint64_t(carried_);
        carried_ -= double(whole);
        return whole;
    }
    /// The work since the last take() was waiting (or emulating): not counted.
    TACOMESH_SCC_NOT_COUNTED void skip() noexcept {
        if (scale_ != 0) last_ = now();
    }

private:
    TACOMESH_SCC_NOT_COUNTED std::int64_t now() const noexcept {
        return model_ == compute_model::counted_blocks ? std::int64_t(counted_blocks())
               : model_ == compute_model::host_time    ? cpu_ns()
                                                       : 0;
    }
    static std::int64_t cpu_ns() noexcept {
        timespec ts{};
        ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
    }
    static std::int64_t reading_cost() noexcept {
        static const std::int64_t cost = [] {
            std::int64_t least = 1'000'000;
            for (int i = 0; i < 64; ++i) {
                const std::int64_t a = cpu_ns();
                least = std::min(least, cpu_ns() - a);
            }
            return least;
        }();
        return cost;
    }
    compute_model model_;
    double scale_;
    std::int64_t last_;
    double carried_ = 0;
};

/// compute_model::counted_blocks in a program that counts nothing: the
/// launching code ran `blocks` blocks (0 when it was compiled without the
/// flag). Refused before any core runs, saying how to build it.
inline void require_counting(const cost_model& c, std::uint64_t blocks) {
    if (c.compute == compute_model::counted_blocks && blocks == 0)
        throw taco::usage_error(
            "tacomesh::scc: config.costs.compute is compute_model::counted_blocks, but this program counts no "
            "basic blocks: compile every translation unit of it with -fsanitize-coverage=trace-pc (in CMake: "
            "target_link_libraries(<program> PRIVATE tacomesh::scc_counted)), or charge host CPU time instead "
            "(compute_model::host_time)");
}

/// cost_model::price_memory in a program that reports no access: refused
/// as require_counting refuses.
inline void require_pricing(const cost_model& c, std::uint64_t accesses) {
    if (c.price_memory && accesses == 0)
        throw taco::usage_error(
            "tacomesh::scc: config.costs.price_memory is set, but this program reports no loads or stores: "
            "compile every translation unit of it with tacomesh::scc_counted (outside a sanitizer build: "
            "AddressSanitizer's kernel mode reports them), or leave price_memory false");
}

/// What the host can back: its RAM and swap, or the process's address-space
/// limit (RLIMIT_AS) where that is lower.
inline std::size_t host_memory_bytes() noexcept {
    return std::size_t(std::min<std::uint64_t>(taco::detail::host_memory_bytes(), SIZE_MAX));
}

/// "config.<setting> = <n> bytes": how the refusals name what was asked.
inline std::string setting_text(const char* setting, std::size_t bytes, std::size_t cores = 0) {
    std::string t = std::string("config.") + setting + " = " + std::to_string(bytes) + " bytes";
    if (cores) t += " per core, for " + std::to_string(cores) + " cores";
    return t;
}

/// The bytes of a region for `setting`: whole pages, `copies` times (private
/// memory: one slab per core); refused when that does not fit std::size_t or
/// is more than the host has, naming the setting.
inline std::size_t region_bytes(const char* setting, std::size_t bytes, std::size_t copies = 1) {
    constexpr std::size_t page = 4096;
    std::size_t total = 0;
    const bool wraps = bytes > std::numeric_limits<std::size_t>::max() - (page - 1) ||
                       __builtin_mul_overflow((bytes + page - 1) / page * page, copies, &total);
    const std::size_t host = host_memory_bytes();
    if (wraps || total > host)
        throw memory_refused("tacomesh::scc: " + setting_text(setting, bytes, copies > 1 ? copies : 0) +
                             (wraps ? std::string(" does not fit a std::size_t once rounded to pages")
                                    : " is more than the host can back (" + std::to_string(host) +
                                          " bytes of RAM and swap, or the process's address-space limit): the "
                                          "emulation keeps the chip's memory in host memory") +
                             "; lower config." + setting);
    return total;
}

/// One region of host memory, page-aligned, untouched until used. `bytes`
/// comes from region_bytes; `setting` names it when the host refuses it.
class host_region {
public:
    // Whole pages: aligned_alloc needs a size that is a multiple of the alignment.
    host_region(std::size_t bytes, const char* setting, std::size_t asked, std::size_t cores = 0)
        : bytes_(whole_pages(bytes)) {
        if (bytes_ && !(data_ = static_cast<std::byte*>(std::aligned_alloc(4096, bytes_))))
            throw memory_refused("tacomesh::scc: " + setting_text(setting, asked, cores) + ": the host refused " +
                                 std::to_string(bytes_) + " bytes for it (it has " +
                                 std::to_string(host_memory_bytes()) +
                                 " bytes of RAM and swap, or that address-space limit, and other regions took "
                                 "their part); lower config." + setting);
    }
    /// Host memory that is no setting of the configuration (the on-chip pieces).
    explicit host_region(std::size_t bytes) : bytes_(whole_pages(bytes)) {
        if (bytes_ && !(data_ = static_cast<std::byte*>(std::aligned_alloc(4096, bytes_)))) throw std::bad_alloc();
    }
    ~host_region() { std::free(data_); }
    host_region(const host_region&) = delete;
    host_region& operator=(const host_region&) = delete;
    std::byte* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return bytes_; }
    bool contains(const void* p) const noexcept {
        auto* b = static_cast<const std::byte*>(p);
        return b >= data_ && b < data_ + bytes_;
    }

private:
    static std::size_t whole_pages(std::size_t bytes) {
        if (bytes > SIZE_MAX - 4095) throw std::bad_alloc(); // the sized constructor's callers refuse these first
        return (bytes + 4095) / 4096 * 4096;
    }
    std::size_t bytes_;
    std::byte* data_ = nullptr;
};

/// What the cores of one run share besides the chip.
struct run_state {
    explicit run_state(const config& c)
        : cfg(c), chip(c.cores, std::size_t(1) << 20, c.costs, c.shape),
          cached(region_bytes("cached_bytes", c.cached_bytes), "cached_bytes", c.cached_bytes),
          write_through(region_bytes("write_through_bytes", c.write_through_bytes), "write_through_bytes",
                        c.write_through_bytes),
          non_cached(region_bytes("non_cached_bytes", c.non_cached_bytes), "non_cached_bytes", c.non_cached_bytes),
          private_stride(region_bytes("private_bytes", c.private_bytes, c.cores) / c.cores), // a slab per core
          privates(private_stride * c.cores, "private_bytes", c.private_bytes, c.cores),
          on_chip(on_chip_piece * c.cores), urgent(c.cores), doorbell(c.cores),
          controllers(c.costs.memory, c.shape.controllers),
          order(c.order == core_order::modelled ? std::make_unique<time_order>(c.cores, c.order_window, c.order_patience)
                                                : nullptr) {
        for (taco::core_id id = 0; id < c.cores; ++id)
            if (on_chip_piece) on_chip_pieces.emplace_back(on_chip.data() + id * on_chip_piece, on_chip_piece);
    }
    config cfg;
    emulated::chip chip;
    host_region cached, write_through, non_cached;
    std::size_t private_stride;
    host_region privates;
    /// Each core's spare MPB bytes, in whole 64-byte blocks.
    std::size_t on_chip_piece = mpb_layout::of(cfg.cores, cfg.shape.cores(), cfg.shape.mpb_bytes).spare_bytes() / 64 * 64;
    host_region on_chip;
    std::vector<std::span<std::byte>> on_chip_pieces;
    std::vector<std::atomic<bool>> urgent; ///< the emulated interrupt status "urgent" bit per core
    /// Preemptive invocations: per core, whether it computes inside
    /// taco::preemptible (its interrupt is then delivered), its host thread,
    /// and the interruptions it took.
    std::vector<std::atomic<bool>> preemptible = std::vector<std::atomic<bool>>(cfg.cores);
    std::vector<std::atomic<std::int32_t>> thread_ids = std::vector<std::atomic<std::int32_t>>(cfg.cores);
    std::vector<std::uint64_t> preemptions = std::vector<std::uint64_t>(cfg.cores);
    /// Per core: messages published to it. Host-side only (the chip has no
    /// such counter): a core whose doorbell has not rung since a poll that
    /// found nothing skips the next scan of its MPB, which would find
    /// nothing too and cost no modelled cycles (idle_since), but host time:
    /// 48 emulated cores polling 48 headers each, on 2 CPUs.
    std::vector<std::atomic<std::uint64_t>> doorbell;
    /// Per core, host-side: a polling core with nothing to do sleeps here
    /// until its doorbell rings (endpoint::idle), rather than yielding in a
    /// loop: 1024 emulated cores on 2 CPUs would spend them on idle rounds.
    struct parking {
        std::atomic<bool> parked{false};
        std::mutex m;
        std::condition_variable cv;
    };
    std::vector<parking> parked = std::vector<parking>(cfg.cores);
    /// The chip's memory controllers, whose queues the cores' priced
    /// accesses share (memory_model.hpp).
    memory_controllers controllers;
    std::unique_ptr<time_order> order; ///< null: core_order::host
    std::vector<std::uint64_t> cycles = std::vector<std::uint64_t>(cfg.cores);
    std::vector<emulated::memory_counts> memory = std::vector<emulated::memory_counts>(cfg.cores);
};

} // namespace detail

/// One core (satisfies taco::channel_endpoint and taco::memory_endpoint).
class endpoint {
public:
    endpoint(detail::run_state& s, taco::core_id id)
        : s_(s), hw_(s.chip, id), channels_(hw_), compute_(s.cfg.costs),
          pricing_{core_memory(s.cfg.costs.memory, s.controllers, id, s.cfg.shape),
                   range_of(s.cached.data(), s.cached.size()),
                   range_of(s.write_through.data(), s.write_through.size()),
                   range_of(s.non_cached.data(), s.non_cached.size()),
                   range_of(s.on_chip.data(), s.on_chip.size()),
                   range_of(channels_.staging().data(), channels_.staging().size())} {
        pricing_.cycles_per_block =
            s.cfg.costs.compute == compute_model::counted_blocks ? s.cfg.costs.cycles_per_block : 0;
        if (s_.order) hw_.order_with(&turn_at, this);
    }
    endpoint(const endpoint&) = delete; // the turn hooks hold `this`
    endpoint& operator=(const endpoint&) = delete;
    /// Where this core's priced loads and stores went so far.
    const emulated::memory_counts& memory_counts() const noexcept { return pricing_.memory.counts(); }
    /// Price this core's loads and stores from here on (platform::launch,
    /// on the core's thread, when the cost model prices memory).
    void start_pricing() noexcept {
        // In modelled-time order a request to the memory controllers takes
        // a turn at its cycle, so that their calendars are booked in cycle
        // order. Booked in host order, NCM world trade's speed-up dipped from
        // 1.78 at 8 cores to 1.60 at 12 and climbed to 2.04 at 48; booked in
        // cycle order it is 2.01 at 12 and 2.03 at 48, as the controllers'
        // saturation past 12 has it (MESH paper, Figure 6).
        if (s_.order) pricing_.memory.before_requests(&turn_at, this);
        detail::priced = &pricing_;
        pricing_.restart(hw_.cycles());
        pricing_.on = true;
    }

    taco::core_id id() const noexcept { return hw_.core(); }
    taco::core_id core_count() const noexcept { return hw_.core_count(); }
    emulated::hardware& hardware() noexcept { return hw_; }

    /// This core's clock: modelled cycles so far, computation included.
    std::uint64_t cycles() noexcept {
        stop_pricing(); // reading the clock is the emulation's work
        count_computed();
        const std::uint64_t now = hw_.cycles();
        price_again();
        return now;
    }
    std::byte* try_acquire(taco::core_id dest) {
        const bool waiting = in_wait_loop_;
        emulating here(*this);
        // A retry from the wait loop acts only if it finds room (see below).
        if (!waiting_) take_turn();
        const std::uint64_t t = hw_.cycles();
        std::byte* room = channels_.try_acquire(dest);
        if (!room && waiting) in_wait_loop_ = true; // the wait loop's retry, which goes on waiting
        // The runtime queues a message that finds no room, to send later.
        no_room_.assign(dest, !room);
        if (waiting_) {
            if (room) take_turn(); // from the cycle the acknowledgement came
            else start_waiting();  // for room here too
        }
        if (room && s_.cfg.idle == idle_policy::halt_overlapped) hw_.announce(dest); // see publish
        if (!room) {
            hw_.idle_since(t); // waiting for the receiver is not work
            // Nor is the loop that retries: its loads and stores stay
            // unpriced up to the next hardware operation (charged, the rounds
            // the host makes would show in the caches and the write buffers).
            // A first try from the program's own code is not that loop: the
            // runtime queues the message and the task goes on, priced.
            here.resume = !waiting;
        }
        return room;
    }
    void publish(taco::core_id dest, std::size_t length) {
        const emulating here(*this);
        take_turn();
        if (s_.order) s_.order->sending(dest, hw_.cycles()); // counted before it can be read
        channels_.publish(dest, length);
        hw_.unannounce();
        // Before the interrupt: a core it wakes finds the doorbell rung.
        // Sequentially consistent with the parked flag's load below, as the
        // parker's store of it is with its load of the doorbell: one of the
        // two sees the other (a message never sleeps beside a parked core).
        s_.doorbell[dest].fetch_add(1, std::memory_order_seq_cst);
        if (detail::run_state::parking& p = s_.parked[dest]; p.parked.load(std::memory_order_seq_cst)) {
            { std::lock_guard g(p.m); }
            p.cv.notify_one();
        }
        if (s_.cfg.idle == idle_policy::halt) hw_.interrupt(dest);
        else if (s_.cfg.idle == idle_policy::halt_overlapped) hw_.raise_only(dest); // its cycles: try_acquire's announce
    }
    template <class Handler>
    std::size_t poll(Handler&& handle) {
        // What the core ran since its clock last counted (tasks of earlier
        // rounds of the scheduler loop): counted before a round that finds
        // nothing ends in pause() or idle(), which discard the rest.
        stop_pricing(); // the emulation's, as the scan below
        count_computed();
        // In modelled-time order, a core looks at its clock only once every
        // message that could reach it earlier has been sent, and a waiting
        // core reads its first message only once nothing earlier can come.
        if (s_.order) {
            if (waiting_) s_.order->look(id());
            else take_turn();
        }
        const std::uint64_t rung = s_.doorbell[id()].load(std::memory_order_acquire);
        if (rung == quiet_at_) return 0; // unpriced on: see below
        emulating here(*this, emulating::counted);
        const std::uint64_t t = hw_.cycles();
        // Halting: a message that comes after this core's clock found it
        // asleep (see hardware::sleeping).
        const bool halting = s_.cfg.idle != idle_policy::poll;
        hw_.sleeping(halting);
        hw_.ordered_writes(true); // the acknowledgements (hardware::order_with)
        const std::size_t n = channels_.poll([&](std::byte* m, std::size_t, core_index from) {
            hw_.ordered_writes(false); // publish() takes its own turn
            if (s_.order) {
                s_.order->received(id(), hw_.cycles(), from); // its acknowledgement just written
                waiting_ = false;
            }
            hw_.sleeping(false);
            compute_.skip();
            price_again();
            handle(m); // the invocation: the core's work
            hw_.elapse(compute_.take());
            hw_.elapse(pricing_.take(hw_.cycles())); // and its loads and stores
            stop_pricing();
            // The scan goes on reading headers at the clock the handler
            // left: a message published since the scan began, at a cycle
            // before that clock, is found there only once every core has
            // got past it. Otherwise it was found or not as the host ran
            // its publisher's thread.
            take_turn();
            hw_.ordered_writes(true);
            hw_.sleeping(halting); // scanning on: a line still to come would find it asleep
        });
        hw_.ordered_writes(false);
        hw_.sleeping(false);
        if (n == 0) {
            hw_.idle_since(t);
            quiet_at_ = rung; // nothing new up to this ring
            // What runs next is the runtime's wait loop going round, up to
            // idle() (or a program's own loop, up to pause(), which prices
            // again): its loads and stores stay unpriced, as its blocks go
            // uncharged (count_computed). Priced and then dropped, they
            // would still book the memory controllers' slots ahead of the
            // core's clock, by as many rounds as the host happened to make.
            here.resume = false;
        }
        return n;
    }
    // Both come after a round that found nothing to do, whose poll counted
    // what ran before it: the CPU time since is the idle loop's, and so is
    // what the host spends here.
    void idle(std::chrono::nanoseconds limit) {
        in_wait_loop_ = true; // only the runtime's wait loop idles (see count_computed)
        // Its loads and stores too (see poll).
        stop_pricing();
        start_waiting();
        if (s_.cfg.idle == idle_policy::poll) {
            park(limit);
            compute_.skip();
            return;
        }
        // At most 1000 s of host time per halt: the runtime comes back and
        // checks its timers, and a limit near nanoseconds::max() (a timer at
        // the end of the clock) cannot overflow the cycles-to-host conversion.
        const double wait = limit >= std::chrono::seconds(1000) ? 8e11 : double(std::max<std::int64_t>(limit.count(), 0)) * 0.8;
        hw_.halt(std::uint64_t(wait));
        // The interrupt is taken here but its cycles are counted where the
        // message is read (poll): the same whether or not this host thread
        // got to hlt before the message came.
        std::uint64_t raised = 0;
        (void)s_.chip.take(id(), raised);
        compute_.skip();
    }
    /// A polling core whose last scan found nothing waits, on the host, for
    /// its doorbell (or `limit`: the runtime's timers; at most 1 ms, longer
    /// the more cores, as time_order's slices). Its modelled clock does not
    /// move either way (idle_since), so this is host time only. Not while
    /// it waits for room: acknowledgements ring no doorbell.
    void park(std::chrono::nanoseconds limit) {
        if (!no_room_.empty() || s_.doorbell[id()].load(std::memory_order_acquire) != quiet_at_) {
            std::this_thread::yield();
            return;
        }
        detail::run_state::parking& p = s_.parked[id()];
        std::unique_lock g(p.m);
        p.parked.store(true, std::memory_order_seq_cst);
        const std::chrono::nanoseconds most = std::chrono::milliseconds(std::max(1, int(s_.cfg.cores) / 16));
        p.cv.wait_for(g, std::clamp(limit, std::chrono::nanoseconds(0), most),
                      [&] { return s_.doorbell[id()].load(std::memory_order_seq_cst) != quiet_at_; });
        p.parked.store(false, std::memory_order_relaxed);
    }
    void pause() {
        // Waiting for room: the runtime's wait loop, going round until a
        // receiver frees a slot (see count_computed).
        if (!no_room_.empty()) {
            in_wait_loop_ = true;
            stop_pricing();
            start_waiting();
        } else {
            price_again(); // taco::poll(): the program's own code goes on
        }
        std::this_thread::yield();
        compute_.skip();
    }
    // No interrupt for a core outside taco::preemptible: a polling core sees
    // the flag at its next scheduling point, and a halting one was woken by
    // publish's. One inside it is interrupted (taco::preemption_endpoint),
    // as the CCI paper's preemptive invocations were on the chip (section
    // V): the sender writes the receiver's interrupt register (a register
    // access, hardware::interrupt), and the receiver's handler costs
    // interrupt_handling of its cycles; on the host the interrupt reaches
    // the core's thread as a signal (taco/platform/host_preemption.hpp).
    void signal_urgent(taco::core_id dest) noexcept {
        // seq_cst with the load below, against allow_preemption's store and
        // load in the other order: a core that arms as we send either sees
        // the flag or is seen armed.
        s_.urgent[dest].store(true, std::memory_order_seq_cst);
        if (!s_.preemptible[dest].load(std::memory_order_seq_cst)) [[likely]]
            return;
        {
            const emulating here(*this); // no turn to take: armed only in host order
            hw_.interrupt(dest);
        }
        taco::detail::interrupt_thread(std::int32_t(::getpid()), s_.thread_ids[dest].load(std::memory_order_relaxed));
    }
    bool take_urgent() noexcept {
        auto& f = s_.urgent[id()];
        // Nothing urgent, the common case: one load, as before preemption.
        if (!f.load(std::memory_order_relaxed) || !f.exchange(false, std::memory_order_acquire)) return false;
        if (taco::detail::tls_runtime->preempting()) [[unlikely]]
            take_preemption(); // before the poll that reads the invocation
        return true;
    }
    // ---- preemptive invocations (taco::preemption_endpoint) ----
    /// Armed only in host order: in modelled-time order an interruption
    /// waiting for its turn inside the computation could wait for cores
    /// that wait for this one. There urgent invocations run when the
    /// computation ends, as on platforms without interrupts.
    void allow_preemption(bool on) {
        if (s_.order) return;
        auto& armed = s_.preemptible[id()];
        if (!on) {
            armed.store(false, std::memory_order_seq_cst);
            return;
        }
        taco::detail::preemption_thread.prepare();
        s_.thread_ids[id()].store(std::int32_t(::syscall(SYS_gettid)), std::memory_order_relaxed);
        armed.store(true, std::memory_order_seq_cst);
        // Signalled before we were armed: interrupt ourselves now.
        if (s_.urgent[id()].load(std::memory_order_seq_cst)) {
            {
                const emulating here(*this);
                hw_.interrupt(id());
            }
            taco::detail::interrupt_thread(std::int32_t(::getpid()), s_.thread_ids[id()].load(std::memory_order_relaxed));
        }
    }

    // ---- memory for MESH ----
    std::span<std::byte> region(taco::memory_mode m) const noexcept {
        const detail::host_region& r = m == taco::memory_mode::cached          ? s_.cached
                                       : m == taco::memory_mode::write_through ? s_.write_through
                                                                               : s_.non_cached;
        return {r.data(), r.size()};
    }
    std::span<const std::span<std::byte>> on_chip_regions() const noexcept { return s_.on_chip_pieces; }
    std::span<std::byte> private_region() const noexcept { return {s_.privates.data(), s_.private_stride}; }
    std::ptrdiff_t private_offset() const noexcept { return std::ptrdiff_t(id()) * std::ptrdiff_t(s_.private_stride); }
    // The flush routine and CL1INVMB are the hardware's (their cost is the
    // emulated L2's and the instruction's); with memory priced, the same
    // lines leave this core's priced caches too, so that the next reads
    // cost what they would after the routine, and modified lines pay their
    // write-back here.
    void invalidate(const void* p, std::size_t n) {
        const emulating here(*this);
        take_turn();
        if (s_.cached.contains(p)) {
            hw_.flush_l2_range(std::size_t(static_cast<const std::byte*>(p) - s_.cached.data()), n);
            if (pricing()) hw_.elapse(pricing_.memory.drop(pricing_.chip_address(p), n, hw_.cycles()));
        } else if (s_.write_through.contains(p)) {
            hw_.cl1invmb();
            if (pricing()) pricing_.memory.drop_write_through();
        }
        std::atomic_thread_fence(std::memory_order_acquire);
    }
    void write_back(const void* p, std::size_t n) {
        const emulating here(*this);
        take_turn();
        std::atomic_thread_fence(std::memory_order_release);
        const auto at = reinterpret_cast<std::uintptr_t>(p);
        if (s_.cached.contains(p)) {
            hw_.flush_l2_range(std::size_t(static_cast<const std::byte*>(p) - s_.cached.data()), n);
            if (pricing()) hw_.elapse(pricing_.memory.clean(pricing_.chip_address(p), n, hw_.cycles()));
        } else if (s_.write_through.contains(p)) {
            if (pricing()) {
                // Each store went through the write-combine buffer as it
                // was made (priced); what is left there goes out now.
                hw_.elapse(pricing_.memory.flush_wcb(hw_.cycles()));
            } else {
                // The program's stores to MPBT+WT memory are host stores
                // here, not emulated ones: what the chip's WCB would have
                // sent on to DRAM for them, a line write each, is charged now.
                hw_.elapse(((at + n + line_bytes - 1) / line_bytes - at / line_bytes) * s_.cfg.costs.dram_line_write);
            }
            hw_.flush_wcb();
        }
    }
    bool coherent() const noexcept { return false; }

    /// core_order::modelled: this core's program returned.
    void finished() {
        // Nothing after this is the core's: a priced access would take a
        // turn (a memory request's) and make the finished core run again.
        stop_pricing();
        if (s_.order) s_.order->done(id());
    }

private:
    /// In the interruption of a preemptible computation: the chip's
    /// interrupt, taken. What the core computed up to here is counted
    /// first; the handler starts no earlier than the raise (the sender's
    /// register write) and costs interrupt_handling.
    void take_preemption() noexcept {
        std::uint64_t raised = 0;
        if (!s_.chip.take(id(), raised)) return; // a second signal for an interrupt already taken
        const emulating here(*this);
        if (raised > hw_.cycles()) hw_.elapse(raised - hw_.cycles());
        hw_.elapse(s_.cfg.costs.interrupt_handling);
        ++s_.preemptions[id()];
    }
    /// core_order::modelled: endpoint `e` acts at cycle t, from inside an
    /// operation of the hardware (a write it orders) or of the memory model
    /// (a request to a controller).
    static void turn_at(void* e, std::uint64_t t) {
        auto& ep = *static_cast<endpoint*>(e);
        ep.s_.order->turn(ep.id(), t);
        ep.waiting_ = false; // running: the wait loop's next round says so again
    }
    /// core_order::modelled: this core acts now, at its clock (time_order::turn).
    void take_turn() {
        if (!s_.order) return;
        s_.order->turn(id(), hw_.cycles());
        waiting_ = false;
    }
    /// core_order::modelled: the wait loop waits for messages, and for room
    /// at the receivers whose last try_acquire found none.
    void start_waiting() {
        if (!s_.order) return;
        // Each round of the wait loop comes here: only a change is news
        // (the others' wake-ups look at every core).
        if (waiting_ && no_room_ == waits_for_room_) return;
        const auto peek = [&](core_index c, std::size_t off, void* dst, std::size_t n) { hw_.mpb_peek(c, off, dst, n); };
        const bool waits = s_.order->wait(id(), hw_.cycles(), no_room_, [&] {
            return no_room_.any_of([&](core_index r) { return channels_.room_written(r, peek); });
        });
        if (!waits) return; // running on: the loop's retry finds the room
        waiting_ = true;
        waits_for_room_ = no_room_;
    }

    /// The computation since the clock last counted, onto the clock; but
    /// not after a wait of the runtime's wait loop: idle(), pause() while a
    /// message waits for room in its channel, and a retry of that send
    /// that still finds none. What runs from there to the next poll or
    /// hardware operation is that loop testing its predicate and retrying,
    /// as many times as the host happens to go round it before the awaited
    /// message or room comes: on the chip, rounds that overlap the wait
    /// (the line read then moves the clock to the cycle it was written).
    /// Charged, they made the clock depend on the host's scheduling:
    /// counted in blocks, an 8-core reduce took twice as long in one run as
    /// in the next, and 40 sends into a channel of 24 slots 30 to 150 times
    /// as long as they should. After any other pause() it is counted:
    /// taco::poll() pauses too, and then the program's own work follows
    /// (which, while a message of this core waits for room, goes uncounted
    /// with the loop's).
    void count_computed() noexcept {
        if (in_wait_loop_) {
            compute_.skip();
            pricing_.restart(hw_.cycles()); // the loop's loads and stores with it
            in_wait_loop_ = false;
        } else {
            hw_.elapse(compute_.take());
            hw_.elapse(pricing_.take(hw_.cycles()));
        }
    }
    bool pricing() const noexcept { return s_.cfg.costs.price_memory; }
    /// The emulation's own accesses are its cost, not the core's: none is
    /// priced from here to price_again().
    void stop_pricing() noexcept { pricing_.on = false; }
    void price_again() noexcept {
        pricing_.restart(hw_.cycles()); // from the clock as it is now
        pricing_.on = pricing();
    }
    static detail::memory_pricing::range range_of(const std::byte* p, std::size_t n) noexcept {
        const auto b = reinterpret_cast<std::uintptr_t>(p);
        return {b, b + n};
    }

    /// Around each operation of the emulated hardware: what the core
    /// computed before it is counted (so that a wait for another core's
    /// write, a max with the cycle it arrived, starts from the right
    /// cycle), and the host's time emulating it is not: the operation's
    /// modelled cost stands for it. (The channel protocol's own few
    /// instructions go uncounted with it.)
    struct emulating {
        static constexpr struct counted_t {} counted{}; ///< the caller brought the clock up to date just now
        explicit emulating(endpoint& e) : e_(e) {
            // Pricing off first: count_computed's own loads and stores are
            // the emulation's. Priced, a miss of theirs booked a memory
            // controller's slot and took a turn at a cycle the clock then
            // left behind (its cost stayed pending), and the cores the
            // turn had let past booked theirs in the host's order.
            e.stop_pricing();
            e.count_computed();
        }
        emulating(endpoint& e, counted_t) : e_(e) { e.stop_pricing(); }
        ~emulating() {
            e_.compute_.skip();
            if (resume) e_.price_again();
        }
        bool resume = true; ///< price the core's loads and stores again after it
        emulating(const emulating&) = delete;
        emulating& operator=(const emulating&) = delete;
        endpoint& e_;
    };

    detail::run_state& s_;
    emulated::hardware hw_;
    mpb_channels<emulated::hardware> channels_;
    std::uint64_t quiet_at_ = ~std::uint64_t(0); ///< the doorbell when a scan last found nothing
    detail::compute_clock compute_;
    detail::memory_pricing pricing_;
    bool in_wait_loop_ = false; ///< the wait loop waited since the clock last counted (count_computed)
    bool waiting_ = false;      ///< core_order::modelled: in the wait loop since its last operation
    core_set waits_for_room_{s_.cfg.cores}; ///< while waiting_: the receivers it waits for room at
    core_set no_room_{s_.cfg.cores};        ///< the receivers at which the last try_acquire found no room
};

/// The calling core's modelled cycles so far (0 outside an emulated core).
inline std::uint64_t cycles() noexcept { return detail::this_core ? detail::this_core->cycles() : 0; }

/// The emulated SCC platform (satisfies taco::platform).
class platform {
public:
    using endpoint = emulated::endpoint;
    using config = emulated::config;
    static constexpr std::size_t message_bytes = mpb_channels<emulated::hardware>::payload_bytes;
    static constexpr std::size_t message_align = 8;

    /// Run entry(endpoint, arg) on every emulated core (core 0 on the
    /// calling thread); returns when all have returned.
    static void launch(const config& c, void (*entry)(endpoint&, void*), void* arg) {
        if (const std::string e = shape_error(c.shape, c.cores); !e.empty())
            throw std::invalid_argument("tacomesh::scc: config.cores and config.shape: " + e);
        // The setting-up below runs instrumented code if this program counts
        // blocks at all: whether it does is known before any core runs.
        const std::uint64_t blocks_before = counted_blocks(), accesses_before = detail::accesses_seen;
        detail::run_state s(c);
        detail::require_counting(c.costs, counted_blocks() - blocks_before);
        detail::require_pricing(c.costs, detail::accesses_seen - accesses_before);
        auto core_main = [&](taco::core_id id) {
            endpoint ep(s, id);
            detail::this_core = &ep;
            struct unpriced_at_exit {
                ~unpriced_at_exit() { detail::priced = nullptr; }
            } unpriced;
            if (c.costs.price_memory) ep.start_pricing();
            struct leave {
                endpoint& ep;
                ~leave() {
                    ep.finished(); // returned or threw: in either case it acts no more
                    detail::this_core = nullptr;
                }
            } on_exit{ep};
            entry(ep, arg);
            s.cycles[id] = ep.cycles();
            s.memory[id] = ep.memory_counts();
        };
        struct report_cycles { // also when a core failed: the report holds what ran
            const config& c;
            detail::run_state& s;
            ~report_cycles() {
                if (c.report) {
                    c.report->cycles = s.cycles;
                    c.report->memory = s.memory;
                    c.report->order_waits = s.order ? s.order->waits() : 0;
                    c.report->order_timeouts = s.order ? s.order->timeouts() : 0;
                    c.report->preemptions = s.preemptions;
                }
            }
        } report{c, s};
        const taco::detail::preemption_handler preemption; // the chip's interrupt, on the host
        taco::detail::run_core_threads(
            c.cores, [&](std::size_t k) { core_main(taco::core_id(k)); }, "tacomesh::scc (emulated)",
            [&](std::size_t k) { return "emulated core " + std::to_string(k) + " of " + std::to_string(c.cores); },
            "emulate fewer cores (config.cores), or raise the host's limit (ulimit -u, memory)");
    }
};

static_assert(taco::platform<platform>);
static_assert(taco::on_chip_memory_endpoint<endpoint>);
static_assert(taco::preemption_endpoint<endpoint>);

} // namespace tacomesh::scc::emulated
