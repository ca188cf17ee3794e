// The portable suites (tests/test_*.cpp, compiled once) on MPI ranks, run by
// mpirun: across ranks every core has a view of its own, as POSIX core
// processes, whatever execution mode a MESH test names (the MESH suite runs
// with as many ranks as its tests have cores). The tests of memory that
// every core's stores reach are tagged [one-memory] and left out
// (CMakeLists.txt beside this file).
#include <tacomesh/mpi/platform.hpp>

#include "on_host.hpp"
#include <test_support.hpp>

test::platform test::suite_platform() noexcept { return platform::mpi; }

void test::detail::run_on_suite_platform(const cores& c, void (*main)(void*), void* arg,
                                         const taco::run_options& options) {
    taco::run(tacomesh::mpi::config{.cores = c.count, .on_host = mpi_on_host()}, [&] { main(arg); }, options);
}
