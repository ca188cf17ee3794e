// Tasks and schedulers: policy order under random arrival, activities,
// coroutines blocking on futures from other cores, thousands of coroutines
// on one core, exceptions, misuse, oversubscription.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <limits>
#include <cstdint>
#include <memory>
#include <random>
#include <chrono>
#include <thread>
#include <string>
#include <vector>

#include <test_support.hpp>

namespace {

struct probe_task final : taco::task {
    int id;
    int arrival = 0; // position in the push order
    explicit probe_task(int i, taco::schedule s) : task(taco::task_kind::activity, s), id(i) {}
    void run() override {}
};

template <class S>
std::vector<int> drain(S& s) {
    std::vector<int> order;
    while (taco::task* t = s.pop()) order.push_back(static_cast<probe_task*>(t)->id);
    return order;
}

} // namespace

TEST_CASE("schedulers: FIFO, priority and EDF order under random arrival", "[tasks]") {
    std::mt19937 rng(42);
    const auto now = taco::task_clock::now();
    std::vector<std::unique_ptr<probe_task>> tasks;
    for (int i = 0; i < 500; ++i) {
        taco::schedule s{.priority = int(rng() % 5), .deadline = now + std::chrono::microseconds(rng() % 50)};
        tasks.push_back(std::make_unique<probe_task>(i, s));
    }
    auto feed = [&](auto& sched) {
        std::vector<int> arrival(tasks.size());
        for (std::size_t k = 0; k < tasks.size(); ++k) arrival[k] = int(k);
        std::shuffle(arrival.begin(), arrival.end(), rng);
        int seq = 0;
        for (int i : arrival) {
            tasks[i]->arrival = seq++;
            sched.push(*tasks[i]);
        }
        REQUIRE(sched.size() == tasks.size());
        return arrival;
    };
    SECTION("fifo") {
        taco::schedulers::fifo s;
        auto arrival = feed(s);
        REQUIRE(drain(s) == arrival);
    }
    SECTION("priority: highest first, first come first served among equals") {
        taco::schedulers::priority s;
        feed(s);
        auto order = drain(s);
        REQUIRE(order.size() == tasks.size());
        for (std::size_t k = 1; k < order.size(); ++k) {
            const auto& a = *tasks[order[k - 1]];
            const auto& b = *tasks[order[k]];
            REQUIRE(a.sched.priority >= b.sched.priority);
            if (a.sched.priority == b.sched.priority) REQUIRE(a.arrival < b.arrival);
        }
    }
    SECTION("edf: earliest deadline first, first come first served among equals") {
        taco::schedulers::edf s;
        feed(s);
        auto order = drain(s);
        REQUIRE(order.size() == tasks.size());
        for (std::size_t k = 1; k < order.size(); ++k) {
            const auto& a = *tasks[order[k - 1]];
            const auto& b = *tasks[order[k]];
            REQUIRE(a.sched.deadline <= b.sched.deadline);
            if (a.sched.deadline == b.sched.deadline) REQUIRE(a.arrival < b.arrival);
        }
    }
    SECTION("any: the run-time choice behaves like the policy") {
        taco::schedulers::any s(taco::policy::priority);
        feed(s);
        auto order = drain(s);
        REQUIRE(tasks[order.front()]->sched.priority == 4);
        REQUIRE(tasks[order.back()]->sched.priority == 0);
    }
}

