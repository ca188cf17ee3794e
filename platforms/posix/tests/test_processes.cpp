// The POSIX process-per-core mode: invocations and collectives across
// processes, a crashed core reported instead of a hang, and the emulated
// cached memory (a view per process over one canonical copy).
#include <catch2/catch.hpp>

#include <cstdlib>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include <test_support.hpp>

namespace {

using tacomesh::posix::config;
using tacomesh::posix::execution_mode;

config processes(taco::core_id n) { return {.cores = n, .mode = execution_mode::processes}; }

int pid_here() { return int(::getpid()); }
// SIGKILL: a handler (Catch's, a sanitizer's) inherited from the test
// process cannot turn it into an ordinary exit.
int crash_here() {
    ::kill(::getpid(), SIGKILL);
    return 0;
}
// Dies with what core 0 sent meanwhile still in its ring (core 0 sends in
// microseconds; it does not poll while it sleeps).
void crash_after_a_while() {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    crash_here();
}
void exit_here() { ::_exit(3); }
void exit_zero_here() { std::exit(0); }
void stop_here() { ::raise(SIGSTOP); }
void spin_here() { test::spin_forever(); }
long square(long v) { return v * v; }

struct counter {
    long n = 0;
    void add(long v) { n += v; }
    long get() const { return n; }
};

} // namespace

TEST_CASE("process mode: every core is its own process, invocations and futures cross them", "[processes]") {
    std::set<int> pids;
    long sum = 0;
    taco::run(processes(5), [&] {
        for (taco::core_id c = 0; c < 5; ++c) pids.insert(taco::sync(c, &pid_here));
        std::vector<taco::future<long>> f(5);
        for (taco::core_id c = 0; c < 5; ++c) taco::async(c, taco::m2f(&square, long(c)), f[c]);
        for (auto& x : f) sum += x.get();
        // An object on another core lives in that process's private heap.
        auto obj = taco::new_on<counter>(3).get();
        for (int i = 0; i < 1000; ++i) taco::async(obj, &counter::add, 2L);
        CHECK(taco::sync(obj, &counter::get) == 2000);
        taco::delete_on(obj);
    });
    CHECK(pids.size() == 5);
    CHECK(pids.count(int(::getpid())) == 1); // core 0 is the caller
    CHECK(sum == 0 + 1 + 4 + 9 + 16);
}

TEST_CASE("process mode: a reduce over an oversubscribed group of processes", "[processes]") {
    const taco::core_id n = 8; // more processes than CPUs
    long total = 0;
    taco::run(config{.cores = n, .idle = tacomesh::posix::idle_policy::sleep, .mode = execution_mode::processes},
              [&] {
                  std::vector<taco::global_ptr<counter>> members;
                  for (taco::core_id c = 0; c < n; ++c) {
                      members.push_back(taco::new_on<counter>(c).get());
                      taco::sync(members.back(), &counter::add, long(c) + 1);
                  }
                  auto g = taco::make_group(members, taco::topology::kary(2));
                  taco::future<long> r;
                  taco::reduce(g, taco::m2f(&counter::get), [](long a, long b) { return a + b; }, r);
                  total = r.get();
                  taco::destroy_group(g);
                  for (auto m : members) taco::delete_on(m);
              });
    CHECK(total == n * (n + 1) / 2);
}

