// TACO and MESH on the emulated SCC: the same program as on POSIX, chosen
// by the configuration alone, with invocations in the MPB channels and the
// cycles they cost modelled.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <mesh/mesh.hpp>
#include <taco/taco.hpp>
#include <tacomesh/scc/emulated/platform.hpp>
#include <test_support.hpp> // run_in_child, sanitized

namespace scc = tacomesh::scc::emulated;

namespace {

long square(long x) { return x * x; }
std::uint32_t whoami() { return taco::this_core(); }

struct member {
    long value() const { return long(taco::this_core()) + 1; }
};

struct counter {
    long total = 0;
    long values[16] = {};
};
long read_total(mesh::sharing_ptr<counter> c) { return mesh::read(c)->total; }

} // namespace

TEST_CASE("SCC emulation: TACO invocations, futures and a reduce over every core, polling and halting", "[scc][platform]") {
    for (const auto idle : {scc::idle_policy::poll, scc::idle_policy::halt}) {
        INFO("halt " << (idle == scc::idle_policy::halt));
        scc::run_report report;
        long failures = 0;
        taco::run(scc::config{.cores = 6, .idle = idle, .report = &report}, [&] {
            for (taco::core_id c = 0; c < 6; ++c) {
                failures += taco::sync(c, &whoami) != c;
                failures += taco::sync(c, &square, long(c) + 3) != (long(c) + 3) * (long(c) + 3);
            }
            std::vector<taco::future<long>> squares(6);
            for (taco::core_id c = 0; c < 6; ++c) taco::async(c, taco::m2f(&square, long(c)), squares[c]);
            for (taco::core_id c = 0; c < 6; ++c) failures += squares[c].get() != long(c) * long(c);
            std::vector<taco::global_ptr<member>> members;
            for (taco::core_id c = 0; c < 6; ++c) members.push_back(taco::new_on<member>(c).get());
            auto g = taco::make_group(std::span<const taco::global_ptr<member>>(members));
            taco::future<long> sum;
            taco::reduce(g, taco::m2f(&member::value), std::plus<long>{}, sum);
            failures += sum.get() != 21;
            taco::destroy_group(g);
            for (auto m : members) taco::delete_on(m);
        });
        CHECK(failures == 0);
        REQUIRE(report.cycles.size() == 6);
        for (auto c : report.cycles) CHECK(c > 0); // every core paid for its messages
    }
}

TEST_CASE("SCC emulation: a bigger chip (emulated::grid) runs the same program on 256 cores (oversubscribed)",
          "[scc][platform][shape]") {
    const tacomesh::scc::chip_shape big = scc::grid(16, 8);
    REQUIRE(big.cores() == 256);
    CHECK(big.mpb_bytes >= tacomesh::scc::mpb_layout::bytes_needed(256)); // a channel slot per sender
    scc::run_report report;
    long sum = 0, far = -1;
    taco::run(scc::config{.cores = 256, .shape = big, .report = &report}, [&] {
        far = long(taco::sync(255, &whoami));
        std::vector<taco::global_ptr<member>> members;
        for (taco::core_id c = 0; c < 256; ++c) members.push_back(taco::new_on<member>(c).get());
        auto g = taco::make_group(std::span<const taco::global_ptr<member>>(members));
        taco::future<long> f;
        taco::reduce(g, taco::m2f(&member::value), std::plus<long>{}, f);
        sum = f.get();
        taco::destroy_group(g);
        for (auto m : members) taco::delete_on(m);
    });
    CHECK(far == 255);
    CHECK(sum == 256 * 257 / 2);
    CHECK(report.cycles.size() == 256);
}

