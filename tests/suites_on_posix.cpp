// The portable suites (tests/test_*.cpp, compiled once) on the POSIX
// platform: core threads, or core processes with private memory where a
// MESH test names them (test::mesh_cores).
#include <tacomesh/posix.hpp>

#include <test_support.hpp>

test::platform test::suite_platform() noexcept { return platform::posix; }

void test::detail::run_on_suite_platform(const cores& c, void (*main)(void*), void* arg,
                                         const taco::run_options& options) {
    taco::run(tacomesh::posix::config{.cores = c.count, .mode = c.mode}, [&] { main(arg); }, options);
}
