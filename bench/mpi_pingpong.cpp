// 8-byte MPI ping-pong between ranks 0 and 1 (MPI_Send / MPI_Recv), the
// reference point for taco's polling round trip (run_mpi_compare.sh).
//   mpirun -np 2 mpi_pingpong [--batches N] [--trips K]
// Rank 0 prints one JSON object: median (and p10/p90) over N batches of the
// mean round-trip time of K trips. BENCH_SMOKE=1 shrinks the default sizes.
#include <cstdint>

#include "mpi_timing.hpp"

int main(int argc, char** argv) {
    const auto run = bench::mpi::start(argc, argv, "mpi_pingpong", "--trips", 2000, 200);
    std::uint64_t msg = 0;
    const int peer = 1 - run.rank;
    const auto ns = bench::mpi::time_batches(run, [&] {
        if (run.rank == 0) {
            MPI_Send(&msg, 1, MPI_UINT64_T, peer, 0, MPI_COMM_WORLD);
            MPI_Recv(&msg, 1, MPI_UINT64_T, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&msg, 1, MPI_UINT64_T, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            ++msg;
            MPI_Send(&msg, 1, MPI_UINT64_T, peer, 0, MPI_COMM_WORLD);
        }
    });
    if (run.rank == 0) {
        if (msg != std::uint64_t((run.batches + 1) * run.ops)) {
            std::fprintf(stderr, "mpi_pingpong: wrong echo count\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        std::printf("{\"benchmark\": \"mpi_pingpong\", \"bytes\": 8, \"batches\": %ld, \"round_trips_per_batch\": %ld, "
                    "\"median_rt_ns\": %.1f, \"p10_rt_ns\": %.1f, \"p90_rt_ns\": %.1f}\n",
                    run.batches, run.ops, bench::mpi::quantile(ns, 0.5), bench::mpi::quantile(ns, 0.1),
                    bench::mpi::quantile(ns, 0.9));
    }
    MPI_Finalize();
    return 0;
}