TEST_CASE("process mode: a core that crashes is reported by the launcher, not a hang", "[processes]") {
    using tacomesh::posix::core_failure;
    SECTION("signal while core 0 waits for it (polling)") {
        REQUIRE_THROWS_WITH(taco::run(processes(3), [] { taco::sync(2, &crash_here); }),
                            Catch::Contains("core 2") && Catch::Contains("killed by signal 9"));
    }
    SECTION("the report names what was in flight to the dead core") {
        REQUIRE_THROWS_WITH(taco::run(processes(2),
                                      [] {
                                          taco::async(1, &crash_after_a_while);
                                          for (int i = 0; i < 3; ++i) taco::async(1, &pid_here);
                                          taco::sync(1, &pid_here); // never answers
                                      }),
                            Catch::Contains("core 1") && Catch::Contains("killed by signal 9") &&
                                Catch::Contains("; 4 messages from core 0 waiting for it;"));
    }
    SECTION("signal while core 0 sleeps") {
        auto c = processes(3);
        c.idle = tacomesh::posix::idle_policy::sleep;
        REQUIRE_THROWS_AS(taco::run(c, [] { taco::sync(1, &crash_here); }), core_failure);
    }
    SECTION("a core that exits on its own while main runs") {
        REQUIRE_THROWS_WITH(taco::run(processes(2),
                                      [] {
                                          taco::async(1, &exit_here);
                                          taco::sync(1, &pid_here); // never answers
                                      }),
                            Catch::Contains("core 1") && Catch::Contains("exited with status 3"));
    }
    SECTION("a core that calls exit(0) is a failure too, not a normal end") {
        REQUIRE_THROWS_WITH(taco::run(processes(2),
                                      [] {
                                          taco::async(1, &exit_zero_here);
                                          taco::sync(1, &pid_here); // never answers
                                      }),
                            Catch::Contains("core 1") && Catch::Contains("exited with status 0 before the run ended"));
    }
    SECTION("core 0 only polling (taco::poll) learns of the failure too") {
        REQUIRE_THROWS_WITH(taco::run(processes(2),
                                      [] {
                                          taco::async(1, &crash_here);
                                          for (;;) taco::poll(); // no future, no wait_until
                                      }),
                            Catch::Contains("core 1") && Catch::Contains("killed by signal 9"));
    }
    SECTION("a stopped core (SIGSTOP) is reported after the liveness timeout") {
        auto c = processes(2);
        c.liveness_timeout = std::chrono::milliseconds(300);
        REQUIRE_THROWS_WITH(taco::run(c,
                                      [] {
                                          taco::async(1, &stop_here);
                                          taco::sync(1, &pid_here);
                                      }),
                            Catch::Contains("core 1") && Catch::Contains("has been stopped by signal 19"));
    }
    SECTION("a core spinning in user code: reported with what waited for it") {
        auto c = processes(3);
        c.liveness_timeout = std::chrono::milliseconds(300);
        REQUIRE_THROWS_WITH(taco::run(c,
                                      [] {
                                          taco::async(2, &spin_here);
                                          taco::sync(2, &pid_here);
                                      }),
                            Catch::Contains("core 2") &&
                                Catch::Contains("has taken none of its waiting messages for 0.") &&
                                Catch::Contains("1 message from core 0"));
    }
    SECTION("a core spinning while the run ends: taco::run reports it instead of hanging at exit") {
        auto c = processes(2);
        c.liveness_timeout = std::chrono::milliseconds(300);
        REQUIRE_THROWS_WITH(taco::run(c, [] { taco::async(1, &spin_here); }),
                            Catch::Contains("core 1") && Catch::Contains("has taken none"));
    }
    SECTION("the next run is unaffected") {
        long v = 0;
        taco::run(processes(3), [&] { v = taco::sync(2, &square, 7L); });
        CHECK(v == 49);
    }
}

namespace {

void poke(mesh::detail::address a, long v, bool publish) {
    auto* p = static_cast<long*>(a.p);
    *p = v;
    if (publish) mesh::write_back(p, sizeof *p);
}
long peek(mesh::detail::address a, bool refresh) {
    auto* p = static_cast<long*>(a.p);
    if (refresh) mesh::invalidate(p, sizeof *p);
    return *p;
}
long peek_private(mesh::detail::address a) { return *mesh::private_instance(static_cast<long*>(a.p)); }
void poke_private(mesh::detail::address a, long v) { *mesh::private_instance(static_cast<long*>(a.p)) = v; }

} // namespace

