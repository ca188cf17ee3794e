// Misuse that can only be caught at run time gets a clear message.
#include <catch2/catch.hpp>


#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <test_support.hpp>

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

namespace {
struct counter_outside {
    long n = 0;
};
} // namespace

TEST_CASE("invocations outside a running TACO program throw a usage_error that says how to start one",
          "[misuse]") {
    REQUIRE_THROWS_AS(taco::async(0, +[] {}), taco::usage_error);
    REQUIRE_THROWS_WITH(taco::async(0, +[] {}), Catch::Contains("start the program with taco::run"));
    // The calls that wait, and a construction on a core, too (they aborted before).
    REQUIRE_THROWS_WITH(taco::sync(0, +[] { return 1; }), Catch::Contains("outside taco::run"));
    REQUIRE_THROWS_WITH((void)taco::call(0, +[] { return 1; }), Catch::Contains("outside taco::run"));
    REQUIRE_THROWS_AS((void)taco::new_on<counter_outside>(0), taco::usage_error);
    // A thread of the program's own, while a run goes on: not a core either.
    bool refused = false;
    taco::run(tacomesh::posix::config{.cores = 2}, [&] {
        std::thread([&] {
            try {
                (void)taco::sync(1, +[] { return 1; });
            } catch (const taco::usage_error& e) {
                refused = std::string_view(e.what()).find("a thread of the program's own") != std::string_view::npos;
            }
        }).join();
    });
    CHECK(refused);
}

namespace {
struct counter {
    long n = 0;
    long add(long d) { return n += d; }
};
long twice(long x) { return 2 * x; }
} // namespace

TEST_CASE("an invocation on a core the run does not have, or on a null global_ptr, throws before sending",
          "[misuse]") {
    std::string far, null_ptr, null_sync, far_timer, null_timer;
    long after = 0;
    taco::run(tacomesh::posix::config{.cores = 2}, [&] {
        taco::future<long> f;
        try {
            taco::async(7, taco::m2f(&twice, 1L), f);
        } catch (const taco::usage_error& e) {
            far = e.what();
        }
        REQUIRE_FALSE(f.ready()); // not armed: its destructor does not wait
        try {
            taco::async(taco::global_ptr<counter>{}, taco::m2f(&counter::add, 1L), f);
        } catch (const taco::usage_error& e) {
            null_ptr = e.what();
        }
        try {
            (void)taco::sync(taco::global_ptr<counter>{1, nullptr}, &counter::add, 1L);
        } catch (const taco::usage_error& e) {
            null_sync = e.what();
        }
        // Timers: the same check, before the timer is sent.
        try {
            taco::after(std::chrono::milliseconds(1), taco::core_id(5), taco::m2f(&twice, 1L));
        } catch (const taco::usage_error& e) {
            far_timer = e.what();
        }
        try {
            taco::after(std::chrono::milliseconds(1), taco::global_ptr<counter>{}, taco::m2f(&counter::add, 1L));
        } catch (const taco::usage_error& e) {
            null_timer = e.what();
        }
        // The run goes on: the same future serves a correct invocation.
        taco::async(1, taco::m2f(&twice, 21L), f);
        after = f.get();
    });
    REQUIRE(far == "taco: an invocation on core 7, but this run has 2 cores (0..1)");
    REQUIRE(null_ptr.find("null global_ptr") != std::string::npos);
    REQUIRE(null_sync.find("null global_ptr") != std::string::npos);
    REQUIRE(far_timer == "taco: an invocation on core 5, but this run has 2 cores (0..1)");
    REQUIRE(null_timer.find("null global_ptr") != std::string::npos);
    REQUIRE(after == 42);
}

