// The invocation API's combination table: every target (global pointer, core
// id, group) x callable (member via m2f, free function, function object) x
// completion (none, future, then with bound arguments, call, sync) x options
// (none, each task kind and scheduling option, urgent, timeout, and several
// together) compiles and runs, and each cell checks what it promises: the
// value, the core it ran on, and as what kind of task. The combinations that
// cannot work are rejected at compile time (tests/neg/api_*.cpp).
#include <catch2/catch.hpp>

#include <atomic>
#include <functional>
#include <span>
#include <stdexcept>
#include <thread>
#include <chrono>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <test_support.hpp>

namespace {

using namespace std::chrono_literals;

/// How the call ran on its core: 0 straight from the channel, 1 as an
/// activity, 2 as a coroutine, + 10 * the task's priority.
long how_here() {
    const taco::task* t = taco::current_task();
    if (!t) return 0;
    return (t->kind() == taco::task_kind::coroutine ? 2 : 1) + 10 * t->sched.priority;
}

/// Results say who computed them: base + 100 * x + 1000 * core + how.
constexpr long member_base = 100'000, free_base = 200'000, functor_base = 300'000;
long encode(long base, long x) { return base + 100 * x + 1000 * long(taco::this_core()) + how_here(); }

/// Fire-and-forget cells report here (threads mode: one address space).
std::atomic<long> last_result{-1};
long report(long r) {
    last_result = r;
    return r;
}

struct probe {
    long m(long x) { return report(encode(member_base, x)); }
};
long free_fn(long x) { return report(encode(free_base, x)); }
struct functor {
    long offset;
    long operator()(long x) const { return report(encode(functor_base + offset, x)); }
};

/// A continuation target: then(gp, &api_collector::take, tag) delivers (tag, value).
struct api_collector {
    long tag = -1, value = -1;
    int hits = 0;
    void take(long t, long v) { tag = t, value = v, ++hits; }
    int count() const { return hits; }
    long last_tag() const { return tag; }
    long last_value() const { return value; }
};

template <class O>
constexpr int priority_of(const O&) { return 0; }
constexpr int priority_of(const taco::with_priority& p) { return p.value; }

/// What the cell's call must report as "how" with these options.
template <class... O>
long expected_how(const std::tuple<O...>& opts) {
    constexpr bool coroutine = (std::is_same_v<O, taco::as_coroutine> || ...);
    constexpr bool task = coroutine || ((std::is_same_v<O, taco::as_activity> || std::is_same_v<O, taco::with_priority> ||
                                         std::is_same_v<O, taco::with_deadline>) || ...);
    const int priority = std::apply([](const auto&... o) { return (0 + ... + priority_of(o)); }, opts);
    return task ? (coroutine ? 2 : 1) + 10 * priority : 0;
}
template <class Tuple>
inline constexpr bool has_timeout = false;
template <class... O>
inline constexpr bool has_timeout<std::tuple<O...>> = (std::is_same_v<O, taco::timeout> || ...);

/// The option sets: the table's columns.
auto option_sets() {
    return std::tuple{std::tuple<>{},
                      std::tuple{taco::as_activity{}},
                      std::tuple{taco::as_coroutine{}},
                      std::tuple{taco::with_priority{3}},
                      std::tuple{taco::deadline_in(1h)},
                      std::tuple{taco::urgent},
                      std::tuple{taco::timeout(30s)},
                      std::tuple{taco::as_coroutine{}, taco::with_priority{2}, taco::urgent, taco::timeout(30s)},
                      std::tuple{taco::timeout(30s), taco::as_activity{}, taco::deadline_in(1h)}};
}

struct table {
    int cells = 0;
    std::vector<std::string> failures;
    void check(bool ok, const std::string& cell, long got, long want) {
        ++cells;
        if (!ok) failures.push_back(cell + ": got " + std::to_string(got) + ", want " + std::to_string(want));
    }
};

/// One row: a single target and a callable, under every completion and
/// every option set. `x` differs per cell, so a stale result cannot pass.
template <class Target, class Callable>
void run_row(table& t, const std::string& row, Target target, taco::core_id core, Callable callable, long base,
             taco::global_ptr<api_collector> col, long& x) {
    std::apply(
        [&](const auto&... option_set) {
            (
                [&](const auto& opts) {
                    const long how = expected_how(opts);
                    const std::string name = row + " / options #" + std::to_string(t.cells / 5);
                    auto want = [&](long arg) { return base + 100 * arg + 1000 * long(core) + how; };
                    std::apply(
                        [&](const auto&... o) {
                            // none: fire and forget (with the unbound form too when there are no options)
                            if constexpr (!has_timeout<std::decay_t<decltype(opts)>>) {
                                // Wait for any result, then compare: a wrong one fails
                                // the cell instead of waiting forever.
                                const long a = ++x;
                                last_result = -1;
                                taco::async(target, taco::m2f(callable, a), o...);
                                taco::wait_until([&] { return last_result.load() != -1; });
                                t.check(last_result.load() == want(a), name + " none", last_result.load(), want(a));
                                if constexpr (sizeof...(o) == 0) {
                                    const long b = ++x;
                                    last_result = -1;
                                    taco::async(target, callable, b);
                                    taco::wait_until([&] { return last_result.load() != -1; });
                                    t.check(last_result.load() == want(b), name + " none, unbound", last_result.load(),
                                            want(b));
                                }
                            }
                            { // future
                                const long a = ++x;
                                taco::future<long> f;
                                taco::async(target, taco::m2f(callable, a), f, o...);
                                const long got = f.get();
                                t.check(got == want(a), name + " future", got, want(a));
                            }
                            if constexpr (!has_timeout<std::decay_t<decltype(opts)>>) { // then, with a bound argument
                                const long a = ++x;
                                const int before = taco::sync(col, &api_collector::count);
                                taco::async(target, taco::m2f(callable, a), taco::then(col, &api_collector::take, a * 7), o...);
                                taco::wait_until([&] { return taco::sync(col, &api_collector::count) == before + 1; });
                                const long tag = taco::sync(col, &api_collector::last_tag);
                                const long got = taco::sync(col, &api_collector::last_value);
                                t.check(tag == a * 7 && got == want(a), name + " then", got, want(a));
                            }
                            { // call
                                const long a = ++x;
                                auto f = taco::call(target, taco::m2f(callable, a), o...);
                                const long got = f.get();
                                t.check(got == want(a), name + " call", got, want(a));
                            }
                            { // sync
                                const long a = ++x;
                                const long got = taco::sync(target, taco::m2f(callable, a), o...);
                                t.check(got == want(a), name + " sync", got, want(a));
                            }
                        },
                        opts);
                }(option_set),
                ...);
        },
        option_sets());
}

/// Members of the group rows count their calls.
std::atomic<long> group_calls{0};
std::atomic<long> group_how{-1}; // how_here() of the last member call
struct api_member {
    long seen = 0;
    void visit(long x) { seen += x, group_how = how_here(), ++group_calls; }
};
void visit_free(api_member& m, long x) { m.visit(x); }
struct visit_functor {
    long scale;
    void operator()(api_member& m, long x) const { m.visit(x * scale); }
};

template <class Member, class Callable>
void run_group_row(table& t, const std::string& row, taco::group<Member> g, Callable callable,
                   taco::global_ptr<api_collector> col) {
    const long n = g.size;
    long how = 0;
    auto expect_calls = [&](long before) {
        t.check(group_calls.load() == before + n, row, group_calls.load(), before + n);
        t.check(group_how.load() == how, row + " (task kind)", group_how.load(), how);
    };
    std::apply(
        [&](const auto&... option_set) {
            (
                [&](const auto& opts) {
                    how = expected_how(opts);
                    std::apply(
                        [&](const auto&... o) {
                            if constexpr (!has_timeout<std::decay_t<decltype(opts)>>) { // none (and the unbound form, at_each)
                                const long before = group_calls;
                                taco::async(g, taco::m2f(callable, 1L), o...);
                                taco::wait_until([&] { return group_calls.load() == before + n; });
                                expect_calls(before);
                                taco::at_each(g, callable, 1L);
                                taco::wait_until([&] { return group_calls.load() == before + 2 * n; });
                            }
                            { // future: ready once every member has run the call
                                const long before = group_calls;
                                taco::future<void> done;
                                taco::async(g, taco::m2f(callable, 1L), done, o...);
                                done.get();
                                expect_calls(before);
                            }
                            if constexpr (!has_timeout<std::decay_t<decltype(opts)>>) { // then: void result, bound argument only
                                const long before = group_calls;
                                const int hits = taco::sync(col, &api_collector::count);
                                taco::async(g, taco::m2f(callable, 1L), taco::then(col, &api_collector::take, 5L, 0L), o...);
                                taco::wait_until([&] { return taco::sync(col, &api_collector::count) == hits + 1; });
                                expect_calls(before);
                            }
                            { // call
                                const long before = group_calls;
                                auto f = taco::call(g, taco::m2f(callable, 1L), o...);
                                f.get();
                                expect_calls(before);
                            }
                            { // sync
                                const long before = group_calls;
                                taco::sync(g, taco::m2f(callable, 1L), o...);
                                expect_calls(before);
                            }
                        },
                        opts);
                }(option_set),
                ...);
        },
        std::tuple{std::tuple<>{}, std::tuple{taco::timeout(30s)}, std::tuple{taco::as_coroutine{}},
                   std::tuple{taco::with_priority{4}, taco::timeout(30s)}, std::tuple{taco::as_activity{}}});
}

} // namespace

