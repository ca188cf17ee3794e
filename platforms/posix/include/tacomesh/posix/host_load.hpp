#pragma once
// What a run does with idle time and pinning when its configuration leaves
// them open (config.idle / config.pin unset): decided once at start from
// how many CPUs the run can have to itself.
//
// Why it matters: a polling core pinned to a CPU that another busy process
// shares gets that CPU only when the scheduler's time slice says so. A
// message to it then waits for the slice to turn (milliseconds: a greedy
// modularity run of 1.2 ms took 15-760 ms with ~200 involuntary context
// switches under two busy loops). A parked core (futex) is different: the
// sender's wake-up makes it runnable with the scheduler's credit of a
// sleeper, so it preempts the busy process at once, and an unpinned one may
// go to whichever CPU is free. On a free machine spinning pinned cores is
// still the fastest (no fence or system call per message), so that stays.
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include <tacomesh/posix/shared_state.hpp>

namespace tacomesh::posix {

/// How busy the machine is as a run starts (what an unset idle or pin is
/// decided by).
struct host_view {
    unsigned cpus = 1;   ///< CPUs this process may run on (its affinity)
    unsigned online = 1; ///< CPUs of the machine
    unsigned busy = 0;   ///< runnable threads of other processes (and of ours besides the caller)

    /// CPUs the run can expect to have to itself: the scheduler spreads the
    /// busy threads over the online CPUs, so ours lose only what the other
    /// CPUs cannot absorb.
    unsigned free_cpus() const noexcept {
        const unsigned elsewhere = online > cpus ? online - cpus : 0;
        const unsigned on_ours = busy > elsewhere ? busy - elsewhere : 0;
        return on_ours >= cpus ? 0 : cpus - on_ours;
    }
};

/// The choices a run makes (config.idle and config.pin, with the unset ones decided).
struct run_choices {
    idle_policy idle = idle_policy::poll;
    bool pin = true;
};

/// Unset idle: poll while every core can have a CPU to itself, otherwise
/// adaptive (spin briefly, then park). Unset pin: pin on the same
/// condition: pinning a core onto a CPU that a busy process shares is what
/// stalls it, while unpinned the scheduler moves it to a CPU that is free.
/// What the configuration sets is kept as it is.
inline run_choices resolve(const config& c, const host_view& h) noexcept {
    const bool room = c.cores <= h.free_cpus();
    return {c.idle.value_or(room ? idle_policy::poll : idle_policy::adaptive), c.pin.value_or(room)};
}

namespace detail {

/// The "runnable" count of /proc/loadavg (4th field, "runnable/threads"):
/// the scheduler's number of threads that are running or waiting for a CPU
/// right now, the caller included. -1 when unreadable.
inline int runnable_now() noexcept {
    std::FILE* f = std::fopen("/proc/loadavg", "r");
    if (!f) return -1;
    double a, b, c;
    int running = -1, threads = 0;
    if (std::fscanf(f, "%lf %lf %lf %d/%d", &a, &b, &c, &running, &threads) != 5) running = -1;
    std::fclose(f);
    return running;
}

} // namespace detail

/// The machine as it is now. The busy count is the smallest of three looks
/// 100 us apart: a thread that keeps a CPU busy is runnable in each, one
/// that runs for a moment (a shell, a timer) rarely in all. Not the load
/// averages: they trail by a minute, and count this process's own spinning
/// from a previous run, which would make a program that starts runs one
/// after another (tests, benchmarks) take itself for a load. Without
/// /proc, the machine counts as free (the choices of a free machine).
inline host_view observe_host() {
    host_view h;
    cpu_set_t set;
    CPU_ZERO(&set);
    h.cpus = ::sched_getaffinity(0, sizeof set, &set) == 0 ? unsigned(std::max(CPU_COUNT(&set), 1)) : 1u;
    const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
    h.online = std::max(h.cpus, online > 0 ? unsigned(online) : 1u);
    int least = -1;
    for (int look = 0; look < 3; ++look) {
        if (look > 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
        const int r = detail::runnable_now();
        if (r < 0) return h;
        least = least < 0 ? r : std::min(least, r);
    }
    h.busy = least > 1 ? unsigned(least - 1) : 0u; // less the caller itself
    return h;
}

} // namespace tacomesh::posix