TEST_CASE("a nested taco::run is refused with a usage_error, and the running program goes on", "[misuse]") {
    std::string nested_main, nested_core1;
    long after = 0;
    taco::run(tacomesh::posix::config{.cores = 2}, [&] {
        try {
            taco::run(tacomesh::posix::config{.cores = 2}, [] {});
        } catch (const taco::usage_error& e) {
            nested_main = e.what();
        }
        nested_core1 = taco::call(1, +[] {
                           try {
                               taco::run(tacomesh::posix::config{.cores = 1}, [] {});
                           } catch (const taco::usage_error& e) {
                               return std::string_view(e.what()).starts_with("taco::run: called on core 1");
                           }
                           return false;
                       }).get()
                           ? "refused on core 1"
                           : "";
        after = taco::call(1, taco::m2f(&twice, 4L)).get();
    });
    REQUIRE(nested_main.find("taco::run: called on core 0 of a program that is already running") == 0);
    REQUIRE(nested_core1 == "refused on core 1");
    REQUIRE(after == 8);
}

TEST_CASE("a future passed again while it still waits is refused, and its first result still arrives",
          "[misuse]") {
    std::string refused, refused_gather;
    long first = 0;
    taco::run(tacomesh::posix::config{.cores = 2}, [&] {
        auto c = taco::new_on<counter>(1).get();
        taco::future<long> f;
        taco::async(c, taco::m2f(&counter::add, 5L), f);
        try {
            taco::async(c, taco::m2f(&counter::add, 100L), f); // f still pending
        } catch (const taco::usage_error& e) {
            refused = e.what();
        }
        first = f.get();
        REQUIRE(taco::sync(c, &counter::add, 0L) == 5); // the refused one never ran


        std::vector<taco::global_ptr<counter>> members{taco::new_on<counter>(0).get(), c};
        auto g = taco::make_group(members);
        std::vector<long> out(g.size);
        taco::future<void> done;
        taco::at_each(g, taco::m2f(&counter::add, 1L), done);
        try {
            taco::gather(g, taco::m2f(&counter::add, 0L), std::span<long>(out), done);
        } catch (const taco::usage_error& e) {
            refused_gather = e.what();
        }
        done.get();
        taco::destroy_group(g);
        for (auto m : members) taco::delete_on(m);
    });
    REQUIRE(refused.find("still waits for the result of an earlier invocation") != std::string::npos);
    REQUIRE(refused_gather.find("still waits") != std::string::npos);
    REQUIRE(first == 5);
}

TEST_CASE("bad configurations are rejected before any core starts", "[misuse]") {
    auto run_with = [](tacomesh::posix::config c) { taco::run(c, [] {}); };
    REQUIRE_THROWS_WITH(run_with({.cores = 0}), Catch::Contains("cores must be at least 1"));
    REQUIRE_THROWS_WITH(run_with({.cores = 2, .ring_slots = 3}), Catch::Contains("power of two"));
    REQUIRE_THROWS_WITH(run_with({.cores = 2, .ring_slots = 1}), Catch::Contains("power of two"));
    // Sizes that used to wrap, or to run the machine out of memory, fail at
    // once and say why.
    REQUIRE_THROWS_WITH(run_with({.cores = taco::core_id(-1)}), Catch::Contains("a negative number?"));
    REQUIRE_THROWS_WITH(run_with({.cores = 100000}), Catch::Contains("is more than 65536"));
    REQUIRE_THROWS_WITH(run_with({.cores = 2, .ring_slots = 1u << 31}), Catch::Contains("from 2 to 65536"));
    REQUIRE_THROWS_WITH(run_with({.cores = 2, .private_bytes = std::size_t(1) << 50}),
                        Catch::Contains("config.private_bytes"));
    REQUIRE_THROWS_WITH(run_with({.cores = 65536, .ring_slots = 65536}),
                        Catch::Contains("would reserve") && Catch::Contains("65536^2 rings"));
    REQUIRE_THROWS_WITH(run_with({.cores = 2, .liveness_timeout = std::chrono::milliseconds(-1)}),
                        Catch::Contains("liveness_timeout is negative"));
}

