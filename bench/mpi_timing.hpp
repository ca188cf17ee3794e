#pragma once
// What the two MPI reference programs share: set-up with argument checks,
// and timing of batches of an operation after one untimed warm-up batch
// (connection set-up and first-touch costs), as the taco side does.
#define OMPI_SKIP_MPICXX 1 // the C API is all we use; the C++ bindings only add warnings
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace bench::mpi {

struct run {
    int rank = 0;
    long batches = 0;
    long ops = 0; // operations per batch
};

/// MPI_Init, then `--batches N` and `<ops_flag> K` (defaults shrink under
/// BENCH_SMOKE=1, to match the taco benchmark it is compared with).
inline run start(int& argc, char**& argv, const char* name, const char* ops_flag, long ops_default,
                 long ops_smoke) {
    MPI_Init(&argc, &argv);
    run r;
    int size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char* smoke = std::getenv("BENCH_SMOKE");
    const bool small = smoke && *smoke && std::string(smoke) != "0";
    r.batches = small ? 4 : 600;
    r.ops = small ? ops_smoke : ops_default;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--batches") r.batches = std::atol(argv[i + 1]);
        else if (a == ops_flag) r.ops = std::atol(argv[i + 1]);
    }
    if (size != 2 || r.batches < 1 || r.ops < 1) {
        if (r.rank == 0) std::fprintf(stderr, "%s: needs exactly 2 ranks, --batches/%s >= 1\n", name, ops_flag);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return r;
}

/// Mean ns per operation of each batch (after one untimed batch).
template <class Op>
std::vector<double> time_batches(const run& r, Op&& op) {
    for (long i = 0; i < r.ops; ++i) op();
    std::vector<double> ns(std::size_t(r.batches), 0.0);
    for (auto& b : ns) {
        const auto t0 = std::chrono::steady_clock::now();
        for (long i = 0; i < r.ops; ++i) op();
        b = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / double(r.ops);
    }
    return ns;
}

inline double quantile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[std::size_t(q * double(v.size() - 1) + 0.5)];
}

} // namespace bench::mpi