TEST_CASE("SCC emulation: an MPB line costs more the more routers lie between the core and the MPB's tile",
          "[scc][platform][shape][cost]") {
    // The hardware's cycles alone, a sync call to the next core (same tile)
    // and to the farthest (the opposite corner of the 6 x 4 mesh: 8 hops).
    auto round_trip = [](taco::core_id to) {
        std::uint64_t cycles = 0;
        taco::run(scc::config{.cores = 48, .costs = {.compute_cycles_per_ns = 0}}, [&] {
            (void)taco::sync(to, &whoami);
            const std::uint64_t before = scc::cycles();
            for (int i = 0; i < 20; ++i) (void)taco::sync(to, &whoami);
            cycles = (scc::cycles() - before) / 20;
        });
        return cycles;
    };
    const std::uint64_t near = round_trip(1), far = round_trip(47);
    INFO("round trip to core 1: " << near << " cycles, to core 47: " << far);
    REQUIRE(tacomesh::scc::chip_shape{}.hops(0, 47) == 8);
    // Each way, at least the payload's lines and the header cross 8 hops.
    CHECK(far >= near + 2 * 2 * 8 * scc::cost_model{}.mesh_hop_cycles);
}

TEST_CASE("SCC emulation: a chip shape the channels or the emulation cannot hold is refused, saying why",
          "[scc][platform][shape]") {
    auto refused = [](const scc::config& c) {
        try {
            taco::run(c, [] {});
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string("(accepted)");
    };
    using Catch::Matchers::Contains;
    CHECK_THAT(refused({.cores = 49}), Contains("1 to 48 cores, not 49"));
    tacomesh::scc::chip_shape small_mpb = scc::grid(16, 8);
    small_mpb.mpb_bytes = 8192;
    CHECK_THAT(refused({.cores = 4, .shape = small_mpb}), Contains("needs at least 42") && Contains("emulated::grid()"));
    CHECK_THAT(refused({.cores = 4, .shape = scc::grid(64, 32)}), Contains("up to 1024 cores, not 4096"));
    tacomesh::scc::chip_shape none = scc::grid(2, 2);
    none.controllers = 0;
    CHECK_THAT(refused({.cores = 4, .shape = none}), Contains("memory controller"));
    tacomesh::scc::chip_shape odd = scc::grid(2, 2);
    odd.controllers = 3;
    CHECK_THAT(refused({.cores = 4, .shape = odd}), Contains("1, or an even number"));
    CHECK(refused({.cores = 8, .shape = scc::grid(2, 2)}) == "(accepted)");
}

TEST_CASE("SCC emulation: a host thread the system refuses fails the run with a message, not std::terminate",
          "[scc][platform][misuse]") {
    if (test::sanitized) return; // address-space limits and sanitizers' shadow memory do not mix
    // Room for the run's memory (small regions) and a few thread stacks,
    // not for 47 (8 MiB each).
    auto r = test::run_refused_in_child(scc::config{.cores = 48, .cached_bytes = 1 << 20, .write_through_bytes = 1 << 20,
                                                    .non_cached_bytes = 1 << 20, .private_bytes = 1 << 16},
                                        std::size_t(96) << 20);
    INFO(r.err);
    REQUIRE_FALSE(r.aborted);
    REQUIRE(r.err.find("cannot start the thread of emulated core") != std::string::npos);
    REQUIRE(r.err.find("of 48") != std::string::npos);
    REQUIRE(r.err.find("config.cores") != std::string::npos);
}

TEST_CASE("SCC emulation: a MESH shared object written on core 0 is read on every core, each controller", "[scc][platform]") {
    long failures = 0;
    taco::run(scc::config{.cores = 4}, [&] {
        auto run_with = [&]<class Controller>() {
            auto c = mesh::make_shared_object<counter, Controller>();
            for (long round = 1; round <= 3; ++round) {
                mesh::write(c)->total = round * 100;
                for (taco::core_id core = 1; core < 4; ++core) failures += taco::sync(core, &read_total, c) != round * 100;
            }
            mesh::destroy_shared_object(c);
        };
        run_with.template operator()<mesh::controllers::broadcast>();
        run_with.template operator()<mesh::controllers::overlapped_broadcast>();
        run_with.template operator()<mesh::controllers::timestamp>();
    });
    CHECK(failures == 0);
}

TEST_CASE("SCC emulation: modelled cycles of a round trip, polling and with interrupts", "[scc][platform][cost]") {
    std::uint64_t polling = 0, halting = 0, overlapped = 0;
    for (const auto idle : {scc::idle_policy::poll, scc::idle_policy::halt, scc::idle_policy::halt_overlapped}) {
        // The hardware's cycles alone: host CPU time (the runtime's
        // instructions) would add the host's noise to a few hundred cycles.
        taco::run(scc::config{.cores = 2, .idle = idle, .costs = {.compute_cycles_per_ns = 0}}, [&] {
            (void)taco::sync(1, &whoami); // warm: the channels' lines in place
            const std::uint64_t before = scc::cycles();
            for (int i = 0; i < 100; ++i) (void)taco::sync(1, &whoami);
            (idle == scc::idle_policy::poll ? polling : idle == scc::idle_policy::halt ? halting : overlapped) =
                (scc::cycles() - before) / 100;
        });
    }
    INFO("round trip: " << polling << " cycles polling, " << halting << " halting, " << overlapped
                        << " with the interrupt before the message");
    const std::uint64_t latency = scc::cost_model{}.interrupt_latency;
    CHECK(polling > 300);             // four MPB line transfers at least
    CHECK(halting >= polling + 2 * latency - 200); // and an interrupt's latency each way
    CHECK(halting <= polling + 2 * latency + 200);
    // Raised before the message, the interrupt's latency overlaps its
    // writes: at least two of its lines each way (the slot's header and the
    // flag), 78 cycles a line at least (cost_model), are hidden.
    const scc::cost_model prices{};
    CHECK(overlapped <= halting - 2 * 2 * prices.mpb_line_write);
    CHECK(overlapped >= polling);
}

namespace {

/// Work of a fixed number of instructions (CPU time, not host wall time,
/// which the host's scheduling of oversubscribed core threads stretches).
std::uint64_t crunch(std::uint64_t rounds) {
    std::uint64_t x = 0x9E3779B97F4A7C15ull;
    for (std::uint64_t i = 0; i < rounds; ++i) x = x * 6364136223846793005ull + (x >> 29) + i;
    return x;
}

} // namespace

TEST_CASE("SCC emulation: the clock counts computation, so work split over 8 cores (oversubscribed) finishes sooner",
          "[scc][platform][cost]") {
    constexpr std::uint64_t total = 80'000'000;
    auto makespan = [&](taco::core_id cores, double per_ns) {
        std::uint64_t spent = 0;
        taco::run(scc::config{.cores = cores, .costs = {.compute_cycles_per_ns = per_ns}}, [&] {
            std::vector<taco::future<std::uint64_t>> parts(cores);
            const std::uint64_t before = scc::cycles();
            for (taco::core_id c = 0; c < cores; ++c) taco::async(c, taco::m2f(&crunch, total / cores), parts[c]);
            for (auto& p : parts) (void)p.get();
            spent = scc::cycles() - before;
        });
        return spent;
    };
    const std::uint64_t one = makespan(1, 0.8), eight = makespan(8, 0.8), uncounted = makespan(1, 0);
    INFO("1 core " << one << " cycles, 8 cores " << eight << ", 1 core without computation " << uncounted);
    CHECK(one > 10'000'000);         // 80 M rounds of a multiply-add chain: tens of millions of cycles
    CHECK(uncounted < 100'000);      // without computation: a few messages' worth
    // On 2 CPUs, yet the modelled cores worked side by side (8x ideally;
    // the host's steal time inflates CPU time when both vCPUs are busy).
    CHECK(double(one) / double(eight) > 2.5);
}

namespace {
/// Replies after 300 ms of host time asleep (long after the work below):
/// no cycles of the emulated core.
long reply_later() {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    return 1;
}
} // namespace

TEST_CASE("SCC emulation: work between messages counts, also when the core idles afterwards", "[scc][platform][cost]") {
    std::uint64_t spent = 0, sink = 0;
    taco::run(scc::config{.cores = 2}, [&] {
        taco::future<long> reply;
        taco::async(1, taco::m2f(&reply_later), reply);
        (void)taco::poll(); // a scan that finds nothing: the next polls skip the MPB until a message comes
        const std::uint64_t before = scc::cycles();
        sink = crunch(20'000'000); // the program's own work: no message, no hardware operation
        // Rounds with nothing to do until the reply: the idle ones must not
        // take the work's cycles away.
        (void)reply.get();
        spent = scc::cycles() - before;
    });
    INFO(spent << " cycles (" << sink << ")");
    CHECK(spent > 5'000'000); // 20 M rounds of the chain
}

// This program is not built with tacomesh::scc_counted (scc_counted_tests is).
static_assert(!scc::counting_compiled && scc::cost_model{}.compute == scc::compute_model::host_time,
              "without tacomesh::scc_counted, computation is charged as host CPU time by default");

TEST_CASE("SCC emulation: counted blocks asked of a program that counts none are refused before any core runs, "
          "saying how to build it",
          "[scc][platform][cost]") {
    bool ran = false;
    CHECK_THROWS_AS(taco::run(scc::config{.cores = 2, .costs = {.compute = scc::compute_model::counted_blocks}},
                              [&] { ran = true; }),
                    taco::usage_error);
    CHECK_THROWS_WITH(taco::run(scc::config{.cores = 2, .costs = {.compute = scc::compute_model::counted_blocks}},
                                [&] { ran = true; }),
                      Catch::Contains("counts no basic blocks") && Catch::Contains("tacomesh::scc_counted") &&
                          Catch::Contains("-fsanitize-coverage=trace-pc"));
    CHECK_FALSE(ran);
    CHECK(scc::counted_blocks() == 0); // nothing here was compiled to count
}

namespace {
/// Whether `p` lies in this core's MESH region of memory type `m`.
bool in_region(taco::memory_mode m, const void* p) {
    const std::span<std::byte> r = taco::detail::runtime().region(m);
    const auto* b = static_cast<const std::byte*>(p);
    return b >= r.data() && b < r.data() + r.size();
}
} // namespace

TEST_CASE("SCC emulation: write-through memory is the MPBT+WT region, and a wt map's set costs a WCB flush, not the "
          "L2 flush routine",
          "[scc][platform][cost]") {
    bool in_wt = false;
    std::uint64_t wt_set = 0, dcm_set = 0;
    taco::run(scc::config{.cores = 2, .costs = {.compute_cycles_per_ns = 0}}, [&] {
        void* p = mesh::allocate(64, taco::memory_mode::write_through);
        in_wt = in_region(taco::memory_mode::write_through, p);
        mesh::deallocate(p, taco::memory_mode::write_through);
        auto set_cost = [&]<mesh::map_memory M>() {
            auto m = mesh::make_shared_object<mesh::chunked_map<std::uint32_t, long, M>, mesh::controllers::timestamp>(
                4096, 0L);
            mesh::write(m).set(0, 1L); // released: from now on its chunks are written through
            std::uint64_t spent = 0;
            {
                auto w = mesh::write(m);
                const std::uint64_t before = scc::cycles();
                w.set(7, 1L);
                spent = scc::cycles() - before;
            }
            mesh::destroy_shared_object(m);
            return spent;
        };
        wt_set = set_cost.template operator()<mesh::map_memory::wt>();
        dcm_set = set_cost.template operator()<mesh::map_memory::dcm>();
    });
    CHECK(in_wt);
    INFO("a set: " << wt_set << " cycles wt, " << dcm_set << " dcm");
    CHECK(wt_set > 0);    // the value went through
    CHECK(wt_set < 1000); // through the WCB (on cached memory it would be the flush routine: 7 500 and more)
    CHECK(dcm_set == 0);  // dcm: nothing until the release
}

namespace {
using wt_map = mesh::chunked_map<std::uint32_t, long, mesh::map_memory::wt>;
/// A reader's look at index 7 on this core: its cycles (~0 if it saw a stale value).
std::uint64_t refresh_cycles(mesh::sharing_ptr<wt_map> m) {
    const std::uint64_t before = scc::cycles();
    const long v = mesh::read(m).get(7);
    return v == 1 ? scc::cycles() - before : ~std::uint64_t(0);
}
} // namespace

TEST_CASE("SCC emulation: a wt map's own bytes are write-through memory too, so neither its release nor a reader's "
          "refresh runs the L2 flush routine",
          "[scc][platform][cost]") {
    bool object_in_wt = false;
    std::uint64_t release = 0, refresh = 0;
    taco::run(scc::config{.cores = 2, .costs = {.compute_cycles_per_ns = 0}}, [&] {
        auto m = mesh::make_shared_object<wt_map, mesh::controllers::broadcast>(4096, 0L);
        object_in_wt = in_region(taco::memory_mode::write_through, m.block()->object);
        (void)taco::sync(1, &refresh_cycles, m); // core 1's view in place (a stale 0: ~0, ignored)
        const std::uint64_t before = scc::cycles();
        mesh::write(m).set(7, 1L); // the value through the WCB, the header's stamp, the Broadcast to core 1
        release = scc::cycles() - before;
        refresh = taco::sync(1, &refresh_cycles, m);
        mesh::destroy_shared_object(m);
    });
    CHECK(object_in_wt);
    INFO("release " << release << " cycles, core 1's refresh " << refresh);
    const std::uint64_t routine = scc::cost_model{}.flush_call; // the L2 flush routine's call alone
    CHECK(release < routine);
    CHECK(refresh < routine); // also: the value seen (else ~0)
}

TEST_CASE("SCC emulation: control blocks, and so the Timestamp counters, lie in the MPBs' spare bytes while "
          "they last, then in NCM",
          "[scc][platform][mesh]") {
    constexpr taco::core_id cores = 4;
    long failures = 0;
    std::vector<bool> placed_on_chip;
    std::size_t in_use_full = 0, in_use_after_destroy = 0;
    bool reused_on_chip = false;
    taco::run(scc::config{.cores = cores}, [&] {
        // 224 spare bytes per MPB at 4 cores: three 64-byte blocks each.
        const std::size_t on_chip_blocks = 3 * cores;
        std::vector<mesh::sharing_ptr<counter>> objects;
        for (std::size_t i = 0; i < on_chip_blocks + 2; ++i) {
            objects.push_back(mesh::make_shared_object<counter, mesh::controllers::timestamp>());
            placed_on_chip.push_back(mesh::detail::on_chip(objects.back().block()));
        }
        in_use_full = mesh::detail::on_chip_blocks_in_use();
        for (long round = 1; round <= 2; ++round)
            for (std::size_t i = 0; i < objects.size(); ++i) {
                const long value = round * 1000 + long(i);
                taco::sync(taco::core_id(1 + i % (cores - 1)), +[](mesh::sharing_ptr<counter> c, long v) {
                    mesh::write(c)->total = v;
                }, objects[i], value);
                for (taco::core_id core = 0; core < cores; ++core)
                    failures += taco::sync(core, &read_total, objects[i]) != value;
            }
        mesh::destroy_shared_object(objects.front()); // an on-chip block back to the pool
        in_use_after_destroy = mesh::detail::on_chip_blocks_in_use();
        objects.front() = mesh::make_shared_object<counter, mesh::controllers::timestamp>();
        reused_on_chip = mesh::detail::on_chip(objects.front().block());
        for (auto& o : objects) mesh::destroy_shared_object(o);
    });
    CHECK(failures == 0);
    REQUIRE(placed_on_chip.size() == 3 * cores + 2);
    for (std::size_t i = 0; i < placed_on_chip.size(); ++i) {
        INFO("object " << i);
        CHECK(placed_on_chip[i] == (i < 3 * cores));
    }
    CHECK(in_use_full == 3 * cores);
    CHECK(in_use_after_destroy == 3 * cores - 1);
    CHECK(reused_on_chip);
}

TEST_CASE("SCC emulation: a memory setting the host cannot back is refused naming the setting, the size asked and "
          "what the host has",
          "[scc][platform][mesh][sizes]") {
    auto run_with = [](scc::config c) { taco::run(c, [] {}); };
    const std::size_t tib = std::size_t(1) << 40;
    if (scc::detail::host_memory_bytes() < tib) {
        // Used to be a bare std::bad_alloc from the host's allocator.
        CHECK_THROWS_AS(run_with({.cores = 2, .cached_bytes = tib}), scc::memory_refused);
        CHECK_THROWS_WITH(run_with({.cores = 2, .cached_bytes = tib}),
                          Catch::Contains("config.cached_bytes = 1099511627776 bytes") &&
                              Catch::Contains("more than the host can back") &&
                              Catch::Contains(std::to_string(scc::detail::host_memory_bytes()) + " bytes"));
        CHECK_THROWS_WITH(run_with({.cores = 2, .write_through_bytes = tib}), Catch::Contains("config.write_through_bytes"));
        CHECK_THROWS_WITH(run_with({.cores = 2, .non_cached_bytes = tib}), Catch::Contains("config.non_cached_bytes"));
        // Per core: 48 slabs of a sixteenth of the host are more than it has, each alone is not.
        const std::size_t slab = scc::detail::host_memory_bytes() / 16 / 4096 * 4096;
        CHECK_THROWS_WITH(run_with({.cores = 48, .private_bytes = slab}),
                          Catch::Contains("config.private_bytes = " + std::to_string(slab) + " bytes per core, for 48 cores"));
    } else {
        WARN("the host backs 1 TiB: its refusal is not shown");
    }
    // Sizes that wrapped when rounded to pages (to no memory at all, and a run without it).
    const std::size_t most = std::numeric_limits<std::size_t>::max();
    CHECK_THROWS_WITH(run_with({.cores = 2, .cached_bytes = most}),
                      Catch::Contains("config.cached_bytes = " + std::to_string(most)) &&
                          Catch::Contains("does not fit a std::size_t"));
    CHECK_THROWS_WITH(run_with({.cores = 2, .private_bytes = most - 100}), Catch::Contains("config.private_bytes"));
    CHECK_THROWS_WITH(run_with({.cores = 4, .private_bytes = most / 2}), Catch::Contains("for 4 cores"));
}

TEST_CASE("SCC emulation: a region of 0 bytes is none, and MESH's out-of-memory names the SCC config's setting",
          "[scc][platform][mesh][sizes]") {
    // The message told SCC users to raise tacomesh::posix::config::cached_bytes.
    std::string cached, non_cached;
    taco::run(scc::config{.cores = 2, .cached_bytes = 0, .non_cached_bytes = 0}, [&] {
        try {
            (void)mesh::allocate(64);
        } catch (const mesh::out_of_memory& e) {
            cached = e.what();
        }
        try {
            (void)mesh::make_shared_object<long>(1L);
        } catch (const mesh::out_of_memory& e) {
            non_cached = e.what();
        }
    });
    CHECK_THAT(cached, Catch::Contains("out of cached shared memory") &&
                           Catch::Contains("raise the platform's config.cached_bytes"));
    CHECK_THAT(non_cached, Catch::Contains("config."));
    CHECK_THAT(cached + non_cached, !Catch::Contains("posix"));
    const std::size_t most = std::numeric_limits<std::size_t>::max();
    CHECK_THROWS_AS(taco::run(scc::config{.cores = 2, .cached_bytes = most}, [] {}), scc::memory_refused);
}

TEST_CASE("SCC emulation: a region the host refuses to allocate names its setting", "[scc][platform][mesh][sizes]") {
    if (test::sanitized) return; // address-space limits and sanitizers' shadow memory do not mix
    // Room for 200 MiB more: each region of 150 MiB fits the limit alone,
    // the second no longer does.
    auto r = test::run_refused_in_child(scc::config{.cores = 2, .cached_bytes = std::size_t(150) << 20,
                                                    .write_through_bytes = std::size_t(150) << 20},
                                        std::size_t(200) << 20);
    INFO(r.err);
    REQUIRE_FALSE(r.aborted);
    CHECK(r.err.find("config.write_through_bytes = 157286400 bytes: the host refused") != std::string::npos);
}