TEST_CASE("hierarchical scheduling: the top level picks a tier by its policy, the tier its task by its own",
          "[tasks]") {
    const auto t0 = taco::task_clock::now();
    auto at = [&](int ms) { return t0 + std::chrono::milliseconds(ms); };
    std::vector<std::unique_ptr<probe_task>> tasks;
    auto make = [&](taco::schedule s) {
        tasks.push_back(std::make_unique<probe_task>(int(tasks.size()), s));
        return tasks.back().get();
    };
    SECTION("priority over a FIFO tier and an EDF tier: all of the higher tier first, each in its own order") {
        taco::schedulers::hierarchical h(taco::policy::priority, {{taco::policy::fifo, 1}, {taco::policy::edf, 0}});
        // Arrivals interleaved: EDF 9 ms (id 0), FIFO (1), EDF 3 ms (2), FIFO (3), EDF 5 ms (4), FIFO (5)
        for (int i = 0; i < 6; ++i) {
            const bool edf = i % 2 == 0;
            h.push(*make({.tier = std::uint8_t(edf ? 1 : 0), .deadline = at(edf ? std::array{9, 3, 5}[i / 2] : 0)}));
        }
        CHECK(h.size() == 6);
        CHECK(static_cast<probe_task*>(h.front())->id == 1);
        CHECK(drain(h) == std::vector<int>{1, 3, 5, 2, 4, 0});
        CHECK(h.empty());
    }
    SECTION("EDF over FIFO tiers: the tier whose next task is due first, kept current as tasks arrive") {
        taco::schedulers::hierarchical h(taco::policy::edf, {{taco::policy::fifo}, {taco::policy::fifo}});
        h.push(*make({.tier = 0, .deadline = at(10)})); // 0
        h.push(*make({.tier = 0, .deadline = at(1)}));  // 1: behind 0 in its FIFO tier
        h.push(*make({.tier = 1, .deadline = at(5)}));  // 2
        // tier 0's next task is due at 10 ms, tier 1's at 5 ms: tier 1 first
        CHECK(static_cast<probe_task*>(h.pop())->id == 2);
        h.push(*make({.tier = 1, .deadline = at(20)})); // 3: tier 1's next is now due at 20 ms
        CHECK(drain(h) == std::vector<int>{0, 1, 3});
    }
    SECTION("FIFO over tiers, and equal priorities: the tiers with work take turns") {
        taco::schedulers::hierarchical h(taco::policy::fifo, {{taco::policy::fifo}, {taco::policy::priority}});
        for (int i = 0; i < 3; ++i) h.push(*make({.priority = i, .tier = 0}));  // 0, 1, 2
        for (int i = 0; i < 3; ++i) h.push(*make({.priority = i, .tier = 1}));  // 3, 4, 5: 5 first in its tier
        CHECK(drain(h) == std::vector<int>{0, 5, 1, 4, 2, 3});
        // A tier fed between two pops keeps its turn: b runs once, then a2 (not b again).
        taco::schedulers::hierarchical f(taco::policy::fifo, {{taco::policy::fifo}, {taco::policy::fifo}});
        probe_task* a1 = make({.tier = 0});
        probe_task* b1 = make({.tier = 1});
        probe_task* b2 = make({.tier = 1});
        f.push(*a1), f.push(*b1), f.push(*b2);
        CHECK(f.pop() == a1);
        probe_task* a2 = make({.tier = 0});
        f.push(*a2);
        CHECK(f.pop() == b1);
        f.push(*make({.tier = 0}));
        CHECK(f.pop() == a2);
        CHECK(f.pop() == b2);
        drain(f);
        taco::schedulers::hierarchical e(taco::policy::priority, {{taco::policy::fifo, 2}, {taco::policy::fifo, 2}});
        const int first = int(tasks.size());
        for (int i = 0; i < 4; ++i) e.push(*make({.tier = std::uint8_t(i / 2)})); // first + 0, 1 | 2, 3
        CHECK(drain(e) == std::vector<int>{first, first + 2, first + 1, first + 3});
    }
    SECTION("erase from the middle, and a tier beyond the last goes to the last") {
        taco::schedulers::hierarchical h(taco::policy::priority, {{taco::policy::fifo, 0}, {taco::policy::fifo, 1}});
        probe_task* a = make({.tier = 1});
        probe_task* b = make({.tier = 7}); // beyond: tier 1
        probe_task* c = make({.tier = 0});
        h.push(*a), h.push(*b), h.push(*c);
        h.erase(*a);
        CHECK(h.size() == 2);
        CHECK(drain(h) == std::vector<int>{b->id, c->id});
    }
    SECTION("more than four tiers, or none, is a usage error that says so") {
        CHECK_THROWS_WITH((taco::scheduling_tiers{{}, {}, {}, {}, {}}), Catch::Contains("at most 4 tiers"));
        CHECK_THROWS_WITH(taco::schedulers::hierarchical(taco::policy::fifo, {}), Catch::Contains("give 1 to 4 tiers"));
    }
}

TEST_CASE("hierarchical scheduling in a run: tiers under the run's policy, tasks choosing theirs", "[tasks]") {
    std::vector<int> ran;
    test::run(
        test::on_cores(1),
        [&] {
            std::vector<std::unique_ptr<taco::future<void>>> done;
            const auto t0 = taco::task_clock::now() + std::chrono::hours(1);
            const int deadline_ms[] = {30, 10, 20};
            for (int i = 0; i < 6; ++i) {
                const bool system = i % 2 == 1; // tier 0: FIFO, priority 1 at the top
                taco::schedule s{.tier = std::uint8_t(system ? 0 : 1),
                                 .deadline = t0 + std::chrono::milliseconds(system ? 0 : deadline_ms[i / 2])};
                done.emplace_back(new taco::future<void>(taco::spawn_activity([&ran, i] { ran.push_back(i); }, s)));
            }
            REQUIRE(ran.empty()); // tasks run only when this core waits: all six are queued
            for (auto& f : done) f->get();
        },
        taco::run_options{.scheduling = taco::policy::priority,
                          .tiers = {{taco::policy::fifo, 1}, {taco::policy::edf, 0}}});
    // tier 0's tasks 1, 3, 5 in arrival order, then the EDF tier by deadline: 2 (10 ms), 4 (20), 0 (30)
    CHECK(ran == std::vector<int>{1, 3, 5, 2, 4, 0});
}

namespace {
struct run_order {
    std::vector<int> ran;
    void record(int i) { ran.push_back(i); }
};
} // namespace

