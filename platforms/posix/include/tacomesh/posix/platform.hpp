#pragma once
// The POSIX platform. Two execution modes behind one platform type:
//
// threads:   every core is a thread pinned to CPU (id mod #CPUs); caches are
//            coherent. What users run for speed.
// processes: every core is a forked process with really private memory, and
//            MESH's cached memory is emulated (see memory.hpp), so a missing
//            invalidation shows up as stale data. What makes coherence
//            testable on a PC; invocations behave exactly as across threads
//            (same binary, forked after set-up, so code addresses agree).
//
// More cores than CPUs is allowed (oversubscribed); then idle cores park
// (or yield) their CPU instead of spinning it away from the cores that work.
// What an idle core does and whether cores are pinned is the configuration's
// choice, or, left unset, the run's at start (host_load.hpp): spinning
// pinned cores while the machine is free, adaptive idling (spin briefly,
// park) unpinned when other work takes CPUs.
//
// Channels: one SPSC ring per (source, destination) pair, created lazily by
// the source on its first send and announced to the destination through a
// lock-free list; the destination polls only rings that exist. Memory grows
// with the pairs that talk, not with cores^2 (see channel_bytes()). All of it
// lives in one MAP_SHARED arena mapped before the cores start.
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <cstddef>
#include <exception>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <thread>
#include <vector>

#include <taco/platform/host_preemption.hpp>
#include <taco/platform/core_threads.hpp>
#include <taco/platform/memory_endpoint.hpp>
#include <tacomesh/posix/cpu_relax.hpp>
#include <tacomesh/posix/host_load.hpp>
#include <tacomesh/posix/processes.hpp>
#include <tacomesh/posix/shared_state.hpp>

namespace tacomesh::posix {

/// One core's channels (satisfies taco::channel_endpoint).
class endpoint {
public:
    endpoint(detail::shared_state& s, core_id id)
        : s_(s), me_(s.records[id]), id_(id), sleep_(s.idle != idle_policy::poll),
          out_((s.cfg.cores + producer_page::size - 1) / producer_page::size, &unconnected_page),
          staging_(s.staging_of(id)) {}
    ~endpoint() {
        for (producer_page* p : out_)
            if (p != &unconnected_page) delete p;
    }
    endpoint(const endpoint&) = delete;
    endpoint& operator=(const endpoint&) = delete;

    core_id id() const noexcept { return id_; }
    core_id core_count() const noexcept { return s_.cfg.cores; }

    std::byte* try_acquire(core_id dest) {
        detail::ring::producer* o = &out_[dest / producer_page::size]->at[dest % producer_page::size];
        std::byte* slot = o->try_acquire();
        // No slot: the ring is full, or not created yet (see unconnected_slot).
        if (!slot) [[unlikely]] slot = connect_or_fail(o, dest);
        acquired_ = o; // after the acquire, which would otherwise reload o's fields
        return slot;
    }

    /// Publishes the slot of the last successful try_acquire, which is to
    /// `dest`: the runtime publishes right after acquiring, with no other
    /// send in between (the message is only constructed there), so the
    /// producer is not looked up a second time.
    void publish(core_id dest, std::size_t length) noexcept {
        acquired_->publish(length);
        if (sleep_) wake(dest);
    }

    template <class Handler>
    std::size_t poll(Handler&& handle) {
        std::size_t n = 0;
        // acquire: a ring's fields are initialised before it is announced.
        for (detail::ring* r = me().incoming.load(std::memory_order_acquire); r; r = r->next)
            n += r->consume(handle, per_ring_budget);
        return n;
    }

