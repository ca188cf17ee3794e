#pragma once
// What a POSIX run sets up before its cores start: the configuration, the
// per-core records every core may touch, the channel arena and MESH's memory.
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <taco/core_failure.hpp>
#include <taco/core_id.hpp>
#include <taco/detail/core_identity.hpp>
#include <tacomesh/posix/arena.hpp>
#include <tacomesh/posix/futex.hpp>
#include <tacomesh/posix/memory.hpp>
#include <tacomesh/posix/ring.hpp>
#include <tacomesh/posix/staging.hpp>

namespace tacomesh::posix {

using taco::core_id;

/// What an idle core does (per run; config.idle, unset: see resolve() in host_load.hpp).
enum class idle_policy {
    poll,     ///< busy polling: lowest latency on a free machine, burns its CPU
    sleep,    ///< futex sleep at once; a sender wakes the destination only when it really sleeps
    adaptive, ///< spin briefly (a reply that comes within microseconds is caught), then sleep as `sleep`, at most 1 ms at a time
};

inline const char* name(idle_policy p) {
    return p == idle_policy::poll ? "poll" : p == idle_policy::sleep ? "sleep" : "adaptive";
}

/// How cores are made (per run).
enum class execution_mode {
    threads,   ///< one process, a pinned thread per core, coherent memory
    processes, ///< a forked process per core, private memory, emulated caches
};

inline const char* name(execution_mode m) { return m == execution_mode::processes ? "processes" : "threads"; }
/// "threads" or "processes" (as command lines spell them).
inline execution_mode parse_execution_mode(std::string_view s) {
    if (s == "threads") return execution_mode::threads;
    if (s == "processes") return execution_mode::processes;
    throw std::invalid_argument("unknown platform '" + std::string(s) + "' (threads, processes)");
}

/// A core process died (signal or non-zero exit) during a run. The launcher
/// stops the run and throws this from taco::run instead of hanging.
using core_failure = taco::core_failure;

/// Figures about a finished run (optional, see config::report).
struct run_report {
    std::size_t rings = 0;         ///< channels created (pairs that talked)
    std::size_t channel_bytes = 0; ///< shared memory used by rings and per-core records
    std::uint64_t sleeps = 0;      ///< times a core went to sleep on its futex
    bool oversubscribed = false;   ///< more cores than CPUs available to the process
    idle_policy idle = idle_policy::poll; ///< the idle policy the run used (config.idle, or chosen at start)
    bool pinned = false;                  ///< whether the cores were pinned (config.pin, or chosen at start)
};

/// What the liveness watch does with a core that stopped answering.
enum class unresponsive_core {
    end_run, ///< process mode: kill it, taco::run throws core_failure; thread mode: abort with the report
    warn,    ///< report it on stderr (once until it answers again), and go on waiting
};

struct platform;

struct config {
    /// The platform this configuration starts (taco::run finds it here).
    using platform = posix::platform;

    core_id cores = 4;
    /// What an idle core does. Unset: chosen at start (host_load.hpp):
    /// poll when every core can have a CPU to itself (no other busy
    /// threads take them), adaptive otherwise. Set it to keep a choice
    /// whatever the machine's load (benchmarks that want spinning).
    std::optional<idle_policy> idle{};
    /// Slots per (source, destination) ring; a power of two >= 2. Each slot
    /// is 128 bytes. Small rings are fine: full rings never lose messages.
    std::uint32_t ring_slots = 64;
    /// Pin core i to the (i mod n)-th CPU the process may use. Unset: pinned
    /// when every core can have a CPU to itself, unpinned otherwise (a core
    /// pinned to a CPU that a busy process shares waits for its time slice;
    /// unpinned, the scheduler moves it to a free one).
    std::optional<bool> pin{};
    /// If set, filled in when the run ends.
    run_report* report = nullptr;
    execution_mode mode = execution_mode::threads;
    /// Address space reserved for MESH (only touched pages cost memory):
    /// non-cached (and write-through) shared memory, cached shared memory,
    /// and core-private memory per core.
    std::size_t non_cached_bytes = std::size_t(256) << 20;
    std::size_t cached_bytes = std::size_t(1) << 30;
    std::size_t private_bytes = std::size_t(16) << 20;
    /// Each core's staging area for carried arguments and results from 256
    /// bytes on (staging.hpp), address space reserved per core (only touched
    /// pages cost memory). A buffer that does not fit what is free goes
    /// through the channel in pieces instead; 0 sends every one so. Thread
    /// mode stages only buffers below 64 KiB (larger ones are handed over by
    /// pointer): there a core maps at most thread_staging_bytes of it, and
    /// only when it first stages something.
    static constexpr std::size_t thread_staging_bytes = std::size_t(4) << 20;
    std::size_t bulk_staging_bytes = std::size_t(32) << 20;
    /// A core that keeps messages waiting this long without taking any, or
    /// stays stopped (SIGSTOP, a debugger) this long, is reported, naming
    /// what waited for it. Unset: 10 s. Zero: no watch. A core that computes
    /// for longer while messages wait for it should call taco::poll() now
    /// and then (or the timeout be raised).
    std::optional<std::chrono::milliseconds> liveness_timeout{};
    /// What the report does. Unset: end_run in process mode (a core_failure
    /// from taco::run, the core killed); warn in thread mode, where ending
    /// the run means aborting the process (a thread cannot be unwound from
    /// outside), too much for a default that cannot tell a hang from a long
    /// computation.
    std::optional<unresponsive_core> on_unresponsive{};