TEST_CASE("hierarchical scheduling of invocations: taco::with_tier puts an invocation's task in its tier", "[tasks]") {
    run_order order;
    test::run(
        test::on_cores(1),
        [&] {
            const auto to = taco::to_global(&order);
            // Sent to this core: they wait in its channel until it waits,
            // and all become tasks before the first one runs.
            const auto t0 = taco::task_clock::now() + std::chrono::hours(1);
            const int deadline_ms[] = {30, 10, 20};
            std::vector<taco::future<void>> done(6);
            for (int i = 0; i < 6; ++i) {
                const bool system = i % 2 == 1;
                if (system)
                    taco::async(to, taco::m2f(&run_order::record, i), taco::with_tier{0}, done[i]);
                else
                    taco::async(to, taco::m2f(&run_order::record, i), taco::with_tier{1},
                                taco::with_deadline{t0 + std::chrono::milliseconds(deadline_ms[i / 2])}, done[i]);
            }
            for (auto& f : done) f.get();
        },
        taco::run_options{.scheduling = taco::policy::priority,
                          .tiers = {{taco::policy::fifo, 1}, {taco::policy::edf, 0}}});
    // Without the tier option all six would be in tier 0 (FIFO): 0 1 2 3 4 5.
    CHECK(order.ran == std::vector<int>{1, 3, 5, 2, 4, 0});
}

TEST_CASE("tasks run in policy order on a core (priority and EDF)", "[tasks]") {
    for (auto pol : {taco::policy::priority, taco::policy::edf}) {
        std::vector<int> ran; // priorities (or deadline ranks) in execution order
        std::vector<int> keys;
        test::run(
            test::on_cores(1),
            [&] {
                std::mt19937 rng(7);
                std::vector<std::unique_ptr<taco::future<void>>> done;
                const auto base = taco::task_clock::now() + std::chrono::hours(1);
                for (int i = 0; i < 200; ++i) {
                    const int key = int(rng() % 10);
                    keys.push_back(key);
                    taco::schedule s = pol == taco::policy::priority
                                           ? taco::schedule{key}
                                           : taco::schedule{.deadline = base + std::chrono::milliseconds(key)};
                    // futures are not movable (their continuation holds the address): construct in place
                    done.emplace_back(new taco::future<void>(taco::spawn_activity([&ran, key] { ran.push_back(key); }, s)));
                }
                // Nothing has run yet: tasks run only when this core waits.
                REQUIRE(ran.empty());
                for (auto& f : done) f->get();
            },
            taco::run_options{.scheduling = pol});
        REQUIRE(ran.size() == 200);
        if (pol == taco::policy::priority) REQUIRE(std::is_sorted(ran.rbegin(), ran.rend()));
        else REQUIRE(std::is_sorted(ran.begin(), ran.end()));
    }
}

namespace {
struct store {
    long value = 0;
    long get() const { return value; }
    void set(long v) { value = v; }
    long fail() const { throw std::runtime_error("store failed"); }
};
long nested_fetch(taco::global_ptr<store> s, int depth) {
    // blocks inside nested calls: only a coroutine can do this without nesting the loop
    return depth == 0 ? taco::sync(s, &store::get) : nested_fetch(s, depth - 1) + 1;
}
} // namespace

TEST_CASE("coroutines block on futures assigned by other cores, inside nested calls", "[tasks][coroutine]") {
    long got = 0, nested = 0;
    test::run(test::on_cores(3), [&] {
        auto s = taco::new_on<store>(2).get();
        taco::sync(s, &store::set, 40L);
        auto a = taco::spawn_coroutine([s] { return taco::sync(s, &store::get) + 2; });
        auto b = taco::spawn_coroutine([s] { return nested_fetch(s, 10); });
        got = a.get();
        nested = b.get();
        taco::delete_on(s);
    });
    REQUIRE(got == 42);
    REQUIRE(nested == 50);
}

TEST_CASE("a blocked coroutine leaves its core serving invocations and other tasks", "[tasks][coroutine]") {
    long seen = 0, served = 0;
    test::run(test::on_cores(2), [&] {
        auto gate = taco::new_on<store>(1).get();
        // On core 1: a coroutine that waits until core 0 opens the gate
        // (a future that only core 0's later call assigns).
        auto waiter = taco::call(1, taco::m2f(+[](taco::global_ptr<store> g) {
            auto f = taco::spawn_coroutine([g] {
                long v = 0;
                while ((v = taco::sync(g, &store::get)) == 0) {
                    // yield by waiting on a round trip through core 0
                    taco::sync(0, +[] {});
                }
                return v;
            });
            return f.get(); // this invocation nests; the coroutine suspends in sync
        }, gate));
        served = taco::sync(1, +[] { return 7L; }); // core 1 still answers
        taco::sync(gate, &store::set, 5L);
        seen = waiter.get();
        taco::delete_on(gate);
    });
    REQUIRE(served == 7);
    REQUIRE(seen == 5);
}

TEST_CASE("thousands of coroutines alive at once on one core", "[tasks][coroutine]") {
    const int n = int(test::scaled(5000));
    long sum = 0, max_alive = 0;
    test::run(test::on_cores(2), [&] {
        auto s = taco::new_on<store>(1).get();
        taco::sync(s, &store::set, 1L);
        long alive = 0;
        std::vector<std::unique_ptr<taco::future<long>>> fs;
        for (int i = 0; i < n; ++i)
            fs.emplace_back(new taco::future<long>(taco::spawn_coroutine([&, s, i] {
                ++alive;
                max_alive = std::max(max_alive, alive);
                taco::future<long> gate;
                taco::async(s, taco::m2f(&store::get), gate);
                // all n start before any result is back: each suspends here
                long v = gate.get() * i;
                --alive;
                return v;
            })));
        for (auto& f : fs) sum += f->get();
        taco::delete_on(s);
    });
    REQUIRE(sum == long(n) * (n - 1) / 2);
    REQUIRE(max_alive > n / 2); // most were suspended at the same time
}