    // ---- back-pressure (taco::backpressure_endpoint) ----
    // Only the backlog is published: which core we wait for matters to no
    // peer, and a waiting core's backlog is never 0 (it waits while more
    // than half the soft limit is queued), so 0 says "not waiting". Stored
    // only when it changes: the waiting cores read this line every round.
    // Relaxed: a stale backlog only delays a peer's choice by a round.
    void waiting_for(core_id peer, std::size_t backlog) noexcept {
        const std::size_t announced = peer == taco::no_core ? 0 : backlog;
        if (me().backlog.load(std::memory_order_relaxed) != announced)
            me().backlog.store(announced, std::memory_order_relaxed);
    }
    bool must_poll(core_id peer, std::size_t backlog) const noexcept {
        const auto& r = s_.records[peer];
        return r.finished.load(std::memory_order_relaxed) != 0 || r.backlog.load(std::memory_order_relaxed) >= backlog;
    }
    template <class Handler>
    std::size_t poll_except(Handler&& handle, core_id skip) {
        std::size_t n = 0;
        for (detail::ring* r = me().incoming.load(std::memory_order_acquire); r; r = r->next)
            if (r->source != skip) n += r->consume(handle, per_ring_budget);
        return n;
    }

    void signal_urgent(core_id dest) noexcept {
        auto& r = s_.records[dest];
        // release: the urgent message (published before) is visible to whoever
        // sees the flag. seq_cst with the load below, against allow_preemption's
        // store and load in the other order: a core that arms its interrupt
        // as we send either sees the flag or is seen armed.
        r.urgent.store(1, std::memory_order_seq_cst);
        if (!sleep_) wake(dest); // sleep, adaptive: publish already woke it
        if (r.preemptible.load(std::memory_order_seq_cst)) [[unlikely]]
            taco::detail::interrupt_thread(r.pid.load(std::memory_order_relaxed), r.tid.load(std::memory_order_relaxed));
    }
    // ---- preemptive invocations (taco::preemption_endpoint) ----
    void allow_preemption(bool on) {
        auto& r = me();
        if (!on) {
            r.preemptible.store(0, std::memory_order_seq_cst);
            return;
        }
        taco::detail::preemption_thread.prepare();
        r.pid.store(std::int32_t(::getpid()), std::memory_order_relaxed);
        r.tid.store(std::int32_t(::syscall(SYS_gettid)), std::memory_order_relaxed);
        r.preemptible.store(1, std::memory_order_seq_cst);
        // Signalled before we were armed: interrupt ourselves now.
        if (r.urgent.load(std::memory_order_seq_cst)) taco::detail::interrupt_thread(r.pid.load(), r.tid.load());
    }
    bool take_urgent() noexcept {
        auto& f = me().urgent;
        // Plain load first: the common "nothing urgent" case stays a read of a shared line.
        return f.load(std::memory_order_relaxed) != 0 && f.exchange(0, std::memory_order_acquire) != 0;
    }

    // A waiting core 0 learns here that a core process died (process mode).
    void pause() {
        if (s_.failed.load(std::memory_order_acquire)) [[unlikely]] s_.throw_failure();
        if (s_.oversubscribed)
            ::sched_yield(); // another core on this CPU may be the one we wait for
        else
            detail::cpu_relax();
    }

