// The RDF app's benchmarks (apps/rdf/README.md has the table; compare.py
// runs this and the peers, pyoxigraph and owlrl, in the same run):
//
//   load/lubm1_inferred            N-Triples .gz -> indexed store (bytes_per_triple counter)
//   query/qNN                      one core: parse, plan, execute, materialise every term as TSV
//   sparql11/sNN_feature           one core, a SPARQL 1.1 feature query (data/queries11) through the
//                                  algebra: parse, evaluate, materialise as query/qNN
//   data/qNN/{threads,processes}/cores:C   one query split over C cores (latency)
//   data5/qNN/...                          the same on LUBM(5) (renamed copies)
//   task/{threads,processes}/cores:C       the 14 queries x 100 handed out by the pool (queries_per_s)
//   infer/{threads,processes}/cores:C      lubm1-raw + univ-bench.owl closed in rounds
//
// Cores above the CPU count are oversubscribed (labelled). Speed-ups are
// ratios of C-core to 1-core entries of the same run: run with
// --benchmark_enable_random_interleaving=true --benchmark_repetitions=N so
// that the host's vCPU placement moves both sides alike.
//   (BENCH_SMOKE=1: fewer repeats)
#include <benchmark/benchmark.h>
#include <paired.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include <rdf/engine.hpp>
#include <rdf/inference.hpp>
#include <rdf/lubm_scale.hpp>
#include <rdf/query_engine.hpp>
#include <rdf/results.hpp>
#include <rdf/sparql_algebra.hpp>
#include <rdf/sparql_engine.hpp>