    static constexpr std::chrono::milliseconds default_liveness{10'000};
    /// The timeout in force for this configuration (zero: no watch).
    std::chrono::milliseconds liveness() const noexcept { return liveness_timeout.value_or(default_liveness); }
    unresponsive_core unresponsive_response() const noexcept {
        return on_unresponsive.value_or(mode == execution_mode::processes ? unresponsive_core::end_run
                                                                          : unresponsive_core::warn);
    }
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
    // Set when the core's entry returned. Process mode: just before the
    // process exits; an exit without it (exit(0) called by user code) is a
    // failure. Both modes: the liveness watch no longer watches the core.
    std::atomic<std::uint32_t> finished{0};
    // While a back-pressure wait of this core waits for a core to take its
    // queued messages: how many are queued (0: no such wait). Read by the
    // cores it skips, which then take ours (see must_poll).
    std::atomic<std::size_t> backlog{0};
    // Preemptive invocations (preemption.hpp): 1 while the core computes
    // inside taco::preemptible, so that urgent senders interrupt its thread.
    std::atomic<std::uint32_t> preemptible{0};
    std::atomic<std::int32_t> pid{0}, tid{0}; // the core's thread, for tgkill
};
static_assert(sizeof(core_record) == cache_line);

/// Everything a run sets up before its cores start. In process mode each
/// core has its own copy of this object: what cores change together lives
/// in the mappings it points to, never in its own fields.
struct shared_state {
    /// `idle` and `pin`: the run's choices (config's, or resolved at start).
    shared_state(const config& c, idle_policy idle_choice, bool pin_choice)
        : cfg(c), idle(idle_choice), pin(pin_choice), processes(c.mode == execution_mode::processes),
          ring_bytes(round_up(ring::bytes_for(c.ring_slots), cache_line)),
          memory(sizeof(core_record) * c.cores + std::size_t(c.cores) * c.cores * ring_bytes + 4096),
          regions(c.non_cached_bytes, c.cached_bytes, c.private_bytes, c.cores, processes),
          staging_stride(processes ? round_up(c.bulk_staging_bytes, page_bytes) : 0),
          staging(staging_stride * c.cores, mapping::sharing::shared, "the staging areas of large carried buffers",
                  "config.bulk_staging_bytes = " + std::to_string(c.bulk_staging_bytes) + " per core") {
        records = static_cast<core_record*>(memory.allocate(sizeof(core_record) * c.cores));
        for (core_id i = 0; i < c.cores; ++i) ::new (&records[i]) core_record{};
        rings = ::new (memory.allocate(sizeof(std::atomic<std::size_t>))) std::atomic<std::size_t>{0};
        start_gate = ::new (memory.allocate(sizeof(std::atomic<std::uint32_t>))) std::atomic<std::uint32_t>{0};
        cpu_set_t set;
        CPU_ZERO(&set);
        if (::sched_getaffinity(0, sizeof set, &set) == 0)
            for (int i = 0; i < CPU_SETSIZE; ++i)
                if (CPU_ISSET(i, &set)) cpus.push_back(i);
        if (cpus.empty()) cpus.push_back(0);
        oversubscribed = c.cores > cpus.size();
        if (!processes) thread_staging.resize(c.cores);
    }
    config cfg;
    idle_policy idle; // cfg.idle and cfg.pin as resolved: read these, not cfg's
    bool pin;
    bool processes;
    std::size_t ring_bytes;
    arena memory;
    memory_regions regions;
    std::size_t staging_stride; // bytes per core's staging area (process mode; thread mode: 0)
    mapping staging;
    std::vector<mapping> thread_staging; // thread mode: each core's, mapped by the core (platform.hpp)
    core_record* records;
    std::atomic<std::size_t>* rings;
    /// Process mode: forked cores wait here until every one exists (0), then
    /// run (1) or leave without running anything (2).
    std::atomic<std::uint32_t>* start_gate;
    std::vector<int> cpus;
    bool oversubscribed;
    // Process mode, in the launching process only: set by the watcher when a
    // core process died, read by core 0 whenever it waits.
    std::atomic<bool> failed{false};
    std::string failure;

    /// After an acquire load of `failed` saw true (the watcher's release store).
    [[noreturn]] void throw_failure() const { throw core_failure(failure); }

    /// Core `id`'s staging area (process mode; thread mode: empty).
    staging_area staging_of(core_id id) const noexcept {
        return staging_stride ? staging_area(staging.data() + std::size_t(id) * staging_stride, staging_stride)
                              : staging_area();
    }
};

} // namespace detail

} // namespace tacomesh::posix
