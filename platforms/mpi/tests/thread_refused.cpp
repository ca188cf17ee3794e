// A rank whose core threads the system refuses (platforms/mpi/README.md,
// "Failures"): under `mpirun -np 2`, rank 1 runs with an address-space limit
// that leaves room for a few thread stacks, not for 48. taco::run on rank 0
// throws rank 1's report (the core, the setting), no core runs the program,
// no rank terminates or aborts the job, and the next run works. Rank 0
// prints one line for CTest to match.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include <taco/taco.hpp>
#include <tacomesh/mpi/platform.hpp>
#include <test_support.hpp>

namespace {
int rank_from_launcher() {
    const char* r = std::getenv("OMPI_COMM_WORLD_RANK");
    return r ? std::atoi(r) : 0;
}
} // namespace

int main() {
    // Only rank 0 runs this program's main body past taco::run: the other
    // ranks serve the runs rank 0 starts until it ends. So rank 1 takes its
    // limit first: room for MPI and a run of one core per rank, not for 48
    // thread stacks (8 MiB each) more.
    const int rank = rank_from_launcher();
    if (rank == 1) test::limit_address_space(std::size_t(320) << 20);
    const tacomesh::mpi::config small{.cached_bytes = 1 << 20, .non_cached_bytes = 1 << 20, .private_bytes = 1 << 16};
    std::string refused = "(nothing)";
    bool ran = false;
    auto many = small;
    many.cores = 96; // 48 threads per rank
    try {
        taco::run(many, [&] { ran = true; });
    } catch (const std::runtime_error& e) {
        refused = e.what();
    }
    long sum = 0;
    taco::run(small, [&] { sum = taco::sync(1, [] { return 1L; }) + taco::sync(0, [] { return 1L; }); });
    std::printf("rank %d: ran %d, refused: %s || then: %ld\n", rank, int(ran), refused.c_str(), sum);
    return 0;
}