TEST_CASE("exceptions inside coroutines reach the caller", "[tasks][coroutine][errors]") {
    std::string local, remote;
    test::run(test::on_cores(2), [&] {
        auto s = taco::new_on<store>(1).get();
        auto a = taco::spawn_coroutine([]() -> long { throw std::invalid_argument("bad coroutine input"); });
        auto b = taco::spawn_coroutine([s] { return taco::sync(s, &store::fail); });
        try {
            a.get();
        } catch (const taco::remote_error& e) {
            local = e.text();
        }
        try {
            b.get();
        } catch (const taco::remote_error& e) {
            remote = e.text();
        }
        taco::delete_on(s);
    });
    REQUIRE(local == "bad coroutine input");
    REQUIRE(remote.find("store failed") != std::string::npos);
}

TEST_CASE("an activity that waits gets a clear error instead of a deadlock", "[tasks][errors]") {
    std::string text;
    test::run(test::on_cores(2), [&] {
        auto f = taco::spawn_activity([] { return taco::sync(1, +[] { return 1L; }); });
        try {
            f.get();
        } catch (const taco::remote_error& e) {
            text = e.text();
        }
    });
    REQUIRE(text.find("an activity cannot wait") != std::string::npos);
}

namespace {
std::atomic<long> refused_runs{0};
long count_run() { return ++refused_runs; }
long arrive_at(taco::barrier_ref b) {
    b.arrive_and_wait();
    return 1;
}
} // namespace

TEST_CASE("an activity's sync or barrier arrival is refused before anything is sent", "[tasks][errors]") {
    refused_runs = 0;
    std::string sync_text, barrier_text;
    bool passed = false;
    test::run(test::on_cores(2), [&] {
        auto s = taco::spawn_activity([] { return taco::sync(1, &count_run); });
        try {
            (void)s.get();
        } catch (const taco::remote_error& e) {
            sync_text = e.text();
        }
        // The refused arrival was not counted: two proper parties pass
        // (it used to count, then hang: the activity's pending future
        // waited for a release that needed main to arrive).
        taco::barrier b(2);
        auto a = taco::call(1, taco::m2f(&arrive_at, b.ref()), taco::as_activity{});
        try {
            (void)a.get();
        } catch (const taco::remote_error& e) {
            barrier_text = e.text();
        }
        taco::future<long> other;
        taco::async(1, taco::m2f(&arrive_at, b.ref()), other);
        b.arrive_and_wait();
        passed = other.get() == 1;
    });
    REQUIRE(sync_text.find("an activity cannot wait") != std::string::npos);
    REQUIRE(refused_runs == 0); // not run and its result dropped: never sent
    REQUIRE(barrier_text.find("an activity cannot wait") != std::string::npos);
    REQUIRE(passed);
}

namespace {
// Slow, so that the reply to core 1's innermost wait comes long after core
// 0's next invocation, even when the host keeps core 0 off its CPU for a
// while: core 2 answers in order, the innermost request last.
long slow_echo(long x) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    return x;
}
long relay_through(taco::core_id via, long x) { return taco::sync(via, &slow_echo, x); }
} // namespace

TEST_CASE("handlers nesting waits until their thread's stack is nearly full end with a report, not a SIGSEGV",
          "[tasks][errors][stack-depth]") {
    // Core 0 queues many invocations on core 1, each of which waits for
    // core 2: core 1 serves the next one inside each wait, one level
    // deeper each time (20000 levels overflowed an 8 MiB thread stack).
    auto r = test::run_in_child([] {
        // Polling, so that core 1 finds core 0's next invocation before
        // core 2's reply (an adaptive core 1 that parks may find the reply
        // first, and then nests no deeper), and rings deep enough that
        // core 1's requests never wait for room at the slow core 2.
        auto cores = test::child_cores(3);
        cores.idle = tacomesh::posix::idle_policy::poll;
        cores.ring_slots = 65536;
        taco::run(cores, [] {
            const int n = 200'000;
            std::vector<taco::future<long>> fs(n);
            for (int i = 0; i < n; ++i) taco::async(1, taco::m2f(&relay_through, taco::core_id(2), long(i)), fs[i]);
            for (auto& f : fs) (void)f.get();
        });
    });
    REQUIRE(r.err.find("taco: core 1's thread stack is nearly used up") != std::string::npos);
    REQUIRE(r.err.find("taco::as_coroutine") != std::string::npos);
    REQUIRE(r.aborted);
}

TEST_CASE("coroutines on 8 cores on 2 CPUs sync-calling each other", "[tasks][coroutine]") {
    constexpr taco::core_id n = 8;
    const long per_core = test::scaled(50);
    long total = 0;
    test::run(test::on_cores(n), [&] {
        std::vector<taco::future<long>> results(n);
        for (taco::core_id c = 0; c < n; ++c)
            taco::async(c, taco::m2f(+[](long k) {
                std::vector<std::unique_ptr<taco::future<long>>> fs;
                for (long i = 0; i < k; ++i)
                    fs.emplace_back(new taco::future<long>(taco::spawn_coroutine([i] {
                        const taco::core_id other = taco::core_id((taco::this_core() + 1 + i) % taco::core_count());
                        return taco::sync(other, +[] { return long(taco::this_core()); }) >= 0 ? 1L : 0L;
                    })));
                long sum = 0;
                for (auto& f : fs) sum += f->get();
                return sum;
            }, per_core), results[c]);
        for (auto& r : results) total += r.get();
    });
    REQUIRE(total == long(n) * per_core);
}