// [globals]: the fire-and-forget cells see their result through a global
// the target core sets, which needs cores in one process (left out on MPI).
TEST_CASE("every cell of the invocation table compiles and runs", "[api][globals]") {
    table t;
    test::run(test::on_cores(4), [&] {
        auto obj = taco::new_on<probe>(1).get();
        auto col = taco::new_on<api_collector>(2).get();
        long x = 0;
        run_row(t, "global_ptr x member", obj, 1, &probe::m, member_base, col, x);
        run_row(t, "global_ptr x free function", obj, 1, &free_fn, free_base, col, x);
        run_row(t, "global_ptr x function object", obj, 1, functor{7}, functor_base + 7, col, x);
        run_row(t, "core id x free function", taco::core_id(3), 3, &free_fn, free_base, col, x);
        run_row(t, "core id x function object", 3, 3, functor{9}, functor_base + 9, col, x);
        run_row(t, "core id x lambda", 2, 2, [](long v) { return free_fn(v); }, free_base, col, x);

        std::vector<taco::global_ptr<api_member>> members;
        for (taco::core_id c = 0; c < 4; ++c) members.push_back(taco::new_on<api_member>(c).get());
        const auto g = taco::make_group(members, taco::topology::kary(2));
        run_group_row(t, "group x member", g, &api_member::visit, col);
        run_group_row(t, "group x free function", g, &visit_free, col);
        run_group_row(t, "group x function object", g, visit_functor{3}, col);
        run_group_row(t, "all cores x function", taco::all_cores(),
                      +[](long) { group_how = how_here(), ++group_calls; }, col);
        taco::destroy_group(g);
        for (auto m : members) taco::delete_on(m);
        taco::delete_on(obj);
        taco::delete_on(col);
    });
    INFO((t.failures.empty() ? std::string("all passed") : t.failures.front()));
    CHECK(t.failures.empty());
    CHECK(t.cells > 250);
}

