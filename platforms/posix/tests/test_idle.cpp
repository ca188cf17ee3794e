// The sleeping idle policy: cores really sleep, senders wake them, and no
// wake-up is lost (a lost one would hang the test until ctest's timeout).
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include <test_support.hpp>

namespace {
struct echo {
    long hits = 0;
    long ping(long v) { return ++hits, v; }
};
} // namespace

TEST_CASE("sleeping cores are woken by invocations", "[idle]") {
    tacomesh::posix::run_report report;
    long sum = 0;
    taco::run(tacomesh::posix::config{.cores = 3, .idle = tacomesh::posix::idle_policy::sleep, .report = &report}, [&] {
        auto e1 = taco::new_on<echo>(1).get();
        auto e2 = taco::new_on<echo>(2).get();
        for (long i = 0; i < 20; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(2)); // let the others fall asleep
            sum += taco::sync(i % 2 ? e1 : e2, &echo::ping, i);
        }
        taco::delete_on(e1);
        taco::delete_on(e2);
    });
    REQUIRE(sum == 190);
    REQUIRE(report.sleeps >= 20); // the cores slept (and were woken) between calls
}

TEST_CASE("sleeping policy: many round trips and cross traffic, no lost wake-up", "[idle]") {
    const long n = test::scaled(100'000);
    long hits = 0;
    taco::run(tacomesh::posix::config{.cores = 4, .idle = tacomesh::posix::idle_policy::sleep, .ring_slots = 4}, [&] {
        auto e = taco::new_on<echo>(1).get();
        // cores 2 and 3 stream fire-and-forget invocations at core 1 meanwhile
        auto stream = +[](taco::global_ptr<echo> t, long k) {
            for (long i = 0; i < k; ++i) taco::async(t, &echo::ping, i);
        };
        taco::async(2, stream, e, n);
        taco::async(3, stream, e, n);
        for (long i = 0; i < n; ++i) taco::sync(e, &echo::ping, i);
        while (taco::sync(e, +[](echo& x) { return x.hits; }) < 3 * n) {}
        hits = taco::sync(e, +[](echo& x) { return x.hits; });
        taco::delete_on(e);
    });
    REQUIRE(hits == 3 * n);
}