namespace {
// Adds the values of three remote reads, waiting on each with TACO_PT_AWAIT.
struct summing_protothread final : taco::protothread<summing_protothread> {
    taco::global_ptr<store> a, b;
    taco::future<long> f;
    long sum = 0;
    int i = 0; // a "local" that survives suspension: it is a member
    bool step() {
        TACO_PT_BEGIN();
        for (i = 0; i < 3; ++i) {
            taco::async(i % 2 ? b : a, taco::m2f(&store::get), f);
            TACO_PT_AWAIT(f);
            sum += f.get();
        }
        TACO_PT_END();
    }
};
struct misused_protothread final : taco::protothread<misused_protothread> {
    taco::global_ptr<store> a;
    bool step() {
        TACO_PT_BEGIN();
        (void)taco::sync(a, &store::get); // blocking where it cannot
        TACO_PT_END();
    }
};
} // namespace

TEST_CASE("protothreads wait on futures assigned by other cores", "[tasks][protothread]") {
    long sum = 0;
    std::string misuse;
    test::run(test::on_cores(3), [&] {
        auto a = taco::new_on<store>(1).get(), b = taco::new_on<store>(2).get();
        taco::sync(a, &store::set, 10L);
        taco::sync(b, &store::set, 5L);
        summing_protothread p;
        p.a = a, p.b = b;
        taco::start(p);
        taco::wait_until([&] { return p.finished(); });
        p.rethrow_if_failed();
        sum = p.sum;
        misused_protothread m;
        m.a = a;
        taco::start(m);
        taco::wait_until([&] { return m.finished(); });
        try {
            m.rethrow_if_failed();
        } catch (const taco::blocking_error& e) {
            misuse = e.what();
        }
        taco::delete_on(a);
        taco::delete_on(b);
    });
    REQUIRE(sum == 25);
    REQUIRE(misuse.find("TACO_PT_AWAIT") != std::string::npos);
}

namespace {
std::atomic<int> unseen_reports{0};
std::string unseen_text;
void note_unseen(const taco::error_info& e) {
    unseen_text = std::string(e.view());
    unseen_reports.fetch_add(1);
}
} // namespace

TEST_CASE("a protothread's error nobody asked about goes to the uncaught-error handler, not nowhere",
          "[tasks][protothread]") {
    unseen_reports = 0;
    int after_seen = -1;
    taco::set_uncaught_error_handler(&note_unseen);
    test::run(test::on_cores(2), [&] {
        auto a = taco::new_on<store>(1).get();
        {
            misused_protothread seen;
            seen.a = a;
            taco::start(seen);
            taco::wait_until([&] { return seen.finished(); });
            CHECK(seen.failed()); // asked: not reported
        }
        after_seen = unseen_reports.load();
        {
            misused_protothread unseen;
            unseen.a = a;
            taco::start(unseen);
            taco::wait_until([&] { return unseen.finished(); });
        } // destroyed with its error unasked
        taco::delete_on(a);
    });
    taco::set_uncaught_error_handler(nullptr);
    CHECK(after_seen == 0);
    REQUIRE(unseen_reports == 1);
    CHECK(unseen_text.find("TACO_PT_AWAIT") != std::string::npos);
}