namespace {
struct slow_counter {
    long n = 0;
    long add(long x) { return n += x; }
    long fail() { throw std::runtime_error("no such value"); }
};

/// What a party saw: the sum of the arrivals logged when each round's
/// barrier let it pass, and in how many rounds fewer than (r + 1) * parties
/// had arrived (a barrier that let it through early).
struct rounds_seen {
    long sum = 0;
    long early = 0;
};

/// On a core: arrive at the barrier `rounds` times.
rounds_seen arrive_rounds(taco::barrier_ref b, int rounds, long parties, taco::global_ptr<slow_counter> log) {
    rounds_seen seen;
    for (int r = 0; r < rounds; ++r) {
        taco::sync(log, &slow_counter::add, 1L);
        b.arrive_and_wait();
        // Everyone arrived for round r: the log holds at least (r + 1) * parties.
        const long logged = taco::sync(log, &slow_counter::add, 0L);
        seen.sum += logged;
        if (logged < (r + 1) * parties) ++seen.early;
    }
    return seen;
}
} // namespace

TEST_CASE("new_on returns a future, when_all waits for several futures", "[api]") {
    test::run(test::on_cores(3), [] {
        auto pending = taco::new_on<slow_counter>(1);
        auto other = taco::new_on<slow_counter>(2);
        auto [a, b] = taco::when_all(pending, other).get();
        CHECK(a.core() == 1);
        CHECK(b.core() == 2);

        taco::future<long> x, y;
        taco::future<void> z;
        taco::async(a, taco::m2f(&slow_counter::add, 5L), x);
        taco::async(b, taco::m2f(&slow_counter::add, 7L), y);
        taco::async(2, taco::m2f(+[] {}), z);
        auto all = taco::when_all(x, y, z);
        const auto [vx, vy] = all.get();
        CHECK(all.ready());
        CHECK(vx == 5);
        CHECK(vy == 7);

        std::vector<taco::future<long>> many(8);
        for (int i = 0; i < 8; ++i) taco::async(i % 2 ? a : b, taco::m2f(&slow_counter::add, 1L), many[i]);
        taco::when_all(std::span(many)).wait();
        for (auto& f : many) CHECK_FALSE(f.valid()); // taken over: their results are in when_all's future

        taco::future<long> ok, bad;
        taco::async(a, taco::m2f(&slow_counter::add, 1L), ok);
        taco::async(a, taco::m2f(&slow_counter::fail), bad);
        CHECK_THROWS_WITH(taco::when_all(ok, bad).get(), Catch::Contains("no such value"));
        CHECK_FALSE(ok.valid());
        taco::delete_on(a);
        taco::delete_on(b);
    });
}

