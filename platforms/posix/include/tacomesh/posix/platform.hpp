#pragma once
// The POSIX platform, threads mode: every core is a thread pinned to CPU
// (id mod #CPUs); more cores than CPUs is allowed (oversubscribed), then idle
// cores yield their CPU instead of spinning it away from the cores that work.
//
// Channels: one SPSC ring per (source, destination) pair, created lazily by
// the source on its first send and announced to the destination through a
// lock-free list; the destination polls only rings that exist. Memory grows
// with the pairs that talk, not with cores^2 (see channel_bytes()).
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <taco/core_id.hpp>
#include <tacomesh/posix/arena.hpp>
#include <tacomesh/posix/futex.hpp>
#include <tacomesh/posix/ring.hpp>

namespace tacomesh::posix {

using taco::core_id;

/// What an idle core does (per run).
enum class idle_policy {
    poll,  ///< busy polling: lowest latency, burns its CPU
    sleep, ///< futex sleep; a sender wakes the destination only when it really sleeps
};

/// Figures about a finished run (optional, see config::report).
struct run_report {
    std::size_t rings = 0;         ///< channels created (pairs that talked)
    std::size_t channel_bytes = 0; ///< shared memory used by rings and per-core records
    std::uint64_t sleeps = 0;      ///< times a core went to sleep on its futex
    bool oversubscribed = false;   ///< more cores than CPUs available to the process
};

struct config {
    core_id cores = 4;
    idle_policy idle = idle_policy::poll;
    /// Slots per (source, destination) ring; a power of two >= 2. Each slot
    /// is 128 bytes. Small rings are fine: full rings never lose messages.
    std::uint32_t ring_slots = 64;
    /// Pin core i to the (i mod n)-th CPU the process may use.
    bool pin = true;
    /// If set, filled in when the run ends.
    run_report* report = nullptr;
};

namespace detail {

/// What every core may touch of another core: its list of incoming rings and
/// its sleep word. One line per core: senders write it rarely (registration),
/// read it on every send only in sleep mode.
struct alignas(cache_line) core_record {
    std::atomic<ring*> incoming{nullptr};
    std::atomic<std::uint32_t> sleeping{0}; // futex word: 1 while the core sleeps or is about to
    std::atomic<std::uint64_t> sleeps{0};
    std::atomic<std::uint32_t> urgent{0}; // raised by senders of urgent invocations
};

struct shared_state {
    explicit shared_state(const config& c)
        : cfg(c), ring_bytes(arena::round_up(ring::bytes_for(c.ring_slots), cache_line)),
          memory(sizeof(core_record) * c.cores + std::size_t(c.cores) * c.cores * ring_bytes + 4096) {
        records = static_cast<core_record*>(memory.allocate(sizeof(core_record) * c.cores));
        for (core_id i = 0; i < c.cores; ++i) ::new (&records[i]) core_record{};
        cpu_set_t set;
        CPU_ZERO(&set);
        if (::sched_getaffinity(0, sizeof set, &set) == 0)
            for (int i = 0; i < CPU_SETSIZE; ++i)
                if (CPU_ISSET(i, &set)) cpus.push_back(i);
        if (cpus.empty()) cpus.push_back(0);
        oversubscribed = c.cores > cpus.size();
    }
    config cfg;
    std::size_t ring_bytes;
    arena memory;
    core_record* records;
    std::vector<int> cpus;
    bool oversubscribed;
    std::atomic<std::size_t> rings{0};
};

} // namespace detail

/// One core's channels (satisfies taco::channel_endpoint).
class endpoint {
public:
    endpoint(detail::shared_state& s, core_id id) : s_(s), id_(id), out_(s.cfg.cores) {}

    core_id id() const noexcept { return id_; }
    core_id core_count() const noexcept { return s_.cfg.cores; }

    std::byte* try_acquire(core_id dest) {
        detail::ring::producer& o = out_[dest];
        if (!o) [[unlikely]] o = connect(dest);
        return o.try_acquire();
    }

    void publish(core_id dest, std::size_t length) noexcept {
        out_[dest].publish(length);
        if (s_.cfg.idle == idle_policy::sleep) wake(dest);
    }

    template <class Handler>
    std::size_t poll(Handler&& handle) {
        std::size_t n = 0;
        // acquire: a ring's fields are initialised before it is announced.
        for (detail::ring* r = me().incoming.load(std::memory_order_acquire); r; r = r->next)
            n += r->consume(handle, per_ring_budget);
        return n;
    }

    void signal_urgent(core_id dest) noexcept {
        // release: the urgent message (published before) is visible to whoever sees the flag.
        s_.records[dest].urgent.store(1, std::memory_order_release);
        if (s_.cfg.idle == idle_policy::poll) wake(dest); // sleep mode: publish already woke it
    }
    bool take_urgent() noexcept {
        auto& f = me().urgent;
        // Plain load first: the common "nothing urgent" case stays a read of a shared line.
        return f.load(std::memory_order_relaxed) != 0 && f.exchange(0, std::memory_order_acquire) != 0;
    }