namespace {
struct recorder {
    std::vector<int> order;
    void add(int v) {
        test::spin_for(100'000); // tasks take a while: later arrivals can overtake
        order.push_back(v);
    }
    std::size_t size() const { return order.size(); }
    int position_of(int v) const {
        return int(std::find(order.begin(), order.end(), v) - order.begin());
    }
    long relay(taco::global_ptr<store> s) const { // blocks; reports whether it ran as a coroutine
        taco::task* t = taco::current_task();
        return taco::sync(s, &store::get) * 2 + (t && t->kind() == taco::task_kind::coroutine ? 1000 : 0);
    }
};
} // namespace

namespace {
// Core 1 busy in an invocation until core 0 has sent everything: the race
// between core 0's sends and core 1 running the first tasks (100 us each)
// is out of the test, which a slow build (sanitizers) used to lose.
std::atomic<bool> all_sent{false};
void busy_until_all_sent() {
    while (!all_sent.load(std::memory_order_acquire)) {}
}
} // namespace

TEST_CASE("invocations carrying a priority or deadline become tasks that overtake queued work", "[tasks]") {
    for (auto pol : {taco::policy::priority, taco::policy::edf}) {
        int position = -1;
        taco::run(
            // POSIX: the 50 must wait in core 1's channel, which the SCC's
            // MPB channels (one slot per sender) cannot hold.
            tacomesh::posix::config{.cores = 2},
            [&] {
                auto r = taco::new_on<recorder>(1).get();
                all_sent = false;
                taco::async(1, &busy_until_all_sent);
                // 50 unimportant tasks queued on core 1 ...
                for (int i = 0; i < 50; ++i)
                    taco::async(r, taco::m2f(&recorder::add, i), taco::with_priority{-1},
                                taco::deadline_in(std::chrono::hours(1)));
                // ... then one that matters
                taco::async(r, taco::m2f(&recorder::add, 1000), taco::with_priority{5},
                            taco::deadline_in(std::chrono::milliseconds(1)));
                all_sent.store(true, std::memory_order_release);
                while (taco::sync(r, &recorder::size) < 51) {}
                position = taco::sync(r, &recorder::position_of, 1000);
                taco::delete_on(r);
            },
            taco::run_options{.scheduling = pol});
        INFO("policy " << int(pol));
        REQUIRE(position >= 0);
        REQUIRE(position < 10); // it overtook most of the 50 queued before it
    }
}

TEST_CASE("an invocation run as a coroutine may block, and its core keeps serving", "[tasks][coroutine]") {
    long relayed = 0, meanwhile = 0;
    test::run(test::on_cores(3), [&] {
        auto r = taco::new_on<recorder>(1).get();
        auto s = taco::new_on<store>(2).get();
        taco::sync(s, &store::set, 21L);
        taco::future<long> f;
        taco::async(r, taco::m2f(&recorder::relay, s), f, taco::as_coroutine());
        meanwhile = taco::sync(1, +[] { return 1L; });
        relayed = f.get();
        taco::delete_on(r);
        taco::delete_on(s);
    });
    REQUIRE(relayed == 1042);
    REQUIRE(meanwhile == 1);
}

namespace {
struct clockwork {
    taco::core_id ran_on = taco::no_core;
    taco::task_clock::time_point at{};
    void tick() { ran_on = taco::this_core(), at = taco::task_clock::now(); }
    bool done() const { return ran_on != taco::no_core; }
    taco::core_id where() const { return ran_on; }
    long slow(long v) const { return test::spin_for(50'000'000), v; }
    long fast(long v) const { return v; }
};
} // namespace

TEST_CASE("timers: run on a core after a delay, also when that core sleeps", "[tasks][timer]") {
    for (auto idle : {tacomesh::posix::idle_policy::poll, tacomesh::posix::idle_policy::sleep}) {
        taco::core_id where = taco::no_core;
        std::chrono::nanoseconds waited{};
        taco::run(tacomesh::posix::config{.cores = 2, .idle = idle}, [&] {
            auto c = taco::new_on<clockwork>(1).get();
            const auto t0 = taco::task_clock::now();
            taco::after(std::chrono::milliseconds(20), c, taco::m2f(&clockwork::tick));
            while (!taco::sync(c, &clockwork::done)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            waited = taco::sync(c, +[](clockwork& k) { return k.at; }) - t0;
            where = taco::sync(c, &clockwork::where);
            taco::delete_on(c);
        });
        INFO("idle policy " << int(idle));
        REQUIRE(where == 1);
        REQUIRE(waited >= std::chrono::milliseconds(20));
        REQUIRE(waited < std::chrono::seconds(5)); // a sleeping core woke for its timer
    }
}

TEST_CASE("timeouts: a timeout that fires, a late result dropped safely, a timeout that does not fire",
          "[tasks][timer]") {
    bool timed_out = false;
    long fast = 0;
    std::uint64_t late = 0;
    std::size_t timers_left = 99;
    test::run(test::on_cores(2), [&] {
        auto c = taco::new_on<clockwork>(1).get();
        auto* f = new taco::future<long>; // freed before the late result comes (ASan would see a late write)
        taco::async(c, taco::m2f(&clockwork::slow, 1L), *f, taco::timeout(std::chrono::milliseconds(5)));
        try {
            f->get();
        } catch (const taco::timeout_error&) {
            timed_out = true;
        }
        delete f;
        taco::wait_until([] { return taco::stats().late_results == 1; }); // the slow result, dropped
        late = taco::stats().late_results;
        taco::future<long> g;
        taco::async(c, taco::m2f(&clockwork::fast, 7L), g, taco::timeout(std::chrono::seconds(10)));
        fast = g.get();
        timers_left = taco::detail::runtime().pending_timers(); // cancelled with the result
        taco::delete_on(c);
    });
    REQUIRE(timed_out);
    REQUIRE(late == 1);
    REQUIRE(fast == 7);
    REQUIRE(timers_left == 0);
}

namespace {
struct yielding_protothread final : taco::protothread<yielding_protothread> {
    std::vector<int>* log;
    int id = 0, i = 0;
    bool step() {
        TACO_PT_BEGIN();
        for (i = 0; i < 3; ++i) {
            log->push_back(id * 10 + i);
            TACO_PT_YIELD();
        }
        TACO_PT_END();
    }
};
} // namespace

TEST_CASE("yield: protothreads and coroutines interleave at their scheduling points", "[tasks]") {
    std::vector<int> pt_log, co_log;
    test::run(test::on_cores(1), [&] {
        yielding_protothread a, b;
        a.log = b.log = &pt_log;
        a.id = 1, b.id = 2;
        taco::start(a);
        taco::start(b);
        auto c1 = taco::spawn_coroutine([&] { for (int i = 0; i < 3; ++i) co_log.push_back(10 + i), taco::yield(); });
        auto c2 = taco::spawn_coroutine([&] { for (int i = 0; i < 3; ++i) co_log.push_back(20 + i), taco::yield(); });
        c1.get();
        c2.get();
        taco::wait_until([&] { return a.finished() && b.finished(); });
    });
    REQUIRE(pt_log == std::vector<int>{10, 20, 11, 21, 12, 22});
    REQUIRE(co_log == std::vector<int>{10, 20, 11, 21, 12, 22});
}

namespace {
// Set when busy_until_raised runs: the test sends the raise only then, or a
// loaded host could deliver both messages in one poll, the plain raise
// first (threads share this; the test runs in thread mode).
std::atomic<bool> busy_started{false};

struct alarm_clock {
    bool raised = false;
    void raise() { raised = true; }
    // A long-running activity that only checks for urgent invocations.
    long busy_until_raised(long max_ms) {
        busy_started.store(true, std::memory_order_release);
        const auto end = taco::task_clock::now() + std::chrono::milliseconds(max_ms);
        long points = 0;
        while (!raised && taco::task_clock::now() < end) {
            taco::urgent_point();
            ++points;
        }
        return raised ? 1 : 0;
    }
};
} // namespace

TEST_CASE("urgent invocations run at the next urgent_point of a long task, plain ones wait", "[tasks][urgent]") {
    for (auto idle : {tacomesh::posix::idle_policy::poll, tacomesh::posix::idle_policy::sleep}) {
        long urgent_seen = -1, plain_seen = -1;
        taco::run(tacomesh::posix::config{.cores = 2, .idle = idle}, [&] {
            auto a = taco::new_on<alarm_clock>(1).get();
            // plain: not seen by the busy task (it only runs urgent work), which gives up after 300 ms
            taco::future<long> plain;
            busy_started = false;
            taco::async(a, taco::m2f(&alarm_clock::busy_until_raised, 300L), plain, taco::as_activity());
            while (!busy_started.load(std::memory_order_acquire)) std::this_thread::yield();
            taco::async(a, taco::m2f(&alarm_clock::raise));
            plain_seen = plain.get();
            // urgent: handled inside the busy task, long before its 10 s limit
            taco::sync(a, +[](alarm_clock& x) { x.raised = false; });
            taco::future<long> busy;
            busy_started = false;
            taco::async(a, taco::m2f(&alarm_clock::busy_until_raised, 10'000L), busy, taco::as_activity());
            while (!busy_started.load(std::memory_order_acquire)) std::this_thread::yield();
            taco::async(a, taco::m2f(&alarm_clock::raise), taco::urgent);
            urgent_seen = busy.get();
            taco::delete_on(a);
        });
        INFO("idle policy " << int(idle));
        REQUIRE(plain_seen == 0);
        REQUIRE(urgent_seen == 1);
    }
}

namespace {
taco::co_task<long> fetch_twice(taco::global_ptr<store> a, taco::global_ptr<store> b) {
    taco::future<long> x, y;
    taco::async(a, taco::m2f(&store::get), x);
    const long first = co_await x; // locals survive suspension: they live in the frame
    taco::async(b, taco::m2f(&store::get), y);
    co_return first + co_await y;
}
taco::co_task<void> failing(taco::global_ptr<store> a) {
    taco::future<long> x;
    taco::async(a, taco::m2f(&store::fail), x);
    co_await x; // rethrows the remote exception inside the coroutine, which lets it escape
}
taco::co_task<long> misusing(taco::global_ptr<store> a) { co_return taco::sync(a, &store::get); }
taco::co_task<long> fetch_both(taco::global_ptr<store> a, taco::global_ptr<store> b) {
    // A temporary future (when_all's, a then()'s) lives in the frame across the suspension.
    auto [x, y] = co_await taco::when_all(taco::call(a, &store::get), taco::call(b, &store::get));
    co_return co_await taco::call(a, &store::get).then([x = x, y = y](long z) { return x + y + z; });
}
} // namespace

TEST_CASE("C++20 coroutine tasks co_await futures assigned by other cores", "[tasks][co_task]") {
    long sum = 0;
    long sum_of_three = 0;
    std::string error, misuse;
    test::run(test::on_cores(3), [&] {
        auto a = taco::new_on<store>(1).get(), b = taco::new_on<store>(2).get();
        taco::sync(a, &store::set, 30L);
        taco::sync(b, &store::set, 12L);
        sum = taco::spawn(fetch_twice(a, b)).get();
        sum_of_three = taco::spawn(fetch_both(a, b)).get();
        try {
            taco::spawn(failing(a)).get();
        } catch (const taco::remote_error& e) {
            error = e.text();
        }
        try {
            taco::spawn(misusing(a)).get();
        } catch (const taco::remote_error& e) {
            misuse = e.text();
        }
        { auto unstarted = fetch_twice(a, b); } // destroyed without running: no leak (ASan)
        taco::delete_on(a);
        taco::delete_on(b);
    });
    REQUIRE(sum == 42);
    REQUIRE(sum_of_three == 72);
    REQUIRE(error.find("store failed") != std::string::npos);
    REQUIRE(misuse.find("co_await") != std::string::npos);
}

TEST_CASE("a finished protothread started again runs from the beginning", "[tasks][protothread]") {
    std::vector<int> log;
    int rounds_seen = 0;
    test::run(test::on_cores(1), [&] {
        yielding_protothread p;
        p.log = &log;
        p.id = 3;
        for (int round = 0; round < 2; ++round) {
            taco::start(p);
            REQUIRE_FALSE(p.finished()); // reset by start: a wait on it must not return at once
            taco::wait_until([&] { return p.finished(); });
            ++rounds_seen;
        }
    });
    REQUIRE(rounds_seen == 2);
    REQUIRE(log == std::vector<int>{30, 31, 32, 30, 31, 32});
}

TEST_CASE("a task started twice before it runs runs once: ready is a state", "[tasks][protothread]") {
    std::vector<int> log;
    test::run(test::on_cores(1), [&] {
        yielding_protothread p;
        p.log = &log;
        p.id = 4;
        taco::start(p);
        taco::start(p); // used to link it twice into the ready queue, corrupting it
        taco::wait_until([&] { return p.finished(); });
        taco::start(p); // finished: from the beginning
        taco::start(p); // ready already: the same start
        taco::wait_until([&] { return p.finished(); });
    });
    REQUIRE(log == std::vector<int>{40, 41, 42, 40, 41, 42});
}

TEST_CASE("a timeout or delay beyond the clock's range means never, not at once", "[tasks][timer]") {
    static std::atomic<int> fired{0};
    fired = 0;
    long results = 0;
    bool nan_refused = false;
    test::run(test::on_cores(2), [&] {
        auto c = taco::new_on<clockwork>(1).get();
        taco::future<long> a, b, d;
        // Each takes a while (clockwork::slow), so a timeout that wrapped into
        // the past would fire first.
        taco::async(c, taco::m2f(&clockwork::slow, 1L), a, taco::timeout(std::chrono::nanoseconds::max()));
        taco::async(c, taco::m2f(&clockwork::slow, 2L), b, taco::timeout(std::chrono::hours::max()));
        taco::async(c, taco::m2f(&clockwork::slow, 4L), d,
                    taco::timeout(std::chrono::duration<double>(std::numeric_limits<double>::infinity())));
        results = a.get() + b.get() + d.get();
        taco::after(std::chrono::nanoseconds::max(), 1, taco::m2f(+[] { ++fired; }));
        taco::after(std::chrono::years::max(), c, taco::m2f(&clockwork::tick));
        taco::sync(c, &clockwork::slow, 0L); // time for a wrapped timer to come due and run
        CHECK(taco::sync(1, +[] { return taco::detail::runtime().pending_timers(); }) == 2);
        CHECK_FALSE(taco::sync(c, &clockwork::done));
        try {
            taco::future<long> e;
            taco::async(c, taco::m2f(&clockwork::fast, 1L), e, taco::timeout(std::chrono::duration<double>(NAN)));
        } catch (const taco::usage_error&) {
            nan_refused = true;
        }
        taco::delete_on(c);
    });
    REQUIRE(results == 7);
    REQUIRE(fired == 0);
    REQUIRE(nan_refused);
}

TEST_CASE("timers still pending when the program ends are freed, not run", "[tasks][timer]") {
    static std::atomic<int> fired{0};
    fired = 0;
    test::run(test::on_cores(2), [] {
        taco::after(std::chrono::hours(1), 1, taco::m2f(+[] { ++fired; }));
        taco::sync(1, +[] { return taco::detail::runtime().pending_timers(); }); // registered
    });
    REQUIRE(fired == 0); // and LeakSanitizer (ASan build) sees no leaked timer
}

namespace {
// Not inlined, with a frame the optimiser cannot drop: each level takes ~1 KiB.
[[gnu::noinline]] long deeper(long n) {
    volatile char pad[1000];
    pad[0] = char(n);
    return n == 0 ? pad[0] : deeper(n + 1) + pad[0]; // never ends: runs into the guard page
}
} // namespace

TEST_CASE("a coroutine stack overflow names the task, its core and its stack size before the process dies",
          "[tasks][coroutine][errors]") {
    if (test::sanitized) return; // ASan and TSan report overflows themselves
    auto r = test::run_in_child([] {
        taco::coroutine_stack_size = 32 * 1024;
        taco::run(test::child_cores(2), [] {
            (void)taco::call(1, +[] { return taco::spawn_coroutine([] { return deeper(1); }).get(); }).get();
        });
    });
    REQUIRE(r.err.find("taco: coroutine stack overflow") != std::string::npos);
    REQUIRE(r.err.find("on core 1 used up its 32768-byte stack") != std::string::npos);
    REQUIRE(r.aborted); // abort(), as for any fatal error the runtime reports, not a SIGSEGV
}

TEST_CASE("coroutine stacks are reused: coroutines one after another run on the same stack",
          "[tasks][coroutine]") {
    std::vector<std::uintptr_t> where;
    test::run(test::on_cores(1), [&] {
        for (int i = 0; i < 4; ++i)
            where.push_back(taco::spawn_coroutine([] {
                                return reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0)); // on its stack
                            }).get());
    });
    // The pool hands back the stack the previous coroutine returned.
    for (std::size_t i = 1; i < where.size(); ++i) REQUIRE(where[i] == where[0]);
}
