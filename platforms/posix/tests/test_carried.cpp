// Strings, vectors and taco::view carried by value to another core: in
// thread mode and in process mode, where an address of the sender would
// point into another process's memory.
#include <catch2/catch.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include <test_support.hpp>

namespace {

using tacomesh::posix::config;
using tacomesh::posix::execution_mode;

std::size_t count_char(std::string s, char c) { return std::size_t(std::count(s.begin(), s.end(), c)); }
long sum_view(taco::view<long> v) { return std::accumulate(v.begin(), v.end(), 0L); }
long sum_vector(const std::vector<int>& v) { return std::accumulate(v.begin(), v.end(), 0L); }
bool view_is_aligned(taco::view<double> v) {
    return reinterpret_cast<std::uintptr_t>(v.data()) % alignof(double) == 0;
}

// Plain and carried arguments mixed, each kind of element alignment.
std::uint64_t mixed(int a, std::string b, double c, taco::view<short> d, std::vector<char> e, char f) {
    std::uint64_t h = std::uint64_t(a) * 31 + std::uint64_t(c * 1000);
    for (char x : b) h = h * 131 + std::uint64_t(x);
    for (short x : d) h = h * 137 + std::uint64_t(x);
    for (char x : e) h = h * 139 + std::uint64_t(x);
    return h * 7 + std::uint64_t(f);
}

struct checker {
    long received = 0, wrong = 0;
    // Every string from sender k is k's letter repeated `length` times.
    void take(std::string s, char letter, std::size_t length) {
        ++received;
        if (s.size() != length || std::count(s.begin(), s.end(), letter) != long(length)) ++wrong;
    }
    void flush() const {}
    std::array<long, 2> counts() const { return {received, wrong}; }
};

void send_many(taco::global_ptr<checker> to, char letter, int n) {
    for (int i = 0; i < n; ++i) taco::async(to, &checker::take, std::string(std::size_t(i), letter), letter, std::size_t(i));
    taco::sync(to, &checker::flush); // in order after the strings
}

long sum_after_yields(taco::view<long> v) {
    for (int i = 0; i < 5; ++i) taco::yield(); // the view must outlive the message that brought it
    return sum_view(v);
}

} // namespace

TEST_CASE("strings, vectors and views travel by value", "[carried]") {
    const auto mode = GENERATE(execution_mode::threads, execution_mode::processes);
    CAPTURE(mode == execution_mode::processes);
    taco::run(config{.cores = 3, .mode = mode}, [] {
        CHECK(taco::sync(1, &count_char, std::string("carried across cores"), 'r') == 4);
        CHECK(taco::sync(2, &count_char, std::string(), 'x') == 0);

        std::vector<long> longs(1000);
        std::iota(longs.begin(), longs.end(), 1);
        CHECK(taco::sync(1, &sum_view, taco::view(longs)) == 500500);
        CHECK(taco::sync(1, &sum_view, taco::view<long>()) == 0);

        // Much larger than a ring (thousands of pieces, most queued locally).
        std::vector<int> big(100'000);
        std::iota(big.begin(), big.end(), 0);
        CHECK(taco::sync(2, &sum_vector, big) == 4'999'950'000L);

        const std::array<double, 3> ds{1.5, 2.5, 3.5};
        CHECK(taco::sync(1, &view_is_aligned, taco::view(ds)));

        const std::array<short, 4> shorts{-1, 2, -3, 4};
        const std::string s = "odd length";
        const std::vector<char> chars{'a', 'b', 'c'};
        const auto expect = mixed(7, s, 0.25, taco::view(shorts), chars, 'z');
        CHECK(taco::sync(2, taco::m2f(&mixed, 7, s, 0.25, taco::view(shorts), chars, 'z')) == expect);
        // To this core itself, through the same path.
        CHECK(taco::sync(0, taco::m2f(&mixed, 7, s, 0.25, taco::view(shorts), chars, 'z')) == expect);
    });
}

TEST_CASE("carried invocations from several senders to one receiver do not mix", "[carried]") {
    const auto mode = GENERATE(execution_mode::threads, execution_mode::processes);
    CAPTURE(mode == execution_mode::processes);
    std::array<long, 2> counts{};
    taco::run(config{.cores = 3, .ring_slots = 4, .mode = mode}, [&] {
        checker c;
        const auto gp = taco::to_global(&c);
        auto a = taco::call(1, &send_many, gp, 'a', 300);
        auto b = taco::call(2, &send_many, gp, 'b', 300);
        send_many(gp, 'c', 100); // and from this core too, while the others send
        a.get();
        b.get();
        counts = c.counts();
    });
    CHECK(counts[0] == 700);
    CHECK(counts[1] == 0);
}

TEST_CASE("a carried view stays valid in a task that runs later", "[carried]") {
    taco::run(config{.cores = 2, .mode = execution_mode::processes}, [] {
        std::vector<long> v(300, 3);
        // While the coroutine yields, an invocation of the same size runs
        // straight on core 1: were the first buffer freed when its message
        // had run, this one's allocation would take its place (and 7s).
        const std::vector<long> other(300, 7);
        auto later = taco::call(1, taco::m2f(&sum_after_yields, taco::view(v)), taco::as_coroutine{});
        CHECK(taco::sync(1, &sum_view, taco::view(other)) == 2100);
        CHECK(later.get() == 900);
        CHECK(taco::sync(1, taco::m2f(&sum_view, taco::view(v)), taco::as_activity{}, taco::with_priority{1}) == 900);
    });
}

TEST_CASE("carried data beyond taco::max_carried_bytes is refused before anything is sent", "[carried][misuse]") {
    taco::run(config{.cores = 2}, [] {
        const std::string small(100, 'x');
        const std::vector<char> huge(taco::max_carried_bytes + 1);
        REQUIRE_THROWS_AS(taco::async(1, taco::m2f(&mixed, 1, small, 0.0, taco::view<short>(), huge, 'z')),
                          taco::usage_error);
        REQUIRE_THROWS_WITH(taco::sync(1, &sum_vector, std::vector<int>(taco::max_carried_bytes / sizeof(int) + 1)),
                            Catch::Contains("more than 256 MiB (taco::max_carried_bytes)"));
        // No piece of the refused ones reached core 1 ahead of this one.
        CHECK(taco::sync(1, &count_char, small, 'x') == 100);
        // A future given to a refused invocation is left as if none had
        // been: waiting is a usage error, not a wait for ever (nor, with a
        // timeout, a timer that fires later on its reused state), and it
        // takes the next invocation.
        const std::vector<int> too_many(taco::max_carried_bytes / sizeof(int) + 1);
        taco::future<long> f;
        REQUIRE_THROWS_AS(taco::async(1, taco::m2f(&sum_vector, too_many), f), taco::usage_error);
        CHECK_THROWS_WITH(f.wait(), Catch::Contains("no invocation was given"));
        REQUIRE_THROWS_AS(taco::async(1, taco::m2f(&sum_vector, too_many), f, taco::timeout(std::chrono::milliseconds(1))),
                          taco::usage_error);
        CHECK_THROWS_WITH(f.wait(), Catch::Contains("no invocation was given"));
        std::this_thread::sleep_for(std::chrono::milliseconds(5)); // past the refused one's limit
        taco::async(1, taco::m2f(&sum_vector, std::vector<int>{1, 2, 3}), f, taco::timeout(std::chrono::seconds(60)));
        CHECK(f.get() == 6);
    });
}
