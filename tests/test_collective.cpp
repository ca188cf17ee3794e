// Object groups and one-sided collectives: every topology and size 1..64
// (oversubscribed), random delays in members, concurrent collectives on one
// group, rank order for non-commutative combiners, nested collectives, bad
// groups.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
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

// ---- dynamic groups: members added and removed while collectives run ----

namespace {
struct changing_member {
    std::uint32_t id = 0;
    bool removed = false; // set once remove_member's future was ready: no collective may come after
    long late = 0, hits = 0;
    std::uint64_t rng = 0;

    void set_id(std::uint32_t i) { id = i, rng = 0x9E3779B97F4A7C15ull * (i + 1); }
    void called() {
        late += removed;
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        if ((rng & 7) == 0) test::spin_for(long(rng >> 54) % 5'000); // a node answers late now and then
    }
    sequence as_sequence() { return called(), sequence{id + 1u, 1000003u}; }
    void hit() { called(), ++hits; }
    std::uint32_t my_id() { return called(), id; }
    void mark_removed() { removed = true; }
    long late_calls() const { return late; }
    long hit_count() const { return hits; }
};
using changing_ptr = taco::global_ptr<changing_member>;

std::vector<changing_ptr> make_changing_members(std::uint32_t n) {
    std::vector<changing_ptr> m;
    for (std::uint32_t i = 0; i < n; ++i) {
        m.push_back(taco::new_on<changing_member>((i * 5 + 1) % taco::core_count()).get());
        taco::sync(m.back(), &changing_member::set_id, i);
    }
    return m;
}
/// The ids of `members` in rank order, as the sequence a reduce with concat gives.
std::uint64_t sequence_of(const std::vector<std::uint32_t>& ids) {
    sequence s{0, 1};
    for (auto id : ids) s = concat{}(s, sequence{id + 1u, 1000003u});
    return s.hash;
}

struct id_sink {
    std::vector<std::uint32_t> by_rank;
    long puts = 0;
    void put(std::uint32_t rank, std::uint32_t id) {
        if (rank >= by_rank.size()) by_rank.resize(rank + 1, ~0u);
        by_rank[rank] = id, ++puts;
    }
};

template <class R>
std::string error_text(taco::future<R> f) {
    try {
        (void)f.get();
    } catch (const taco::remote_error& e) {
        return e.text();
    }
    return "(no error)";
}

/// On a core: `count` reductions on g, `depth` of them in flight, their
/// results in the order they were started.
std::vector<std::uint64_t> reduce_repeatedly(taco::dynamic_group<changing_member> g, int count, int depth) {
    std::vector<std::uint64_t> seen;
    std::deque<taco::future<sequence>> in_flight;
    for (int i = 0; i < count; ++i) {
        in_flight.push_back(taco::reduce(g, taco::m2f(&changing_member::as_sequence), concat{}));
        if (int(in_flight.size()) == depth) seen.push_back(in_flight.front().get().hash), in_flight.pop_front();
    }
    for (auto& f : in_flight) seen.push_back(f.get().hash);
    return seen;
}
long hit_repeatedly(taco::dynamic_group<changing_member> g, int count) {
    for (int i = 0; i < count; ++i) taco::sync(g, &changing_member::hit);
    return count;
}
taco::dynamic_group<changing_member> make_dynamic_here(std::vector<changing_ptr> members) {
    return taco::make_dynamic_group(members, taco::topology::kary(2));
}
} // namespace

TEST_CASE("membership: members added to and removed from a dynamic group: ranks and collectives and refused changes and no members",
          "[collective][membership]") {
    std::vector<std::uint64_t> reduced;
    std::vector<std::vector<std::uint32_t>> gathered;
    std::vector<std::string> errors;
    std::vector<long> hits;
    long lists_wrong = 0;
    test::run(test::on_cores(4), [&] {
        const auto all = make_changing_members(6);
        auto ids = [](const std::vector<changing_ptr>& ps) {
            std::vector<std::uint32_t> v;
            for (auto p : ps) v.push_back(taco::sync(p, &changing_member::my_id));
            return v;
        };
        auto reduce_ids = [](auto g) {
            return taco::reduce(g, taco::m2f(&changing_member::as_sequence), concat{}).get().hash;
        };
        auto g = taco::make_dynamic_group(std::vector<changing_ptr>{all[0], all[1], all[2]}); // home: this core
        reduced.push_back(reduce_ids(g));
        taco::add_member(g, all[3]).get();
        taco::add_member(g, all[4]).get();
        lists_wrong += ids(taco::members(g).get()) != std::vector<std::uint32_t>{0, 1, 2, 3, 4};
        taco::remove_member(g, all[1]).get();
        lists_wrong += ids(taco::members(g).get()) != std::vector<std::uint32_t>{0, 2, 3, 4};
        reduced.push_back(reduce_ids(g));
        id_sink sink;
        taco::gather(g, taco::m2f(&changing_member::my_id), taco::then(taco::to_global(&sink), &id_sink::put));
        taco::wait_until([&] { return sink.puts == 4; });
        gathered.push_back(sink.by_rank);
        taco::sync(g, &changing_member::hit);
        for (auto p : all) hits.push_back(taco::sync(p, &changing_member::hit_count));
        // Refused changes leave the group as it was.
        errors.push_back(error_text(taco::add_member(g, all[0])));
        errors.push_back(error_text(taco::remove_member(g, all[5])));
        errors.push_back(error_text(taco::add_member(g, changing_ptr{})));
        lists_wrong += ids(taco::members(g).get()) != std::vector<std::uint32_t>{0, 2, 3, 4};
        // Empty: at_each completes, reduce says why it cannot.
        for (auto p : {all[0], all[2], all[3], all[4]}) taco::remove_member(g, p).get();
        lists_wrong += !taco::members(g).get().empty();
        taco::sync(g, &changing_member::hit);
        errors.push_back(error_text(taco::reduce(g, taco::m2f(&changing_member::as_sequence), concat{})));
        taco::add_member(g, all[5]).get();
        reduced.push_back(reduce_ids(g));
        taco::destroy_group(g);
        // The debug checks (on in the tests) refuse a collective on the destroyed group.
        errors.push_back(error_text(taco::call(g, &changing_member::hit)));
        // A group that starts empty, homed on another core.
        auto h = taco::sync(2, &make_dynamic_here, std::vector<changing_ptr>{});
        errors.push_back(error_text(taco::call(h, &changing_member::hit))); // completes: no member to run it
        taco::add_member(h, all[4]).get();
        taco::add_member(h, all[1]).get();
        reduced.push_back(reduce_ids(h));
        taco::destroy_group(h);
        for (auto p : all) taco::delete_on(p);
    });
    CHECK(lists_wrong == 0);
    REQUIRE(reduced.size() == 4);
    CHECK(reduced[0] == sequence_of({0, 1, 2}));
    CHECK(reduced[1] == sequence_of({0, 2, 3, 4}));
    CHECK(reduced[2] == sequence_of({5}));
    CHECK(reduced[3] == sequence_of({4, 1}));
    REQUIRE(gathered.size() == 1);
    CHECK(gathered[0] == std::vector<std::uint32_t>{0, 2, 3, 4}); // ranks after a removal move down
    CHECK(hits == std::vector<long>{1, 0, 1, 1, 1, 0});
    REQUIRE(errors.size() == 6);
    CHECK(errors[0].find("a member already") != std::string::npos);
    CHECK(errors[1].find("not a member") != std::string::npos);
    CHECK(errors[2].find("cannot be null") != std::string::npos);
    CHECK(errors[3].find("no members") != std::string::npos);
    CHECK(errors[4].find("deleted object") != std::string::npos);
    CHECK(errors[5] == "(no error)");
}

TEST_CASE("membership: concurrent collectives on a dynamic group each see one version, in order, while members come "
          "and go (16 cores on 2 CPUs)",
          "[collective][membership]") {
    constexpr std::uint32_t pool = 64;
    const int per_reducer = int(test::scaled(150));
    std::vector<std::uint64_t> versions;         // the membership's sequences, in the order of the changes
    std::vector<std::vector<std::uint64_t>> seen; // per reducing core, in the order it started them
    long late = 0, changes = 0, batched = 0, hits_in_members = 0;
    bool list_right = false;
    test::run(test::on_cores(16), [&] {
        const auto all = make_changing_members(pool);
        std::vector<changing_ptr> current(all.begin(), all.begin() + 6);
        std::vector<std::uint32_t> current_ids{0, 1, 2, 3, 4, 5};
        // Homed on core 5: the changes from here and the collectives from
        // cores 1-4 all arrive there as messages, so changes batch.
        const auto g = taco::sync(5, &make_dynamic_here, current);
        versions.push_back(sequence_of(current_ids));
        std::vector<taco::future<std::vector<std::uint64_t>>> reducers;
        for (taco::core_id c = 1; c <= 3; ++c) reducers.push_back(taco::call(c * 4, &reduce_repeatedly, g, per_reducer, 4));
        auto hitter = taco::call(9, &hit_repeatedly, g, per_reducer / 3);
        auto all_ready = [&] {
            for (auto& f : reducers)
                if (!f.ready()) return false;
            return hitter.ready();
        };
        std::uint32_t next_new = 6;
        std::uint64_t rng = 12345;
        while ((changes < 12 || !all_ready()) && changes < 400) {
            // One to three changes at once; removals once their futures are ready.
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            const int burst = 1 + int(rng % 3);
            std::vector<taco::future<void>> pending;
            std::vector<changing_ptr> removed;
            for (int b = 0; b < burst; ++b) {
                rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
                const bool add = next_new < pool && (current.size() <= 2 || (rng & 1));
                if (!add && current.size() <= 2) break;
                if (add) {
                    pending.push_back(taco::add_member(g, all[next_new]));
                    current.push_back(all[next_new]), current_ids.push_back(next_new++);
                } else {
                    const std::size_t at = (rng >> 8) % current.size(); // anywhere: later ranks move down
                    pending.push_back(taco::remove_member(g, current[at]));
                    removed.push_back(current[at]);
                    current.erase(current.begin() + long(at)), current_ids.erase(current_ids.begin() + long(at));
                }
                versions.push_back(sequence_of(current_ids));
                ++changes;
            }
            if (pending.empty()) break; // nothing left to change
            batched += pending.size() > 1;
            for (auto& f : pending) f.get();
            for (auto p : removed) taco::sync(p, &changing_member::mark_removed);
        }
        for (auto& f : reducers) seen.push_back(f.get());
        (void)hitter.get();
        std::vector<std::uint32_t> listed;
        for (auto p : taco::members(g).get()) listed.push_back(taco::sync(p, &changing_member::my_id));
        list_right = listed == current_ids;
        taco::destroy_group(g);
        for (auto p : all) {
            late += taco::sync(p, &changing_member::late_calls);
            hits_in_members += taco::sync(p, &changing_member::hit_count);
        }
        for (auto p : all) taco::delete_on(p);
    });
    // Each reducer's results: every one the sequence of one version, and
    // the versions in the order of the changes (greedy subsequence match).
    long mixed = 0, backwards = 0, total = 0;
    for (const auto& results : seen) {
        std::size_t cursor = 0;
        for (auto h : results) {
            ++total;
            std::size_t i = cursor;
            while (i < versions.size() && versions[i] != h) ++i;
            if (i < versions.size()) {
                cursor = i;
                continue;
            }
            const bool anywhere = std::find(versions.begin(), versions.end(), h) != versions.end();
            mixed += !anywhere, backwards += anywhere;
        }
    }
    INFO(changes << " changes (" << batched << " bursts of several), " << total << " reductions");
    CHECK(total == 3L * per_reducer);
    CHECK(changes >= 12);
    CHECK(mixed == 0);
    CHECK(backwards == 0);
    CHECK(late == 0); // no collective reached a member after its removal was done
    CHECK(list_right);
    CHECK(hits_in_members >= 2L * (per_reducer / 3)); // each sync(g, hit) ran on the 2 or more members of a version
}
