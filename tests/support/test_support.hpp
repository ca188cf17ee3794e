#pragma once
// Helpers shared by the tests.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

#include <taco/detail/context/sanitizer_reports.hpp>
#include <taco/run.hpp>
#include <tacomesh/posix.hpp>

namespace test {

/// The platform of the tests that are not about a particular one (the
/// portable suites, tests/test_*.cpp): compiled once, as object libraries
/// (tests/support/CMakeLists.txt), and linked into a program per platform
/// whose platform file defines the two functions below:
/// tests/suites_on_posix.cpp (POSIX threads, or core processes where a test
/// names them), platforms/scc/tests/suites_on_scc.cpp (the emulated SCC) and
/// platforms/mpi/tests/suites_on_mpi.cpp (MPI ranks, run by mpirun). The
/// framework's code under test takes its platform at run time anyway (the
/// one virtual seam, taco::detail::core), so nothing in a suite depends on
/// the choice at compile time; compiling them once per platform was a
/// fifth of the test build.
enum class platform { posix, scc, mpi };
platform suite_platform() noexcept;

/// The cores a portable test runs on: how many, and for MESH's tests the
/// POSIX execution mode they mean (threads share memory; core processes
/// each have a private view). On the emulated SCC both stand for the chip,
/// whose memory MESH must keep consistent (coherent() is false) at the
/// costs of each page mode; across MPI ranks every core has a view of its
/// own, as POSIX core processes (the MESH suite runs with as many ranks as
/// its tests have cores).
struct cores {
    taco::core_id count;
    tacomesh::posix::execution_mode mode = tacomesh::posix::execution_mode::threads;
};
inline cores on_cores(taco::core_id n) { return {n}; }
inline cores mesh_cores(taco::core_id n,
                        tacomesh::posix::execution_mode m = tacomesh::posix::execution_mode::threads) {
    return {n, m};
}
/// MESH's cores each with a view of its own (POSIX core processes).
inline cores mesh_processes(taco::core_id n) { return mesh_cores(n, tacomesh::posix::execution_mode::processes); }

namespace detail {
/// taco::run on this program's platform (its platform file defines it).
void run_on_suite_platform(const cores& c, void (*main)(void*), void* arg, const taco::run_options& options);
} // namespace detail

/// taco::run for the portable suites: main on the cores of this program's
/// platform. Its exceptions reach the caller, as taco::run's do.
template <class Main>
void run(const cores& c, Main&& main, const taco::run_options& options = {}) {
    using M = std::remove_reference_t<Main>;
    auto* m = const_cast<std::remove_const_t<M>*>(std::addressof(main));
    detail::run_on_suite_platform(c, [](void* p) { (*static_cast<M*>(p))(); }, m, options);
}

/// The platform of a test's forked child (run_in_child): POSIX threads. A
/// forked copy of an MPI rank is no MPI process, and what such a test
/// checks (a report before the process dies) is not about a platform.
inline tacomesh::posix::config child_cores(taco::core_id n) { return {.cores = n}; }

/// Whether each core has a view of cached memory of its own, so that a
/// missing refresh is a stale read and a reader's view stays as it acquired
/// it while others write: POSIX core processes. The emulated SCC keeps the
/// data in host memory that every core thread sees at once (its staleness
/// is shown at the hardware level instead, platforms/scc/tests): the tests
/// that need a private view are tagged [private-views], which the SCC's
/// program leaves out.
inline bool private_views() { return suite_platform() != platform::scc; }

/// Whether non-cached memory is one memory that every core's stores reach.
/// Not across MPI ranks, where MESH refuses it (mesh::allocate says why):
/// the tests of NCM data are tagged [one-memory], which the MPI runs leave out.
inline bool shared_non_cached() { return suite_platform() != platform::mpi; }

/// Built with ASan or TSan: they own SIGSEGV and reserve terabytes of
/// shadow address space, so tests of signals and address-space limits skip.
inline constexpr bool sanitized = TACO_ASAN_FIBERS || TACO_TSAN_FIBERS;

/// Sizes scale down under sanitizers (TACOMESH_TEST_SCALE, e.g. 0.05): the
/// full sizes run in the normal build.
inline long scaled(long n) {
    const char* s = std::getenv("TACOMESH_TEST_SCALE");
    const double f = s ? std::atof(s) : 1.0;
    const long v = long(double(n) * (f > 0 ? f : 1.0));
    return v < 1 ? 1 : v;
}

/// Spin in user code for ever, never polling (a hung core).
inline void spin_forever() {
    volatile bool forever = true; // a side effect each round: not a loop the compiler may assume ends
    while (forever) {}
}

/// Busy-wait about `ns` nanoseconds (a random delay that keeps the core busy).
inline void spin_for(long ns) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::nanoseconds(ns);
    while (std::chrono::steady_clock::now() < end) {}
}

