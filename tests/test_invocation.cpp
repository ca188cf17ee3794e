// The invocation API: async, call, sync, futures, continuations, remote
// exceptions, nested and mutual sync calls, invocations on cores.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdio>
#include <stdexcept>
#include <string>

#include <test_support.hpp>

namespace {

struct account {
    long balance = 0;
    int calls = 0;
    void deposit(long v) { balance += v, ++calls; }
    long get() const { return balance; }
    void touch() { ++calls; }
    long withdraw(long v) {
        if (v > balance) throw std::runtime_error("insufficient funds: " + std::to_string(balance));
        return balance -= v;
    }
    void throw_int() { throw 42; }
    // Sync-calls back into `other`, whose core may itself be waiting on us.
    long relay(taco::global_ptr<account> other) { return taco::sync(other, &account::get) + 1; }
};

struct collector {
    long last = -1;
    int hits = 0;
    taco::core_id seen_on = taco::no_core;
    void take(long v) { last = v, ++hits, seen_on = taco::this_core(); }
    void take_void() { ++hits, seen_on = taco::this_core(); }
    long value() const { return last; }
    int count() const { return hits; }
    taco::core_id core() const { return seen_on; }
};

auto cores(taco::core_id n) { return test::on_cores(n); }

} // namespace

TEST_CASE("async is fire-and-forget and in order, call returns a future, sync waits", "[invocation]") {
    long balance = 0, via_future = 0;
    int calls = 0;
    bool ready_before = true;
    test::run(cores(2), [&] {
        auto acc = taco::new_on<account>(1).get();
        for (int i = 1; i <= 100; ++i) taco::async(acc, &account::deposit, long(i));
        auto f = taco::call(acc, &account::get);
        ready_before = f.ready(); // cannot be ready: the result needs a message back
        via_future = f.get();
        balance = taco::sync(acc, &account::get);
        calls = taco::sync(1, +[](taco::global_ptr<account> a) { return a->calls; }, acc);
        taco::delete_on(acc);
    });
    REQUIRE_FALSE(ready_before);
    REQUIRE(via_future == 5050); // the 100 deposits ran first: same source, same order
    REQUIRE(balance == 5050);
    REQUIRE(calls == 100);
}

TEST_CASE("continuations: to a future, to a method on a third core, void results", "[invocation]") {
    long value = 0, cont_value = 0;
    taco::core_id cont_core = taco::no_core;
    int void_hits = 0;
    test::run(cores(3), [&] {
        auto acc = taco::new_on<account>(1).get();
        auto col = taco::new_on<collector>(2).get();
        taco::async(acc, &account::deposit, 7L);
        taco::future<long> f;
        taco::async(acc, taco::m2f(&account::get), f);
        value = f.get();
        taco::async(acc, taco::m2f(&account::withdraw, 2L), taco::then(col, &collector::take));
        taco::async(acc, taco::m2f(&account::touch), taco::then(col, &collector::take_void));
        taco::wait_until([&] { return taco::sync(col, &collector::count) == 2; });
        cont_value = taco::sync(col, &collector::value);
        cont_core = taco::sync(col, &collector::core);
        taco::future<void> fv;
        taco::async(acc, taco::m2f(&account::touch), fv);
        fv.get();
        void_hits = taco::sync(col, &collector::count);
        taco::delete_on(acc);
        taco::delete_on(col);
    });
    REQUIRE(value == 7);
    REQUIRE(cont_value == 5);
    REQUIRE(cont_core == 2); // the continuation ran on the collector's core
    REQUIRE(void_hits == 2);
}

TEST_CASE("an exception in a remote method rethrows from future::get as remote_error", "[invocation][errors]") {
    std::string what, text, unknown;
    taco::core_id origin = taco::no_core;
    bool failed = false;
    long after = -1;
    test::run(cores(2), [&] {
        auto acc = taco::new_on<account>(1).get();
        taco::async(acc, &account::deposit, 10L);
        auto f = taco::call(acc, &account::withdraw, 50L);
        f.wait();
        failed = f.failed();
        try {
            f.get();
        } catch (const taco::remote_error& e) {
            what = e.what();
            text = e.text();
            origin = e.origin();
        }
        try {
            taco::sync(acc, &account::throw_int);
        } catch (const taco::remote_error& e) {
            unknown = e.text();
        }
        after = taco::sync(acc, &account::get); // the object and the core survive
        taco::delete_on(acc);
    });
    REQUIRE(failed);
    REQUIRE(origin == 1);
    REQUIRE(text == "insufficient funds: 10");
    REQUIRE(what.find("core 1") != std::string::npos);
    REQUIRE(unknown.find("unknown exception") != std::string::npos);
    REQUIRE(after == 10);
}

TEST_CASE("long exception texts are truncated, not overflowed", "[invocation][errors]") {
    std::string text;
    test::run(cores(2), [&] {
        try {
            taco::sync(1, +[] { throw std::runtime_error(std::string(500, 'x')); });
        } catch (const taco::remote_error& e) {
            text = e.text();
        }
    });
    REQUIRE(text == std::string(taco::error_info::text_capacity - 3, 'x') + "...");
}