TEST_CASE("MESH after taco::run has returned: each entry point throws a usage_error instead of faulting",
          "[misuse][mesh]") {
    // mesh::read on a sharing_ptr kept from a finished run read its control
    // block, unmapped with the run, and died of SIGSEGV. In a child, so that
    // a fault is a failed check here rather than the end of the test program.
    auto r = test::run_in_child([] {
        mesh::sharing_ptr<long> kept, destroyed;
        taco::run(tacomesh::posix::config{.cores = 2}, [&] {
            kept = mesh::make_shared_object<long>(7L);
            destroyed = mesh::make_shared_object<long>(8L);
            mesh::destroy_shared_object(destroyed);
            destroyed = kept; // a copy: still names the kept object
        });
        auto attempt = [](const char* name, auto&& f) {
            try {
                f();
                std::fprintf(stderr, "%s: no error\n", name);
            } catch (const taco::usage_error& e) {
                std::fprintf(stderr, "%s: usage_error: %s\n", name, e.what());
            } catch (const std::exception& e) {
                std::fprintf(stderr, "%s: other error: %s\n", name, e.what());
            }
        };
        attempt("read", [&] { (void)*mesh::read(kept); });
        attempt("write", [&] { *mesh::write(kept) = 1; });
        attempt("read_all", [&] { (void)mesh::read_all(kept, destroyed); });
        attempt("reader", [&] { mesh::reader<long> r(kept); });
        attempt("destroy", [&] { mesh::destroy_shared_object(destroyed); });
        attempt("make", [] { (void)mesh::make_shared_object<long>(1L); });
        attempt("allocate", [] { (void)mesh::allocate(64); });
        attempt("allocate non_cached", [] { (void)mesh::allocate(64, mesh::memory_mode::non_cached); });
        attempt("allocate_private", [] { (void)mesh::allocate_private(64); });
        attempt("bytes_in_use", [] { (void)mesh::bytes_in_use(mesh::memory_mode::write_through); });
        attempt("invalidate", [&] { mesh::invalidate(&kept, 8); });
        std::_Exit(0);
    });
    INFO(r.err);
    REQUIRE_FALSE(r.aborted);
    for (const char* name : {"read", "write", "read_all", "reader", "destroy", "make", "allocate",
                             "allocate non_cached", "allocate_private", "bytes_in_use", "invalidate"})
        CHECK_THAT(r.err, Catch::Contains(std::string(name) + ": usage_error: mesh::"));
    CHECK_THAT(r.err, Catch::Contains("read: usage_error: mesh::read outside taco::run") &&
                          Catch::Contains("live only during the run that made them"));
    CHECK_THAT(r.err, Catch::Contains("destroy: usage_error: mesh::destroy_shared_object outside taco::run"));
}

TEST_CASE("MESH regions of 0 bytes mean none: the run starts, and MESH's refusal names the setting",
          "[misuse][mesh][sizes]") {
    // Each used to fail the run with "cannot map 0 bytes ...: Invalid
    // argument"; the reference calls them reservations, and 0 reserves none
    // (as on the SCC and MPI platforms).
    for (const auto mode : {tacomesh::posix::execution_mode::threads, tacomesh::posix::execution_mode::processes}) {
        std::string cached, non_cached, private_, made;
        long answer = 0;
        taco::run(tacomesh::posix::config{.cores = 2, .pin = false, .mode = mode, .non_cached_bytes = 0,
                                          .cached_bytes = 0, .private_bytes = 0},
                  [&] {
                      answer = taco::sync(1, +[](long x) { return 2 * x; }, 21L); // TACO alone needs none
                      try {
                          (void)mesh::allocate(64);
                      } catch (const mesh::out_of_memory& e) {
                          cached = e.what();
                      }
                      try {
                          (void)mesh::allocate(64, mesh::memory_mode::non_cached);
                      } catch (const mesh::out_of_memory& e) {
                          non_cached = e.what();
                      }
                      try {
                          (void)mesh::allocate_private(64);
                      } catch (const mesh::out_of_memory& e) {
                          private_ = e.what();
                      }
                      try {
                          (void)mesh::make_shared_object<long>(1L);
                      } catch (const mesh::out_of_memory& e) {
                          made = e.what();
                      }
                  });
        CHECK(answer == 42);
        CHECK_THAT(cached, Catch::Contains("raise the platform's config.cached_bytes"));
        CHECK_THAT(non_cached, Catch::Contains("config.non_cached_bytes"));
        CHECK_THAT(private_, Catch::Contains("config.private_bytes"));
        CHECK_THAT(made, Catch::Contains("config.cached_bytes"));
        CHECK_THAT(cached + non_cached + private_, !Catch::Contains("tacomesh::posix"));
    }
}

