// tacomesh collective benchmarks (Google Benchmark): taco::reduce over object
// groups, each figure paired with taco's own polling round trip measured in
// the same run, alternating (see bench/README.md, "Collectives (reduce)").
//
// Why the round trip is the baseline: a reduce over two members on two cores
// is, at heart, one message down the tree and one back up, i.e. a round
// trip. The round trip invokes the same method on the same member object, so
// the ratio reduce / round trip is what the collective machinery (helpers,
// merging, the extra local messages) costs on top of the unavoidable hops,
// and it survives the host moving the vCPUs, which absolute times do not.
//
//   reduce_2core                         a. 2 members, one per core, 2 cores
//   reduce_scaling/<tree>/members:<n>    b. n = 2..64 members, one per core
//                                           (n > 2: oversubscribed on 2 CPUs)
//   reduce_model                         c. per-hop and per-member costs
//                                           measured here, and the modelled
//                                           reduce on 48 and 1024 cores
//   reduce_vector/count:<n>              d. 2 members on 2 cores, each a
//                                           vector of n doubles summed
//                                           elementwise (taco::elementwise),
//                                           against fetching one member's
//                                           vector (a sync returning it)
//
// Counters: base_ns (round trip) / ours_ns (reduce), medians over batches;
// ratio_median (median of the per-pair ratios ours/base), ratio_p10/p90;
// depth (tree depth, edges); oversubscribed = 1 when cores > CPUs. The model's
// counters are described at reduce_model(). BENCH_SMOKE=1 shrinks the sizes.
#include <tacomesh/posix.hpp>

#include <benchmark/benchmark.h>
#include <sched.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <paired.hpp>

