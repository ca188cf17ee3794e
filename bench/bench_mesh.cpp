// MESH shared-object benchmarks (Google Benchmark): what a proxy's acquire
// and release cost, per consistency controller, in both POSIX execution
// modes, each figure a ratio against a baseline measured in the same run in
// alternating batches (see bench/README.md, "Shared objects").
//
//   reader_acquire/<mode>/<controller>
//       a. { auto r = mesh::read(p); load r->x; } of an unmodified 64-byte
//          object, vs a volatile load of the same field of a plain object.
//          ratio = ours / base time; target: <= 10 ns for
//          Timestamp and Broadcast.
//   writer_release/<mode>/<controller>/bytes:<n>
//       b. { auto w = mesh::write(p); ++one byte; } (acquire, modify,
//          release) of an n-byte object, n = 64 B (a plain object), 4 KB,
//          64 KB, 1 MB (a SharingAware object whose extra array holds the n
//          bytes), vs std::memcpy of n bytes between two warm buffers: the
//          floor of a write-back in process mode, where it is a memcpy of
//          the object's view into the canonical shared copy.
//          ratio = memcpy time / release time (bandwidth ratio, higher is
//          better); target: >= 0.7 for large objects.
//   broadcast_release/<mode>/cores:<n>[/oversubscribed]
//       c. one Broadcast release of a modified 64-byte object (write-back +
//          an invalidation at_each over all n cores, waited for), n = 2, 4,
//          8, 16, vs taco's own round trip (taco::sync to core 1 of a trivial
//          function). n > CPUs is oversubscribed: labelled, and "/oversubscribed"
//          in the name.
//   broadcast_overlap/processes/bytes:<n>
//       d. diagnostic: Timestamp, Broadcast and Overlapped releases of n-byte
//          objects and the round trip, in rotation; how much of the
//          broadcast is hidden behind the write-back's copy (see d. below).
//   one_change/processes/<controller>/<dcm|ncm|wt>/bytes:<n>
//       e. core 0 sets one value of an n-byte mesh::chunked_map (4 MiB; a
//          different chunk each time) and releases, then core 1 reads it,
//          vs the same with a 4 KB SharingAware object. ratio = ours / base
//          time; target: <= 2 (only the changed chunk moves).
//
// <mode> is threads (coherent memory: invalidate / write-back are fences) or
// processes (a forked process per core, cached memory emulated: a
// write-back / invalidation is a memcpy between the core's private view and
// the canonical shared copy).
//
// Counters: base_ns / ours_ns (per operation, medians over batches),
// ratio_median / ratio_p10 / ratio_p90 (per-pair ratios, as defined above),
// oversubscribed; and MESH's event counts per timed operation on the writer
// core (invalidations_per_op, write_backs_per_op, written_back_bytes_per_op:
// the bytes copied, 0 in thread mode; written_back_range_bytes_per_op: the
// ranges written back, copied or not; broadcasts_per_op); for b, copied =
// whether the release copied anything (0: the ratio is no bandwidth ratio) and, for c, notifications_per_op summed over the other
// cores (n - 1 when every core saw every broadcast). BENCH_SMOKE=1 shrinks
// every size.
#include <tacomesh/posix.hpp>
#include <mesh/mesh.hpp>

#include <benchmark/benchmark.h>
#include <sched.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include <paired.hpp>