namespace {

const bool smoke = std::getenv("BENCH_SMOKE") != nullptr;
const std::string data = RDF_DATA;

const std::vector<std::string>& queries() {
    static const std::vector<std::string> q = rdf::lubm_queries(data);
    return q;
}

rdf::store& inferred() {
    static rdf::store s = [] {
        rdf::store st;
        st.load_file(data + "/lubm1-inferred.nt.gz");
        return st;
    }();
    return s;
}

/// LUBM(5) by renamed copies (lubm_scale.hpp): where a query has more to share out.
rdf::store& inferred5() {
    static rdf::store s = [] {
        rdf::store st;
        std::string five = rdf::lubm_copies(rdf::read_text_file(data + "/lubm1-inferred.nt.gz"), 5);
        st.load_text(five, "lubm5");
        return st;
    }();
    return s;
}

void label(benchmark::State& state, taco::core_id cores) {
    if (cores > std::thread::hardware_concurrency())
        state.SetLabel("oversubscribed: " + std::to_string(cores) + " cores on " +
                       std::to_string(std::thread::hardware_concurrency()) + " CPUs");
}

void load(benchmark::State& state) {
    std::uint64_t triples = 0;
    double bytes = 0;
    for (auto _ : state) {
        rdf::store s;
        s.load_file(data + "/lubm1-inferred.nt.gz");
        triples = s.triple_count();
        bytes = double(s.bytes());
    }
    state.counters["triples"] = double(triples);
    state.counters["bytes_per_triple"] = bytes / double(triples);
}

void query(benchmark::State& state, int q) {
    const rdf::store_view v = inferred().view();
    std::string out;
    std::size_t rows = 0;
    for (auto _ : state) {
        rows = rdf::answer_as_tsv(queries()[std::size_t(q)], v, out);
        benchmark::DoNotOptimize(out.data());
    }
    state.counters["rows"] = double(rows);
}

/// The SPARQL 1.1 feature queries (data/queries11: a file per feature, over
/// LUBM), by file name in order.
const std::vector<std::pair<std::string, std::string>>& queries11() {
    static const std::vector<std::pair<std::string, std::string>> q = [] {
        std::vector<std::pair<std::string, std::string>> out;
        for (const auto& e : std::filesystem::directory_iterator(data + "/queries11"))
            if (e.path().extension() == ".rq") out.emplace_back(e.path().stem().string(), rdf::read_text_file(e.path().string()));
        std::sort(out.begin(), out.end());
        return out;
    }();
    return q;
}

/// As query/qNN for a SPARQL 1.1 query, through the algebra (sparql_engine.hpp):
/// parse, evaluate, materialise every term (TSV; ASK's boolean; CONSTRUCT's N-Triples).
void sparql11(benchmark::State& state, std::size_t q) {
    const rdf::store_view v = inferred().view();
    std::string out;
    std::size_t rows = 0;
    for (auto _ : state) {
        const rdf::sparql::result r = rdf::sparql::evaluate(rdf::sparql::parse_sparql(queries11()[q].second), v);
        const rdf::sparql::result_terms keys(v.dict, r.pool);
        out.clear();
        using form = rdf::sparql::query_tree::form;
        if (r.what == form::ask) {
            rdf::append_boolean(out, r.boolean, "tsv");
            rows = r.boolean;
        } else if (r.what == form::select) {
            rdf::append_tsv(out, r.rows, r.names, keys);
            rows = r.rows.rows();
        } else {
            rdf::append_ntriples(out, r.triples, keys);
            rows = r.triples.size();
        }
        benchmark::DoNotOptimize(out.data());
    }
    state.counters["rows"] = double(rows);
}

void data_parallel(benchmark::State& state, rdf::store& (*dataset)(), int q, rdf::execution_mode mode, taco::core_id cores) {
    label(state, cores);
    std::size_t rows = 0, bytes = 0;
    // The rows decoded to TSV (as query/qNN has them), read where the workers left them.
    const rdf::tsv_sink sink = [&](std::string_view s) { bytes += s.size(); };
    rdf::with_cluster(dataset(), {cores, mode}, [&](rdf::rdf_cluster& c) {
        c.run_split(queries()[std::size_t(q)], sink); // the METIS partition is made once, outside the timing
        for (auto _ : state) {
            const auto t0 = std::chrono::steady_clock::now();
            rows = c.run_split(queries()[std::size_t(q)], sink).answer.rows.rows();
            state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
    });
    state.counters["rows"] = double(rows);
}

void task_parallel(benchmark::State& state, rdf::execution_mode mode, taco::core_id cores) {
    label(state, cores);
    const std::uint64_t repeat = smoke ? 2 : 100; // the paper scaled its pools by 100 too
    std::uint64_t done = 0;
    double seconds = 0;
    rdf::with_cluster(inferred(), {cores, mode}, [&](rdf::rdf_cluster& c) {
        c.run_workload(queries(), 1);
        for (auto _ : state) {
            const rdf::workload_result w = c.run_workload(queries(), repeat);
            state.SetIterationTime(w.seconds);
            done += w.queries;
            seconds += w.seconds;
        }
    });
    state.counters["queries_per_s"] = double(done) / seconds;
}

void infer(benchmark::State& state, rdf::execution_mode mode, taco::core_id cores) {
    label(state, cores);
    std::uint64_t added = 0;
    for (auto _ : state) {
        rdf::store s;
        s.load_file(data + "/lubm1-raw.nt.gz");
        s.load_file(data + "/univ-bench.owl");
        if (cores == 1) {
            const auto t0 = std::chrono::steady_clock::now();
            added = rdf::infer(s).added;
            state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        } else {
            rdf::with_cluster(s, {cores, mode}, [&](rdf::rdf_cluster& c) {
                const rdf::inference_report r = c.infer(s);
                added = r.added;
                state.SetIterationTime(r.seconds);
            });
        }
    }
    state.counters["added"] = double(added);
}

const int registered = [] {
    benchmark::RegisterBenchmark("load/lubm1_inferred", load)->Unit(benchmark::kMillisecond)->Iterations(smoke ? 1 : 5);
    for (int q = 0; q < 14; ++q) {
        char name[32];
        std::snprintf(name, sizeof name, "query/q%02d", q + 1);
        auto* b = benchmark::RegisterBenchmark(name, query, q)->Unit(benchmark::kMicrosecond);
        if (smoke) b->Iterations(3); // the library's half second each was 17 s of the smoke run
    }
    for (std::size_t q = 0; q < queries11().size(); ++q) {
        auto* b = benchmark::RegisterBenchmark(("sparql11/" + queries11()[q].first).c_str(), sparql11, q)
                      ->Unit(benchmark::kMicrosecond);
        if (smoke) b->Iterations(3);
    }
    const std::vector<taco::core_id> core_counts = smoke ? std::vector<taco::core_id>{1, 2} : std::vector<taco::core_id>{1, 2, 4};
    for (auto mode : {rdf::execution_mode::threads, rdf::execution_mode::processes}) {
        const std::string m = rdf::name(mode);
        // A query's core counts side by side: a speed-up is the ratio of
        // neighbours, measured seconds apart, not minutes.
        for (auto [set, dataset, iterations] : {std::tuple{"data", &inferred, smoke ? 5 : 300}, std::tuple{"data5", &inferred5, 100}}) {
            if (smoke && dataset == &inferred5) continue;
            for (int q : {2, 6, 8, 9, 14})
                for (taco::core_id cores : core_counts) {
                    char name[64];
                    std::snprintf(name, sizeof name, "%s/q%02d/%s/cores:%u", set, q, m.c_str(), unsigned(cores));
                    benchmark::RegisterBenchmark(name, data_parallel, dataset, q - 1, mode, cores)
                        ->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(iterations);
                }
        }
        for (taco::core_id cores : core_counts)
            benchmark::RegisterBenchmark(("task/" + m + "/cores:" + std::to_string(cores)).c_str(), task_parallel, mode, cores)
                ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(smoke ? 1 : 10);
        for (taco::core_id cores : core_counts)
            benchmark::RegisterBenchmark(("infer/" + m + "/cores:" + std::to_string(cores)).c_str(), infer, mode, cores)
                ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(smoke ? 1 : 3);
    }
    return 0;
}();

} // namespace

int main(int argc, char** argv) { return bench::run_main(argc, argv, nullptr, "bench_rdf"); }