namespace {
taco::future<long> started_add(taco::global_ptr<slow_counter> c, long v) {
    return taco::call(c, &slow_counter::add, v); // leaves the function pending: moved out
}
} // namespace

TEST_CASE("futures move, also while they wait: into a growing vector, out of a function, by assignment", "[api]") {
    test::run(test::on_cores(3), [] {
        auto c = taco::new_on<slow_counter>(1).get();
        // push_back of a pending future, 64 times: the vector reallocates
        // while results are in flight, and each lands in its own future.
        std::vector<taco::future<long>> calls;
        for (long i = 1; i <= 64; ++i) calls.push_back(taco::call(c, &slow_counter::add, i));
        const std::vector<long> sums = taco::when_all(std::span(calls)).get();
        REQUIRE(sums.size() == 64);
        for (std::size_t i = 1; i < sums.size(); ++i) CHECK(sums[i] - sums[i - 1] == long(i) + 1); // in order

        taco::future<long> moved = started_add(c, 0);
        CHECK(moved.valid());
        taco::future<long> target = std::move(moved);
        CHECK_FALSE(moved.valid());                                        // empty, as if default-made
        CHECK_THROWS_WITH(moved.get(), Catch::Contains("was moved from")); // not a hang
        CHECK(target.get() == sums.back());
        CHECK_FALSE(target.valid()); // taken

        // Assigning over a pending future waits for its result first.
        taco::future<long> first = taco::call(c, &slow_counter::add, 1L);
        first = taco::call(c, &slow_counter::add, 1L);
        CHECK(first.get() == sums.back() + 2);

        // With a timeout, and spawned work, the results follow the move too.
        taco::future<long> timed;
        taco::async(c, taco::m2f(&slow_counter::add, 0L), timed, taco::timeout(std::chrono::seconds(60)));
        taco::future<long> timed_moved = std::move(timed);
        CHECK(timed_moved.get() == sums.back() + 2);
        std::vector<taco::future<int>> spawned;
        for (int i = 0; i < 16; ++i) {
            spawned.push_back(taco::spawn_activity([i] { return i; }));
            spawned.push_back(taco::spawn_coroutine([i] { return taco::sync(2, +[](int v) { return v; }, i); }));
        }
        int total = 0;
        for (int v : taco::when_all(std::span(spawned)).get()) total += v;
        CHECK(total == 2 * (15 * 16 / 2));
        taco::delete_on(c);
    });
}

