// The portable suites (tests/test_*.cpp, compiled once) on the emulated SCC:
// a MESH test's execution mode stands for the chip either way, whose memory
// MESH must keep consistent (coherent() is false) at the costs of each page
// mode. The tests that need a core's private view of host memory are tagged
// [private-views] and left out (CMakeLists.txt beside this file).
#include <tacomesh/scc/emulated/platform.hpp>

#include <test_support.hpp>

test::platform test::suite_platform() noexcept { return platform::scc; }

void test::detail::run_on_suite_platform(const cores& c, void (*main)(void*), void* arg,
                                         const taco::run_options& options) {
    taco::run(tacomesh::scc::emulated::config{.cores = c.count}, [&] { main(arg); }, options);
}