TEST_CASE("a memory region the system refuses to map fails the run naming the setting that asked for it",
          "[misuse][sizes]") {
    if (test::sanitized) return; // address-space limits and sanitizers' shadow memory do not mix
    using tacomesh::posix::config;
    // Each in a child whose address space has room for 256 MiB more than it has mapped.
    auto refusal = [](config c) {
        auto r = test::run_refused_in_child(c, std::size_t(256) << 20);
        REQUIRE_FALSE(r.aborted);
        return r.err;
    };
    const std::size_t mib = std::size_t(1) << 20;
    std::string err = refusal({.cores = 2, .pin = false, .non_cached_bytes = mib, .cached_bytes = 1024 * mib, .private_bytes = mib});
    CHECK_THAT(err, Catch::Contains("config.cached_bytes = 1073741824") && Catch::Contains("(RLIMIT_AS)") &&
                        Catch::Contains("lower config.cached_bytes"));
    err = refusal({.cores = 2, .pin = false, .non_cached_bytes = 1024 * mib, .cached_bytes = mib, .private_bytes = mib});
    CHECK_THAT(err, Catch::Contains("config.non_cached_bytes = 1073741824"));
    err = refusal({.cores = 8, .pin = false, .non_cached_bytes = mib, .cached_bytes = mib, .private_bytes = 64 * mib});
    CHECK_THAT(err, Catch::Contains("config.private_bytes = 67108864 per core, for 8 cores"));
    // Process mode: each core's view of cached memory is a mapping of its own too.
    err = refusal({.cores = 2, .pin = false, .mode = tacomesh::posix::execution_mode::processes,
                   .non_cached_bytes = mib, .cached_bytes = 200 * mib, .private_bytes = mib});
    CHECK_THAT(err, Catch::Contains("per-core view") && Catch::Contains("config.cached_bytes = 209715200"));
}

