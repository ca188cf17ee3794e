// TACO on the MPI platform against MPI itself, in the same run:
//
//   round_trip   taco::sync to core 1 (rank 1)  vs  an 8-byte MPI_Send /
//                MPI_Recv ping-pong between the same two ranks;      target <= 1.2x
//   reduce       taco::reduce over one member per rank  vs  MPI_Allreduce
//                of one double over all ranks;                       target <= 1.5x
//   release_acquire/B  a shared object of B bytes, written back and then
//                refreshed by rank 1 as its Timestamp controller does
//                (release of a modified writer, acquire of a stale view)
//                vs  an MPI_Put + MPI_Get of the same B bytes to a
//                window at rank 0, each flushed;                     target <= 1.5x
//
//   mpirun -np N bench_mpi [--on-host=mpi] [--remote-memory=rma] [Google Benchmark flags]
//   (N >= 2; one core per rank)
//
// By default ranks on one host reach each other through MPI shared memory
// (config.on_host = shared_memory: rings, loads and stores); --on-host=mpi
// measures the path between hosts on one machine (MPI messages, and MESH's
// requests to the home rank), its benchmarks named mpi_only/... instead of
// mpi/.... --remote-memory=rma: MESH's canonical copy reached by MPI RMA
// instead of requests (config.remote_memory), named .../rma/....
//
// Both sides run inside one taco::run: for the MPI side, core 0 starts a
// loop of plain MPI calls on the other ranks' cores (an invocation that
// blocks its core while it runs) and plays its own part on MPI_COMM_WORLD,
// which the platform does not use (each run has a communicator of its own).
// Batches alternate (bench/paired.hpp); the ratios are the figures.
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <mesh/mesh.hpp>
#include <taco/taco.hpp>
#include <tacomesh/mpi/platform.hpp>

#include <paired.hpp>