TEST_CASE("liveness is on by default (ending the run in process mode only) and ignores long work with nothing "
          "waiting",
          "[processes]") {
    using tacomesh::posix::unresponsive_core;
    CHECK(processes(2).liveness() == std::chrono::seconds(10));
    CHECK(config{.cores = 2}.liveness() == std::chrono::seconds(10));
    CHECK(processes(2).unresponsive_response() == unresponsive_core::end_run);
    CHECK(config{.cores = 2}.unresponsive_response() == unresponsive_core::warn);
    auto c = processes(2);
    c.liveness_timeout = std::chrono::milliseconds(100);
    // Core 1 computes for 5 timeouts with nothing sent to it: nobody waits.
    int v = 0;
    taco::run(c, [&] {
        auto f = taco::call(1, [] {
            test::spin_for(500'000'000);
            return 7;
        });
        v = f.get();
    });
    CHECK(v == 7);
}

TEST_CASE("liveness in thread mode, asked to end the run: a thread that stopped answering ends the process with "
          "the report",
          "[processes]") {
    auto r = test::run_in_child([] {
        taco::run(config{.cores = 2,
                         .liveness_timeout = std::chrono::milliseconds(200),
                         .on_unresponsive = tacomesh::posix::unresponsive_core::end_run},
                  [] {
            taco::async(1, &spin_here);
            taco::sync(1, &pid_here);
        });
    });
    CHECK(r.aborted);
    CHECK_THAT(r.err, Catch::Contains("core 1 (a thread) has taken none of its waiting messages") &&
                          Catch::Contains("aborting"));
}

TEST_CASE("liveness that warns (thread mode's default): reported once while unresponsive, and the run goes on",
          "[processes]") {
    for (auto mode : {execution_mode::threads, execution_mode::processes}) {
        auto r = test::run_in_child([mode] {
            config c{.cores = 2, .mode = mode, .liveness_timeout = std::chrono::milliseconds(100)};
            c.on_unresponsive = tacomesh::posix::unresponsive_core::warn;
            long v = 0;
            taco::run(c, [&] {
                // Core 1 keeps core 0's invocation waiting for ~8 timeouts.
                taco::async(1, +[] { test::spin_for(800'000'000); });
                v = taco::sync(1, &square, 9L);
            });
            std::fprintf(stderr, "result %ld\n", v);
        });
        INFO(r.err);
        CHECK_FALSE(r.aborted);
        const std::string warning = "core 1 (" + std::string(mode == execution_mode::threads ? "a thread" : "process");
        CHECK_THAT(r.err, Catch::Contains(warning) && Catch::Contains("has taken none of its waiting messages") &&
                              Catch::Contains("1 message from core 0 waiting") &&
                              Catch::Contains("still waiting for it") && Catch::EndsWith("result 81\n"));
        // Once: the core is excused until it answers.
        const auto first = r.err.find("has taken none");
        CHECK(r.err.find("has taken none", first + 1) == std::string::npos);
    }
}

TEST_CASE("process mode: cached memory is a private view per core over one canonical copy", "[processes][memory]") {
    taco::run(processes(3), [] {
        auto* p = static_cast<long*>(mesh::allocate(sizeof(long)));
        const mesh::detail::address a{p};
        CHECK(taco::sync(1, &peek, a, true) == 0);
        taco::sync(2, &poke, a, 5L, false); // written into core 2's view only
        CHECK(taco::sync(2, &peek, a, false) == 5);
        CHECK(taco::sync(1, &peek, a, true) == 0); // not written back: memory still has 0
        taco::sync(2, &poke, a, 6L, true);
        CHECK(taco::sync(1, &peek, a, false) == 0); // core 1's view is stale ...
        CHECK(taco::sync(1, &peek, a, true) == 6);  // ... until it invalidates
        CHECK(*p == 0);                              // core 0 never refreshed
        mesh::deallocate(p);

        // Non-cached memory is the shared memory itself: no refresh needed.
        auto* q = static_cast<long*>(mesh::allocate(sizeof(long), mesh::memory_mode::non_cached));
        taco::sync(2, &poke, mesh::detail::address{q}, 7L, false);
        CHECK(taco::sync(1, &peek, mesh::detail::address{q}, false) == 7);
        CHECK(*q == 7);
        mesh::deallocate(q, mesh::memory_mode::non_cached);

        // Core-private memory: one logical address, one instance per core.
        auto* r = static_cast<long*>(mesh::allocate_private(sizeof(long)));
        for (taco::core_id c = 0; c < 3; ++c) taco::sync(c, &poke_private, mesh::detail::address{r}, long(c) * 10);
        for (taco::core_id c = 0; c < 3; ++c) CHECK(taco::sync(c, &peek_private, mesh::detail::address{r}) == c * 10);
        mesh::deallocate_private(r);
    });
}