TEST_CASE("when_all throws the first failure in argument order, whatever order they came in", "[api]") {
    test::run(test::on_cores(3), [] {
        const auto fail_with = [](taco::core_id where, int which, taco::future<long>& f) {
            taco::async(where, taco::m2f(+[](int w) -> long { throw std::runtime_error("failure " + std::to_string(w)); }, which), f);
        };
        // Both orders of the same pair: a when_all that followed the order
        // in which the compiler evaluates arguments fails one of them.
        taco::future<long> a, b, c, d;
        fail_with(1, 1, a);
        fail_with(2, 2, b);
        CHECK_THROWS_WITH(taco::when_all(a, b).get(), Catch::Contains("failure 1"));
        fail_with(1, 3, c);
        fail_with(2, 4, d);
        CHECK_THROWS_WITH(taco::when_all(d, c).get(), Catch::Contains("failure 4"));
    });
}

namespace {
struct pair_sink {
    long x = 0, z = 0;
    double y = 0;
    int calls = 0;
    void on_both(long a, double b) { x = a, y = b, ++calls; }
    void on_one(long a) { z = a, ++calls; }
    // The two continuations come in either order: each sets its own fields.
    long sum() const { return calls * 1000 + x * 10 + z + long(y * 2); }
};
} // namespace

TEST_CASE("then chains steps on a future, and when_all returns a future that chains", "[api]") {
    test::run(test::on_cores(3), [] {
        // Local steps: each runs on this core when the one before has come,
        // a tuple's elements as arguments; a step's future is flattened.
        auto f = taco::when_all(taco::call(1, +[] { return 20L; }), taco::call(2, +[] { return 1.5; }),
                                taco::call(2, +[] {}))
                     .then([](long a, double b) { return a + long(b * 2); })
                     .then([](long s) { return taco::call(1, +[](long v) { return v * 10; }, s); });
        static_assert(std::is_same_v<decltype(f), taco::future<long>>);
        CHECK(f.get() == 230);

        // The futures given are taken over, and dropping them does not wait.
        taco::future<long> src = taco::call(1, +[] { return 7L; });
        auto doubled = src.then([](long v) { return 2 * v; });
        CHECK_FALSE(src.valid());
        CHECK(doubled.get() == 14);

        // A ready future runs its step at once; a void future gives none.
        taco::future<int> ready = taco::call(0, +[] { return 3; });
        ready.wait();
        int seen = 0;
        auto now = ready.then([&seen](int v) { seen = v; });
        CHECK(seen == 3);
        CHECK(now.ready());
        auto after_void = taco::call(1, +[] {}).then([] { return std::string("done"); });
        CHECK(after_void.get() == "done");

        // A range: the values in its order, for the step.
        std::vector<taco::future<long>> parts;
        for (long i = 0; i < 10; ++i) parts.push_back(taco::call(taco::core_id(i % 3), +[](long k) { return k * k; }, i));
        auto total = taco::when_all(parts).then([](std::vector<long> v) {
            long t = 0;
            for (std::size_t i = 0; i < v.size(); ++i) t += v[i] * long(i + 1); // order-sensitive
            return t;
        });
        CHECK(total.get() == 1 * 0 + 2 * 1 + 3 * 4 + 4 * 9 + 5 * 16 + 6 * 25 + 7 * 36 + 8 * 49 + 9 * 64 + 10 * 81);
        std::vector<taco::future<void>> none;
        CHECK(taco::when_all(none).ready());

        // taco::then continuations: the values go on as an invocation's
        // result would, a when_all's as separate arguments.
        auto sink = taco::new_on<pair_sink>(2).get();
        taco::when_all(taco::call(1, +[] { return 4L; }), taco::call(0, +[] { return 0.5; }))
            .then(taco::then(sink, &pair_sink::on_both));
        taco::call(1, +[] { return 9L; }).then(taco::then(sink, &pair_sink::on_one));
        long got = 0;
        for (int spins = 0; spins < 100000 && got != 2050; ++spins) got = taco::sync(sink, &pair_sink::sum);
        CHECK(got == 2050); // both ran, once each: x = 4, y = 0.5, z = 9
        taco::delete_on(sink);
    });
}