TEST_CASE("a thread the system refuses fails the run with a message, not std::terminate", "[misuse]") {
    if (test::sanitized) return; // address-space limits and sanitizers' shadow memory do not mix
    // Room for the run's mappings (~120 MB) and a few thread stacks, not
    // for 512 (8 MiB each).
    auto r = test::run_refused_in_child(tacomesh::posix::config{.cores = 512, .ring_slots = 2, .pin = false,
                                                                .non_cached_bytes = 1 << 20, .cached_bytes = 1 << 20,
                                                                .private_bytes = 1 << 16},
                                        std::size_t(256) << 20);
    INFO(r.err);
    REQUIRE_FALSE(r.aborted);
    REQUIRE(r.err.find("cannot start the thread of core") != std::string::npos);
    REQUIRE(r.err.find("of 512") != std::string::npos);
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

namespace {
struct holds_pointer {
    const int* p; // trivially copyable, not a raw pointer type: only the debug check sees it
};
int read_through(holds_pointer h) { return h.p ? 1 : 0; }
long add_to(taco::global_ptr<counter> c, long d) { return taco::sync(c, &counter::add, d); }
int captured_in_coroutine() {
    int local = 3;
    return taco::sync(0, [&local] { return local; }); // from core 1's coroutine stack to core 0
}
} // namespace

TEST_CASE("debug checks: an invocation to another core holding an address on the sender's stack is refused",
          "[misuse]") {
    static_assert(TACO_DEBUG_CHECKS, "the tests build with the debug checks on");
    std::string by_reference, in_struct, in_coroutine;
    long fine = 0;
    taco::run(tacomesh::posix::config{.cores = 2}, [&] {
        int local = 41;
        try {
            (void)taco::sync(1, [&local] { return local + 1; });
        } catch (const taco::usage_error& e) {
            by_reference = e.what();
        }
        try {
            (void)taco::sync(1, &read_through, holds_pointer{&local});
        } catch (const taco::usage_error& e) {
            in_struct = e.what();
        }
        try {
            (void)taco::sync(1, taco::m2f(&captured_in_coroutine), taco::as_coroutine{});
        } catch (const taco::remote_error& e) {
            in_coroutine = e.what();
        }
        // Legitimate: values, and a global_ptr to a local (it names this core).
        counter c;
        const auto gp = taco::to_global(&c);
        fine += taco::sync(1, [local] { return long(local); });
        fine += taco::sync(1, &add_to, gp, 1L);
        fine += taco::sync(1, [gp] { return taco::sync(gp, &counter::add, 1L); });
        // To this core itself nothing leaves the frame's core.
        fine += taco::sync(0, [&local] { return long(local); });
    });
    CHECK_THAT(by_reference, Catch::Contains("holds an address on the sending core's stack"));
    CHECK_THAT(in_struct, Catch::Contains("holds an address on the sending core's stack"));
    CHECK_THAT(in_coroutine, Catch::Contains("address on the sending core"));
    CHECK(fine == 41 + 1 + 2 + 41);
}

namespace {
std::atomic<int> late_continuations{0};
std::string late_continuation_text;
void note_late_continuation(const taco::error_info& e) {
    late_continuation_text = std::string(e.view());
    late_continuations.fetch_add(1, std::memory_order_release);
}
int late_continuation_noted() { return late_continuations.load(std::memory_order_acquire); }
bool late_continuation_refused() {
    return late_continuation_text.starts_with("taco: invocation on a deleted object");
}
} // namespace

TEST_CASE("debug checks: an invocation, a continuation or a second delete_on on a deleted object is refused",
          "[misuse]") {
    static_assert(TACO_DEBUG_CHECKS, "the tests build with the debug checks on");
    using tacomesh::posix::execution_mode;
    for (auto mode : {execution_mode::threads, execution_mode::processes}) {
        std::string use, twice_deleted, stale;
        long fine = 0;
        int late_reported = 0;
        bool late_refused = false;
        late_continuations = 0;
        late_continuation_text.clear();
        taco::set_uncaught_error_handler(&note_late_continuation);
        taco::run(tacomesh::posix::config{.cores = 2, .mode = mode}, [&] {
            const auto gone = taco::new_on<counter>(1).get();
            const auto kept = taco::new_on<counter>(1).get();
            auto copy = gone;
            taco::delete_on(gone);
            try {
                (void)taco::sync(copy, &counter::add, 1L);
            } catch (const taco::remote_error& e) {
                use = e.text();
            }
            try {
                taco::delete_on(copy);
            } catch (const taco::remote_error& e) {
                twice_deleted = e.text();
            }
            // A pointer from before its object was deleted and another made
            // at its address (the registry's generation, set by hand here:
            // the quarantine keeps addresses from being reused this soon).
            auto older = kept;
            taco::detail::generation_access::set(older, taco::detail::generation_access::get(kept) - 1);
            try {
                taco::delete_on(older);
            } catch (const taco::remote_error& e) {
                stale = e.text();
            }
            // A continuation to the deleted object: refused on core 1, where
            // nobody waits for it, so the uncaught-error handler reports it.
            // (In process mode the handler's notes are in core 1's memory: ask there.)
            taco::async(0, taco::m2f(&twice, 5L), taco::then(copy, &counter::add));
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
            while (taco::sync(1, &late_continuation_noted) == 0 && std::chrono::steady_clock::now() < deadline)
                taco::poll();
            late_reported = taco::sync(1, &late_continuation_noted);
            late_refused = taco::sync(1, &late_continuation_refused);
            // The live object is untouched and still works.
            fine = taco::sync(kept, &counter::add, 2L);
            taco::delete_on(kept);
        });
        taco::set_uncaught_error_handler(nullptr);
        INFO((mode == execution_mode::threads ? "threads" : "processes"));
        CHECK_THAT(use, Catch::StartsWith("taco: invocation on a deleted object (0x") &&
                            Catch::EndsWith(", core 1)"));
        CHECK_THAT(twice_deleted, Catch::StartsWith("taco: delete_on of an object deleted already"));
        CHECK_THAT(stale, Catch::StartsWith("taco: delete_on via a stale global_ptr"));
        CHECK(late_reported == 1);
        CHECK(late_refused);
        CHECK(fine == 2);
    }
}

TEST_CASE("a second destroy_group is refused, and (debug checks) so is a collective on a destroyed group",
          "[misuse]") {
    std::string collective;
    int reported = 0;
    std::string second_destroy;
    late_continuations = 0;
    late_continuation_text.clear();
    taco::set_uncaught_error_handler(&note_late_continuation);
    taco::run(tacomesh::posix::config{.cores = 3}, [&] {
        std::vector<taco::global_ptr<counter>> members{taco::new_on<counter>(1).get(), taco::new_on<counter>(2).get()};
        auto g = taco::make_group(members); // rooted on core 1, where the refusals are noted
        CHECK(taco::reduce(g, taco::m2f(&counter::add, 1L), std::plus<long>{}).get() == 2);
        taco::destroy_group(g);
        try {
            (void)taco::reduce(g, taco::m2f(&counter::add, 1L), std::plus<long>{}).get();
        } catch (const taco::remote_error& e) {
            collective = e.text();
        }
        taco::destroy_group(g); // nobody waits: core 1's uncaught-error handler hears of it
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (taco::sync(1, &late_continuation_noted) == 0 && std::chrono::steady_clock::now() < deadline)
            taco::poll();
        reported = taco::sync(1, &late_continuation_noted);
        second_destroy = late_continuation_text;
        // The members are untouched.
        CHECK(taco::sync(members[0], &counter::add, 0L) == 1);
        for (auto m : members) taco::delete_on(m);
    });
    taco::set_uncaught_error_handler(nullptr);
    CHECK_THAT(collective, Catch::StartsWith("taco: invocation on a deleted object"));
    CHECK(reported == 1);
    CHECK_THAT(second_destroy, Catch::Contains("the group was destroyed already"));
}

TEST_CASE("debug checks: the quarantine of deleted objects is bounded, and what leaves it is freed", "[misuse]") {
    using registry = taco::detail::object_registry;
    std::vector<void*> deleted;
    taco::run(tacomesh::posix::config{.cores = 1}, [&] {
        registry r;
        for (std::size_t i = 0; i <= registry::quarantine_objects; ++i) {
            void* p = ::operator new(32);
            r.check_delete(p, r.made(p));
            r.retire(p, 32);
            deleted.push_back(p);
        }
        CHECK_NOTHROW(r.check_alive(deleted.front())); // left the quarantine: freed
        CHECK_THROWS_AS(r.check_alive(deleted[1]), taco::usage_error);
        CHECK_THROWS_AS(r.check_alive(deleted.back()), taco::usage_error);
        CHECK_NOTHROW(r.check_alive(&r));
    }); // the rest is freed with the registry (ASan reports a leak otherwise)
}

namespace {
struct own_allocator {
    static void* operator new(std::size_t n) { return ::operator new(n); }
    static void operator delete(void* p) { ::operator delete(p); }
    static void operator delete(void* p, std::size_t) { ::operator delete(p); }
    long v = 0;
};
struct polymorphic {
    virtual ~polymorphic() = default;
};
} // namespace
static_assert(taco::detail::quarantinable_v<counter>);
static_assert(!taco::detail::quarantinable_v<own_allocator>); // overloaded: &T::operator delete is ambiguous
static_assert(!taco::detail::quarantinable_v<polymorphic>);
