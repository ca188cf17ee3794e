// Results of any size (taco/detail/carried_result.hpp): strings, vectors,
// views (which arrive as vectors) and plain values larger than a message,
// returned to futures, timed futures, then continuations, reductions and
// gathers; the size limit reported to the caller's future; reductions of
// arrays, vectors and structs with taco::elementwise and user combiners.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <numeric>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <test_support.hpp>

namespace {

using tacomesh::posix::execution_mode;

/// Results of every kind, sized by the caller. The bytes depend on the
/// size and the core, so a piece lost, doubled or from another sender shows.
struct source {
    std::vector<long> data;

    std::string text(std::size_t n) const {
        std::string s(n, ' ');
        for (std::size_t i = 0; i < n; ++i) s[i] = char('a' + (i * 7 + taco::this_core()) % 26);
        return s;
    }
    std::vector<long> numbers(std::size_t n) const {
        std::vector<long> v(n);
        std::iota(v.begin(), v.end(), long(taco::this_core()) * 1000);
        return v;
    }
    void fill(std::size_t n) { data = numbers(n); }
    taco::view<long> own_data() const { return taco::view<long>(data); }
    std::array<long, 64> histogram() const {
        std::array<long, 64> h{};
        for (std::size_t i = 0; i < h.size(); ++i) h[i] = long(i) * 3 + long(taco::this_core());
        return h;
    }
    std::string huge(std::size_t n) const { return std::string(n, 'h'); }
    long ping() const { return 42; }
};

std::string expected_text(std::size_t n, taco::core_id core) {
    std::string s(n, ' ');
    for (std::size_t i = 0; i < n; ++i) s[i] = char('a' + (i * 7 + core) % 26);
    return s;
}
std::vector<long> expected_numbers(std::size_t n, taco::core_id core) {
    std::vector<long> v(n);
    std::iota(v.begin(), v.end(), long(core) * 1000);
    return v;
}
std::array<long, 64> expected_histogram(taco::core_id core) {
    std::array<long, 64> h{};
    for (std::size_t i = 0; i < h.size(); ++i) h[i] = long(i) * 3 + long(core);
    return h;
}

// Empty, one piece, one message's worth and past it, thousands of pieces
// (most queued locally behind a full ring).
const std::size_t sizes[] = {0, 1, 100, 104, 105, 1000, 100'000};

} // namespace

TEST_CASE("results: strings, vectors, views and large values come back to futures", "[results]") {
    const auto mode = GENERATE(execution_mode::threads, execution_mode::processes);
    CAPTURE(mode == execution_mode::processes);
    test::run(test::cores{3, mode}, [] {
        for (taco::core_id c = 0; c < 3; ++c) { // c == 0: this core, handed over directly
            const auto s = taco::new_on<source>(c).get();
            for (const std::size_t n : sizes) {
                CAPTURE(c, n);
                CHECK(taco::sync(s, &source::text, n) == expected_text(n, c));
                CHECK(taco::sync(s, &source::numbers, n) == expected_numbers(n, c));
                // A view into the object's data arrives as a vector.
                taco::sync(s, &source::fill, n);
                std::vector<long> viewed = taco::sync(s, &source::own_data);
                CHECK(viewed == expected_numbers(n, c));
                taco::future<std::string> f;
                taco::async(s, taco::m2f(&source::text, n), f);
                CHECK(f.get() == expected_text(n, c));
            }
            // A plain value larger than a result message (512 bytes).
            static_assert(sizeof(std::array<long, 64>) > taco::limits::result);
            CHECK(taco::sync(s, &source::histogram) == expected_histogram(c));
            auto h = taco::call(s, &source::histogram);
            CHECK(h.get() == expected_histogram(c));
            taco::delete_on(s);
        }
    });
}

TEST_CASE("results: a string or vector on the caller's own core is handed over without messages", "[results]") {
    test::run(test::on_cores(2), [] {
        source here;
        const auto s = taco::to_global(&here);
        here.fill(10'000);
        const auto& stats = taco::detail::runtime().stats();
        const auto sent = stats.sent;
        CHECK(taco::sync(s, &source::numbers, 10'000).size() == 10'000);
        CHECK(taco::sync(s, &source::own_data).size() == 10'000);
        CHECK(taco::sync(s, &source::text, 5000).size() == 5000);
        // The request goes through this core's channel, the result does not.
        CHECK(stats.sent - sent == 3);
    });
}

TEST_CASE("results: a result beyond taco::max_carried_bytes reaches the caller's future as an error",
          "[results][max-carried]") {
    test::run(test::on_cores(2), [] {
        const auto s = taco::new_on<source>(1).get();
        taco::future<std::string> f;
        taco::async(s, taco::m2f(&source::huge, taco::max_carried_bytes + 1), f);
        CHECK_THROWS_AS(f.get(), taco::remote_error);
        try {
            taco::sync(s, &source::huge, taco::max_carried_bytes + 1);
            FAIL("no error");
        } catch (const taco::remote_error& e) {
            CHECK(e.origin() == 1);
            CHECK_THAT(std::string(e.what()), Catch::Contains("taco::max_carried_bytes (256 MiB)"));
        }
        // A timed future gets it too; the callee's core went on, nothing
        // of the refused value reached this core ahead of the next result.
        taco::async(s, taco::m2f(&source::huge, taco::max_carried_bytes + 1), f, taco::timeout(std::chrono::seconds(60)));
        CHECK_THROWS_WITH(f.get(), Catch::Contains("max_carried_bytes"));
        CHECK(taco::sync(s, &source::text, 300) == expected_text(300, 1));
        CHECK(taco::sync(s, &source::ping) == 42);
        taco::delete_on(s);
    });
}

TEST_CASE("results: a string of exactly taco::max_carried_bytes arrives whole", "[results][.][big]") {
    // 2.6 million pieces: minutes on the emulated SCC and under the
    // sanitizers, about a second on POSIX threads. Run by name.
    test::run(test::on_cores(2), [] {
        const auto s = taco::new_on<source>(1).get();
        const std::string r = taco::sync(s, &source::huge, taco::max_carried_bytes);
        CHECK(r.size() == taco::max_carried_bytes);
        CHECK(std::count(r.begin(), r.end(), 'h') == long(taco::max_carried_bytes));
        taco::delete_on(s);
    });
}

namespace {

/// A key-value store on one core, used from every core.
struct kv_store {
    std::map<std::string, std::string> map;
    void put(std::string key, std::string value) { map[std::move(key)] = std::move(value); }
    std::string get(std::string key) const {
        auto it = map.find(key);
        return it == map.end() ? std::string() : it->second;
    }
};

std::string key_of(taco::core_id core, int i) { return "core" + std::to_string(core) + "/key" + std::to_string(i); }
std::string value_of(taco::core_id core, int i) { return std::string(std::size_t(i * 37), char('A' + (core + i) % 26)); }

/// On each core: store keys, then read back its own and its neighbour's.
long use_store(taco::global_ptr<kv_store> store, int keys) {
    const taco::core_id me = taco::this_core();
    for (int i = 0; i < keys; ++i) taco::async(store, &kv_store::put, key_of(me, i), value_of(me, i));
    long wrong = 0;
    for (int i = 0; i < keys; ++i) wrong += taco::sync(store, &kv_store::get, key_of(me, i)) != value_of(me, i);
    wrong += taco::sync(store, &kv_store::get, std::string("no such key")) != "";
    return wrong;
}

constexpr int keys = 40; // values up to 1443 bytes

} // namespace

TEST_CASE("results: a key-value store's get() returns strings to every core", "[results]") {
    const auto mode = GENERATE(execution_mode::threads, execution_mode::processes);
    CAPTURE(mode == execution_mode::processes);
    test::run(test::cores{4, mode}, [] {
        const auto store = taco::new_on<kv_store>(1).get();
        std::vector<taco::future<long>> users;
        for (taco::core_id c = 1; c < 4; ++c) users.push_back(taco::call(c, &use_store, store, keys));
        long wrong = use_store(store, keys);
        for (auto& u : users) wrong += u.get();
        CHECK(wrong == 0);
        // Every core's keys, read from here.
        for (taco::core_id c = 0; c < 4; ++c)
            CHECK(taco::sync(store, &kv_store::get, key_of(c, keys - 1)) == value_of(c, keys - 1));
        taco::delete_on(store);
    });
}

namespace {
struct named {
    std::string name;
    explicit named(std::string n) : name(std::move(n)) {}
    std::string greet(std::string_view who) const { return name + " greets " + std::string(who); }
    std::size_t length(const std::string& s) const { return s.size(); }
};
} // namespace

TEST_CASE("results: a string literal or char pointer argument travels as the text it spells", "[results]") {
    const auto mode = GENERATE(execution_mode::threads, execution_mode::processes);
    CAPTURE(mode == execution_mode::processes);
    test::run(test::cores{2, mode}, [] {
        const auto store = taco::new_on<kv_store>(1).get();
        taco::sync(store, &kv_store::put, "key", "value"); // a std::string parameter
        CHECK(taco::sync(store, &kv_store::get, "key") == "value");
        const char* built = "key";
        CHECK(taco::call(store, &kv_store::get, built).get() == "value");
        // Constructor arguments, and string_view and const std::string& parameters.
        const auto n = taco::new_on<named>(1, "beta").get();
        CHECK(taco::sync(n, &named::greet, "alpha") == "beta greets alpha");
        CHECK(taco::sync(n, &named::length, "four") == 4);
        // A null one is refused before anything is sent.
        const char* none = nullptr;
        CHECK_THROWS_AS(taco::sync(store, &kv_store::get, none), taco::usage_error);
        taco::delete_on(n);
        taco::delete_on(store);
    });
}

namespace {

struct receiver {
    std::vector<std::string> texts;
    std::vector<std::vector<long>> vectors;
    std::vector<std::array<long, 64>> arrays;
    std::map<std::uint32_t, std::vector<long>> ranked;
    void take_text(int tag, std::string s) { texts.push_back(std::to_string(tag) + ":" + s); }
    void take_vector(std::vector<long> v) { vectors.push_back(std::move(v)); }
    void take_array(const std::array<long, 64>& a) { arrays.push_back(a); }
    void take_ranked(std::uint32_t rank, std::vector<long> v) { ranked[rank] = std::move(v); }
    std::size_t received() const { return texts.size() + vectors.size() + arrays.size() + ranked.size(); }
};

} // namespace

TEST_CASE("results: then continuations receive strings, vectors, views and large values", "[results]") {
    test::run(test::on_cores(3), [] {
        receiver r;
        const auto to = taco::to_global(&r);
        const auto s = taco::new_on<source>(1).get();
        taco::sync(s, &source::fill, 2000);
        taco::async(s, taco::m2f(&source::text, 5000), taco::then(to, &receiver::take_text, 7));
        taco::async(s, taco::m2f(&source::text, 0), taco::then(to, &receiver::take_text, 8));
        taco::async(s, taco::m2f(&source::numbers, 300), taco::then(to, &receiver::take_vector));
        taco::async(s, taco::m2f(&source::own_data), taco::then(to, &receiver::take_vector));
        taco::async(s, taco::m2f(&source::histogram), taco::then(to, &receiver::take_array));
        // A then continuation on a third core, passing the string on again.
        taco::async(s, taco::m2f(&source::text, 200), taco::then(to, &receiver::take_text, 9));
        taco::detail::runtime().wait_until([&] { return r.received() == 6; });
        REQUIRE(r.texts.size() == 3);
        CHECK(r.texts[0] == "7:" + expected_text(5000, 1));
        CHECK(r.texts[1] == "8:");
        CHECK(r.texts[2] == "9:" + expected_text(200, 1));
        REQUIRE(r.vectors.size() == 2);
        CHECK(r.vectors[0] == expected_numbers(300, 1));
        CHECK(r.vectors[1] == expected_numbers(2000, 1));
        REQUIRE(r.arrays.size() == 1);
        CHECK(r.arrays[0] == expected_histogram(1));
        taco::delete_on(s);
    });
}

TEST_CASE("results: a timed future receives a vector", "[results]") {
    test::run(test::on_cores(2), [] {
        for (taco::core_id c = 0; c < 2; ++c) {
            const auto s = taco::new_on<source>(c).get();
            taco::future<std::vector<long>> f;
            taco::async(s, taco::m2f(&source::numbers, 5000), f, taco::timeout(std::chrono::seconds(60)));
            CHECK(f.get() == expected_numbers(5000, c));
            taco::future<std::array<long, 64>> h;
            taco::async(s, taco::m2f(&source::histogram), h, taco::timeout(std::chrono::seconds(60)));
            CHECK(h.get() == expected_histogram(c));
            taco::delete_on(s);
        }
    });
}

namespace {

struct counter_member {
    std::uint32_t rank = 0;
    std::vector<long> values;
    void set_rank(std::uint32_t r) { rank = r; }
    /// 64 counters: this member's samples, binned.
    std::array<long, 64> histogram() const {
        std::array<long, 64> h{};
        for (std::uint32_t i = 0; i <= rank; ++i) ++h[(rank * 7 + i) % 64];
        return h;
    }
    std::vector<double> series(std::size_t n) const {
        std::vector<double> v(n);
        for (std::size_t i = 0; i < n; ++i) v[i] = double(rank) + double(i);
        return v;
    }
    /// Length 3, except rank `odd`'s (4).
    std::vector<long> ragged(std::uint32_t odd) const { return std::vector<long>(rank == odd ? 4 : 3, 1); }
    taco::view<long> own_values() const { return taco::view<long>(values); }
    void fill(std::size_t n) { values.assign(n, long(rank)); }
};

/// A struct larger than a reduce message, merged by a user combiner.
struct summary {
    long count, sum, min, max;
    std::uint32_t first_rank, last_rank;
    double weights[12];
};
struct merge_summaries {
    summary operator()(summary a, const summary& b) const {
        a.count += b.count, a.sum += b.sum;
        a.min = std::min(a.min, b.min), a.max = std::max(a.max, b.max);
        a.last_rank = b.last_rank; // rank order: the right operand comes later
        for (int i = 0; i < 12; ++i) a.weights[i] += b.weights[i];
        return a;
    }
};
static_assert(sizeof(summary) > taco::limits::reduce_value);

struct summary_member {
    std::uint32_t rank = 0;
    void set_rank(std::uint32_t r) { rank = r; }
    summary sum_up() const {
        summary s{1, long(rank), long(rank), long(rank), rank, rank, {}};
        for (int i = 0; i < 12; ++i) s.weights[i] = double(rank) * i;
        return s;
    }
};

template <class M>
std::vector<taco::global_ptr<M>> members_on_each_core(std::uint32_t n) {
    std::vector<taco::global_ptr<M>> m;
    for (std::uint32_t r = 0; r < n; ++r) {
        m.push_back(taco::new_on<M>(r % taco::core_count()).get());
        taco::sync(m.back(), &M::set_rank, r);
    }
    return m;
}
template <class M>
void destroy(const std::vector<taco::global_ptr<M>>& m) {
    for (auto p : m) taco::delete_on(p);
}

} // namespace

TEST_CASE("results: a 64-counter histogram reduce and gather", "[results][collective]") {
    test::run(test::on_cores(8), [] {
        const auto members = members_on_each_core<counter_member>(8);
        for (const auto topo : {taco::topology::binomial(), taco::topology::flat(), taco::topology::kary(2)}) {
            const auto g = taco::make_group(members, topo);
            std::array<long, 64> want{};
            for (const auto p : members) {
                const auto h = taco::sync(p, &counter_member::histogram);
                for (std::size_t i = 0; i < 64; ++i) want[i] += h[i];
            }
            CHECK(std::accumulate(want.begin(), want.end(), 0L) == 36); // 1 + 2 + ... + 8 samples
            CHECK(taco::reduce(g, taco::m2f(&counter_member::histogram), taco::elementwise(std::plus<>{})).get() == want);
            std::vector<std::array<long, 64>> each(8);
            taco::gather(g, taco::m2f(&counter_member::histogram), std::span(each)).get();
            for (std::uint32_t r = 0; r < 8; ++r) CHECK(each[r] == taco::sync(members[r], &counter_member::histogram));
            taco::destroy_group(g);
        }
        destroy(members);
    });
}

TEST_CASE("results: a vector reduce with taco::elementwise on 16 cores (oversubscribed)", "[results][collective]") {
    constexpr std::uint32_t n = 16;
    test::run(test::on_cores(n), [] {
        const auto members = members_on_each_core<counter_member>(n);
        const auto g = taco::make_group(members, taco::topology::binomial());
        for (const std::size_t len : {std::size_t(0), std::size_t(1), std::size_t(64), std::size_t(4096)}) {
            CAPTURE(len);
            const auto sum = taco::reduce(g, taco::m2f(&counter_member::series, len), taco::elementwise(std::plus<>{})).get();
            REQUIRE(sum.size() == len);
            std::size_t wrong = 0;
            for (std::size_t i = 0; i < len; ++i) wrong += sum[i] != double(n * (n - 1) / 2) + double(n) * double(i);
            CHECK(wrong == 0);
        }
        // Views into the members' data, merged as vectors; max, not only plus.
        taco::sync(g, taco::m2f(&counter_member::fill, std::size_t(1000)));
        const std::vector<long> top =
            taco::reduce(g, taco::m2f(&counter_member::own_values), taco::elementwise([](long a, long b) { return std::max(a, b); })).get();
        CHECK(top == std::vector<long>(1000, long(n - 1)));
        // Gathered into a continuation, rank by rank.
        receiver r;
        taco::gather(g, taco::m2f(&counter_member::own_values), taco::then(taco::to_global(&r), &receiver::take_ranked));
        taco::detail::runtime().wait_until([&] { return r.ranked.size() == n; });
        for (std::uint32_t k = 0; k < n; ++k) CHECK(r.ranked[k] == std::vector<long>(1000, long(k)));
        taco::destroy_group(g);
        destroy(members);
    });
}

TEST_CASE("results: elementwise over vectors of different lengths is an error the reduce reports", "[results][collective]") {
    test::run(test::on_cores(4), [] {
        const auto members = members_on_each_core<counter_member>(6);
        const auto g = taco::make_group(members, taco::topology::kary(2));
        const auto plus = taco::elementwise(std::plus<>{});
        CHECK(taco::reduce(g, taco::m2f(&counter_member::ragged, 99u), plus).get() == std::vector<long>(3, 6));
        for (const std::uint32_t odd : {0u, 3u, 5u}) {
            CAPTURE(odd);
            CHECK_THROWS_WITH(taco::reduce(g, taco::m2f(&counter_member::ragged, odd), plus).get(),
                              Catch::Contains("taco::elementwise: vectors of lengths"));
        }
        // The group is fine afterwards.
        CHECK(taco::reduce(g, taco::m2f(&counter_member::ragged, 99u), plus).get() == std::vector<long>(3, 6));
        taco::destroy_group(g);
        destroy(members);
    });
}

TEST_CASE("results: a struct larger than a message reduced with a user combiner", "[results][collective]") {
    test::run(test::on_cores(5), [] {
        constexpr std::uint32_t n = 11;
        const auto members = members_on_each_core<summary_member>(n);
        for (const auto topo : {taco::topology::binomial(), taco::topology::flat(), taco::topology::kary(3)}) {
            const auto g = taco::make_group(members, topo);
            const summary s = taco::reduce(g, taco::m2f(&summary_member::sum_up), merge_summaries{}).get();
            CHECK(s.count == n);
            CHECK(s.sum == long(n * (n - 1) / 2));
            CHECK(s.min == 0);
            CHECK(s.max == long(n - 1));
            CHECK(s.first_rank == 0);
            CHECK(s.last_rank == n - 1);
            CHECK(s.weights[11] == 11.0 * double(n * (n - 1) / 2));
            taco::destroy_group(g);
        }
        destroy(members);
    });
}