TEST_CASE("threads mode: cached memory is coherent, private memory still per core", "[memory]") {
    taco::run(config{.cores = 3}, [] {
        auto* p = static_cast<long*>(mesh::allocate(sizeof(long)));
        taco::sync(2, &poke, mesh::detail::address{p}, 5L, false);
        CHECK(taco::sync(1, &peek, mesh::detail::address{p}, false) == 5);
        mesh::deallocate(p);
        auto* r = static_cast<long*>(mesh::allocate_private(sizeof(long)));
        for (taco::core_id c = 0; c < 3; ++c) taco::sync(c, &poke_private, mesh::detail::address{r}, long(c) + 1);
        for (taco::core_id c = 0; c < 3; ++c) CHECK(taco::sync(c, &peek_private, mesh::detail::address{r}) == c + 1);
        mesh::deallocate_private(r);
    });
}

namespace {
mesh::detail::address alloc_from_here(std::size_t bytes) { return {mesh::allocate(bytes)}; }
void free_from_here(mesh::detail::address a) { mesh::deallocate(a.p); }
} // namespace

TEST_CASE("MESH allocators: same address for every core, reuse after free, clear errors", "[memory]") {
    for (auto mode : {execution_mode::threads, execution_mode::processes}) {
        taco::run(config{.cores = 3, .mode = mode, .cached_bytes = 1 << 20}, [] {
            // Allocations from any core come from the home core's allocator: no overlap.
            std::vector<std::pair<std::uintptr_t, std::size_t>> got;
            for (int i = 0; i < 30; ++i) {
                const std::size_t bytes = 64 * (1 + i % 5);
                auto a = taco::sync(taco::core_id(i % 3), &alloc_from_here, bytes);
                CHECK(reinterpret_cast<std::uintptr_t>(a.p) % 64 == 0);
                got.push_back({reinterpret_cast<std::uintptr_t>(a.p), bytes});
            }
            std::sort(got.begin(), got.end());
            for (std::size_t i = 1; i < got.size(); ++i) CHECK(got[i - 1].first + got[i - 1].second <= got[i].first);
            CHECK(mesh::bytes_in_use(mesh::memory_mode::cached) == 6 * 64 * (1 + 2 + 3 + 4 + 5));
            for (std::size_t i = 0; i < got.size(); ++i)
                taco::sync(taco::core_id(i % 3), &free_from_here, mesh::detail::address{reinterpret_cast<void*>(got[i].first)});
            CHECK(mesh::bytes_in_use(mesh::memory_mode::cached) == 0);
            // Freed blocks coalesce: the whole megabyte is one block again.
            void* big = mesh::allocate(1 << 20);
            CHECK(big != nullptr);
            mesh::deallocate(big);

            CHECK_THROWS_WITH(mesh::allocate((1 << 20) + 1),
                              Catch::Contains("out of cached shared memory") && Catch::Contains("cached_bytes"));
            CHECK_THROWS_AS(mesh::allocate((1 << 20) + 1), std::bad_alloc);
            int local = 0;
            CHECK_THROWS_WITH(mesh::deallocate(&local), Catch::Contains("was not allocated"));
            CHECK_THROWS_WITH(mesh::allocate(64, mesh::memory_mode::cached, 48), Catch::Contains("power of two"));
            // Write-through is backed by non-cached memory on POSIX (documented).
            void* wt = mesh::allocate(64, mesh::memory_mode::write_through);
            CHECK(mesh::bytes_in_use(mesh::memory_mode::non_cached) >= 64);
            mesh::deallocate(wt, mesh::memory_mode::write_through);
        });
    }
}