    void idle(std::chrono::nanoseconds limit) {
        if (s_.idle == idle_policy::poll) return pause();
        if (s_.failed.load(std::memory_order_acquire)) [[unlikely]] s_.throw_failure();
        if (s_.idle == idle_policy::adaptive) {
            if (spin_briefly(limit)) return;
            limit = std::min(limit, adaptive_park);
        }
        // Dekker-style handshake with wake(), the same in both modes (the
        // word and the rings are in the shared arena; fences order accesses
        // to memory, whichever process maps it): announce the sleep, then
        // look once more. The seq_cst fence here orders "store sleeping=1;
        // load ring tails", the one in wake() "store ring tail (publish);
        // load sleeping": in the single total order of seq_cst fences one
        // comes first, so either this look sees the message, or the sender
        // sees sleeping == 1 and wakes us. The kernel closes the rest:
        // futex_wait sleeps only while the word is still 1, so a wake that
        // cleared it before we got there makes the wait return at once.
        auto& rec = me();
        rec.sleeping.store(1, std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (has_message()) {
            rec.sleeping.store(0, std::memory_order_relaxed);
            return;
        }
        rec.sleeps.fetch_add(1, std::memory_order_relaxed);
        if (limit == std::chrono::nanoseconds::max()) {
            while (rec.sleeping.load(std::memory_order_acquire) == 1) detail::futex_wait(rec.sleeping, 1, s_.processes);
        } else {
            // One bounded sleep: the runtime checks its timers and comes back.
            const auto ns = std::max<std::int64_t>(limit.count(), 0);
            const timespec ts{time_t(ns / 1'000'000'000), long(ns % 1'000'000'000)};
            detail::futex_wait(rec.sleeping, 1, s_.processes, &ts);
            rec.sleeping.store(0, std::memory_order_relaxed);
        }
    }

    // ---- large carried buffers (taco::bulk_endpoint) ----
    bool shares_address_space() const noexcept { return !s_.processes; }
    std::byte* bulk_stage(core_id, std::size_t n) noexcept {
        if (staging_.capacity() == 0 && !s_.processes && !own_staging_tried_) [[unlikely]] map_own_staging();
        return staging_.allocate(n);
    }
    void bulk_release(std::byte* p) noexcept { detail::staging_area::release(p); }
    /// Bytes of this core's staging area not yet released and reclaimed (tests).
    std::size_t staging_held() const noexcept { return staging_.held(); }

    // ---- memory for MESH (mesh::memory_endpoint) ----
    std::span<std::byte> region(taco::memory_mode m) const noexcept { return s_.regions.region(m); }
    std::span<std::byte> private_region() const noexcept { return s_.regions.private_region(); }
    std::ptrdiff_t private_offset() const noexcept { return s_.regions.private_offset(id_); }
    void invalidate(const void* p, std::size_t n) { s_.regions.invalidate(p, n); }
    void write_back(const void* p, std::size_t n) { s_.regions.write_back(p, n); }
    bool coherent() const noexcept { return s_.regions.coherent(); }
    /// Process mode: the canonical copy behind a cached address (tests only).
    const std::byte* canonical(const void* p) const noexcept { return s_.regions.canonical(p); }
    execution_mode mode() const noexcept { return s_.cfg.mode; }

private:
    static constexpr std::size_t per_ring_budget = 32; // fairness between sources

    /// Adaptive idling spins this long before it sleeps: a reply from a
    /// core that is running comes within a cross-core round trip (~0.2-1 us
    /// here), and catching it spinning saves the sender's futex_wake and our
    /// wake-up. Not longer: adaptive is what runs when other work takes the
    /// CPUs, where spinning only spends our share of a CPU (the greedy run
    /// under two busy loops: 14 ms median parking at once, 18 ms after 5 us
    /// of spinning, 31 ms after 20 us). And no sched_yield between spinning
    /// and sleeping: the scheduler (EEVDF) moves a yielding thread's
    /// deadline a whole slice back, so on a CPU that a busy process shares
    /// each yield hands it milliseconds (two yields: 339 ms median, 700
    /// involuntary context switches per run, against 31 ms without).
    static constexpr std::chrono::nanoseconds adaptive_spin{3'000};
    /// And sleeps at most this long before it looks again. A message wakes
    /// it at once; the bound is for waits on a condition that changes with
    /// no message to this core (taco::wait_until whose predicate asks
    /// another core by sync, or reads memory another core writes), which
    /// polling cores see at once and a core that sleeps until its next
    /// message never would: adaptive is chosen for programs written for
    /// polling, so they must not hang (a test of the suite did). `sleep`
    /// keeps sleeping until a message or a timer. An idle core then costs
    /// a wake-up per millisecond.
    static constexpr std::chrono::nanoseconds adaptive_park{1'000'000};

    /// True when a message came, or `limit` (the next timer) passed.
    bool spin_briefly(std::chrono::nanoseconds limit) {
        using clock = std::chrono::steady_clock;
        const auto spin = std::min(limit, adaptive_spin);
        const auto t0 = clock::now();
        do {
            for (int i = 0; i < 16; ++i) { // a clock read per 16 looks: the vDSO read costs several
                if (has_message()) return true;
                detail::cpu_relax();
            }
        } while (clock::now() - t0 < spin);
        return spin == limit;
    }

    detail::core_record& me() noexcept { return me_; }

    bool has_message() const noexcept {
        for (detail::ring* r = me_.incoming.load(std::memory_order_acquire); r; r = r->next)
            if (r->has_message()) return true;
        return false;
    }

    /// The sender's half of the handshake in idle(): the message is
    /// published (ring tail stored) before this fence, the sleeper's flag is
    /// read after it. The plain load first: a core that is awake costs a
    /// read of a line that stays shared, not a write; the exchange makes
    /// one of several senders that saw the flag the one that wakes.
    void wake(core_id dest) noexcept {
        auto& rec = s_.records[dest];
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (rec.sleeping.load(std::memory_order_relaxed) == 1 && rec.sleeping.exchange(0) == 1)
            detail::futex_wake(rec.sleeping, s_.processes);
    }

    /// The slow path of try_acquire: create the ring to `dest` on the first
    /// send there (and the page of producers it belongs to); a full ring
    /// stays full (nullptr).
    [[gnu::noinline]] std::byte* connect_or_fail(detail::ring::producer*& o, core_id dest) {
        if (o->connected()) return nullptr;
        producer_page*& page = out_[dest / producer_page::size];
        if (page == &unconnected_page) page = new producer_page;
        o = &page->at[dest % producer_page::size];
        auto* r = detail::ring::create(s_.memory.allocate(s_.ring_bytes), s_.cfg.ring_slots, id_);
        ring_link(r, s_.records[dest].incoming);
        s_.rings->fetch_add(1, std::memory_order_relaxed);
        *o = r->make_producer();
        return o->try_acquire();
    }
    static void ring_link(detail::ring* r, std::atomic<detail::ring*>& head) noexcept {
        detail::ring* old = head.load(std::memory_order_relaxed);
        do r->next = old;
        while (!head.compare_exchange_weak(old, r, std::memory_order_release, std::memory_order_relaxed));
    }

    detail::shared_state& s_;
    detail::core_record& me_; // s_.records[id_], kept: poll reads it every round
    core_id id_;
    bool sleep_; // s_.idle != poll (the core may sleep), kept: publish tests it on every message
    // This core's ends of its outgoing rings, in pages of 64 destinations
    // allocated when the first ring of a page is: a core's bookkeeping grows
    // with the peers it talks to (a dense array was cores^2 over a run, 2 GiB
    // at 8192 cores), for one more load on the send path. Pages not
    // allocated are the shared unconnected_page, whose producers never
    // acquire a slot (only ever read).
    struct producer_page {
        static constexpr core_id size = 64;
        detail::ring::producer at[size];
    };
    static constinit inline producer_page unconnected_page{};
    std::vector<producer_page*> out_;
    detail::ring::producer* acquired_ = nullptr; // of the last try_acquire (see publish)
    detail::staging_area staging_; // this core's, allocated from here only
    // Thread mode: the area is a mapping made when this core first stages
    // (a run whose cores never carry much reserves nothing; a refused
    // mapping only means pieces). The run's state keeps it, not this
    // endpoint: a receiver may still read a block after this core's entry
    // has returned.
    bool own_staging_tried_ = false;
    [[gnu::noinline]] void map_own_staging() noexcept {
        own_staging_tried_ = true;
        try {
            detail::mapping& m = s_.thread_staging[id_]; // only this core touches its element
            m = detail::mapping(std::min(s_.cfg.bulk_staging_bytes, config::thread_staging_bytes),
                                detail::mapping::sharing::private_, "a staging area");
            staging_ = detail::staging_area(m.data(), m.size());
        } catch (const std::exception&) {
        }
    }
};

/// The POSIX platform (satisfies taco::platform).
struct platform {
    using endpoint = posix::endpoint;
    using config = posix::config;
    static constexpr std::size_t message_bytes = detail::slot::bytes;
    static constexpr std::size_t message_align = 8;

    /// Limits checked before anything is mapped or started.
    static constexpr core_id max_cores = 65536;
    static constexpr std::uint32_t max_ring_slots = 65536;
    /// Address space a run may reserve (mappings only cost memory where
    /// touched, but the reservation itself must fit the 47-bit user space).
    static constexpr std::size_t max_reserved_bytes = std::size_t(32) << 40;

    /// Address space the configuration reserves: per-core records and the
    /// rings of every (source, destination) pair, plus MESH's regions.
    static std::size_t reserved_bytes(const config& c) noexcept {
        const auto n = std::size_t(c.cores);
        const std::size_t ring = detail::round_up(detail::ring::bytes_for(c.ring_slots), detail::cache_line);
        const std::size_t staging = c.mode == execution_mode::processes ? c.bulk_staging_bytes * n : 0;
        return sizeof(detail::core_record) * n + n * n * ring + c.non_cached_bytes + c.cached_bytes +
               c.private_bytes * n + staging;
    }

    static void validate(const config& c) {
        using std::to_string;
        if (c.cores < 1) throw std::invalid_argument("tacomesh::posix: config.cores must be at least 1");
        if (c.cores > max_cores)
            throw std::invalid_argument("tacomesh::posix: config.cores = " + to_string(c.cores) + " is more than " +
                                        to_string(max_cores) + (c.cores > (1u << 31) ? " (a negative number?)" : ""));
        if (c.ring_slots < 2 || (c.ring_slots & (c.ring_slots - 1)) != 0 || c.ring_slots > max_ring_slots)
            throw std::invalid_argument("tacomesh::posix: config.ring_slots must be a power of two from 2 to " +
                                        to_string(max_ring_slots) + ", got " + to_string(c.ring_slots));
        // Each term is bounded by now (cores and slots above, the region
        // sizes by their own check), so the sum cannot wrap.
        for (auto [name, bytes] : {std::pair{"non_cached_bytes", c.non_cached_bytes},
                                   std::pair{"cached_bytes", c.cached_bytes},
                                   std::pair{"private_bytes", c.private_bytes},
                                   std::pair{"bulk_staging_bytes", c.bulk_staging_bytes}})
            if (bytes > max_reserved_bytes)
                throw std::invalid_argument(std::string("tacomesh::posix: config.") + name + " = " + to_string(bytes) +
                                            " is more than the " + to_string(max_reserved_bytes >> 40) +
                                            " TiB a run may reserve");
        if (c.liveness_timeout && c.liveness_timeout->count() < 0)
            throw std::invalid_argument("tacomesh::posix: config.liveness_timeout is negative (zero turns the watch off)");
        if (const std::size_t need = reserved_bytes(c); need > max_reserved_bytes)
            throw std::invalid_argument(
                "tacomesh::posix: this configuration would reserve " + to_string(need >> 30) + " GiB of address space (" +
                to_string(c.cores) + " cores: " + to_string(c.cores) + "^2 rings of " + to_string(c.ring_slots) +
                " slots, " + to_string(c.private_bytes) + " private bytes per core and, with core processes, " +
                to_string(c.bulk_staging_bytes) + " staging bytes per core), more than the " +
                to_string(max_reserved_bytes >> 40) + " TiB limit; use fewer cores, fewer ring_slots or smaller regions");
    }

    /// Run entry(endpoint, arg) on every core and return when all have
    /// returned. Core 0 runs on the calling thread (its affinity is restored
    /// afterwards), in both modes, so main()'s effects are the caller's.
    static void launch(const config& c, void (*entry)(endpoint&, void*), void* arg) {
        validate(c);
        // The host is looked at only when a choice is left open.
        const run_choices chosen = c.idle && c.pin ? resolve(c, host_view{}) : resolve(c, observe_host());
        detail::shared_state s(c, chosen.idle, chosen.pin);
        cpu_set_t saved;
        const bool restore = s.pin && ::pthread_getaffinity_np(::pthread_self(), sizeof saved, &saved) == 0;
        std::exception_ptr error;
        const taco::detail::preemption_handler preemption; // core processes inherit it
        try {
            if (s.processes)
                detail::launch_processes<endpoint>(s, entry, arg, &pin);
            else
                launch_threads(s, entry, arg);
        } catch (...) {
            error = std::current_exception();
        }
        if (restore) ::pthread_setaffinity_np(::pthread_self(), sizeof saved, &saved);
        if (c.report) {
            c.report->rings = s.rings->load();
            c.report->channel_bytes = s.memory.used();
            c.report->oversubscribed = s.oversubscribed;
            c.report->idle = s.idle;
            c.report->pinned = s.pin;
            c.report->sleeps = 0;
            for (core_id i = 0; i < c.cores; ++i) c.report->sleeps += s.records[i].sleeps.load();
        }
        if (error) std::rethrow_exception(error);
    }

    /// Pin the calling thread for core `id` (best effort: a failure only costs speed).
    static void pin(const detail::shared_state& s, core_id id) {
        if (!s.pin) return;
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(s.cpus[id % s.cpus.size()], &set);
        ::pthread_setaffinity_np(::pthread_self(), sizeof set, &set);
    }

private:
    /// Thread mode's liveness watch (config.liveness_timeout): a thread that
    /// stopped answering cannot be unwound or killed alone, so the report
    /// either ends the process (config.on_unresponsive = end_run) or, by
    /// default, is a warning.
    class thread_watch {
    public:
        explicit thread_watch(const detail::shared_state& s) {
            if (s.cfg.liveness().count() > 0)
                thread_ = taco::detail::start_helper_thread([this, &s] { watch(s); }, "tacomesh::posix",
                                                            "the liveness watch (config.liveness_timeout; "
                                                            "0 turns the watch off)");
        }
        ~thread_watch() {
            if (!thread_.joinable()) return;
            {
                std::lock_guard lock(m_);
                done_ = true;
            }
            cv_.notify_one();
            thread_.join();
        }

    private:
        void watch(const detail::shared_state& s) {
            detail::liveness_watch live(s, s.cfg.liveness());
            std::unique_lock lock(m_);
            while (!cv_.wait_for(lock, live.period(), [this] { return done_; })) {
                for (core_id id = 0; id < s.cfg.cores; ++id)
                    if (s.records[id].finished.load(std::memory_order_acquire)) live.retire(id);
                if (auto v = live.check(detail::liveness_watch::clock::now())) {
                    const std::string report =
                        "tacomesh::posix: core " + std::to_string(v->core) + " (a thread) " + v->cause;
                    if (s.cfg.unresponsive_response() == unresponsive_core::end_run)
                        detail::abort_with(report + "; a thread cannot be unwound from outside: aborting");
                    detail::warn_unresponsive(report);
                    live.excuse(v->core);
                }
            }
        }
        std::mutex m_;
        std::condition_variable cv_;
        bool done_ = false;
        std::thread thread_;
    };

    static void launch_threads(detail::shared_state& s, void (*entry)(endpoint&, void*), void* arg) {
        thread_watch watch(s); // before the cores: a refused watch thread fails the run before any core runs
        taco::detail::run_core_threads(
            s.cfg.cores,
            [&](std::size_t k) {
                const auto id = core_id(k);
                pin(s, id);
                endpoint ep(s, id);
                entry(ep, arg);
                s.records[id].finished.store(1, std::memory_order_release);
            },
            "tacomesh::posix",
            [&](std::size_t k) { return "core " + std::to_string(k) + " of " + std::to_string(s.cfg.cores); },
            "use fewer cores (config.cores), or raise the limit (ulimit -u, memory)");
    }
};

} // namespace tacomesh::posix
