// Invocation channels and sinks (CCI paper, section III.C): the writer names
// a channel, the sink on its core chooses the action. Portable: every
// platform's suites program runs these (POSIX threads, MPI ranks, the
// emulated SCC), so everything a core other than 0 touches lives in objects
// made there (new_on) or in functions, never in main's locals.
#include <catch2/catch.hpp>

#include <atomic>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <test_support.hpp>

namespace {

struct request {
    long value;
    taco::channel<long> reply; // continuation passing: the result's sink travels with the event
};

struct answer {
    void operator()(request r) const { taco::emit(r.reply, r.value + 1); }
};

/// The far side of the paper's round-trip experiment: a sink whose
/// preallocated activity emits the result back, and one that answers
/// straight from the message.
struct echo_server {
    taco::activity_sink<request, answer> by_activity{answer{}};
    taco::function_sink<request, answer> by_function{answer{}};
    taco::channel<request> activity_channel() { return taco::channel_to(by_activity); }
    taco::channel<request> function_channel() { return taco::channel_to(by_function); }
};

struct tagged {
    taco::core_id from;
    long seq;
};

void write_sequence(taco::channel<tagged> to, long n) {
    for (long i = 0; i < n; ++i) taco::emit(to, tagged{taco::this_core(), i});
}

void write_numbers(taco::channel<long> to, long n) {
    for (long i = 1; i <= n; ++i) taco::emit(to, i);
}

std::string text_of(long n) {
    std::string s(std::size_t(n), ' ');
    for (long i = 0; i < n; ++i) s[std::size_t(i)] = char('a' + i % 26);
    return s;
}

void write_texts(taco::channel<std::string> to) {
    for (long n : {0L, 5L, 300L, 100000L}) taco::emit(to, text_of(n));
}

void write_vectors(taco::channel<std::vector<long>> to) {
    for (long n : {0L, 3L, 20000L}) {
        std::vector<long> v(static_cast<std::size_t>(n));
        std::iota(v.begin(), v.end(), n);
        taco::emit(to, v);
    }
}

long square(long x) { return x * x; }

void write_twice(taco::channel<long> to) {
    taco::emit(to, 1L);
    taco::emit(to, 2L);
}

struct mailbox_protothread : taco::protothread<mailbox_protothread> {
    taco::mailbox<long>* box = nullptr;
    long left = 0;
    long sum = 0;
    bool step() {
        TACO_PT_BEGIN();
        while (left > 0) {
            TACO_PT_AWAIT(*box);
            sum += box->take();
            --left;
        }
        TACO_PT_END();
    }
};

std::atomic<int> reports{0};
std::string last_report;
void note_report(const taco::error_info& e) {
    last_report = std::string(e.view());
    reports.fetch_add(1);
}

} // namespace

TEST_CASE("event channel: round trips through an activity sink and a function sink into a future", "[channels]") {
    test::run(test::on_cores(2), [] {
        const auto server = taco::new_on<echo_server>(1).get();
        const auto via_activity = taco::sync(server, &echo_server::activity_channel);
        const auto via_function = taco::sync(server, &echo_server::function_channel);
        CHECK(via_activity.core() == 1);
        CHECK(via_activity != via_function);
        for (long i = 0; i < 50; ++i) {
            for (const auto& ch : {via_activity, via_function}) {
                taco::future<long> f;
                taco::emit(ch, request{i, taco::channel_to(f)});
                REQUIRE(f.get() == i + 1);
            }
        }
        taco::delete_on(server);
    });
}

TEST_CASE("event channel: writes from many cores reach a mailbox in order per writer and none is lost "
          "(oversubscribed)",
          "[channels]") {
    static constexpr taco::core_id cores = 6; // more cores than this machine's CPUs
    test::run(test::on_cores(cores), [] {
        taco::mailbox<tagged> box;
        const auto in = taco::channel_to(box);
        const long n = test::scaled(2000);
        for (taco::core_id c = 1; c < cores; ++c) taco::async(c, &write_sequence, in, n);
        write_sequence(in, n); // this core's writes go through its own channel, in order too
        std::vector<long> next(cores, 0);
        for (long k = 0; k < n * cores; ++k) {
            const tagged t = box.receive();
            REQUIRE(t.from < cores);
            REQUIRE(t.seq == next[t.from]);
            ++next[t.from];
        }
        CHECK(box.size() == 0);
    });
}

TEST_CASE("event channel: strings and vectors larger than a message are carried to the sink", "[channels]") {
    test::run(test::on_cores(2), [] {
        taco::mailbox<std::string> texts;
        taco::async(1, &write_texts, taco::channel_to(texts));
        for (long n : {0L, 5L, 300L, 100000L}) CHECK(texts.receive() == text_of(n));

        taco::mailbox<std::vector<long>> vectors;
        taco::async(1, &write_vectors, taco::channel_to(vectors));
        for (long n : {0L, 3L, 20000L}) {
            const auto v = vectors.receive();
            REQUIRE(v.size() == std::size_t(n));
            if (n > 0) CHECK((v.front() == n && v.back() == 2 * n - 1));
        }

        // A channel made from a global pointer to a sink on another core, without asking it.
        const auto remote = taco::new_on<taco::mailbox<long>>(1).get();
        taco::emit(taco::channel_to(remote), 5L);
        CHECK(taco::sync(remote, &taco::mailbox<long>::take) == 5); // behind the write: one channel, in order
        taco::delete_on(remote);

        // A channel as an invocation's completion: the (carried) result is written to it.
        taco::async(1, taco::m2f(&text_of, 5000L), taco::channel_to(texts));
        CHECK(texts.receive() == text_of(5000));
    });
}