    void pause() noexcept {
        if (s_.oversubscribed)
            ::sched_yield(); // another core on this CPU may be the one we wait for
        else
            __builtin_ia32_pause();
    }

    void idle(std::chrono::nanoseconds limit) {
        if (s_.cfg.idle == idle_policy::poll) return pause();
        // Dekker-style handshake with wake(): announce the sleep, then look
        // once more. The seq_cst fences order "store sleeping; load rings"
        // here against "store message; load sleeping" in the sender, so at
        // least one side sees the other: no lost wake-up.
        auto& rec = me();
        rec.sleeping.store(1, std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (has_message()) {
            rec.sleeping.store(0, std::memory_order_relaxed);
            return;
        }
        rec.sleeps.fetch_add(1, std::memory_order_relaxed);
        if (limit == std::chrono::nanoseconds::max()) {
            while (rec.sleeping.load(std::memory_order_acquire) == 1) detail::futex_wait(rec.sleeping, 1, false);
        } else {
            // One bounded sleep: the runtime checks its timers and comes back.
            const auto ns = std::max<std::int64_t>(limit.count(), 0);
            const timespec ts{time_t(ns / 1'000'000'000), long(ns % 1'000'000'000)};
            detail::futex_wait(rec.sleeping, 1, false, &ts);
            rec.sleeping.store(0, std::memory_order_relaxed);
        }
    }

private:
    static constexpr std::size_t per_ring_budget = 32; // fairness between sources

    detail::core_record& me() noexcept { return s_.records[id_]; }

    bool has_message() const noexcept {
        for (detail::ring* r = s_.records[id_].incoming.load(std::memory_order_acquire); r; r = r->next)
            if (r->has_message()) return true;
        return false;
    }

    void wake(core_id dest) noexcept {
        auto& rec = s_.records[dest];
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (rec.sleeping.load(std::memory_order_relaxed) == 1 && rec.sleeping.exchange(0) == 1)
            detail::futex_wake(rec.sleeping, false);
    }

    [[gnu::noinline]] detail::ring::producer connect(core_id dest) {
        auto* r = detail::ring::create(s_.memory.allocate(s_.ring_bytes), s_.cfg.ring_slots, id_);
        ring_link(r, s_.records[dest].incoming);
        s_.rings.fetch_add(1, std::memory_order_relaxed);
        return r->make_producer();
    }
    static void ring_link(detail::ring* r, std::atomic<detail::ring*>& head) noexcept {
        detail::ring* old = head.load(std::memory_order_relaxed);
        do r->next = old;
        while (!head.compare_exchange_weak(old, r, std::memory_order_release, std::memory_order_relaxed));
    }

    detail::shared_state& s_;
    core_id id_;
    std::vector<detail::ring::producer> out_; // this core's ends of its outgoing rings
};

/// The POSIX platform (satisfies taco::platform).
struct platform {
    using endpoint = posix::endpoint;
    using config = posix::config;
    static constexpr std::size_t message_bytes = detail::slot::bytes;
    static constexpr std::size_t message_align = 8;

    static void validate(const config& c) {
        if (c.cores < 1) throw std::invalid_argument("tacomesh::posix: config.cores must be at least 1");
        if (c.ring_slots < 2 || (c.ring_slots & (c.ring_slots - 1)) != 0)
            throw std::invalid_argument("tacomesh::posix: config.ring_slots must be a power of two >= 2, got " +
                                        std::to_string(c.ring_slots));
    }

    /// Run entry(endpoint, arg) on every core; core 0 runs on the calling
    /// thread (its affinity is restored afterwards). Returns when all return.
    static void launch(const config& c, void (*entry)(endpoint&, void*), void* arg) {
        validate(c);
        detail::shared_state s(c);
        cpu_set_t saved;
        const bool restore = c.pin && ::pthread_getaffinity_np(::pthread_self(), sizeof saved, &saved) == 0;
        auto core_main = [&](core_id id) {
            if (c.pin) pin(s, id);
            endpoint ep(s, id);
            entry(ep, arg);
        };
        std::vector<std::thread> threads;
        threads.reserve(c.cores - 1);
        for (core_id id = 1; id < c.cores; ++id) threads.emplace_back(core_main, id);
        std::exception_ptr error;
        try {
            core_main(0);
        } catch (...) {
            error = std::current_exception();
        }
        for (auto& t : threads) t.join();
        if (restore) ::pthread_setaffinity_np(::pthread_self(), sizeof saved, &saved);
        if (c.report) {
            c.report->rings = s.rings.load();
            c.report->channel_bytes = s.memory.used();
            c.report->oversubscribed = s.oversubscribed;
            c.report->sleeps = 0;
            for (core_id i = 0; i < c.cores; ++i) c.report->sleeps += s.records[i].sleeps.load();
        }
        if (error) std::rethrow_exception(error);
    }

private:
    static void pin(const detail::shared_state& s, core_id id) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(s.cpus[id % s.cpus.size()], &set);
        ::pthread_setaffinity_np(::pthread_self(), sizeof set, &set); // best effort: a failure only costs speed
    }
};

} // namespace tacomesh::posix
