#pragma once
// Process mode launcher: core 0 stays the calling thread; cores 1..n-1 are
// forked after all shared mappings exist, so every address agrees (code,
// channels, MESH's regions). A watcher thread in the launching process reaps
// the core processes; when one dies (signal, any exit before its core's
// entry returned: non-zero, or exit(0) called by user code) it records why
// and wakes core 0, whose next wait throws core_failure, so the run unwinds
// and taco::run reports the failure instead of hanging on a dead core. The
// same watcher runs the liveness watch (liveness.hpp): a core stopped, or
// keeping its messages waiting, for config.liveness() is killed and reported
// the same way (or only reported, config.on_unresponsive).
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include <taco/platform/core_threads.hpp>
#include <tacomesh/posix/futex.hpp>
#include <tacomesh/posix/liveness.hpp>
#include <tacomesh/posix/shared_state.hpp>

namespace tacomesh::posix::detail {

/// "tacomesh::posix: core 2 (process 4411)", as every report names a core.
inline std::string core_process_name(core_id id, pid_t pid) {
    return "tacomesh::posix: core " + std::to_string(id) +
           (id == 0 ? " (the launching process)" : " (process " + std::to_string(pid) + ")");
}

inline std::string describe_exit(const shared_state& s, core_id id, pid_t pid, int status) {
    const std::string who = core_process_name(id, pid);
    std::string what;
    if (WIFSIGNALED(status))
        what = " was killed by signal " + std::to_string(WTERMSIG(status)) + " (" + ::strsignal(WTERMSIG(status)) + ")";
    else if (WEXITSTATUS(status) == 0)
        what = " exited with status 0 before the run ended (exit() called on a core?)";
    else
        what = " exited with status " + std::to_string(WEXITSTATUS(status));
    return who + what + "; " + messages_waiting_for(s, id) + " for it; the run was stopped";
}

/// Body of a forked core: never returns into the caller's code (no atexit
/// handlers, no static destructors of the parent's copy: _exit).
template <class Endpoint>
[[noreturn]] void core_process(shared_state& s, core_id id, pid_t parent, void (*entry)(Endpoint&, void*), void* arg,
                               void (*pin)(const shared_state&, core_id)) {
    // Die with the launcher rather than spin forever if it is killed.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(0);
    std::uint32_t gate;
    while ((gate = s.start_gate->load(std::memory_order_acquire)) == 0) futex_wait(*s.start_gate, 0, true);
    if (gate != 1) ::_exit(0); // the launcher could not fork another core: nothing ran
    pin(s, id);
    int status = 0;
    try {
        Endpoint ep(s, id);
        entry(ep, arg);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tacomesh::posix: core %u: %s\n", unsigned(id), e.what());
        status = 70;
    } catch (...) {
        std::fprintf(stderr, "tacomesh::posix: core %u: unknown exception\n", unsigned(id));
        status = 70;
    }
    std::fflush(nullptr);
    // release: pairs with the watcher's acquire after waitpid (the process
    // has ended by then, but the flag lives in the shared mapping).
    if (status == 0) s.records[id].finished.store(1, std::memory_order_release);
    ::_exit(status);
}

/// A core could not be started: the forked ones, still at the start gate,
/// leave without running anything, and are reaped.
inline void give_up(shared_state& s, const std::vector<pid_t>& pids) {
    s.start_gate->store(2, std::memory_order_release);
    futex_wake(*s.start_gate, true, INT_MAX);
    for (const pid_t pid : pids)
        if (pid > 0) ::waitpid(pid, nullptr, 0);
}

template <class Endpoint>
void launch_processes(shared_state& s, void (*entry)(Endpoint&, void*), void* arg,
                      void (*pin)(const shared_state&, core_id)) {
    const core_id n = s.cfg.cores;
    std::fflush(nullptr); // buffered output would otherwise be written once per process
    const pid_t parent = ::getpid();
    std::vector<pid_t> pids(n, 0);
    for (core_id id = 1; id < n; ++id) {
        const pid_t pid = ::fork();
        if (pid == 0) core_process<Endpoint>(s, id, parent, entry, arg, pin);
        if (pid < 0) {
            const int err = errno;
            give_up(s, pids);
            throw std::runtime_error("tacomesh::posix: cannot fork the process of core " + std::to_string(id) +
                                     " of " + std::to_string(n) + " (" + std::strerror(err) +
                                     "); use fewer cores (config.cores) or thread mode, or raise the limit "
                                     "(ulimit -u, memory)");
        }
        pids[id] = pid;
    }

    // The watcher polls with WNOHANG (a blocking wait would watch one pid at a
    // time); 1 ms between rounds costs nothing measurable on core 0.
    std::atomic<bool> core0_done{false};
    auto watch = [&] {
        const auto timeout = s.cfg.liveness();
        liveness_watch live(s, timeout);
        auto next_check = liveness_watch::clock::now();
        auto fail = [&](std::string why) {
            if (s.failed.load(std::memory_order_relaxed)) return;
            s.failure = std::move(why);
            s.failed.store(true, std::memory_order_release);
            // The other cores may wait forever for the failed one.
            for (core_id k = 1; k < n; ++k)
                if (pids[k] != 0) ::kill(pids[k], SIGKILL);
            // Wake core 0 if it sleeps, as a sender would.
            auto& rec = s.records[0];
            if (rec.sleeping.exchange(0) == 1) futex_wake(rec.sleeping, true);
        };
        std::size_t alive = n - 1;
        while (alive > 0) {
            for (core_id id = 1; id < n; ++id) {
                if (pids[id] == 0) continue;
                int status = 0;
                if (::waitpid(pids[id], &status, WNOHANG | WUNTRACED | WCONTINUED) != pids[id]) continue;
                if (WIFSTOPPED(status)) {
                    live.stopped(id, WSTOPSIG(status), liveness_watch::clock::now());
                    continue;
                }
                if (WIFCONTINUED(status)) {
                    live.continued(id);
                    continue;
                }
                const pid_t pid = std::exchange(pids[id], 0);
                --alive;
                live.retire(id);
                // Status 0 alone is not a normal end: user code on the core may
                // have called exit(0) while others still wait for it.
                if (WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
                    s.records[id].finished.load(std::memory_order_acquire) != 0)
                    continue;
                fail(describe_exit(s, id, pid, status));
            }
            if (core0_done.load(std::memory_order_relaxed)) live.retire(0);
            if (const auto now = liveness_watch::clock::now(); timeout.count() > 0 && now >= next_check) {
                next_check = now + live.period();
                if (auto v = live.check(now); v && !s.failed.load(std::memory_order_relaxed)) {
                    const std::string who = core_process_name(v->core, pids[v->core]) + " ";
                    if (s.cfg.unresponsive_response() == unresponsive_core::warn) {
                        warn_unresponsive(who + v->cause);
                        live.excuse(v->core);
                    } else if (v->core == 0) {
                        abort_with(who + v->cause +
                                   "; core 0 runs the caller's thread, which cannot be unwound from outside: aborting");
                    } else {
                        fail(who + v->cause + "; the run was stopped");
                    }
                }
            }
            if (alive > 0)
                std::this_thread::sleep_for(core0_done.load(std::memory_order_relaxed) ? std::chrono::microseconds(100)
                                                                                       : std::chrono::microseconds(1000));
        }
    };
    std::thread watcher;
    try {
        watcher = taco::detail::start_helper_thread(watch, "tacomesh::posix",
                                                    "the core processes' watcher (process mode needs it)");
    } catch (...) {
        give_up(s, pids);
        throw;
    }
    // Every core exists: open the gate (release: the children read the
    // shared state as the launcher left it).
    s.start_gate->store(1, std::memory_order_release);
    futex_wake(*s.start_gate, true, INT_MAX);

    std::exception_ptr error;
    try {
        pin(s, 0); // as in thread mode (launch() restores the caller's affinity)
        Endpoint ep(s, 0);
        entry(ep, arg);
    } catch (...) {
        error = std::current_exception();
    }
    // Cores still waiting for core 0 to take their messages learn that it
    // never will (back-pressure: must_poll), and take its stop message.
    s.records[0].finished.store(1, std::memory_order_release);
    core0_done.store(true);
    watcher.join();
    if (s.failed.load(std::memory_order_acquire)) throw core_failure(s.failure);
    if (error) std::rethrow_exception(error);
}

} // namespace tacomesh::posix::detail
