// 8-byte MPI ping-pong between ranks 0 and 1 (MPI_Send / MPI_Recv), the
// reference point for taco's polling round trip (run_mpi_compare.sh).
//   mpirun -np 2 mpi_pingpong [--batches N] [--trips K]
// Rank 0 prints one JSON object: median (and p10/p90) over N batches of the
// mean round-trip time of K trips. BENCH_SMOKE=1 shrinks the default sizes.
#define OMPI_SKIP_MPICXX 1 // the C API is all we use; the C++ bindings only add warnings
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

double quantile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[std::size_t(q * double(v.size() - 1) + 0.5)];
}

} // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    const char* smoke = std::getenv("BENCH_SMOKE");
    const bool small = smoke && *smoke && std::string(smoke) != "0";
    long batches = small ? 4 : 600, trips = small ? 200 : 2000;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--batches") batches = std::atol(argv[i + 1]);
        else if (a == "--trips") trips = std::atol(argv[i + 1]);
    }
    if (size != 2 || batches < 1 || trips < 1) {
        if (rank == 0) std::fprintf(stderr, "mpi_pingpong: needs exactly 2 ranks, --batches/--trips >= 1\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    std::uint64_t msg = 0;
    const int peer = 1 - rank;
    auto one_trip = [&] {
        if (rank == 0) {
            MPI_Send(&msg, 1, MPI_UINT64_T, peer, 0, MPI_COMM_WORLD);
            MPI_Recv(&msg, 1, MPI_UINT64_T, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&msg, 1, MPI_UINT64_T, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            ++msg;
            MPI_Send(&msg, 1, MPI_UINT64_T, peer, 0, MPI_COMM_WORLD);
        }
    };

    // One untimed batch: connection set-up and first-touch costs.
    for (long i = 0; i < trips; ++i) one_trip();

    std::vector<double> ns(std::size_t(batches), 0.0);
    for (auto& b : ns) {
        const auto t0 = std::chrono::steady_clock::now();
        for (long i = 0; i < trips; ++i) one_trip();
        b = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / double(trips);
    }

    if (rank == 0) {
        if (msg != std::uint64_t((batches + 1) * trips)) {
            std::fprintf(stderr, "mpi_pingpong: wrong echo count\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        std::printf("{\"benchmark\": \"mpi_pingpong\", \"bytes\": 8, \"batches\": %ld, \"round_trips_per_batch\": %ld, "
                    "\"median_rt_ns\": %.1f, \"p10_rt_ns\": %.1f, \"p90_rt_ns\": %.1f}\n",
                    batches, trips, quantile(ns, 0.5), quantile(ns, 0.1), quantile(ns, 0.9));
    }
    MPI_Finalize();
    return 0;
}
