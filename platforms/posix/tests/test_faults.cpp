// Fault injection: a mixed workload in process mode (sync calls,
// fire-and-forget floods, reductions over all cores, carried strings) during
// which one core, chosen at random, is killed, crashes, aborts, exits, is
// stopped, hangs in user code, or only pauses. Every run must end: with the
// right core_failure (naming the core and the cause) for a fault, with the
// right results for a pause; within a generous bound; and with no core
// process left behind.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <thread>

#include <test_support.hpp>

namespace {

using tacomesh::posix::config;
using tacomesh::posix::core_failure;
using tacomesh::posix::execution_mode;

enum class fault { kill, segfault, abort, exit_status, exit_zero, stop, hang, pause };
constexpr fault all_faults[] = {fault::kill, fault::segfault,  fault::abort, fault::exit_status,
                                fault::exit_zero, fault::stop, fault::hang,  fault::pause};

/// What the report must say for each fault (any of the alternatives).
std::vector<std::string> expected_causes(fault f) {
    switch (f) {
    case fault::kill: return {"killed by signal 9"};
    // Under a sanitizer its own handler may turn these into an exit status.
    case fault::segfault: return {"killed by signal 11", "exited with status"};
    case fault::abort: return {"killed by signal 6", "exited with status"};
    case fault::exit_status: return {"exited with status 3"};
    case fault::exit_zero: return {"exited with status 0 before the run ended"};
    case fault::stop: return {"has been stopped by signal 19"};
    case fault::hang: return {"has taken none of its waiting messages"};
    case fault::pause: return {};
    }
    return {};
}

void inject(fault f) {
    switch (f) {
    case fault::kill: ::kill(::getpid(), SIGKILL); break;
    case fault::segfault:
        std::signal(SIGSEGV, SIG_DFL); // not the test framework's handler, inherited by the fork
        ::raise(SIGSEGV);
        break;
    case fault::abort:
        std::signal(SIGABRT, SIG_DFL);
        std::abort();
    case fault::exit_status: ::_exit(3);
    case fault::exit_zero: std::exit(0);
    case fault::stop: ::raise(SIGSTOP); break;
    case fault::hang: test::spin_forever(); break;
    case fault::pause: std::this_thread::sleep_for(std::chrono::milliseconds(50)); break; // < the liveness timeout
    }
}

long squared(long v) { return v * v; }
std::size_t length_of(std::string s) { return s.size(); }
struct tally {
    long n = 0;
    void add(long v) { n += v; }
    long get() const { return n; }
};

/// The workload core 0 runs; the fault goes to `victim` after `at` steps.
/// Returns a checksum that a run without a fault must reproduce.
long workload(std::mt19937& rng, taco::core_id cores, taco::core_id victim, fault f, int at) {
    // Core 0's own tally is a local: when a fault unwinds the workload, the
    // ones on the other cores go with their processes, this one with the frame.
    tally here;
    std::vector<taco::global_ptr<tally>> tallies{taco::to_global(&here)};
    for (taco::core_id c = 1; c < cores; ++c) tallies.push_back(taco::new_on<tally>(c).get());
    long check = 0;
    for (int step = 0; step < 40; ++step) {
        if (step == at) taco::async(victim, &inject, f);
        const auto c = taco::core_id(rng() % cores);
        switch (rng() % 4) {
        case 0: check += taco::sync(c, &squared, long(step)); break;
        case 1:
            for (int i = 0; i < 200; ++i) taco::async(tallies[c], &tally::add, 1L);
            check += taco::sync(tallies[c], &tally::get);
            break;
        case 2:
            check += taco::reduce(taco::all_cores(), taco::m2f(+[] { return long(taco::this_core()); }),
                                  std::plus<long>{})
                         .get();
            break;
        default: check += long(taco::sync(c, &length_of, std::string(std::size_t(step * 37), 'x'))); break;
        }
    }
    for (taco::core_id c = 1; c < cores; ++c) taco::delete_on(tallies[c]);
    return check;
}

/// Processes whose parent is this one (core processes left behind).
int children_alive() {
    int n = 0;
    const std::string me = std::to_string(::getpid());
    if (DIR* d = ::opendir("/proc")) {
        while (dirent* e = ::readdir(d)) {
            std::ifstream stat(std::string("/proc/") + e->d_name + "/stat");
            std::string pid, comm, state, ppid;
            if (stat >> pid >> comm >> state >> ppid && ppid == me) ++n;
        }
        ::closedir(d);
    }
    return n;
}

} // namespace

TEST_CASE("fault injection: every run ends with the right report, in time, with no process left behind",
          "[processes][faults]") {
    const taco::core_id cores = 4;
    const int runs = int(test::scaled(24));
    for (int run = 0; run < runs; ++run) {
        std::mt19937 rng(std::uint32_t(run) * 2654435761u + 17);
        const fault f = all_faults[run % std::size(all_faults)]; // every kind, in every position of the mix
        const auto victim = taco::core_id(1 + rng() % (cores - 1));
        const int at = int(rng() % 30);
        CAPTURE(run, int(f), victim, at);

        // The same workload without a fault gives the checksum a pause must keep.
        std::mt19937 replay = rng;
        long clean = 0;
        if (f == fault::pause)
            taco::run(config{.cores = cores, .mode = execution_mode::processes},
                      [&] { clean = workload(replay, cores, victim, fault::pause, -1); });

        auto c = config{.cores = cores, .idle = run % 2 ? tacomesh::posix::idle_policy::sleep
                                                        : tacomesh::posix::idle_policy::poll,
                        .mode = execution_mode::processes};
        c.liveness_timeout = std::chrono::milliseconds(300);
        const auto t0 = std::chrono::steady_clock::now();
        std::string report;
        long got = 0;
        try {
            taco::run(c, [&] { got = workload(rng, cores, victim, f, at); });
        } catch (const core_failure& e) {
            report = e.what();
        }
        const auto took = std::chrono::steady_clock::now() - t0;
        CAPTURE(report);

        if (f == fault::pause) {
            CHECK(report.empty());
            CHECK(got == clean);
        } else {
            CHECK_THAT(report, Catch::Contains("core " + std::to_string(victim)));
            bool cause = false;
            for (const auto& s : expected_causes(f)) cause = cause || report.find(s) != std::string::npos;
            CHECK(cause);
        }
        // Generous: the liveness timeout is 0.3 s, a clean run well under a second.
        CHECK(took < std::chrono::seconds(20));
        CHECK(children_alive() == 0);
    }
}
