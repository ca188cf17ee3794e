// TACO and MESH on the emulated SCC: the same program as on POSIX, chosen
// by the configuration alone, with invocations in the MPB channels and the
// cycles they cost modelled.
#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>
#include <vector>

#include <mesh/mesh.hpp>
#include <taco/taco.hpp>
#include <tacomesh/scc/emulated/platform.hpp>

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
    for (const auto idle : {scc::idle_mode::poll, scc::idle_mode::halt}) {
        INFO("halt " << (idle == scc::idle_mode::halt));
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
    std::uint64_t polling = 0, halting = 0;
    for (const auto idle : {scc::idle_mode::poll, scc::idle_mode::halt}) {
        taco::run(scc::config{.cores = 2, .idle = idle}, [&] {
            (void)taco::sync(1, &whoami); // warm: the channels' lines in place
            const std::uint64_t before = scc::cycles();
            for (int i = 0; i < 100; ++i) (void)taco::sync(1, &whoami);
            (idle == scc::idle_mode::poll ? polling : halting) = (scc::cycles() - before) / 100;
        });
    }
    INFO("round trip: " << polling << " cycles polling, " << halting << " halting");
    CHECK(polling > 300);             // four MPB line transfers at least
    CHECK(halting > polling + 2000);  // and the interrupt's latency on the way back
}
