// MPI_Allreduce of `count` doubles (MPI_SUM) over 2 ranks, the reference
// point for taco's 2-core reduce (run_allreduce_compare.sh): one double
// against reduce_2core, and n doubles against reduce_vector/count:n.
//   mpirun -np 2 mpi_allreduce [--batches N] [--ops K] [--count n]
// Rank 0 prints one JSON object: median (and p10/p90) over N batches of the
// mean time of K allreduces. BENCH_SMOKE=1 shrinks the default sizes.
//
// Allreduce gives the sum on every rank while taco::reduce gives it to one
// future; on 2 ranks both are one exchange (each side needs the other's
// value), so this is the like-for-like MPI collective, and the one MPI
// programs use for a global sum.
#include <string>
#include <vector>

#include "mpi_timing.hpp"

int main(int argc, char** argv) {
    // The same sizes as bench_collective's reduce_2core, so both sides time
    // batches of the same length (the script passes reduce_vector's).
    const auto run = bench::mpi::start(argc, argv, "mpi_allreduce", "--ops", 1000, 100);
    long count = 1;
    for (int i = 1; i + 1 < argc; i += 2)
        if (std::string(argv[i]) == "--count") count = std::atol(argv[i + 1]);
    if (count < 1) {
        if (run.rank == 0) std::fprintf(stderr, "mpi_allreduce: --count must be >= 1\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    // Rank r contributes r + 1 in every element, as member r does in
    // bench_collective: the sum is 3 on both ranks, everywhere, every time.
    // The ends and the middle are checked, as the taco side checks its sum.
    const std::size_t n = std::size_t(count);
    const std::vector<double> mine(n, double(run.rank + 1));
    std::vector<double> sum(n, 0.0);
    long wrong = 0;
    const auto ns = bench::mpi::time_batches(run, [&] {
        MPI_Allreduce(mine.data(), sum.data(), int(count), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        wrong += sum.front() != 3.0 || sum[n / 2] != 3.0 || sum.back() != 3.0;
    });
    long wrong_total = 0;
    MPI_Reduce(&wrong, &wrong_total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (run.rank == 0) {
        if (wrong_total != 0) {
            std::fprintf(stderr, "mpi_allreduce: %ld wrong sums\n", wrong_total);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        std::printf("{\"benchmark\": \"mpi_allreduce\", \"count\": %ld, \"bytes\": %zu, \"op\": \"MPI_SUM\", "
                    "\"ranks\": 2, \"batches\": %ld, \"ops_per_batch\": %ld, "
                    "\"median_ns\": %.1f, \"p10_ns\": %.1f, \"p90_ns\": %.1f}\n",
                    count, n * sizeof(double), run.batches, run.ops, bench::mpi::quantile(ns, 0.5),
                    bench::mpi::quantile(ns, 0.1), bench::mpi::quantile(ns, 0.9));
    }
    MPI_Finalize();
    return 0;
}