namespace {

using bench::clock_type;
using bench::ns_since;
using bench::smoke;

constexpr int ping_tag = 1, stop_tag = 2;

bool oversubscribed() {
    const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
    return unsigned(tacomesh::mpi::ranks_on_this_host()) > cpus;
}

bench::sizes sizes() { return smoke() ? bench::sizes{4, 50} : bench::sizes{40, 2000}; }

tacomesh::mpi::on_host on_host = tacomesh::mpi::on_host::shared_memory;
tacomesh::mpi::remote_memory remote_memory = tacomesh::mpi::remote_memory::home_messages;

/// Every benchmark's labels: ranks, oversubscription, the on-host path.
void label(benchmark::State& state, const bench::paired_series& series) {
    series.report_latency(state, oversubscribed());
    state.counters["ranks"] = tacomesh::mpi::ranks();
    state.counters["on_host_shared_memory"] = on_host == tacomesh::mpi::on_host::shared_memory;
    state.counters["remote_memory_rma"] = remote_memory == tacomesh::mpi::remote_memory::rma;
}

std::uint64_t echo(std::uint64_t x) { return x + 1; }

/// Mean ns of `op` over a batch of n, after one untimed op (the other side
/// may still be starting its loop).
template <class Op>
double timed_batch(std::size_t n, Op&& op) {
    op();
    const auto t0 = clock_type::now();
    for (std::size_t i = 0; i < n; ++i) op();
    return ns_since(t0) / double(n);
}

/// Rank 1's side of the ping-pong, until rank 0 says stop.
void pong() {
    std::uint64_t m = 0;
    for (;;) {
        MPI_Status st;
        MPI_Recv(&m, 1, MPI_UINT64_T, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        if (st.MPI_TAG == stop_tag) return;
        ++m;
        MPI_Send(&m, 1, MPI_UINT64_T, 0, ping_tag, MPI_COMM_WORLD);
    }
}

void round_trip(benchmark::State& state) {
    const bench::sizes sz = sizes();
    bench::paired_series series;
    std::size_t wrong = 0;
    for (auto _ : state) {
        series.run_pair(
            state,
            [&] {
                taco::async(1, &pong);
                std::uint64_t m = 0;
                auto trip = [&] {
                    const std::uint64_t sent = m;
                    MPI_Send(&m, 1, MPI_UINT64_T, 1, ping_tag, MPI_COMM_WORLD);
                    MPI_Recv(&m, 1, MPI_UINT64_T, 1, ping_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    wrong += m != sent + 1;
                };
                const double ns = timed_batch(sz.batch, trip);
                MPI_Send(&m, 1, MPI_UINT64_T, 1, stop_tag, MPI_COMM_WORLD);
                return ns;
            },
            [&] {
                std::uint64_t m = 0;
                return timed_batch(sz.batch, [&] {
                    const std::uint64_t next = taco::sync(1, &echo, m);
                    wrong += next != m + 1;
                    m = next;
                });
            });
    }
    if (wrong) bench::fail(state, "a round trip came back wrong");
    label(state, series);
}

struct member {
    double v;
    double value() const { return v; }
};

/// Every rank but 0: its part of `n` allreduces.
void allreduce_part(std::size_t n, double mine) {
    for (std::size_t i = 0; i < n; ++i) {
        double sum = 0;
        MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
}

void reduce(benchmark::State& state) {
    const bench::sizes sz = sizes();
    const int n = tacomesh::mpi::ranks();
    const double expected = double(n) * (n + 1) / 2; // member r holds r + 1
    std::vector<taco::global_ptr<member>> members;
    for (int r = 0; r < n; ++r) members.push_back(taco::new_on<member>(taco::core_id(r), double(r + 1)).get());
    auto g = taco::make_group(std::span<const taco::global_ptr<member>>(members));
    bench::paired_series series;
    std::size_t wrong = 0;
    for (auto _ : state) {
        series.run_pair(
            state,
            [&] {
                for (int r = 1; r < n; ++r) taco::async(taco::core_id(r), &allreduce_part, sz.batch + 1, double(r + 1));
                auto once = [&] {
                    const double mine = 1; // rank 0's member holds 1
                    double sum = 0;
                    MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                    wrong += sum != expected;
                };
                return timed_batch(sz.batch, once);
            },
            [&] {
                auto once = [&] {
                    taco::future<double> f;
                    taco::reduce(g, taco::m2f(&member::value), std::plus<double>{}, f);
                    wrong += f.get() != expected;
                };
                return timed_batch(sz.batch, once);
            });
    }
    taco::destroy_group(g);
    for (auto m : members) taco::delete_on(m);
    if (wrong) bench::fail(state, "a sum came back wrong");
    label(state, series);
}

/// A shared object of B bytes.
template <std::size_t B>
struct blob {
    std::array<std::byte, B> bytes{};
};

/// The baseline's window: B bytes at rank 0, as MESH's canonical copies.
struct put_get_window {
    MPI_Win win = MPI_WIN_NULL;
    std::byte* at_home = nullptr;
};
put_get_window baseline_window; // one per rank (one core per rank)

/// Collective (one core per rank: an at_each over all cores).
void open_window(std::size_t bytes) {
    // The same kind of window as MESH's (shared where the ranks share a host).
    tacomesh::mpi::detail::allocate_window(MPI_COMM_WORLD, bytes, 0, &baseline_window.at_home, &baseline_window.win);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, baseline_window.win);
}
void close_window() {
    MPI_Win_unlock_all(baseline_window.win);
    MPI_Win_free(&baseline_window.win);
}

/// On rank 1: n times an MPI_Put then an MPI_Get of `bytes` at rank 0, each flushed.
template <std::size_t B>
double put_get_batch(std::size_t n) {
    // Page-aligned, as the window at rank 0 is (and as MESH's view and
    // canonical copy share their offset in the page): unaligned, where the
    // linker put this buffer decided the baseline's speed, 1.23 us against
    // 0.12 us for 4 KiB from one build to the next (a change elsewhere in
    // the program moved it; 4K aliasing of the copy, by the look of it).
    alignas(4096) static blob<B> view;
    return timed_batch(n, [&] {
        view.bytes[0] = std::byte(std::to_integer<unsigned>(view.bytes[0]) + 1);
        MPI_Put(view.bytes.data(), int(B), MPI_BYTE, 0, 0, int(B), MPI_BYTE, baseline_window.win);
        MPI_Win_flush(0, baseline_window.win);
        MPI_Get(view.bytes.data(), int(B), MPI_BYTE, 0, 0, int(B), MPI_BYTE, baseline_window.win);
        MPI_Win_flush(0, baseline_window.win);
    });
}

/// On rank 1: n times the Timestamp controller's release of a modified
/// writer, then its acquire of a view that is stale (as after another
/// core's write: this core's seen version is reset, so the acquire finds
/// the counter changed and refreshes).
template <std::size_t B>
double release_acquire_batch(std::size_t n, mesh::sharing_ptr<blob<B>> p) {
    using ts = mesh::controllers::timestamp;
    mesh::controlled_object o(*p.block());
    ts::state s{o.version()};
    blob<B>& view = *p.unsafe_object();
    return timed_batch(n, [&] {
        view.bytes[0] = std::byte(std::to_integer<unsigned>(view.bytes[0]) + 1);
        ts::release_write(o, s, true);
        s.seen = 0;
        ts::acquire_read(o, s);
    });
}

template <std::size_t B>
void release_acquire(benchmark::State& state) {
    const bench::sizes sz = sizes();
    taco::future<void> opened;
    taco::at_each(taco::all_cores(), taco::m2f(&open_window, B), opened);
    opened.get();
    auto p = mesh::make_shared_object<blob<B>, mesh::controllers::timestamp>();
    bench::paired_series series;
    for (auto _ : state)
        series.run_pair(
            state, [&] { return taco::sync(1, &put_get_batch<B>, sz.batch); },
            [&] { return taco::sync(1, &release_acquire_batch<B>, sz.batch, p); });
    mesh::destroy_shared_object(p);
    taco::future<void> closed;
    taco::at_each(taco::all_cores(), taco::m2f(&close_window), closed);
    closed.get();
    label(state, series);
    state.counters["bytes"] = double(B);
}

void register_all() {
    const int pairs = sizes().pairs;
    const std::string prefix = std::string(on_host == tacomesh::mpi::on_host::mpi ? "mpi_only/" : "mpi/") +
                               (remote_memory == tacomesh::mpi::remote_memory::rma ? "rma/" : "");
    auto add = [&](const char* name, auto fn) {
        benchmark::RegisterBenchmark((prefix + name).c_str(), fn)->Iterations(pairs)->UseManualTime();
    };
    if (tacomesh::mpi::ranks() >= 2) add("round_trip_vs_pingpong", round_trip);
    add("reduce_vs_allreduce", reduce);
    if (tacomesh::mpi::ranks() >= 2) {
        add("release_acquire_vs_put_get/64", release_acquire<64>);
        add("release_acquire_vs_put_get/4096", release_acquire<4096>);
        add("release_acquire_vs_put_get/65536", release_acquire<65536>);
    }
}

} // namespace

int main(int argc, char** argv) {
    // --on-host=mpi|shared_memory, taken out before Google Benchmark sees the flags.
    std::vector<char*> args;
    for (int i = 0; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--on-host=mpi") on_host = tacomesh::mpi::on_host::mpi;
        else if (a == "--on-host=shared_memory") on_host = tacomesh::mpi::on_host::shared_memory;
        else if (a.starts_with("--on-host")) {
            std::fprintf(stderr, "bench_mpi: --on-host=mpi or --on-host=shared_memory, not %s\n", argv[i]);
            return 2;
        } else if (a == "--remote-memory=rma") remote_memory = tacomesh::mpi::remote_memory::rma;
        else if (a == "--remote-memory=home_messages") remote_memory = tacomesh::mpi::remote_memory::home_messages;
        else if (a.starts_with("--remote-memory")) {
            std::fprintf(stderr, "bench_mpi: --remote-memory=home_messages or --remote-memory=rma, not %s\n", argv[i]);
            return 2;
        } else args.push_back(argv[i]);
    }
    int n = int(args.size());
    int rc = 0;
    // Rank 0 runs the benchmarks on core 0; the other ranks serve (and exit
    // when rank 0's program ends).
    taco::run(tacomesh::mpi::config{.on_host = on_host, .remote_memory = remote_memory},
              [&] { rc = bench::run_main(n, args.data(), register_all, "bench_mpi"); });
    return rc;
}