namespace {
long relay_to(taco::core_id next) { return taco::sync(next, +[]() -> long { throw std::runtime_error("no such key: k"); }); }
} // namespace

TEST_CASE("an exception passing through a core on its way keeps its origin and its text", "[invocation][errors]") {
    std::string text, what;
    taco::core_id origin = taco::no_core;
    test::run(cores(3), [&] {
        try {
            (void)taco::sync(1, &relay_to, taco::core_id(2)); // core 1 lets core 2's exception through
        } catch (const taco::remote_error& e) {
            text = e.text();
            what = e.what();
            origin = e.origin();
        }
    });
    CHECK(origin == 2);
    CHECK(text == "no such key: k");
    CHECK(what == "taco: remote invocation on core 2 threw: no such key: k");
}

namespace {
std::atomic<int> g_uncaught{0};
std::atomic<taco::core_id> g_uncaught_core{taco::no_core};
} // namespace

TEST_CASE("an exception in a fire-and-forget invocation reaches the uncaught-error handler", "[invocation][errors]") {
    int uncaught = -1;
    taco::core_id origin = taco::no_core;
    test::run(cores(2), [&] {
        // Installed, and read back, on core 1: its process is the one that
        // reports (on MPI another rank's, on POSIX threads the same one).
        taco::sync(1, +[] {
            g_uncaught = 0;
            taco::set_uncaught_error_handler(+[](const taco::error_info& e) {
                g_uncaught_core = e.origin;
                ++g_uncaught;
            });
        });
        auto acc = taco::new_on<account>(1).get();
        taco::async(acc, &account::withdraw, 1L);
        taco::sync(acc, &account::get); // ordered after the failing call
        taco::delete_on(acc);
        uncaught = taco::sync(1, +[] {
            taco::set_uncaught_error_handler(nullptr);
            return g_uncaught.load();
        });
        origin = taco::sync(1, +[] { return g_uncaught_core.load(); });
    });
    REQUIRE(uncaught == 1);
    REQUIRE(origin == 1);
}

namespace {
// What an error continuation received, on the core it ran on.
struct failure_log {
    int tag = -1, failures = 0;
    taco::core_id origin = taco::no_core, seen_on = taco::no_core;
    char text[64] = {};
    void failed(int t, const taco::error_info& e) {
        tag = t, ++failures, origin = e.origin, seen_on = taco::this_core();
        std::snprintf(text, sizeof text, "%.*s", int(e.view().size()), e.view().data());
    }
    failure_log report() const { return *this; }
};
std::atomic<int> g_core_failures{0};
std::atomic<int> g_core_failure_tag{-1};
void count_failure(int tag, taco::error_info) { g_core_failure_tag = tag, ++g_core_failures; }
} // namespace

TEST_CASE("error continuations: a failure runs the error continuation, a value the value one, nothing is uncaught",
          "[invocation][errors]") {
    failure_log log;
    long value = -1;
    int values = -1, uncaught = -1, on_core = -1, on_core_tag = -1;
    test::run(cores(3), [&] {
        taco::sync(1, +[] {
            g_uncaught = 0;
            taco::set_uncaught_error_handler(+[](const taco::error_info&) { ++g_uncaught; });
        });
        auto acc = taco::new_on<account>(1).get();
        auto col = taco::new_on<collector>(2).get();
        auto errs = taco::new_on<failure_log>(0).get();
        taco::async(acc, &account::deposit, 10L);
        // Fails (10 < 50): only the error continuation runs, on core 0, with its bound tag.
        taco::async(acc, taco::m2f(&account::withdraw, 50L),
                    taco::then(col, &collector::take).on_error(errs, &failure_log::failed, 7));
        // Succeeds: only the value continuation runs.
        taco::async(acc, taco::m2f(&account::withdraw, 4L),
                    taco::then(col, &collector::take).on_error(errs, &failure_log::failed, 8));
        // A function on a core as the error continuation, chained on a future.
        auto f = taco::call(acc, &account::withdraw, 1000L);
        f.then(taco::then(col, &collector::take).on_error(2, &count_failure, 9));
        taco::wait_until([&] {
            return taco::sync(errs, &failure_log::report).failures == 1 && taco::sync(col, &collector::count) == 1 &&
                   taco::sync(2, +[] { return g_core_failures.load(); }) == 1;
        });
        taco::sync(acc, &account::get); // any late, wrong delivery has had its turn
        log = taco::sync(errs, &failure_log::report);
        value = taco::sync(col, &collector::value);
        values = taco::sync(col, &collector::count);
        on_core = taco::sync(2, +[] { return g_core_failures.load(); });
        on_core_tag = taco::sync(2, +[] { return g_core_failure_tag.load(); });
        uncaught = taco::sync(1, +[] {
            taco::set_uncaught_error_handler(nullptr);
            return g_uncaught.load();
        });
        taco::delete_on(errs);
        taco::delete_on(col);
        taco::delete_on(acc);
    });
    CHECK(log.failures == 1);
    CHECK(log.tag == 7);
    CHECK(log.origin == 1);
    CHECK(log.seen_on == 0);
    CHECK(std::string(log.text) == "insufficient funds: 10");
    CHECK(values == 1);
    CHECK(value == 6);
    CHECK(on_core == 1);
    CHECK(on_core_tag == 9);
    CHECK(uncaught == 0);
}