TEST_CASE("sink: a protothread and a coroutine wait on mailboxes for values from another core", "[channels]") {
    test::run(test::on_cores(2), [] {
        taco::mailbox<long> for_protothread;
        mailbox_protothread p;
        p.box = &for_protothread;
        p.left = 100;
        taco::start(p);
        taco::async(1, &write_numbers, taco::channel_to(for_protothread), 100L);
        taco::wait_until([&] { return p.finished(); });
        p.rethrow_if_failed();
        CHECK(p.sum == 5050);

        taco::mailbox<long> for_coroutine;
        auto sum = taco::spawn_coroutine([&for_coroutine] {
            long s = 0;
            for (int i = 0; i < 100; ++i) s += for_coroutine.receive();
            return s;
        });
        taco::async(1, &write_numbers, taco::channel_to(for_coroutine), 100L);
        CHECK(sum.get() == 5050);

        // An activity has no stack to wait on: refused, with the way out.
        taco::mailbox<long> empty;
        auto refused = taco::spawn_activity([&empty] { return empty.receive(); });
        CHECK_THROWS_WITH(refused.get(), Catch::Contains("activity cannot wait"));
        CHECK_THROWS_WITH(empty.take(), Catch::Contains("mailbox is empty"));
    });
}

TEST_CASE("sink: a merger combines each count of inputs and passes the merged value on", "[channels]") {
    static constexpr taco::core_id cores = 5;
    test::run(test::on_cores(cores), [] {
        taco::mailbox<long> totals;
        taco::merger sum(cores - 1, taco::channel_to(totals), std::plus<long>{});
        const auto in = taco::channel_to(sum);
        for (long round = 0; round < 3; ++round) {
            long expected = 0;
            for (taco::core_id c = 1; c < cores; ++c) {
                // The members' results go to the merger as their completion.
                taco::async(c, taco::m2f(&square, long(c) + round), in);
                expected += square(long(c) + round);
            }
            CHECK(totals.receive() == expected);
            CHECK(sum.seen() == 0);
        }
        CHECK_THROWS_AS(taco::merger(0, taco::channel_to(totals), std::plus<long>{}), std::invalid_argument);
        CHECK_THROWS_AS(taco::merger(2, taco::channel<long>{}, std::plus<long>{}), std::invalid_argument);
    });
}

TEST_CASE("sink: activity sinks handle one value per activation in the order of the core's policy", "[channels]") {
    for (auto pol : {taco::policy::fifo, taco::policy::priority}) {
        std::vector<int> seen;
        test::run(
            test::on_cores(2),
            [&seen] {
                auto low = taco::make_activity_sink<int>([&seen](int v) { seen.push_back(v); },
                                                         taco::schedule{.priority = 1});
                auto high = taco::make_activity_sink<int>([&seen](int v) { seen.push_back(100 + v); },
                                                          taco::schedule{.priority = 5});
                // Accepted inside a running task, so none runs before all
                // six are queued (at a core between tasks the first would
                // run at once, as the scheduler's next pick anyway).
                std::size_t queued = 0;
                auto writer = taco::spawn_activity([&] {
                    for (int v = 1; v <= 3; ++v) low.accept(int(v));
                    for (int v = 1; v <= 3; ++v) high.accept(int(v));
                    queued = low.pending() + high.pending();
                });
                writer.get();
                taco::wait_until([&] { return seen.size() == 6; });
                CHECK(queued == 6);
            },
            taco::run_options{.scheduling = pol});
        if (pol == taco::policy::fifo) CHECK(seen == std::vector<int>{1, 101, 2, 102, 3, 103});
        else CHECK(seen == std::vector<int>{101, 102, 103, 1, 2, 3});
    }
}

TEST_CASE("event channel: misuse is refused or reported and loses nothing", "[channels]") {
    reports = 0;
    taco::set_uncaught_error_handler(&note_report);
    test::run(test::on_cores(2), [] {
        CHECK_THROWS_WITH(taco::emit(taco::channel<long>{}, 1L), Catch::Contains("null channel"));

        // A future takes one value: the second write is reported on the future's core.
        taco::future<long> f;
        taco::async(1, &write_twice, taco::channel_to(f));
        CHECK(f.get() == 1);
        taco::wait_until([] { return reports.load() == 1; });
        CHECK(last_report.find("second value written to a future") != std::string::npos);

        // What a sink throws goes to its core's uncaught-error handler; the
        // values after it are still handled.
        std::vector<long> kept;
        auto picky = taco::make_function_sink<long>([&kept](long v) {
            if (v == 2) throw std::invalid_argument("two is not accepted here");
            kept.push_back(v);
        });
        taco::async(1, &write_numbers, taco::channel_to(picky), 4L);
        taco::wait_until([&] { return kept.size() == 3; });
        CHECK(kept == std::vector<long>{1, 3, 4});
        CHECK(reports.load() == 2);
        CHECK(last_report.find("two is not accepted here") != std::string::npos);
    });
    taco::set_uncaught_error_handler(nullptr);
}
