// Misuse that can only be caught at run time gets a clear message.
#include <catch2/catch.hpp>

#include <atomic>
#include <stdexcept>

#include "test_support.hpp"

TEST_CASE("a global_ptr dereferenced on a foreign core aborts with a clear message", "[misuse]") {
    auto r = test::run_in_child([] {
        taco::run(tacomesh::posix::config{.cores = 2}, [] {
            auto remote = taco::new_on<int>(1).get();
            *remote = 1; // wrong core
        });
    });
    REQUIRE(r.aborted);
    REQUIRE(r.err.find("global_ptr to core 1 dereferenced on core 0") != std::string::npos);
}

TEST_CASE("invocations outside a running TACO program abort with a clear message", "[misuse]") {
    auto r = test::run_in_child([] { taco::async(0, +[] {}); });
    REQUIRE(r.aborted);
    REQUIRE(r.err.find("start the program with taco::run") != std::string::npos);
}

TEST_CASE("bad configurations are rejected before any core starts", "[misuse]") {
    auto run_with = [](tacomesh::posix::config c) { taco::run(c, [] {}); };
    REQUIRE_THROWS_WITH(run_with({.cores = 0}), Catch::Contains("cores must be at least 1"));
    REQUIRE_THROWS_WITH(run_with({.cores = 2, .ring_slots = 3}), Catch::Contains("power of two"));
    REQUIRE_THROWS_WITH(run_with({.cores = 2, .ring_slots = 1}), Catch::Contains("power of two"));
}

TEST_CASE("an exception from main on core 0 stops every core and reaches the caller", "[misuse]") {
    REQUIRE_THROWS_WITH(taco::run(tacomesh::posix::config{.cores = 4}, [] { throw std::runtime_error("main failed"); }),
                        "main failed");
}

TEST_CASE("main returning while another core waits inside a handler stops the run instead of hanging",
          "[misuse]") {
    bool unwound = false;
    static std::atomic<bool>* flag = nullptr;
    std::atomic<bool> seen{false};
    flag = &seen;
    taco::run(tacomesh::posix::config{.cores = 3}, [] {
        taco::async(1, +[] {
            try {
                taco::wait_until([] { return false; }); // a result that never comes
            } catch (const taco::stopped_error&) {
                flag->store(true);
                throw;
            }
        });
        taco::sync(2, +[] {}); // main returns while core 1 waits
    });
    unwound = seen.load();
    REQUIRE(unwound);
}