TEST_CASE("the default uncaught-error handler reports and aborts: nothing vanishes", "[invocation][errors]") {
    auto r = test::run_in_child([] {
        taco::run(test::child_cores(2), [] {
            taco::async(1, +[] { throw std::logic_error("lost exception"); });
            taco::sync(1, +[] {});
        });
    });
    REQUIRE(r.aborted);
    REQUIRE(r.err.find("lost exception") != std::string::npos);
    REQUIRE(r.err.find("core 1") != std::string::npos);
}

TEST_CASE("nested and mutual sync calls do not deadlock", "[invocation]") {
    long nested = 0, mutual1 = 0, mutual2 = 0;
    test::run(cores(3), [&] {
        account home;
        home.balance = 100;
        auto me = taco::to_global(&home);
        auto a1 = taco::new_on<account>(1).get();
        auto a2 = taco::new_on<account>(2).get();
        // sync, not async: a deposit must be in before core 1 reads it below,
        // and invocations keep their order per source core only (across
        // MPI ranks on TCP a causally later one from core 1 can overtake it).
        taco::sync(a1, &account::deposit, 1L);
        taco::sync(a2, &account::deposit, 2L);
        // core 0 waits on core 1, which sync-calls back into core 0.
        nested = taco::sync(a1, &account::relay, me);
        // core 1 and core 2 sync-call each other at the same time.
        auto f1 = taco::call(a1, &account::relay, a2);
        auto f2 = taco::call(a2, &account::relay, a1);
        mutual1 = f1.get();
        mutual2 = f2.get();
        taco::delete_on(a1);
        taco::delete_on(a2);
    });
    REQUIRE(nested == 101);
    REQUIRE(mutual1 == 3);
    REQUIRE(mutual2 == 2);
}

TEST_CASE("invocations on the own core go through the channel and keep async semantics", "[invocation]") {
    int order_ok = 0;
    test::run(cores(1), [&] {
        account a;
        auto gp = taco::to_global(&a);
        taco::async(gp, &account::deposit, 5L);
        const bool ran_inline = a.balance != 0;
        order_ok = !ran_inline && taco::sync(gp, &account::get) == 5;
    });
    REQUIRE(order_ok == 1);
}

TEST_CASE("a future destroyed before its result waits for it instead of being written after free",
          "[invocation]") {
    std::uint64_t received_during_destruction = 0;
    test::run(cores(2), [&] {
        auto* f = new taco::future<long>;
        taco::async(1, taco::m2f(+[] { return test::spin_for(2'000'000), 7L; }), *f);
        const auto before = taco::stats().received;
        delete f; // must serve until the result has landed (ASan would see a late write otherwise)
        received_during_destruction = taco::stats().received - before;
    });
    REQUIRE(received_during_destruction == 1);
}

TEST_CASE("function invocations on cores with arguments and results", "[invocation]") {
    long sum = 0;
    taco::core_id where = taco::no_core;
    test::run(cores(3), [&] {
        sum = taco::sync(2, +[](long a, int b) { return a + b; }, 40L, 2);
        where = taco::sync(2, +[] { return taco::this_core(); });
    });
    REQUIRE(sum == 42);
    REQUIRE(where == 2);
}

TEST_CASE("every core of an oversubscribed run serves invocations", "[invocation]") {
    constexpr taco::core_id n = 32;
    long total = 0;
    test::run(cores(n), [&] {
        for (taco::core_id c = 0; c < n; ++c) total += taco::sync(c, +[] { return long(taco::this_core()); });
    });
    REQUIRE(total == long(n) * (n - 1) / 2);
}

namespace {
std::atomic<taco::core_id> g_destroyed_on{taco::no_core};
struct placed {
    taco::core_id built_on;
    long value;
    placed(long v, int w) : built_on(taco::this_core()), value(v * w) {}
    ~placed() { g_destroyed_on = taco::this_core(); }
    taco::core_id where() const { return built_on; }
    long get() const { return value; }
};
} // namespace

TEST_CASE("new_on constructs on the target core with arguments, delete_on destroys there", "[invocation]") {
    taco::core_id built = taco::no_core, destroyed_on = taco::no_core;
    long value = 0;
    test::run(cores(3), [&] {
        auto p = taco::new_on<placed>(2, 6L, 7).get();
        built = taco::sync(p, &placed::where);
        value = taco::sync(p, &placed::get);
        taco::delete_on(p);
        destroyed_on = taco::sync(2, +[] { return g_destroyed_on.load(); }); // after the delete: same source
    });
    REQUIRE(built == 2);
    REQUIRE(value == 42);
    REQUIRE(destroyed_on == 2);
}