/// MESH bytes a core wrote back and refreshed while f ran (mesh::events():
/// the ranges, what the controller decided, whether the platform copied them or not).
struct moved {
    std::uint64_t written_back, invalidated;
};
inline mesh::event_counts events_of_this_core() { return mesh::events(); }
template <class F>
moved bytes_moved(taco::core_id core, F f) {
    const auto before = taco::sync(core, &events_of_this_core);
    f();
    const auto after = taco::sync(core, &events_of_this_core);
    return {after.written_back_range_bytes - before.written_back_range_bytes,
            after.invalidated_range_bytes - before.invalidated_range_bytes};
}

/// f.template operator()<Variant, Controller>() for every chunked-map
/// variant x consistency controller (noop included).
template <class F>
void for_each_map_and_controller(F f) {
    using mem = mesh::map_memory;
    auto controllers = [&]<class Map>() {
        if (private_views()) f.template operator()<Map, mesh::controllers::noop>(); // stale on purpose
        f.template operator()<Map, mesh::controllers::broadcast>();
        f.template operator()<Map, mesh::controllers::overlapped_broadcast>();
        f.template operator()<Map, mesh::controllers::timestamp>();
    };
    controllers.template operator()<mesh::chunked_map<std::uint32_t, long, mem::dcm>>();
    if (shared_non_cached()) controllers.template operator()<mesh::chunked_map<std::uint32_t, long, mem::ncm>>();
    controllers.template operator()<mesh::chunked_map<std::uint32_t, long, mem::wt>>();
}

/// In a forked child: limit the address space to what the process has
/// mapped now (which depends on the tests that ran before in it) plus
/// `headroom`, so that the next large mapping or thread stack is refused.
inline void limit_address_space(std::size_t headroom) {
    std::size_t pages = 0;
    if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(f, "%zu", &pages) != 1) pages = 0;
        std::fclose(f);
    }
    rlimit as{};
    ::getrlimit(RLIMIT_AS, &as);
    as.rlim_cur = pages * std::size_t(::sysconf(_SC_PAGESIZE)) + headroom;
    ::setrlimit(RLIMIT_AS, &as);
}

struct child_result {
    bool aborted;
    std::string err;
};
/// Run fn in a forked child, capture its stderr and whether it died by SIGABRT.
template <class F>
child_result run_in_child(F&& fn) {
    int fds[2];
    if (::pipe(fds) != 0) std::abort();
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(fds[1], 2);
        ::close(fds[0]);
        std::signal(SIGABRT, SIG_DFL); // not Catch's handler: the parent judges the child
        std::freopen("/dev/null", "w", stdout);
        fn();
        std::_Exit(0);
    }
    ::close(fds[1]);
    std::string out;
    char buf[512];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, std::size_t(n));
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return {WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, out};
}

/// A run started in a forked child whose address space has `headroom` bytes
/// to spare (limit_address_space): what it threw, in err, or nothing.
template <class Config>
child_result run_refused_in_child(const Config& c, std::size_t headroom) {
    return run_in_child([&] {
        limit_address_space(headroom);
        try {
            taco::run(c, [] {});
        } catch (const std::exception& e) {
            std::fprintf(stderr, "%s\n", e.what());
            std::_Exit(3);
        }
        std::_Exit(0);
    });
}

} // namespace test
