// Object groups and one-sided collectives: every topology and size 1..64
// (oversubscribed), random delays in members, concurrent collectives on one
// group, rank order for non-commutative combiners, nested collectives, bad
// groups.
#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <taco/topology.hpp>
#include <test_support.hpp>

namespace {

struct member {
    std::uint32_t rank = 0;
    long hits = 0;
    std::uint64_t rng = 0;

    void set_rank(std::uint32_t r) { rank = r, rng = 0x9E3779B97F4A7C15ull * (r + 1); }
    void jitter() { // a random delay now and then, so tree nodes answer out of order
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        if ((rng & 3) == 0) test::spin_for(long(rng >> 52) % 20'000);
    }
    void hit() { jitter(), ++hits; }
    long scaled_rank(long factor) { return jitter(), long(rank) * factor; }
    std::uint32_t my_rank() { return jitter(), rank; }
    long hit_count() const { return hits; }
    long fail_if(std::uint32_t bad) {
        if (rank == bad) throw std::runtime_error("member " + std::to_string(rank) + " failed");
        return 1;
    }
};

/// Members of a group of size n, round-robin over the cores (several per core).
std::vector<taco::global_ptr<member>> make_members(std::uint32_t n) {
    std::vector<taco::global_ptr<member>> m;
    for (std::uint32_t r = 0; r < n; ++r) {
        m.push_back(taco::new_on<member>(r % taco::core_count()).get());
        taco::sync(m.back(), &member::set_rank, r);
    }
    return m;
}
void destroy(const std::vector<taco::global_ptr<member>>& m) {
    for (auto p : m) taco::delete_on(p);
}

const taco::topology all_shapes[] = {taco::topology::flat(),    taco::topology::binomial(), taco::topology::kary(1),
                                     taco::topology::kary(2),   taco::topology::kary(3),    taco::topology::kary(4),
                                     taco::topology::kary(8)};

struct rank_sink {
    std::vector<int> seen;
    long count = 0, bad = 0;
    void put(std::uint32_t rank, std::uint32_t value) {
        bad += rank != value || rank >= seen.size();
        if (rank < seen.size()) ++seen[rank];
        ++count;
    }
};

} // namespace

namespace {
struct throws_past_one {
    long operator()(long a, long b) const {
        if (a + b > 1) throw std::runtime_error("combiner refused " + std::to_string(a + b));
        return a + b;
    }
};
} // namespace

namespace {
struct gather_log {
    long values = 0, failures = 0, totals = 0;
    taco::core_id origin = taco::no_core;
    void put(std::uint32_t, long) { ++values; }
    void total(long) { ++totals; }
    void failed(const taco::error_info& e) { ++failures, origin = e.origin; }
};
} // namespace

TEST_CASE("error continuations of collectives: a gather's failing members and a reduce's failure go to it",
          "[collective][errors]") {
    gather_log log;
    test::run(test::on_cores(3), [&] {
        auto members = make_members(6);
        auto g = taco::make_group(members, taco::topology::binomial());
        auto to = taco::to_global(&log);
        taco::gather(g, taco::m2f(&member::fail_if, 4u), taco::then(to, &gather_log::put).on_error(to, &gather_log::failed));
        taco::wait_until([&] { return log.values + log.failures == 6; });
        taco::reduce(g, taco::m2f(&member::fail_if, 2u), std::plus<long>{},
                     taco::then(to, &gather_log::total).on_error(to, &gather_log::failed));
        taco::wait_until([&] { return log.failures == 2; });
        taco::reduce(g, taco::m2f(&member::fail_if, 99u), std::plus<long>{},
                     taco::then(to, &gather_log::total).on_error(to, &gather_log::failed));
        taco::wait_until([&] { return log.totals == 1; });
        taco::destroy_group(g);
        destroy(members);
    });
    CHECK(log.values == 5);
    CHECK(log.failures == 2);  // one failing member of the gather, then the reduce's failure once
    CHECK(log.totals == 1);    // the reduce without a failure
    CHECK(log.origin == 2 % 3); // the last failure: member 2, on core 2
}

TEST_CASE("a reduce whose combiner throws reports the exception to the caller", "[collective][errors]") {
    // The combiner runs inside a core's message handler: its exception used
    // to unwind through it, leaving the caller waiting for ever.
    std::string text;
    long after = 0;
    test::run(test::on_cores(2), [&] {
        auto members = make_members(4);
        auto g = taco::make_group(members);
        try {
            (void)taco::reduce(g, taco::m2f(&member::scaled_rank, 1L), throws_past_one{}).get();
        } catch (const taco::remote_error& e) {
            text = e.text();
        }
        after = taco::reduce(g, taco::m2f(&member::scaled_rank, 1L), std::plus<long>{}).get(); // still usable
        taco::destroy_group(g);
        destroy(members);
    });
    REQUIRE(text.find("combiner refused") != std::string::npos);
    REQUIRE(after == 0 + 1 + 2 + 3);
}

TEST_CASE("collectives: every topology, group sizes 1..64, members spread over 16 cores on 2 CPUs", "[collective]") {
    // Under a sanitizer (scaled sizes), every size up to 16 and then the
    // trees' boundaries up to 64: the work grows with the size, and the
    // protocol's interleavings are the same at 40 members as at 16.
    std::vector<std::uint32_t> sizes;
    for (std::uint32_t n = 1; n <= 64; ++n)
        if (test::scaled(64) == 64 || n <= 16 || n == 31 || n == 32 || n == 33 || n == 63 || n == 64) sizes.push_back(n);
    long failures = 0, checks = 0;
    test::run(test::on_cores(16), [&] {
        for (const std::uint32_t n : sizes) {
            auto members = make_members(n);
            for (std::size_t s = 0; s < std::size(all_shapes); ++s) {
                auto g = taco::make_group(members, all_shapes[s]);
                // reduce: sum of rank * 3
                taco::future<long> sum;
                taco::reduce(g, taco::m2f(&member::scaled_rank, 3L), std::plus<long>{}, sum);
                failures += sum.get() != 3L * n * (n - 1) / 2;
                // at_each with completion, then every member was hit exactly once more
                taco::future<void> done;
                taco::at_each(g, taco::m2f(&member::hit), done);
                done.get();
                taco::future<long> hits;
                taco::reduce(g, taco::m2f(&member::hit_count), std::plus<long>{}, hits);
                failures += hits.get() != long(n) * long(s + 1);
                // gather into an array
                std::vector<std::uint32_t> ranks(n, ~0u);
                taco::future<void> gathered;
                taco::gather(g, taco::m2f(&member::my_rank), std::span<std::uint32_t>(ranks), gathered);
                gathered.get();
                for (std::uint32_t r = 0; r < n; ++r) failures += ranks[r] != r;
                // gather through a continuation: put(rank, value) once per member
                rank_sink sink;
                sink.seen.assign(n, 0);
                taco::gather(g, taco::m2f(&member::my_rank), taco::then(taco::to_global(&sink), &rank_sink::put));
                taco::wait_until([&] { return sink.count == long(n); });
                for (int s : sink.seen) failures += s != 1;
                failures += sink.bad;
                taco::destroy_group(g);
                ++checks;
            }
            destroy(members);
        }
    });
    REQUIRE(checks > 0);
    REQUIRE(failures == 0);
}

TEST_CASE("collectives: one member per core on 64 cores (48 on the SCC), oversubscribed, every topology", "[collective]") {
    const taco::core_id n = test::suite_platform() == test::platform::scc ? 48 : 64;
    std::vector<long> sums;
    test::run(test::on_cores(n), [&] {
        std::vector<taco::global_ptr<member>> members;
        for (taco::core_id c = 0; c < n; ++c) {
            members.push_back(taco::new_on<member>(c).get());
            taco::sync(members.back(), &member::set_rank, std::uint32_t(c));
        }
        for (auto shape : all_shapes) {
            auto g = taco::make_group(members, shape);
            sums.push_back(taco::sync(g.root.core(), +[] { return 0L; }) +
                           [&] { taco::future<long> f; taco::reduce(g, taco::m2f(&member::scaled_rank, 1L), std::plus<long>{}, f); return f.get(); }());
            taco::destroy_group(g);
        }
        destroy(members);
    });
    REQUIRE(sums.size() == std::size(all_shapes));
    for (long s : sums) REQUIRE(s == long(n) * (n - 1) / 2);
}

TEST_CASE("collectives: a tree node sends to its largest subtree first, and slots stay in rank order",
          "[collective]") {
    using taco::detail::largest_first, taco::detail::subtree_sizes, taco::detail::tree_layout;
    const auto binomial = tree_layout(48, taco::topology::binomial());
    const auto sizes = subtree_sizes(binomial);
    REQUIRE(sizes[0] == 48);
    REQUIRE(binomial[0] == std::vector<std::uint32_t>{1, 2, 4, 8, 16, 32});
    // Subtrees of 1, 2, 4, 8, 16 and 16 members: the last two first, in rank order.
    CHECK(largest_first(binomial[0], sizes) == std::vector<std::uint32_t>{4, 5, 3, 2, 1, 0});
    CHECK(largest_first(binomial[32], sizes) == std::vector<std::uint32_t>{3, 2, 1, 0});
    // A heap-shaped k-ary tree's children come largest first already.
    const auto kary = tree_layout(48, taco::topology::kary(3));
    CHECK(largest_first(kary[0], subtree_sizes(kary)) == std::vector<std::uint32_t>{0, 1, 2});
    // And make_group lays the tree so: the root (rank 0, on this core)
    // holds its children in that order, each with its rank-order slot.
    std::vector<std::uint32_t> root_slots;
    test::run(test::on_cores(4), [&] {
        const auto members = make_members(48);
        auto g = taco::make_group(members, taco::topology::binomial());
        for (const auto& c : g.root.get()->children) root_slots.push_back(c.slot);
        taco::destroy_group(g);
        destroy(members);
    });
    CHECK(root_slots == std::vector<std::uint32_t>{5, 6, 4, 3, 2, 1});
}

TEST_CASE("collectives: many concurrent reductions on one group do not mix", "[collective]") {
    constexpr int k = 200;
    long wrong = 0;
    test::run(test::on_cores(6), [&] {
        auto members = make_members(24);
        auto g = taco::make_group(members, taco::topology::kary(3));
        std::vector<taco::future<long>> results(k);
        for (int i = 0; i < k; ++i) taco::reduce(g, taco::m2f(&member::scaled_rank, long(i)), std::plus<long>{}, results[i]);
        for (int i = 0; i < k; ++i) wrong += results[i].get() != long(i) * 24 * 23 / 2;
        taco::destroy_group(g);
        destroy(members);
    });
    REQUIRE(wrong == 0);
}

namespace {
// Appending sequences, as a polynomial hash: associative, not commutative.
struct sequence {
    std::uint64_t hash;
    std::uint64_t scale; // base^length
};
struct concat {
    sequence operator()(const sequence& a, const sequence& b) const {
        return {a.hash * b.scale + b.hash, a.scale * b.scale};
    }
};
struct letter {
    std::uint32_t rank = 0;
    void set_rank(std::uint32_t r) { rank = r; }
    sequence as_sequence() const { return {rank + 1u, 1000003u}; }
};
} // namespace

TEST_CASE("collectives: a non-commutative combiner sees the values in rank order, for every topology", "[collective]") {
    long wrong = 0, tried = 0;
    test::run(test::on_cores(5), [&] {
        for (std::uint32_t n : {1u, 2u, 7u, 16u, 33u}) {
            std::vector<taco::global_ptr<letter>> members;
            sequence expected{0, 1};
            for (std::uint32_t r = 0; r < n; ++r) {
                members.push_back(taco::new_on<letter>((r * 3) % taco::core_count()).get());
                taco::sync(members.back(), &letter::set_rank, r);
                expected = concat{}(expected, sequence{r + 1u, 1000003u});
            }
            for (auto shape : all_shapes) {
                auto g = taco::make_group(members, shape);
                taco::future<sequence> f;
                taco::reduce(g, taco::m2f(&letter::as_sequence), concat{}, f);
                const sequence got = f.get();
                wrong += got.hash != expected.hash || got.scale != expected.scale;
                ++tried;
                taco::destroy_group(g);
            }
            for (auto p : members) taco::delete_on(p);
        }
    });
    REQUIRE(tried == 5 * long(std::size(all_shapes)));
    REQUIRE(wrong == 0);
}

namespace {
struct nester {
    long inner_hits = 0;
    void hit() { ++inner_hits; }
    long count() const { return inner_hits; }
    // Starts a collective from inside a collective.
    void start_inner(taco::group<nester> g) { taco::at_each(g, &nester::hit); }
};
} // namespace

TEST_CASE("collectives: at_each started from inside another collective", "[collective]") {
    long total = 0;
    test::run(test::on_cores(4), [&] {
        std::vector<taco::global_ptr<nester>> members;
        for (taco::core_id c = 0; c < 8; ++c) members.push_back(taco::new_on<nester>(c % 4).get());
        auto g = taco::make_group(members, taco::topology::binomial());
        taco::future<void> done;
        taco::at_each(g, taco::m2f(&nester::start_inner, g), done); // each member starts an at_each on g
        done.get();
        // 8 inner at_each, each hitting all 8 members: wait until all 64 hits are in
        for (;;) {
            taco::future<long> f;
            taco::reduce(g, taco::m2f(&nester::count), std::plus<long>{}, f);
            if ((total = f.get()) == 64) break;
        }
        taco::destroy_group(g);
        for (auto p : members) taco::delete_on(p);
    });
    REQUIRE(total == 64);
}

TEST_CASE("collectives: a member's exception reaches the reduction's future and at_each's completion", "[collective]") {
    std::string reduce_error, at_each_error;
    long after = 0;
    test::run(test::on_cores(3), [&] {
        auto members = make_members(9);
        auto g = taco::make_group(members, taco::topology::kary(2));
        taco::future<long> f;
        taco::reduce(g, taco::m2f(&member::fail_if, 5u), std::plus<long>{}, f);
        try {
            f.get();
        } catch (const taco::remote_error& e) {
            reduce_error = e.text();
        }
        taco::future<void> done;
        taco::at_each(g, taco::m2f(&member::fail_if, 8u), done);
        try {
            done.get();
        } catch (const taco::remote_error& e) {
            at_each_error = e.text();
        }
        taco::future<long> ok; // the group still works
        taco::reduce(g, taco::m2f(&member::fail_if, 99u), std::plus<long>{}, ok);
        after = ok.get();
        taco::destroy_group(g);
        destroy(members);
    });
    REQUIRE(reduce_error == "member 5 failed");
    REQUIRE(at_each_error == "member 8 failed");
    REQUIRE(after == 9);
}

TEST_CASE("collectives: bad groups and arguments give clear errors", "[collective]") {
    test::run(test::on_cores(2), [&] {
        std::vector<taco::global_ptr<member>> none;
        REQUIRE_THROWS_WITH(taco::make_group(none), Catch::Contains("at least one member"));
        auto a = taco::new_on<member>(1).get();
        std::vector<taco::global_ptr<member>> twice{a, taco::new_on<member>(0).get(), a};
        REQUIRE_THROWS_WITH(taco::make_group(twice), Catch::Contains("member 0 and member 2"));
        std::vector<taco::global_ptr<member>> with_null{a, {}};
        REQUIRE_THROWS_WITH(taco::make_group(with_null), Catch::Contains("member 1 is null"));
        std::vector<taco::global_ptr<member>> ok{a};
        REQUIRE_THROWS_WITH(taco::make_group(ok, taco::topology::kary(0)), Catch::Contains("arity"));
        auto g = taco::make_group(ok);
        std::vector<std::uint32_t> small;
        taco::future<void> done;
        REQUIRE_THROWS_WITH(taco::gather(g, taco::m2f(&member::my_rank), std::span<std::uint32_t>(small), done),
                            Catch::Contains("has 0 elements, the group 1"));
        taco::destroy_group(g);
        taco::delete_on(twice[1]);
        taco::delete_on(a);
    });
}

namespace {
// The modularity app's "best move": the largest gain, ties to the lower vertex.
struct best_move {
    double gain;
    std::uint32_t vertex;
    std::uint32_t target;
};
struct better_move {
    best_move operator()(const best_move& a, const best_move& b) const {
        return (b.gain > a.gain || (b.gain == a.gain && b.vertex < a.vertex)) ? b : a;
    }
};
struct partition {
    std::uint32_t rank = 0;
    void set_rank(std::uint32_t r) { rank = r; }
    best_move propose(std::uint32_t favourite) const {
        return {rank == favourite ? 100.0 : double(rank % 7), rank, rank + 1000};
    }
};
} // namespace

TEST_CASE("collectives: a custom struct combiner (best move) picks the right member", "[collective]") {
    best_move best{};
    test::run(test::on_cores(4), [&] {
        std::vector<taco::global_ptr<partition>> members;
        for (std::uint32_t r = 0; r < 20; ++r) {
            members.push_back(taco::new_on<partition>(r % 4).get());
            taco::sync(members.back(), &partition::set_rank, r);
        }
        auto g = taco::make_group(members, taco::topology::kary(3));
        taco::future<best_move> f;
        taco::reduce(g, taco::m2f(&partition::propose, 13u), better_move{}, f);
        best = f.get();
        taco::destroy_group(g);
        for (auto p : members) taco::delete_on(p);
    });
    REQUIRE(best.vertex == 13);
    REQUIRE(best.target == 1013);
    REQUIRE(best.gain == 100.0);
}
