#pragma once
// Liveness: a core that no longer takes its messages. Exits and signals are
// seen by waitpid (processes.hpp); a core that spins in user code without
// polling, blocks in a system call or is stopped (SIGSTOP, a debugger) is
// not, and everyone waiting on it would wait forever.
//
// The watch costs the cores nothing: it reads what the channels already
// publish. Every ring's consumer position (ring::head) moves when its core
// takes a message; a core whose position stands still while a message waits
// in one of its rings for `timeout` has stopped answering. A core that
// computes for long with nothing sent to it is not suspect (nobody waits for
// it through a channel), and a core whose process is stopped counts from the
// moment waitpid reported the stop, messages or not.
//
// The watch must not mistake its own absence for the cores': when it was not
// scheduled for a long stretch (the whole job stopped by ^Z, a suspended
// machine), every clock starts again.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <tacomesh/posix/shared_state.hpp>

namespace tacomesh::posix::detail {

/// What was in flight to core `id`: "3 messages from core 0, 1 from core 2
/// waiting", or "no message waiting". Read from the rings' positions, so it
/// holds for a core that died as for one that stopped answering.
inline std::string messages_waiting_for(const shared_state& s, core_id id) {
    std::string out;
    // acquire: a ring's fields are initialised before it is announced.
    for (const ring* r = s.records[id].incoming.load(std::memory_order_acquire); r; r = r->next)
        if (const std::uint64_t n = r->waiting(); n > 0)
            out += (out.empty() ? "" : ", ") + std::to_string(n) +
                   (out.empty() ? (n == 1 ? " message" : " messages") : "") + " from core " + std::to_string(r->source);
    return out.empty() ? "no message waiting" : out + " waiting";
}

/// For a core that cannot be unwound (the caller's thread, or a thread in
/// thread mode): the report, then the end of the process, as MPI_Abort would.
[[noreturn]] inline void abort_with(const std::string& report) {
    std::fprintf(stderr, "%s\n", report.c_str());
    std::fflush(stderr);
    std::abort();
}

/// config.on_unresponsive = warn: the report, and the run goes on.
inline void warn_unresponsive(const std::string& report) {
    std::fprintf(stderr,
                 "%s; still waiting for it (config.on_unresponsive = unresponsive_core::end_run ends the run "
                 "instead)\n",
                 report.c_str());
    std::fflush(stderr);
}

class liveness_watch {
public:
    using clock = std::chrono::steady_clock;

    liveness_watch(const shared_state& s, std::chrono::milliseconds timeout)
        : s_(s), timeout_(timeout), cores_(s.cfg.cores) {}

    /// How often check() wants to run: often enough to report within ~1.25
    /// timeouts, rarely enough that its reads of the rings' lines cost nothing.
    std::chrono::milliseconds period() const noexcept {
        return std::clamp(timeout_ / 4, std::chrono::milliseconds(1), std::chrono::milliseconds(100));
    }

    void stopped(core_id id, int signal, clock::time_point now) {
        cores_[id].stopped_since = now;
        cores_[id].stop_signal = signal;
    }
    void continued(core_id id) {
        cores_[id].stopped_since.reset();
        cores_[id].excused = false;
    }
    /// Reported already (config.on_unresponsive = warn): not again until
    /// it answers (takes a message, or is continued).
    void excuse(core_id id) { cores_[id].excused = true; }
    /// A core whose part of the run ended: what is left in its rings is
    /// nobody's wait any more.
    void retire(core_id id) { cores_[id].retired = true; }

    struct verdict {
        core_id core;
        std::string cause; // "has been stopped ...", "has taken none of ..."
    };

    /// The first core found not answering, if any.
    std::optional<verdict> check(clock::time_point now) {
        if (last_ && now - *last_ > std::max<clock::duration>(std::chrono::seconds(1), 8 * period())) restart(now);
        last_ = now;
        for (core_id id = 0; id < core_id(cores_.size()); ++id) {
            core_state& c = cores_[id];
            if (c.retired) continue;
            if (c.stopped_since && !c.excused && now - *c.stopped_since >= timeout_)
                return verdict{id, "has been stopped by signal " + std::to_string(c.stop_signal) + " (" +
                                       ::strsignal(c.stop_signal) + ") for " + seconds(now - *c.stopped_since)};
            std::uint64_t taken = 0;
            bool waiting = false;
            // acquire: a ring's fields are initialised before it is announced.
            for (const ring* r = s_.records[id].incoming.load(std::memory_order_acquire); r; r = r->next) {
                const std::uint64_t h = r->head.load(std::memory_order_relaxed);
                taken += h;
                waiting = waiting || r->waiting_at(h);
            }
            if (taken != c.taken || !waiting) {
                c.taken = taken;
                c.stuck_since.reset();
                if (!c.stopped_since) c.excused = false;
            } else if (!c.stuck_since) {
                c.stuck_since = now;
            } else if (!c.excused && now - *c.stuck_since >= timeout_) {
                return verdict{id, "has taken none of its waiting messages for " + seconds(now - *c.stuck_since) +
                                       " (" + messages_waiting_for(s_, id) +
                                       "); busy in user code without calling taco::poll(), blocked in a "
                                       "system call, or deadlocked? (config.liveness_timeout sets how long a "
                                       "core may keep messages waiting)"};
            }
        }
        return std::nullopt;
    }

private:
    struct core_state {
        std::uint64_t taken = 0;
        std::optional<clock::time_point> stuck_since;
        std::optional<clock::time_point> stopped_since;
        int stop_signal = 0;
        bool retired = false;
        bool excused = false;
    };

    void restart(clock::time_point now) {
        for (auto& c : cores_) {
            if (c.stuck_since) c.stuck_since = now;
            if (c.stopped_since) c.stopped_since = now;
        }
    }

    static std::string seconds(clock::duration d) {
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
        return std::to_string(ms / 1000) + "." + std::to_string(ms % 1000 / 100) + " s";
    }

    const shared_state& s_;
    std::chrono::milliseconds timeout_;
    std::vector<core_state> cores_;
    std::optional<clock::time_point> last_;
};

} // namespace tacomesh::posix::detail