namespace {

namespace posix = tacomesh::posix;
namespace ctl = mesh::controllers;
using bench::clock_type;
using bench::ns_since;
using bench::smoke;
using bench::time_batch;
using bench::available_cpus;

// ---- objects --------------------------------------------------------------------

/// The small object: one cache line, a field to read and a byte to modify.
struct line_object {
    std::uint64_t x = 42;
    std::uint8_t b0 = 0;
    std::uint8_t pad[55]{};
    std::uint8_t first() const { return b0; }
};
static_assert(sizeof(line_object) == 64);

/// The large object: n bytes of extra memory, written back / invalidated
/// with the object (SharingAware). mesh::allocate needs a TACO core: made
/// inside taco::run.
struct array_object : mesh::sharing_aware<array_object> {
    std::uint8_t* data;
    std::size_t n;
    explicit array_object(std::size_t bytes)
        : data(static_cast<std::uint8_t*>(mesh::allocate(bytes))), n(bytes) {
        std::memset(data, 0, n); // every page touched before the first write-back
    }
    ~array_object() { mesh::deallocate(data); }
    array_object(const array_object&) = delete;
    array_object& operator=(const array_object&) = delete;
    template <class V>
    void extra_ranges(V&& visit) const {
        visit(data, n);
    }
    std::uint8_t first() const { return data[0]; }
    using shared_members = mesh::members<&array_object::data, &array_object::n>; // data: listed in extra_ranges
};

/// Modify one byte through the writer (operator-> marks the object modified).
void bump(mesh::writer<line_object>& w) { ++w->b0; }
void bump(mesh::writer<array_object>& w) { ++w->data[0]; }

/// On another core: the first byte as that core reads it (the write-back and
/// invalidation check, valid in process mode where memory is private).
template <class T>
std::uint8_t first_byte(mesh::sharing_ptr<T> p) {
    auto r = mesh::read(p);
    return r->first();
}
std::uint64_t notifications_here() { return mesh::events().notifications; }
int trivial() { return 1; }

// ---- helpers --------------------------------------------------------------------

const char* mode_name(posix::execution_mode m) {
    return m == posix::execution_mode::threads ? "threads" : "processes";
}

/// n random 64-bit values (the same for a seed: baseline and ours use the same ones).
std::vector<std::uint64_t> random_keys(std::size_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::uint64_t> k(n);
    for (auto& x : k) x = rng();
    return k;
}

/// Core 0's MESH event counts between two points, per operation.
struct event_delta {
    mesh::event_counts before;
    void start() { before = mesh::events(); }
    void report(benchmark::State& state, std::size_t ops) const {
        const mesh::event_counts& e = mesh::events();
        const double n = ops ? double(ops) : 1.0;
        state.counters["invalidations_per_op"] = double(e.invalidations - before.invalidations) / n;
        state.counters["write_backs_per_op"] = double(e.write_backs - before.write_backs) / n;
        state.counters["written_back_bytes_per_op"] = double(e.written_back_bytes - before.written_back_bytes) / n;
        state.counters["written_back_range_bytes_per_op"] =
            double(e.written_back_range_bytes - before.written_back_range_bytes) / n;
        state.counters["broadcasts_per_op"] = double(e.broadcasts - before.broadcasts) / n;
    }
};

/// Run the alternating (baseline, ours) batch pairs and report core 0's
/// event counts per operation; returns the operations run.
template <class Base, class Ours>
std::size_t run_paired(benchmark::State& state, bench::paired_series& series, Base& base_op, std::size_t base_batch,
                       Ours& ours_op, std::size_t ours_batch) {
    event_delta ev;
    ev.start();
    for (auto _ : state)
        series.run_pair(state, [&] { return time_batch(base_batch, base_op); },
                        [&] { return time_batch(ours_batch, ours_op); });
    const std::size_t ops = std::size_t(state.iterations()) * (ours_batch + 1); // + the untimed first of each batch
    ev.report(state, ops);
    return ops;
}

void label_oversubscribed(benchmark::State& state, const posix::run_report& report, unsigned cores,
                          posix::execution_mode mode) {
    if (report.oversubscribed)
        state.SetLabel("oversubscribed: " + std::to_string(cores) + " cores (" + mode_name(mode) + ") on " +
                       std::to_string(available_cpus()) + " CPUs");
}

// ---- a. reader acquire + release of an unmodified object ---------------------------

constexpr double reader_target_ns = 10;
int reader_pairs() { return smoke() ? 3 : 200; }
double reader_batch_ns() { return smoke() ? 2e4 : 5e5; }

template <class C>
void reader_acquire(benchmark::State& state, posix::execution_mode mode) {
    posix::run_report report;
    const posix::config cfg{.cores = 2, .idle = posix::idle_policy::poll, .report = &report, .mode = mode};
    bench::paired_series series;
    std::size_t ops = 0, base_batch = 0, ours_batch = 0;
    std::uint64_t sum = 0;
    taco::run(cfg, [&] {
        auto p = mesh::make_shared_object<line_object, C>();
        line_object plain;
        const volatile std::uint64_t* plain_x = &plain.x;
        const auto base_op = [&] { sum += *plain_x; };
        const auto ours_op = [&] {
            auto r = mesh::read(p);
            sum += *static_cast<const volatile std::uint64_t*>(&r->x);
        };
        base_batch = bench::calibrate(base_op, reader_batch_ns());
        ours_batch = bench::calibrate(ours_op, reader_batch_ns());
        ops = run_paired(state, series, base_op, base_batch, ours_op, ours_batch);
        mesh::destroy_shared_object(p);
    });
    benchmark::DoNotOptimize(sum);
    series.report_latency(state, report.oversubscribed);
    state.counters["target_ns"] = reader_target_ns;
    state.counters["batch_base"] = double(base_batch);
    state.counters["batch_ours"] = double(ours_batch);
    if (sum == 0) bench::fail(state, "reader_acquire: the loads read nothing");
}

// ---- b. writer acquire + modify + release, vs memcpy of the same size ----------------

constexpr std::size_t writer_sizes[] = {64, 4096, 65536, std::size_t(1) << 20};
int writer_pairs() { return smoke() ? 2 : 100; }
double writer_batch_ns() { return smoke() ? 2e4 : 5e5; }

template <class C, class T, class... Args>
void writer_release_of(benchmark::State& state, posix::execution_mode mode, std::size_t bytes, Args... args) {
    posix::run_report report;
    const posix::config cfg{.cores = 2, .idle = posix::idle_policy::poll, .report = &report, .mode = mode};
    bench::paired_series series;
    std::size_t ops = 0, base_batch = 0, ours_batch = 0;
    std::uint8_t seen = 0, expected = 0;
    taco::run(cfg, [&] {
        auto p = mesh::make_shared_object<T, C>(args...);
        auto* src = static_cast<std::uint8_t*>(std::aligned_alloc(64, bytes));
        auto* dst = static_cast<std::uint8_t*>(std::aligned_alloc(64, bytes));
        std::memset(src, 1, bytes);
        std::memset(dst, 0, bytes);
        const auto base_op = [&] {
            std::memcpy(dst, src, bytes);
            benchmark::ClobberMemory();
        };
        const auto ours_op = [&] {
            auto w = mesh::write(p);
            bump(w);
        };
        base_batch = bench::calibrate(base_op, writer_batch_ns());
        ours_batch = bench::calibrate(ours_op, writer_batch_ns());
        ops = run_paired(state, series, base_op, base_batch, ours_op, ours_batch);
        // Every release wrote the byte back: core 1 reads the last value.
        expected = mesh::read(p)->first();
        seen = taco::sync(taco::core_id(1), &first_byte<T>, p);
        std::free(src);
        std::free(dst);
        mesh::destroy_shared_object(p);
    });
    series.report_rate(state, report.oversubscribed);
    state.counters["bytes"] = double(bytes);
    state.counters["base_gbps"] = double(bytes) / state.counters["base_ns"];
    state.counters["ours_gbps"] = double(bytes) / state.counters["ours_ns"];
    state.counters["target_ratio"] = 0.7;
    state.counters["batch_base"] = double(base_batch);
    state.counters["batch_ours"] = double(ours_batch);
    // noop never writes back: in process mode the other core keeps its stale view.
    const bool checkable = !std::is_same_v<C, ctl::noop> || mode == posix::execution_mode::threads;
    if (checkable && seen != expected) bench::fail(state, "writer_release: another core did not see the last write");
    // Where the release copies nothing (thread mode: coherent memory, a
    // write-back is a fence; noop), memcpy time / release time is no
    // bandwidth ratio: such rows say so, and report.py shows no ratio.
    const bool copied = state.counters["written_back_bytes_per_op"] > 0;
    state.counters["copied"] = copied;
    if (!checkable) state.SetLabel("noop: no write-back at all (the proxy's floor, not a consistent object)");
    else if (!copied) state.SetLabel("nothing copied (coherent memory: the write-back is a fence): no bandwidth ratio");
}

template <class C>
void writer_release(benchmark::State& state, posix::execution_mode mode, std::size_t bytes) {
    if (bytes == sizeof(line_object))
        writer_release_of<C, line_object>(state, mode, bytes);
    else
        writer_release_of<C, array_object>(state, mode, bytes, bytes);
}

// ---- c. one Broadcast release vs cores, vs taco's round trip ------------------------

constexpr unsigned broadcast_cores[] = {2, 4, 8, 16};
int broadcast_pairs() { return smoke() ? 2 : 100; }
double broadcast_batch_ns() { return smoke() ? 2e4 : 5e5; }

void broadcast_release(benchmark::State& state, posix::execution_mode mode, unsigned cores) {
    posix::run_report report;
    const posix::config cfg{
        .cores = taco::core_id(cores), .idle = posix::idle_policy::poll, .report = &report, .mode = mode};
    bench::paired_series series;
    std::size_t ops = 0, base_batch = 0, ours_batch = 0, wrong = 0;
    std::uint64_t notified = 0;
    std::uint8_t seen = 0, expected = 0;
    taco::run(cfg, [&] {
        auto p = mesh::make_shared_object<line_object, ctl::broadcast>();
        const auto base_op = [&] { wrong += taco::sync(taco::core_id(1), &trivial) != 1; };
        const auto ours_op = [&] {
            auto w = mesh::write(p);
            bump(w);
        };
        base_batch = bench::calibrate(base_op, broadcast_batch_ns());
        ours_batch = bench::calibrate(ours_op, broadcast_batch_ns());
        std::uint64_t notified_before = 0; // after calibration, which notifies too
        for (unsigned k = 1; k < cores; ++k) notified_before += taco::sync(taco::core_id(k), &notifications_here);
        ops = run_paired(state, series, base_op, base_batch, ours_op, ours_batch);
        for (unsigned k = 1; k < cores; ++k) notified += taco::sync(taco::core_id(k), &notifications_here);
        notified -= notified_before;
        expected = mesh::read(p)->first();
        seen = taco::sync(taco::core_id(cores - 1), &first_byte<line_object>, p);
        mesh::destroy_shared_object(p);
    });
    series.report_latency(state, report.oversubscribed);
    state.counters["cores"] = cores;
    state.counters["notifications_per_op"] = ops ? double(notified) / double(ops) : 0;
    state.counters["batch_base"] = double(base_batch);
    state.counters["batch_ours"] = double(ours_batch);
    label_oversubscribed(state, report, cores, mode);
    if (wrong) bench::fail(state, "broadcast_release: wrong round-trip result");
    if (seen != expected) bench::fail(state, "broadcast_release: the last core did not see the last write");
    if (ops && notified != std::uint64_t(cores - 1) * ops)
        bench::fail(state, "broadcast_release: not every other core was notified of every write");
}

// ---- d. does the invalidation broadcast overlap the write-back? ---------------------
//
// Process mode, writer on core 0 (the root of MESH's broadcast tree), n-byte
// SharingAware objects: four kinds of batches in rotation, as in
// bench_collective's reduce_model: Timestamp release (the write-back alone),
// Broadcast release, Overlapped Broadcast release, taco round trip to core 1.
// bc_extra_ns = median over rotations of (Broadcast - Timestamp), likewise
// ov_extra_ns; if the broadcast ran during the copy these would be ~0, if it
// runs after it they are ~rt_ns.

constexpr std::size_t overlap_sizes[] = {65536, std::size_t(1) << 20};
int overlap_rounds() { return smoke() ? 2 : 100; }

void broadcast_overlap(benchmark::State& state, std::size_t bytes) {
    posix::run_report report;
    const posix::config cfg{
        .cores = 2, .idle = posix::idle_policy::poll, .report = &report, .mode = posix::execution_mode::processes};
    enum { ts, bc, ov, rt, kinds };
    std::vector<std::array<double, kinds>> samples;
    std::size_t wrong = 0;
    taco::run(cfg, [&] {
        auto pts = mesh::make_shared_object<array_object, ctl::timestamp>(bytes);
        auto pbc = mesh::make_shared_object<array_object, ctl::broadcast>(bytes);
        auto pov = mesh::make_shared_object<array_object, ctl::overlapped_broadcast>(bytes);
        const auto release = [](mesh::sharing_ptr<array_object> p) {
            return [p] {
                auto w = mesh::write(p);
                bump(w);
            };
        };
        const std::array<std::function<void()>, kinds> op{
            release(pts), release(pbc), release(pov),
            [&] { wrong += taco::sync(taco::core_id(1), &trivial) != 1; }};
        std::array<std::size_t, kinds> batch{};
        for (std::size_t k = 0; k < kinds; ++k) batch[k] = bench::calibrate(op[k], writer_batch_ns());
        for (auto _ : state) {
            std::array<double, kinds> t{};
            for (std::size_t k = 0; k < kinds; ++k) {
                const std::size_t j = (k + samples.size()) % kinds;
                t[j] = time_batch(batch[j], op[j]);
            }
            samples.push_back(t);
            state.SetIterationTime(t[bc] * 1e-9);
        }
        for (auto* p : {&pts, &pbc, &pov}) mesh::destroy_shared_object(*p);
    });
    auto column = [&](auto&& f) {
        std::vector<double> v;
        for (const auto& s : samples) v.push_back(f(s));
        return bench::median(v);
    };
    auto& c = state.counters;
    c["bytes"] = double(bytes);
    c["ts_ns"] = column([](const auto& s) { return s[ts]; });
    c["bc_ns"] = column([](const auto& s) { return s[bc]; });
    c["ov_ns"] = column([](const auto& s) { return s[ov]; });
    c["rt_ns"] = column([](const auto& s) { return s[rt]; });
    c["bc_extra_ns"] = column([](const auto& s) { return s[bc] - s[ts]; });
    c["ov_extra_ns"] = column([](const auto& s) { return s[ov] - s[ts]; });
    c["bc_extra_per_rt"] = column([](const auto& s) { return (s[bc] - s[ts]) / s[rt]; });
    c["bc_per_ts"] = column([](const auto& s) { return s[bc] / s[ts]; }); // target: <= 2 at 1 MiB (only the changed chunk moves)
    c["ov_per_ts"] = column([](const auto& s) { return s[ov] / s[ts]; });
    c["ov_extra_per_rt"] = column([](const auto& s) { return (s[ov] - s[ts]) / s[rt]; });
    c["oversubscribed"] = report.oversubscribed;
    if (wrong) bench::fail(state, "broadcast_overlap: wrong round-trip result");
}

// ---- e. one changed value of a large chunked map, vs a 4 KB object ---------------------

int change_pairs() { return smoke() ? 2 : 60; }
double change_batch_ns() { return smoke() ? 2e4 : 5e5; }
std::size_t change_map_bytes() { return smoke() ? std::size_t(256) << 10 : std::size_t(4) << 20; }

template <mesh::map_memory M>
constexpr const char* variant_name() {
    return M == mesh::map_memory::dcm ? "dcm" : M == mesh::map_memory::ncm ? "ncm" : "wt";
}

template <class Map>
std::uint64_t value_at(mesh::sharing_ptr<Map> m, std::uint32_t k) {
    return mesh::read(m).get(k);
}

template <class C, mesh::map_memory M>
void one_change(benchmark::State& state) {
    using map = mesh::chunked_map<std::uint32_t, std::uint64_t, M>;
    posix::run_report report;
    const posix::config cfg{.cores = 2, .idle = posix::idle_policy::poll, .report = &report,
                            .mode = posix::execution_mode::processes};
    bench::paired_series series;
    std::size_t base_batch = 0, ours_batch = 0;
    const std::size_t values = change_map_bytes() / sizeof(std::uint64_t);
    bool wrong = false;
    taco::run(cfg, [&] {
        auto small = mesh::make_shared_object<array_object, C>(std::size_t(4096));
        auto m = mesh::make_shared_object<map, C>(values, std::uint64_t(0));
        std::uint32_t step = 0;
        const auto base_op = [&] {
            std::uint8_t want;
            {
                auto w = mesh::write(small);
                want = ++w->data[0];
            }
            wrong |= taco::sync(taco::core_id(1), &first_byte<array_object>, small) != want;
        };
        const auto ours_op = [&] {
            const auto k = std::uint32_t((std::uint64_t(++step) * 7919) % values); // a different chunk each time
            mesh::write(m).set(k, step);
            wrong |= taco::sync(taco::core_id(1), &value_at<map>, m, k) != step;
        };
        base_batch = bench::calibrate(base_op, change_batch_ns());
        ours_batch = bench::calibrate(ours_op, change_batch_ns());
        event_delta ev;
        ev.start();
        for (auto _ : state)
            series.run_pair(state, [&] { return time_batch(base_batch, base_op); },
                            [&] { return time_batch(ours_batch, ours_op); });
        mesh::destroy_shared_object(m);
        mesh::destroy_shared_object(small);
    });
    series.report_latency(state, report.oversubscribed);
    state.counters["map_bytes"] = double(values * sizeof(std::uint64_t));
    state.counters["target_ratio"] = 2.0;
    state.counters["batch_base"] = double(base_batch);
    state.counters["batch_ours"] = double(ours_batch);
    if (wrong) bench::fail(state, "one_change: core 1 did not read the value just written");
}

// ---- f. chunked map operations per variant x controller --------------------------------
//
// Process mode, 2 cores, on core 0 (the writer; core 1 answers broadcasts).
// Four kinds of batch pairs in rotation, each against its own baseline:
//   acquire  { auto r = mesh::read(m); }  of an unchanged map, vs the same
//            for a 64-byte object under the same controller;
//   read     r.get(k) at random k inside one reader proxy, vs a load from a
//            private std::vector at the same indices;
//   write    w.set(k, v) at random k inside one writer proxy (its release
//            untimed), vs a store into the private vector;
//   release  { auto w = mesh::write(m); w.set(k, v); } (one changed value,
//            acquire to release), vs the same for a 64-byte object.
// Counters <kind>_ns, <kind>_base_ns (medians), <kind>_ratio (median of the
// per-pair ratios ours / base).

std::size_t map_op_pairs() { return smoke() ? 2 : 25; }
std::vector<std::size_t> map_sizes() {
    if (smoke()) return {4096, std::size_t(64) << 10, std::size_t(256) << 10};
    return {4096, std::size_t(1) << 20, std::size_t(64) << 20};
}

template <class C, mesh::map_memory M>
void map_ops(benchmark::State& state, std::size_t bytes) {
    using map = mesh::chunked_map<std::uint32_t, std::uint64_t, M>;
    const posix::config cfg{.cores = 2, .idle = posix::idle_policy::poll, .mode = posix::execution_mode::processes};
    enum { acquire, read, write, release, kinds };
    static constexpr const char* names[] = {"acquire", "read", "write", "release"};
    std::vector<std::array<double, kinds>> base_t, ours_t;
    const std::size_t values = bytes / sizeof(std::uint64_t);
    std::uint64_t sink = 0;
    bool wrong = false;
    taco::run(cfg, [&] {
        auto m = mesh::make_shared_object<map, C>(values, std::uint64_t(1));
        auto small = mesh::make_shared_object<line_object, C>();
        std::vector<std::uint64_t> plain(values, 1);
        std::vector<std::uint32_t> at;
        for (std::uint64_t r : random_keys(4096, 2)) at.push_back(std::uint32_t(r % values));
        std::size_t next = 0;
        const auto k = [&] { return at[next++ & 4095]; };
        // Per-element kinds run inside one proxy: the proxy is made before the clock starts.
        const std::array<std::function<double(std::size_t)>, kinds> base{
            [&](std::size_t n) { return time_batch(n, [&] { sink += mesh::read(small)->x; }); },
            [&](std::size_t n) { return time_batch(n, [&] { sink += static_cast<const volatile std::uint64_t&>(plain[k()]); }); },
            [&](std::size_t n) { return time_batch(n, [&] { static_cast<volatile std::uint64_t&>(plain[k()]) = n; }); },
            [&](std::size_t n) { return time_batch(n, [&] { auto w = mesh::write(small); bump(w); }); },
        };
        const std::array<std::function<double(std::size_t)>, kinds> ours{
            [&](std::size_t n) { return time_batch(n, [&] { sink += mesh::read(m).size(); }); },
            [&](std::size_t n) {
                auto r = mesh::read(m);
                return time_batch(n, [&] { sink += r.get(k()); });
            },
            [&](std::size_t n) {
                auto w = mesh::write(m);
                return time_batch(n, [&] { w.set(k(), n); });
            },
            [&](std::size_t n) { return time_batch(n, [&] { mesh::write(m).set(k(), n); }); },
        };
        std::array<std::size_t, kinds> base_n{}, ours_n{};
        for (std::size_t j = 0; j < kinds; ++j) {
            base_n[j] = bench::calibrate([&] { base[j](1); }, writer_batch_ns());
            ours_n[j] = bench::calibrate([&] { ours[j](1); }, writer_batch_ns());
        }
        for (auto _ : state) {
            std::array<double, kinds> b{}, o{};
            for (std::size_t j = 0; j < kinds; ++j) {
                if ((base_t.size() + j) % 2) { // the order flips every pair
                    o[j] = ours[j](ours_n[j]);
                    b[j] = base[j](base_n[j]);
                } else {
                    b[j] = base[j](base_n[j]);
                    o[j] = ours[j](ours_n[j]);
                }
            }
            base_t.push_back(b);
            ours_t.push_back(o);
            state.SetIterationTime((o[acquire] + o[read] + o[write] + o[release]) * 1e-9);
        }
        // Core 1 sees the last value written (without a controller only
        // where there is nothing to write back: ncm).
        const std::uint32_t last = k();
        mesh::write(m).set(last, 424242);
        if (!std::is_same_v<C, ctl::noop> || M == mesh::map_memory::ncm)
            wrong = taco::sync(taco::core_id(1), &value_at<map>, m, last) != 424242;
        mesh::destroy_shared_object(small);
        mesh::destroy_shared_object(m);
    });
    benchmark::DoNotOptimize(sink);
    for (std::size_t j = 0; j < kinds; ++j) {
        std::vector<double> b, o, r;
        for (std::size_t i = 0; i < base_t.size(); ++i) {
            b.push_back(base_t[i][j]);
            o.push_back(ours_t[i][j]);
            r.push_back(ours_t[i][j] / base_t[i][j]);
        }
        state.counters[std::string(names[j]) + "_ns"] = bench::median(o);
        state.counters[std::string(names[j]) + "_base_ns"] = bench::median(b);
        state.counters[std::string(names[j]) + "_ratio"] = bench::median(r);
    }
    state.counters["map_bytes"] = double(values * sizeof(std::uint64_t));
    if (wrong) bench::fail(state, "map_ops: core 1 did not read the value just written");
}

// ---- g. the 1 MiB integrity run: Broadcast and Overlapped vs Timestamp ---------------------
//
// What tests/test_mesh.cpp's never-torn test does, at 1 MiB: core 0 fills an
// object with one value and releases, `rounds` times; the other cores read it
// in a loop (acquire, check every element equal and never older than the last
// read, poll) until they have seen the last value. One batch per controller
// in rotation; time from the first write to the last reader done. A Broadcast
// release waits until every reader took the invalidation, which a reader
// does between its reads (taco::poll), so Broadcast pays for the readers'
// loop; Timestamp's release waits for nobody.

struct big_invariant : mesh::sharing_aware<big_invariant> {
    mesh::vector<long> v;
    explicit big_invariant(std::size_t n) : v(n, 0L) {}
    using shared_members = mesh::members<&big_invariant::v>;
};
struct integrity_result {
    long reads = 0, weak = 0;
};
integrity_result read_until(mesh::sharing_ptr<big_invariant> p, long last_value) {
    integrity_result r;
    for (long last = 0; last < last_value;) {
        {
            auto rd = mesh::read(p);
            const long first = rd->v[0];
            for (long x : rd->v) r.weak += x != first;
            r.weak += first < last;
            last = first;
            ++r.reads;
        }
        taco::poll();
    }
    return r;
}
int integrity_rounds() { return smoke() ? 3 : 50; }
int integrity_batches() { return smoke() ? 1 : 9; }

void integrity(benchmark::State& state, unsigned cores) {
    posix::run_report report;
    const posix::config cfg{.cores = taco::core_id(cores), .idle = posix::idle_policy::poll, .report = &report,
                            .mode = posix::execution_mode::processes};
    enum { ts, bc, ov, kinds };
    std::vector<std::array<double, kinds>> t;
    long weak = 0;
    const std::size_t n = (std::size_t(1) << 20) / sizeof(long);
    taco::run(cfg, [&] {
        const std::array<mesh::sharing_ptr<big_invariant>, kinds> obj{
            mesh::make_shared_object<big_invariant, ctl::timestamp>(n),
            mesh::make_shared_object<big_invariant, ctl::broadcast>(n),
            mesh::make_shared_object<big_invariant, ctl::overlapped_broadcast>(n)};
        std::array<long, kinds> written{};
        const auto batch = [&](std::size_t j) {
            const auto t0 = clock_type::now();
            std::vector<taco::future<integrity_result>> readers(cores - 1);
            const long last = written[j] + integrity_rounds();
            for (unsigned c = 1; c < cores; ++c)
                taco::async(taco::core_id(c), taco::m2f(&read_until, obj[j], last), readers[c - 1]);
            while (written[j] < last) {
                {
                    auto w = mesh::write(obj[j]);
                    std::fill(w->v.begin(), w->v.end(), ++written[j]);
                }
                taco::poll();
            }
            for (auto& f : readers) weak += f.get().weak;
            return ns_since(t0);
        };
        for (auto _ : state) {
            std::array<double, kinds> s{};
            for (std::size_t k = 0; k < kinds; ++k) {
                const std::size_t j = (k + t.size()) % kinds;
                s[j] = batch(j);
            }
            t.push_back(s);
            state.SetIterationTime(s[bc] * 1e-9);
        }
        for (auto p : obj) mesh::destroy_shared_object(p);
    });
    auto column = [&](auto&& f) {
        std::vector<double> v;
        for (const auto& s : t) v.push_back(f(s));
        return bench::median(v);
    };
    auto& c = state.counters;
    c["ts_ms"] = column([](const auto& s) { return s[ts] * 1e-6; });
    c["bc_ms"] = column([](const auto& s) { return s[bc] * 1e-6; });
    c["ov_ms"] = column([](const auto& s) { return s[ov] * 1e-6; });
    c["bc_per_ts"] = column([](const auto& s) { return s[bc] / s[ts]; });
    c["ov_per_ts"] = column([](const auto& s) { return s[ov] / s[ts]; });
    c["target_ratio"] = 2.0;
    c["rounds"] = integrity_rounds();
    c["cores"] = cores;
    c["oversubscribed"] = report.oversubscribed;
    label_oversubscribed(state, report, cores, posix::execution_mode::processes);
    if (weak) bench::fail(state, "integrity: a reader saw a torn or older object");
}

// ---- h. mesh::hash_map vs std::unordered_map ----------------------------------------------
//
//   hash_map/insert/cores:1       fresh map, N random 64-bit keys inserted in
//                                 one writer proxy (its release included), vs
//                                 std::unordered_map inserting the same keys;
//   hash_map/lookup/cores:1       every key looked up in shuffled order
//                                 through a reader proxy, vs unordered_map::find;
//   hash_map/insert/processes/cores:2   core 0 inserts and releases, then
//                                 core 1 acquires and looks up every key, vs
//                                 unordered_map insert + lookup on one core;
//   hash_map/lookup/processes/cores:2   cores 0 and 1 look up half the keys
//                                 each, vs unordered_map looking up all on one.
// ratio = base time / ours time (throughput ratio: > 1 is faster than std).

struct keyed : mesh::sharing_aware<keyed> {
    mesh::hash_map<std::uint64_t, std::uint64_t> map;
};
std::size_t hash_keys() { return smoke() ? 20000 : 1000000; }
int hash_pairs() { return smoke() ? 2 : 7; }

struct key_span {
    const std::uint64_t* keys;
    std::size_t n;
};
std::uint64_t look_up(mesh::sharing_ptr<keyed> p, key_span k) {
    auto r = mesh::read(p);
    std::uint64_t found = 0;
    for (std::size_t i = 0; i < k.n; ++i)
        if (const std::uint64_t* v = r->map.find(k.keys[i])) found += *v == k.keys[i];
    return found;
}

void hash_map_bench(benchmark::State& state, bool lookup, unsigned cores) {
    posix::run_report report;
    const posix::config cfg{.cores = taco::core_id(cores), .idle = posix::idle_policy::poll, .report = &report,
                            .mode = cores > 1 ? posix::execution_mode::processes : posix::execution_mode::threads};
    bench::paired_series series;
    const std::size_t n = hash_keys();
    // Keys live in core-private memory made before the run: a forked core
    // has its own copy at the same address, so core 1 can read them too.
    const std::vector<std::uint64_t> keys = random_keys(n, 1);
    std::vector<std::uint64_t> shuffled = keys;
    for (std::size_t i = n - 1; i > 0; --i) std::swap(shuffled[i], shuffled[keys[i] % (i + 1)]);
    bool wrong = false;
    taco::run(cfg, [&] {
        const auto std_insert = [&](std::unordered_map<std::uint64_t, std::uint64_t>& m) {
            for (std::uint64_t k : keys) m.emplace(k, k);
        };
        const auto std_lookup = [&](const std::unordered_map<std::uint64_t, std::uint64_t>& m) {
            std::uint64_t found = 0;
            for (std::uint64_t k : shuffled)
                if (auto it = m.find(k); it != m.end()) found += it->second == k;
            return found;
        };
        std::unordered_map<std::uint64_t, std::uint64_t> built;
        std_insert(built);
        auto shared = mesh::make_shared_object<keyed>();
        {
            auto w = mesh::write(shared);
            for (std::uint64_t k : keys) w->map.insert(k, k);
        }
        const key_span all{shuffled.data(), n}, first_half{shuffled.data(), n / 2},
            second_half{shuffled.data() + n / 2, n - n / 2};
        for (auto _ : state) {
            if (lookup) {
                series.run_pair(
                    state, [&] {
                        const auto t0 = clock_type::now();
                        wrong |= std_lookup(built) != n;
                        return ns_since(t0);
                    },
                    [&] {
                        const auto t0 = clock_type::now();
                        if (cores == 1) {
                            wrong |= look_up(shared, all) != n;
                        } else {
                            taco::future<std::uint64_t> other;
                            taco::async(taco::core_id(1), taco::m2f(&look_up, shared, second_half), other);
                            const std::uint64_t mine = look_up(shared, first_half);
                            wrong |= mine + other.get() != n;
                        }
                        return ns_since(t0);
                    });
            } else {
                series.run_pair(
                    state, [&] {
                        std::unordered_map<std::uint64_t, std::uint64_t> m;
                        const auto t0 = clock_type::now();
                        std_insert(m);
                        if (cores > 1) wrong |= std_lookup(m) != n;
                        return ns_since(t0);
                    },
                    [&] {
                        auto p = mesh::make_shared_object<keyed>();
                        const auto t0 = clock_type::now();
                        {
                            auto w = mesh::write(p);
                            for (std::uint64_t k : keys) w->map.insert(k, k);
                        }
                        if (cores > 1) wrong |= taco::sync(taco::core_id(1), &look_up, p, all) != n;
                        const double t = ns_since(t0);
                        mesh::destroy_shared_object(p);
                        return t;
                    });
            }
        }
        mesh::destroy_shared_object(shared);
    });
    series.report_rate(state, report.oversubscribed);
    state.counters["keys"] = double(n);
    state.counters["target_ratio"] = 1.0;
    if (wrong) bench::fail(state, "hash_map: a lookup missed a key or found a wrong value");
}

// ---- registration ---------------------------------------------------------------------

constexpr posix::execution_mode modes[] = {posix::execution_mode::threads, posix::execution_mode::processes};

template <class C>
void register_controller(posix::execution_mode mode) {
    const std::string m = mode_name(mode);
    benchmark::RegisterBenchmark(("reader_acquire/" + m + "/" + C::name).c_str(), reader_acquire<C>, mode)
        ->Iterations(reader_pairs())
        ->UseManualTime()
        ->Unit(benchmark::kNanosecond);
    for (std::size_t bytes : writer_sizes)
        benchmark::RegisterBenchmark(
            ("writer_release/" + m + "/" + C::name + "/bytes:" + std::to_string(bytes)).c_str(),
            writer_release<C>, mode, bytes)
            ->Iterations(writer_pairs())
            ->UseManualTime()
            ->Unit(benchmark::kNanosecond);
}

template <class C, mesh::map_memory M>
void register_one_change_of() {
    benchmark::RegisterBenchmark(("one_change/processes/" + std::string(C::name) + "/" + variant_name<M>() +
                                  "/bytes:" + std::to_string(change_map_bytes()))
                                     .c_str(),
                                 one_change<C, M>)
        ->Iterations(change_pairs())
        ->UseManualTime()
        ->Unit(benchmark::kNanosecond);
}
template <class C>
void register_one_change() {
    register_one_change_of<C, mesh::map_memory::dcm>();
    register_one_change_of<C, mesh::map_memory::ncm>();
    register_one_change_of<C, mesh::map_memory::wt>();
}

template <class C, mesh::map_memory M>
void register_map_ops_of() {
    for (std::size_t bytes : map_sizes())
        benchmark::RegisterBenchmark(("map_ops/processes/" + std::string(C::name) + "/" + variant_name<M>() +
                                      "/bytes:" + std::to_string(bytes))
                                         .c_str(),
                                     map_ops<C, M>, bytes)
            ->Iterations(map_op_pairs())
            ->UseManualTime()
            ->Unit(benchmark::kNanosecond);
}
template <class C>
void register_map_ops() {
    register_map_ops_of<C, mesh::map_memory::dcm>();
    register_map_ops_of<C, mesh::map_memory::ncm>();
    register_map_ops_of<C, mesh::map_memory::wt>();
}

void register_all() {
    for (auto mode : modes) {
        register_controller<ctl::noop>(mode);
        register_controller<ctl::broadcast>(mode);
        register_controller<ctl::overlapped_broadcast>(mode);
        register_controller<ctl::timestamp>(mode);
    }
    for (auto mode : modes)
        for (unsigned n : broadcast_cores) {
            std::string name = std::string("broadcast_release/") + mode_name(mode) + "/cores:" + std::to_string(n);
            if (n > available_cpus()) name += "/oversubscribed";
            benchmark::RegisterBenchmark(name.c_str(), broadcast_release, mode, n)
                ->Iterations(broadcast_pairs())
                ->UseManualTime()
                ->Unit(benchmark::kNanosecond);
        }
    register_one_change<ctl::broadcast>();
    register_one_change<ctl::overlapped_broadcast>();
    register_one_change<ctl::timestamp>();
    register_map_ops<ctl::noop>();
    register_map_ops<ctl::broadcast>();
    register_map_ops<ctl::overlapped_broadcast>();
    register_map_ops<ctl::timestamp>();
    for (unsigned cores : {2u, 4u}) {
        std::string name = "integrity_1mib/processes/cores:" + std::to_string(cores);
        if (cores > available_cpus()) name += "/oversubscribed";
        benchmark::RegisterBenchmark(name.c_str(), integrity, cores)
            ->Iterations(integrity_batches())
            ->UseManualTime()
            ->Unit(benchmark::kMillisecond);
    }
    for (bool lookup : {false, true})
        for (unsigned cores : {1u, 2u}) {
            const std::string name = std::string("hash_map/") + (lookup ? "lookup" : "insert") +
                                     (cores > 1 ? "/processes" : "") + "/cores:" + std::to_string(cores);
            benchmark::RegisterBenchmark(name.c_str(), hash_map_bench, lookup, cores)
                ->Iterations(hash_pairs())
                ->UseManualTime()
                ->Unit(benchmark::kMillisecond);
        }
    for (std::size_t bytes : overlap_sizes)
        benchmark::RegisterBenchmark(("broadcast_overlap/processes/bytes:" + std::to_string(bytes)).c_str(),
                                     broadcast_overlap, bytes)
            ->Iterations(overlap_rounds())
            ->UseManualTime()
            ->Unit(benchmark::kNanosecond);
}

} // namespace

int main(int argc, char** argv) { return bench::run_main(argc, argv, &register_all, "bench_mesh"); }
