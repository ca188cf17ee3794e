// A rank that dies during a run (platforms/mpi/README.md, "Failures"):
// under `mpirun --enable-recovery -np 3`, core 2's rank kills itself while
// core 0 waits for it; taco::run on rank 0 throws taco::core_failure naming
// rank 2 within the configured timeout, and a later run is refused with the
// same report. Prints one line for CTest to match; serving rank 1 ends when
// rank 0's heartbeats stop.
#include <csignal>
#include <cstdio>
#include <string>

#include <taco/taco.hpp>
#include <tacomesh/mpi/platform.hpp>

namespace {
int die() {
    std::raise(SIGKILL);
    return 0;
}
} // namespace

int main() {
    std::string reported = "(nothing)", refused = "(nothing)";
    const tacomesh::mpi::config cfg{.failure_timeout = std::chrono::milliseconds(1500)};
    try {
        taco::run(cfg, [] {
            if (taco::sync(1, [] { return 1; }) != 1) return; // rank 1 serves: it is alive
            (void)taco::sync(2, &die);                         // never answered
        });
    } catch (const taco::core_failure& e) {
        reported = e.what();
    }
    try {
        taco::run(cfg, [] {});
    } catch (const taco::core_failure& e) {
        refused = e.what();
    }
    std::printf("reported: %s || refused: %s\n", reported.c_str(), refused.c_str());
    return 0;
}