namespace {

namespace posix = tacomesh::posix;
using bench::clock_type;
using bench::median;
using bench::ns_since;
using bench::smoke;
using bench::time_batch;
using bench::available_cpus;

// ---- members and the operations timed ------------------------------------------

/// The group member: a trivial method, so the figures are the collective's.
struct member {
    double v = 0;
    explicit member(double value) : v(value) {}
    double value() const { return v; }
};

using members_t = std::vector<taco::global_ptr<member>>;

/// Rank r holds r + 1, so a sum over n members is n(n+1)/2: exact in a
/// double, and a lost or doubled contribution changes it.
double expected_sum(std::uint32_t n) { return double(n) * (n + 1) / 2; }

/// Member r on core r.
members_t one_member_per_core(std::uint32_t n) {
    members_t m;
    for (std::uint32_t r = 0; r < n; ++r) m.push_back(taco::new_on<member>(taco::core_id(r), double(r + 1)).get());
    return m;
}
/// n members, all on `core` (ranks still hold 1..n).
members_t members_on_core(taco::core_id core, std::uint32_t n) {
    members_t m;
    for (std::uint32_t r = 0; r < n; ++r) m.push_back(taco::new_on<member>(core, double(r + 1)).get());
    return m;
}
void destroy(const members_t& m) {
    for (auto p : m) taco::delete_on(p);
}

/// One reduce, as an application writes it: sum of every member's value,
/// into a future on the calling core.
double reduce_once(taco::group<member> g) {
    taco::future<double> f;
    taco::reduce(g, taco::m2f(&member::value), std::plus<double>{}, f);
    return f.get();
}

/// The floor: one polling round trip to a member, the same method.
double round_trip(taco::global_ptr<member> p) {
    taco::future<double> f;
    taco::async(p, taco::m2f(&member::value), f);
    return f.get();
}



// ---- trees ----------------------------------------------------------------------

struct shape {
    const char* name;
    taco::topology topo;
};
const shape shapes[] = {{"flat", taco::topology::flat()},
                        {"kary2", taco::topology::kary(2)},
                        {"kary4", taco::topology::kary(4)},
                        {"binomial", taco::topology::binomial()}};

/// Edges from the root to the deepest member, of the tree make_group builds.
std::uint32_t tree_depth(std::uint32_t n, taco::topology t) {
    const auto children = taco::detail::tree_layout(n, t);
    // Pre-order numbering: a parent's rank is below its children's, so one
    // forward pass sees every parent's depth before its children.
    std::vector<std::uint32_t> depth(n, 0);
    std::uint32_t deepest = 0;
    for (std::uint32_t v = 0; v < n; ++v)
        for (std::uint32_t c : children[v]) deepest = std::max(deepest, depth[c] = depth[v] + 1);
    return deepest;
}

// ---- a. 2 members on 2 cores vs the round trip ------------------------------------

using bench::sizes;
// ~0.3 ms (round trip) + ~0.6 ms (reduce) per pair: rarely split by a host
// latency shift, long against a clock read.
sizes two_core_sizes() { return smoke() ? sizes{4, 100} : sizes{600, 1000}; }

void reduce_2core(benchmark::State& state) {
    const sizes sz = two_core_sizes();
    posix::run_report report;
    const posix::config cfg{.cores = 2, .idle = posix::idle_policy::poll, .report = &report};
    bench::paired_series series;
    std::size_t wrong = 0;
    taco::run(cfg, [&] {
        const members_t members = one_member_per_core(2);
        const auto g = taco::make_group(members, taco::topology::binomial());
        const auto base = [&] { return time_batch(sz.batch, [&] { return round_trip(members[1]); }, 2.0, wrong); };
        const auto ours = [&] { return time_batch(sz.batch, [&] { return reduce_once(g); }, expected_sum(2), wrong); };
        for (auto _ : state) series.run_pair(state, base, ours);
        taco::destroy_group(g);
        destroy(members);
    });
    series.report_latency(state, report.oversubscribed);
    state.counters["members"] = 2;
    state.counters["depth"] = tree_depth(2, taco::topology::binomial());
    if (wrong) bench::fail(state, "reduce_2core: wrong reduction or round-trip result");
}

// ---- b. group size and tree shape -------------------------------------------------

int scaling_pairs() { return smoke() ? 2 : 100; }
double scaling_batch_ns() { return smoke() ? 2e5 : 2e6; }

void reduce_scaling(benchmark::State& state, shape s, std::uint32_t n) {
    posix::run_report report;
    const posix::config cfg{.cores = taco::core_id(n), .idle = posix::idle_policy::poll, .report = &report};
    bench::paired_series series;
    std::size_t wrong = 0, rt_batch = 0, reduce_batch = 0;
    taco::run(cfg, [&] {
        const members_t members = one_member_per_core(n);
        const auto g = taco::make_group(members, s.topo);
        const auto rt = [&] { return round_trip(members[1]); };
        const auto red = [&] { return reduce_once(g); };
        rt_batch = bench::calibrate(rt, scaling_batch_ns() / 2);
        reduce_batch = bench::calibrate(red, scaling_batch_ns() / 2);
        const auto base = [&] { return time_batch(rt_batch, rt, 2.0, wrong); };
        const auto ours = [&] { return time_batch(reduce_batch, red, expected_sum(n), wrong); };
        for (auto _ : state) series.run_pair(state, base, ours);
        taco::destroy_group(g);
        destroy(members);
    });
    series.report_latency(state, report.oversubscribed);
    state.counters["members"] = n;
    state.counters["depth"] = tree_depth(n, s.topo);
    state.counters["root_children"] = double(taco::detail::tree_layout(n, s.topo)[0].size());
    state.counters["batch_base"] = double(rt_batch);
    state.counters["batch_ours"] = double(reduce_batch);
    if (report.oversubscribed)
        state.SetLabel("oversubscribed: " + std::to_string(n) + " cores (threads) on fewer CPUs");
    if (wrong) bench::fail(state, "reduce_scaling: wrong reduction or round-trip result");
}

// ---- c. the model -------------------------------------------------------------------
//
// Two costs, measured here in one 2-core run, alternating:
//   m (member_ns): CPU time one more member adds to a reduce: forwarding to
//     it, its helper, its method, its result message and the merge. From a
//     group whose members all sit on core 0 (no hop at all):
//       m = (local_N - local_1) / (N - 1)
//   h (hop_ns): one message from core to core, fitted so that the model
//     reproduces the measured 2-core reduce (one member forwarded, one hop
//     down, one hop up):  reduce_2 = local_1 + m + 2h.
//     (hop_rt_ns = round trip / 2 is printed next to it as a sanity check.)
// The model of a reduce over the tree make_group builds, one member per core
// on a machine with a CPU per core, is the fixed cost of a one-member reduce
// plus the critical path of the tree:
//   T(n, tree) = local_1 + C(root)
//   C(leaf)    = 0
//   C(v)       = max over v's children c_i, i = 1, 2, ... in the order v
//                forwards them, of  i*m + 2h + C(c_i)
// i.e. per level of the tree (depth of them on the critical path) one hop
// down and one up (2h), plus the serial work of each node on the path: it
// forwards to its children one after the other. For a tree of depth d and
// fan-out k this is about local_1 + d * (2h + k*m).
// It ignores what 2 CPUs cannot show: longer and unequal hops on a large
// mesh, and contention for the root's channels; see the README.

struct model_params {
    double fixed_ns;  // local_1
    double hop_ns;    // h
    double member_ns; // m
};

enum class send_order {
    rank,         // what collective_ops::reduce does: children in rank order
    largest_first // the critical child first (what a latency-optimal tree would do)
};

double modelled_reduce_ns(std::uint32_t n, taco::topology t, const model_params& p,
                          send_order order = send_order::rank) {
    const auto children = taco::detail::tree_layout(n, t);
    std::vector<double> path(n, 0.0); // C(v)
    // Children have higher ranks than their parent (pre-order): go backwards.
    for (std::uint32_t v = n; v-- > 0;) {
        std::vector<double> sub;
        for (std::uint32_t c : children[v]) sub.push_back(path[c]);
        if (order == send_order::largest_first) std::sort(sub.begin(), sub.end(), std::greater<>());
        for (std::size_t i = 0; i < sub.size(); ++i)
            path[v] = std::max(path[v], double(i + 1) * p.member_ns + 2 * p.hop_ns + sub[i]);
    }
    return p.fixed_ns + path[0];
}

// The paper's figure (CCI, reduce on the 48-core SCC, polling): 11k cycles
// at 800 MHz. Our target for the modelled 48-core reduce.
constexpr double paper_48_us = 11'000 / 800.0;
constexpr double target_48_us = 3.0;
constexpr std::uint32_t model_cores[] = {48, 1024};

struct model_sizes {
    int iterations;
    std::size_t batch;       // round trips, 2-core reduces, 1-member reduces
    std::size_t local_batch; // N-member reduces (N times the work)
};
model_sizes model_sizes_now() { return smoke() ? model_sizes{4, 100, 10} : model_sizes{300, 1000, 60}; }
constexpr std::uint32_t local_members = 32;

void reduce_model(benchmark::State& state) {
    const model_sizes sz = model_sizes_now();
    posix::run_report report;
    const posix::config cfg{.cores = 2, .idle = posix::idle_policy::poll, .report = &report};
    enum { rt, reduce2, local1, localn, kinds };
    std::vector<std::array<double, kinds>> samples;
    std::size_t wrong = 0;
    taco::run(cfg, [&] {
        const members_t pair = one_member_per_core(2);
        const members_t local = members_on_core(0, local_members);
        const auto g2 = taco::make_group(pair, taco::topology::binomial());
        const auto g1 = taco::make_group(std::span(local).first(1), taco::topology::binomial());
        const auto gn = taco::make_group(local, taco::topology::binomial());
        const std::array<std::function<double()>, kinds> measure{
            [&] { return time_batch(sz.batch, [&] { return round_trip(pair[1]); }, 2.0, wrong); },
            [&] { return time_batch(sz.batch, [&] { return reduce_once(g2); }, expected_sum(2), wrong); },
            [&] { return time_batch(sz.batch, [&] { return reduce_once(g1); }, expected_sum(1), wrong); },
            [&] {
                return time_batch(sz.local_batch, [&] { return reduce_once(gn); }, expected_sum(local_members),
                                  wrong);
            },
        };
        for (auto _ : state) {
            // All four kinds back to back, the first one rotating: a host
            // latency shift then hits each kind equally often.
            std::array<double, kinds> t{};
            for (std::size_t k = 0; k < kinds; ++k) {
                const std::size_t j = (k + samples.size()) % kinds;
                t[j] = measure[j]();
            }
            samples.push_back(t);
            state.SetIterationTime(t[reduce2] * 1e-9);
        }
        for (auto g : {g2, g1, gn}) taco::destroy_group(g);
        destroy(pair);
        destroy(local);
    });

    // Parameters and model per iteration (from batches measured together),
    // then medians: a ratio-like figure, robust to the host's phases.
    auto column = [&](auto&& f) {
        std::vector<double> v;
        for (const auto& s : samples) v.push_back(f(s));
        return median(v);
    };
    auto params = [](const std::array<double, kinds>& s) {
        const double m = (s[localn] - s[local1]) / (local_members - 1);
        return model_params{s[local1], (s[reduce2] - s[local1] - m) / 2, m};
    };
    auto& c = state.counters;
    c["rt_ns"] = column([](const auto& s) { return s[rt]; });
    c["reduce2_ns"] = column([](const auto& s) { return s[reduce2]; });
    c["ratio_reduce2_rt"] = column([](const auto& s) { return s[reduce2] / s[rt]; });
    c["local1_ns"] = column([](const auto& s) { return s[local1]; });
    c["localN_ns"] = column([](const auto& s) { return s[localn]; });
    c["local_members"] = local_members;
    c["hop_ns"] = column([&](const auto& s) { return params(s).hop_ns; });
    c["hop_rt_ns"] = column([](const auto& s) { return s[rt] / 2; });
    c["member_ns"] = column([&](const auto& s) { return params(s).member_ns; });
    for (std::uint32_t n : model_cores) {
        const std::string cores = std::to_string(n);
        for (const shape& sh : shapes) {
            const std::string key = std::string(sh.name) + "_" + cores;
            c[key + "_us"] = column([&](const auto& s) { return modelled_reduce_ns(n, sh.topo, params(s)) / 1e3; });
            c[key + "_depth"] = tree_depth(n, sh.topo);
        }
        c["binomial_largest_first_" + cores + "_us"] = column([&](const auto& s) {
            return modelled_reduce_ns(n, taco::topology::binomial(), params(s), send_order::largest_first) / 1e3;
        });
    }
    c["paper_48_us"] = paper_48_us;
    c["target_48_us"] = target_48_us;
    c["oversubscribed"] = report.oversubscribed;
    if (wrong) bench::fail(state, "reduce_model: wrong reduction or round-trip result");
}

// ---- d. reductions of vectors ---------------------------------------------------------
//
// The member holds n doubles, all r + 1, and returns a view of them (its
// elements are copied once as the result is sent: into the staging area, or
// into the vector handed over by pointer, runtime/bulk.hpp); the root's
// helper sums them into the vector it was given. The baseline moves the same bytes one way: a sync that returns
// member 1's view (arriving as a vector), so the ratio is what the reduce
// adds to the transfer. run_allreduce_compare.sh sets the same n and batch
// against MPI_Allreduce of n doubles.

struct vector_member {
    std::vector<double> data;
    vector_member(std::size_t n, double value) : data(n, value) {}
    taco::view<double> values() const { return taco::view<double>(data); }
};

/// Operations per batch (a batch of about 0.5 ms or more) and batches, for n
/// doubles; run_allreduce_compare.sh gives mpi_allreduce the same (and
/// checks the batch counter against it).
std::size_t vector_batch(std::size_t n) { return smoke() ? 1 : std::max<std::size_t>(1, 65536 / n); }
int vector_pairs(std::size_t n) { return smoke() ? 2 : n >= (1u << 20) ? 30 : 100; }

/// A sum of vectors holding 1 and 2 everywhere holds 3 everywhere: the
/// ends and the middle are checked (a missing or misplaced piece shifts them).
bool all_threes(const std::vector<double>& v, std::size_t n) {
    return v.size() == n && (n == 0 || (v.front() == 3.0 && v[n / 2] == 3.0 && v.back() == 3.0));
}

void reduce_vector(benchmark::State& state, std::size_t n) {
    posix::run_report report;
    const posix::config cfg{.cores = 2, .idle = posix::idle_policy::poll, .report = &report};
    bench::paired_series series;
    std::size_t wrong = 0;
    const std::size_t batch = vector_batch(n);
    taco::run(cfg, [&] {
        std::vector<taco::global_ptr<vector_member>> members;
        for (taco::core_id c = 0; c < 2; ++c) members.push_back(taco::new_on<vector_member>(c, n, double(c + 1)).get());
        const auto g = taco::make_group(members, taco::topology::binomial());
        const auto plus = taco::elementwise(std::plus<double>{});
        const auto base = [&] {
            return time_batch(batch, [&] { return taco::sync(members[1], &vector_member::values).size() == n; }, 1.0, wrong);
        };
        const auto ours = [&] {
            return time_batch(batch, [&] { return all_threes(taco::reduce(g, taco::m2f(&vector_member::values), plus).get(), n); },
                              1.0, wrong);
        };
        for (auto _ : state) series.run_pair(state, base, ours);
        taco::destroy_group(g);
        for (auto p : members) taco::delete_on(p);
    });
    series.report_latency(state, report.oversubscribed);
    state.counters["count"] = double(n);
    state.counters["bytes"] = double(n * sizeof(double));
    state.counters["batch"] = double(batch);
    if (wrong) bench::fail(state, "reduce_vector: wrong sum or transfer");
}

void register_all() {
    benchmark::RegisterBenchmark("reduce_2core", reduce_2core)
        ->Iterations(two_core_sizes().pairs)
        ->UseManualTime()
        ->Unit(benchmark::kNanosecond);
    for (const shape& s : shapes) {
        for (std::uint32_t n : {2u, 4u, 8u, 16u, 32u, 64u}) {
            // More cores than CPUs share them (idle threads yield): the name
            // says so, so nobody reads it as a figure of a real mesh.
            std::string name = "reduce_scaling/" + std::string(s.name) + "/members:" + std::to_string(n);
            if (n > available_cpus()) name += "/oversubscribed";
            benchmark::RegisterBenchmark(name.c_str(), reduce_scaling, s, n)
                ->Iterations(scaling_pairs())
                ->UseManualTime()
                ->Unit(benchmark::kMicrosecond);
        }
    }
    for (std::size_t n : {std::size_t(64), std::size_t(4096), std::size_t(1) << 20}) {
        const std::string name = "reduce_vector/count:" + std::to_string(n);
        benchmark::RegisterBenchmark(name.c_str(), reduce_vector, n)
            ->Iterations(vector_pairs(n))
            ->UseManualTime()
            ->Unit(benchmark::kMicrosecond);
    }
    benchmark::RegisterBenchmark("reduce_model", reduce_model)
        ->Iterations(model_sizes_now().iterations)
        ->UseManualTime()
        ->Unit(benchmark::kNanosecond);
}

} // namespace

int main(int argc, char** argv) { return bench::run_main(argc, argv, &register_all, "bench_collective"); }