TEST_CASE("then passes errors on: a step's exception, a remote one, a timeout, a misuse", "[api]") {
    test::run(test::on_cores(2), [] {
        int skipped = 0;
        auto failed = taco::call(1, +[]() -> long { throw std::runtime_error("remote boom"); })
                          .then([&skipped](long v) { return ++skipped, v; })
                          .then([&skipped](long v) { return ++skipped, v; });
        CHECK_THROWS_WITH(failed.get(), Catch::Contains("remote boom") && Catch::Contains("core 1"));
        CHECK(skipped == 0);

        auto thrown = taco::call(1, +[] { return 1; }).then([](int) -> int { throw std::logic_error("step boom"); });
        CHECK_THROWS_AS(thrown.get(), taco::remote_error);
        auto thrown_again = taco::call(1, +[] { return 1; }).then([](int) -> int { throw std::logic_error("step boom"); });
        CHECK_THROWS_WITH(thrown_again.get(), Catch::Contains("step boom"));

        // The first failure in argument order, as get() on the futures would.
        auto first = taco::when_all(taco::call(1, +[]() -> int { throw std::runtime_error("first"); }),
                                    taco::call(0, +[]() -> int { throw std::runtime_error("second"); }))
                         .then([](int a, int b) { return a + b; });
        CHECK_THROWS_WITH(first.get(), Catch::Contains("first"));

        taco::future<long> slow;
        taco::async(1, taco::m2f(+[] {
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            return 1L;
        }), slow, taco::timeout(std::chrono::milliseconds(1)));
        auto timed = slow.then([](long v) { return v; });
        CHECK_THROWS_AS(timed.get(), taco::timeout_error);

        taco::future<long> never;
        CHECK_THROWS_WITH(never.then([](long v) { return v; }), Catch::Contains("no invocation was given"));
        taco::future<long> taken = taco::call(1, +[] { return 2L; });
        CHECK(taken.get() == 2);
        CHECK_THROWS_AS(taken.then([](long v) { return v; }), taco::usage_error);
        auto empty_inner = taco::call(1, +[] { return 2L; }).then([](long) { return taco::future<long>{}; });
        CHECK_THROWS_WITH(empty_inner.get(), Catch::Contains("returned an empty future"));
    });
}

TEST_CASE("a chain still waiting when the run ends is freed with its core", "[api]") {
    // Abandoned like any invocation in flight when main returns; its
    // states must not leak (the sanitizer runs check that).
    test::run(test::on_cores(2), [] {
        taco::call(1, +[] {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            return 1L;
        }).then(taco::then(taco::core_id(0), +[](long) {}));
        auto pending = taco::call(1, +[] { return 2L; });
        taco::when_all(pending, taco::call(1, +[] { return 3.0; })).then(taco::then(taco::core_id(0), +[](long, double) {}));
    });
}

