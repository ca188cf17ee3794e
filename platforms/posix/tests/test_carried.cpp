// Strings, vectors and taco::view carried by value to another core: in
// thread mode and in process mode, where an address of the sender would
// point into another process's memory.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include <tacomesh/posix/staging.hpp>
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

TEST_CASE("carried data beyond taco::max_carried_bytes is refused before anything is sent", "[carried][misuse][max-carried]") {
    taco::run(config{.cores = 2}, [] {
        const std::string small(100, 'x');
        const std::vector<char> huge(taco::max_carried_bytes + 1);
        REQUIRE_THROWS_AS(taco::async(1, taco::m2f(&mixed, 1, small, 0.0, taco::view<short>(), huge, 'z')),
                          taco::usage_error);
        // One 256 MiB vector for every refusal below (each fill costs seconds under the sanitizers).
        const std::vector<int> too_many(taco::max_carried_bytes / sizeof(int) + 1);
        REQUIRE_THROWS_WITH(taco::sync(1, &sum_vector, too_many),
                            Catch::Contains("more than 256 MiB (taco::max_carried_bytes)"));
        // No piece of the refused ones reached core 1 ahead of this one.
        CHECK(taco::sync(1, &count_char, small, 'x') == 100);
        // A future given to a refused invocation is left as if none had
        // been: waiting is a usage error, not a wait for ever (nor, with a
        // timeout, a timer that fires later on its reused state), and it
        // takes the next invocation.
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

// ---- the staging areas of core processes (staging.hpp) ----

TEST_CASE("a staging area hands out blocks in order, reclaims released ones and wraps around", "[carried][staging]") {
    using tacomesh::posix::detail::staging_area;
    alignas(64) static std::byte memory[4096];
    staging_area a(memory, sizeof memory);
    // 1000 bytes take 1024 + a header line: three fit in 4096, a fourth does not.
    std::byte* b1 = a.allocate(1000);
    std::byte* b2 = a.allocate(1000);
    std::byte* b3 = a.allocate(1000);
    REQUIRE(b1);
    REQUIRE(b2);
    REQUIRE(b3);
    CHECK(reinterpret_cast<std::uintptr_t>(b1) % 64 == 0);
    CHECK(b2 - b1 == 1088);
    CHECK(a.allocate(1000) == nullptr);
    CHECK(a.allocate(5000) == nullptr); // never fits
    // Released out of order: nothing is reclaimed before the oldest is.
    staging_area::release(b2);
    CHECK(a.allocate(1000) == nullptr);
    staging_area::release(b1);
    // b1 and b2 reclaimed; the 832 bytes at the end are too short for 1088:
    // skipped, and the block starts over at the beginning.
    std::byte* b4 = a.allocate(1000);
    CHECK(b4 == b1);
    std::byte* b5 = a.allocate(1000);
    CHECK(b5 == b2);
    CHECK(a.allocate(1000) == nullptr);
    staging_area::release(b3);
    staging_area::release(b4);
    staging_area::release(b5);
    CHECK(a.allocate(4000) != nullptr); // all reclaimed, the whole area again
}

namespace {
struct bulk_sink {
    std::vector<long> received, wrong;
    explicit bulk_sink(taco::core_id n) : received(n), wrong(n) {}
    void take(taco::core_id from, long k, std::vector<long> v) {
        if (k != received[from]++ || v.size() != std::size_t(64 * 1024) || v.front() != from * 1000 + k ||
            v.back() != from * 1000 + k + long(v.size()) - 1)
            ++wrong[from];
    }
};
/// Sends k vectors of 512 KiB to `to`; returns the messages it sent.
std::uint64_t send_large(taco::global_ptr<bulk_sink> to, long k) {
    const auto before = taco::detail::runtime().stats().sent;
    for (long i = 0; i < k; ++i) {
        std::vector<long> v(64 * 1024);
        std::iota(v.begin(), v.end(), long(taco::this_core()) * 1000 + i);
        taco::async(to, &bulk_sink::take, taco::this_core(), i, std::move(v));
    }
    return taco::detail::runtime().stats().sent - before;
}
} // namespace

TEST_CASE("a full staging area sends pieces instead: nothing lost, nothing out of order", "[carried][staging]") {
    // 7 core processes on 2 CPUs send 6 x 512 KiB each to core 0, which
    // does not serve them for a while; a staging area of 1 MiB holds one.
    constexpr taco::core_id cores = 8;
    static constexpr long per_sender = 6;
    std::vector<long> received, wrong;
    std::uint64_t most_sent = 0, least_sent = ~std::uint64_t(0);
    taco::run(config{.cores = cores, .mode = execution_mode::processes, .bulk_staging_bytes = std::size_t(1) << 20}, [&] {
        bulk_sink sink(cores);
        const auto gp = taco::to_global(&sink);
        std::vector<taco::future<std::uint64_t>> sent;
        for (taco::core_id c = 1; c < cores; ++c) sent.push_back(taco::call(c, &send_large, gp, per_sender));
        test::spin_for(100'000'000);
        for (auto& f : sent) {
            const std::uint64_t n = f.get();
            most_sent = std::max(most_sent, n);
            least_sent = std::min(least_sent, n);
        }
        taco::wait_until([&] {
            return std::all_of(sink.received.begin() + 1, sink.received.end(), [](long r) { return r == per_sender; });
        });
        received = sink.received;
        wrong = sink.wrong;
    });
    for (taco::core_id c = 1; c < cores; ++c) {
        CAPTURE(c);
        CHECK(received[c] == per_sender);
        CHECK(wrong[c] == 0);
    }
    // Some vectors went as pieces (5042 messages for 512 KiB), the first
    // of each sender through its staging area (a message or two).
    CHECK(most_sent > 5000);
    CHECK(least_sent < std::uint64_t(per_sender) * 5042);
}

TEST_CASE("with core processes a large vector goes through the staging area, and its block is released", "[carried][staging]") {
    taco::run(config{.cores = 2, .mode = execution_mode::processes}, [] {
        const std::vector<long> v(1 << 20, 2);
        const auto before = taco::detail::runtime().stats().sent;
        CHECK(taco::sync(1, &sum_view, taco::view(v)) == 2L << 20);
        CHECK(taco::detail::runtime().stats().sent - before < 5); // not 80 660 pieces
        // The block is reclaimed at the next allocation: a whole area's
        // worth of vectors in a row each find room.
        for (int i = 0; i < 10; ++i) CHECK(taco::sync(1, &sum_view, taco::view(v)) == 2L << 20);
        CHECK(taco::detail::runtime().stats().sent - before < 50);
    });
}
