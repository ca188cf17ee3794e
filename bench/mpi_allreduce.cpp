// MPI_Allreduce of one double (MPI_SUM) over 2 ranks, the reference point
// for taco's 2-core reduce (run_allreduce_compare.sh).
//   mpirun -np 2 mpi_allreduce [--batches N] [--ops K]
// Rank 0 prints one JSON object: median (and p10/p90) over N batches of the
// mean time of K allreduces. BENCH_SMOKE=1 shrinks the default sizes.
//
// Allreduce gives the sum on every rank while taco::reduce gives it to one
// future; on 2 ranks both are one exchange (each side needs the other's
// value), so this is the like-for-like MPI collective, and the one MPI
// programs use for a global sum.
#define OMPI_SKIP_MPICXX 1 // the C API is all we use; the C++ bindings only add warnings
#include <mpi.h>

#include <algorithm>
#include <chrono>
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

    // The same sizes as bench_collective's reduce_2core, so both sides time
    // batches of the same length.
    const char* smoke = std::getenv("BENCH_SMOKE");
    const bool small = smoke && *smoke && std::string(smoke) != "0";
    long batches = small ? 4 : 600, ops = small ? 100 : 1000;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--batches") batches = std::atol(argv[i + 1]);
        else if (a == "--ops") ops = std::atol(argv[i + 1]);
    }
    if (size != 2 || batches < 1 || ops < 1) {
        if (rank == 0) std::fprintf(stderr, "mpi_allreduce: needs exactly 2 ranks, --batches/--ops >= 1\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    // Rank r contributes r + 1, as member r does in bench_collective: the
    // sum is 3 on both ranks, every time.
    const double mine = rank + 1;
    long wrong = 0;
    auto one_allreduce = [&] {
        double sum = 0;
        MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        wrong += sum != 3.0;
    };

    // One untimed batch: connection set-up and first-touch costs.
    for (long i = 0; i < ops; ++i) one_allreduce();

    std::vector<double> ns(std::size_t(batches), 0.0);
    for (auto& b : ns) {
        const auto t0 = std::chrono::steady_clock::now();
        for (long i = 0; i < ops; ++i) one_allreduce();
        b = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / double(ops);
    }

    long wrong_total = 0;
    MPI_Reduce(&wrong, &wrong_total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (wrong_total != 0) {
            std::fprintf(stderr, "mpi_allreduce: %ld wrong sums\n", wrong_total);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        std::printf("{\"benchmark\": \"mpi_allreduce\", \"bytes\": 8, \"op\": \"MPI_SUM\", \"ranks\": 2, "
                    "\"batches\": %ld, \"ops_per_batch\": %ld, "
                    "\"median_ns\": %.1f, \"p10_ns\": %.1f, \"p90_ns\": %.1f}\n",
                    batches, ops, quantile(ns, 0.5), quantile(ns, 0.1), quantile(ns, 0.9));
    }
    MPI_Finalize();
    return 0;
}