TEST_CASE("waiting on a future no invocation was given is a usage error, not a hang", "[api]") {
    test::run(test::on_cores(2), [] {
        taco::future<long> never;
        taco::future<void> used;
        taco::async(1, taco::m2f(+[] {}), used);
        CHECK_THROWS_WITH(never.wait(), Catch::Contains("no invocation was given"));
        CHECK_THROWS_AS(never.get(), taco::usage_error);
        CHECK_THROWS_WITH(taco::when_all(used, never), Catch::Contains("no invocation was given"));
        CHECK(used.valid()); // refused before anything was taken
        used.get();
        auto co = taco::spawn_coroutine([] {
            taco::future<int> unused;
            try {
                unused.get();
            } catch (const taco::usage_error&) {
                return true;
            }
            return false;
        });
        CHECK(co.get()); // a coroutine is refused too, instead of blocking for ever
    });
}

TEST_CASE("a barrier releases all parties together, phase after phase", "[api]") {
    constexpr int parties = 4, rounds = 20;
    std::vector<long> sums;
    test::run(test::on_cores(parties), [&] {
        auto log = taco::new_on<slow_counter>(0).get();
        taco::barrier b(parties);
        std::vector<taco::future<rounds_seen>> f(parties - 1);
        for (int c = 1; c < parties; ++c)
            taco::async(c, taco::m2f(&arrive_rounds, b.ref(), rounds, long(parties), log), f[c - 1],
                        taco::as_coroutine{});
        const rounds_seen here = arrive_rounds(b.ref(), rounds, parties, log);
        sums.push_back(here.sum);
        CHECK(here.early == 0); // no party passed a barrier before all of that round had arrived
        for (auto& x : f) {
            const rounds_seen there = x.get();
            sums.push_back(there.sum);
            CHECK(there.early == 0);
        }
        CHECK(taco::sync(log, &slow_counter::add, 0L) == parties * rounds);
        taco::delete_on(log);
    });
    // After round r every party reads at least (r + 1) * parties: nobody
    // passed the barrier before all had arrived.
    const long minimum = parties * long(rounds) * (rounds + 1) / 2;
    for (long s : sums) CHECK(s >= minimum);
}

TEST_CASE("all_cores: a function on every core, a reduction over all cores", "[api]") {
    test::run(test::on_cores(6), [] {
        const auto g = taco::all_cores();
        CHECK(g.size == 6);
        const long sum = taco::reduce(g, taco::m2f(+[] { return long(taco::this_core()); }), std::plus<long>{}).get();
        CHECK(sum == 0 + 1 + 2 + 3 + 4 + 5);
        // The same group from another core (published once per run).
        const auto from_3 = taco::sync(3, +[] { return taco::all_cores(); });
        CHECK(from_3.root == g.root);
    });
}

namespace {
struct sleeper {
    void nap(long ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }
};
} // namespace

TEST_CASE("a timeout on a group gives up on the members, and their late completion is dropped", "[api]") {
    test::run(test::on_cores(3), [] {
        std::vector<taco::global_ptr<sleeper>> members{taco::new_on<sleeper>(1).get(), taco::new_on<sleeper>(2).get()};
        const auto g = taco::make_group(members);
        const auto late_before = taco::stats().late_results;
        taco::future<void> f;
        taco::async(g, taco::m2f(&sleeper::nap, 300L), f, taco::timeout(5ms));
        CHECK_THROWS_AS(f.get(), taco::timeout_error);
        taco::wait_until([&] { return taco::stats().late_results == late_before + 1; });
        taco::destroy_group(g);
        for (auto m : members) taco::delete_on(m);
    });
}
