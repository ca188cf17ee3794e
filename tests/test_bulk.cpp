// Large carried arguments and results (runtime/bulk.hpp): a megabyte-sized
// vector goes beside the channel where the platform has a bulk transport
// (POSIX core threads: handed over by pointer; core processes: staged in
// shared memory) and as pieces elsewhere; it arrives whole, in order with
// the small invocations around it, also when many are in flight to one core.
#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include <test_support.hpp>

namespace {

using tacomesh::posix::execution_mode;

const std::size_t mi = std::size_t(1) << 20;

/// n doubles that depend on the index and a seed: a lost, doubled or
/// misplaced piece or block shows.
std::vector<double> pattern(std::size_t n, double seed) {
    std::vector<double> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = seed + double(i % 1000) * 0.5;
    return v;
}
bool is_pattern(const std::vector<double>& v, std::size_t n, double seed) { return v == pattern(n, seed); }

std::uint64_t sent_here() { return taco::detail::runtime().stats().sent; }

struct bulk_store {
    std::vector<double> data;
    std::string log; // what arrived, in order, each entry ended by ','

    void put(std::vector<double> v) {
        log += "v" + std::to_string(v.size()) + (v.empty() ? "" : ":" + std::to_string(long(v[0]))) + ",";
        data = std::move(v);
    }
    void note(std::string s) { log += s + ","; }
    void tick(long i) { log += "t" + std::to_string(i) + ","; }
    double sum_view(taco::view<double> v) const { return std::accumulate(v.begin(), v.end(), 0.0); }
    std::vector<double> doubled(std::vector<double> v) const {
        for (double& x : v) x *= 2;
        return v;
    }
    taco::view<double> own() const { return taco::view<double>(data); }
    std::string take_log() { return std::exchange(log, {}); }
    std::uint64_t sent() const { return sent_here(); }
};

/// Takes the vectors of many senders, each in the order sent.
struct sink {
    std::vector<long> wrong, received;
    explicit sink(taco::core_id c) : wrong(c), received(c) {}
    void take(taco::core_id from, int k, std::vector<double> v) {
        ++received[from];
        if (v != pattern(v.size(), double(from * 100 + k)) || long(k) != received[from] - 1) ++wrong[from];
    }
};
void send_burst(taco::global_ptr<sink> to, std::size_t n, int k) {
    for (int i = 0; i < k; ++i) taco::async(to, &sink::take, taco::this_core(), i, pattern(n, double(taco::this_core() * 100 + i)));
}

/// On POSIX (threads and processes) the bytes go beside the channel: a
/// handful of messages, not one per 104 bytes (80 660 for 8 MiB).
bool bulk_path() { return test::suite_platform() == test::platform::posix; }

} // namespace

TEST_CASE("bulk: 1 Mi doubles as arguments and results, and reduced", "[bulk]") {
    const auto mode = GENERATE(execution_mode::threads, execution_mode::processes);
    CAPTURE(mode == execution_mode::processes);
    test::run(test::cores{2, mode}, [] {
        const std::size_t n = std::size_t(test::scaled(long(mi)));
        const auto s = taco::new_on<bulk_store>(1).get();
        const auto before = sent_here();
        const std::uint64_t remote_before = taco::sync(s, &bulk_store::sent);

        taco::async(s, &bulk_store::put, pattern(n, 7));                             // argument: a vector
        const std::vector<double> ones = pattern(n, 1);
        CHECK(taco::sync(s, &bulk_store::sum_view, taco::view<double>(ones)) ==
              std::accumulate(ones.begin(), ones.end(), 0.0)); // argument: a view
        CHECK(is_pattern(taco::sync(s, &bulk_store::own), n, 7));                    // result: a view, as a vector
        const std::vector<double> twice = taco::sync(s, &bulk_store::doubled, pattern(n, 3));
        std::vector<double> expect = pattern(n, 3);
        for (double& x : expect) x *= 2;
        CHECK(twice == expect); // argument and result
        if (bulk_path()) {
            CHECK(sent_here() - before < 20);
            CHECK(taco::sync(s, &bulk_store::sent) - remote_before < 20);
        }

        // A reduce of two such vectors (one member per core).
        std::vector<taco::global_ptr<bulk_store>> members{taco::new_on<bulk_store>(0).get(), s};
        taco::sync(members[0], &bulk_store::put, pattern(n, 1));
        const auto g = taco::make_group(members);
        const std::vector<double> sum = taco::reduce(g, taco::m2f(&bulk_store::own), taco::elementwise(std::plus<double>{})).get();
        std::vector<double> want = pattern(n, 1);
        const std::vector<double> theirs = pattern(n, 7);
        for (std::size_t i = 0; i < n; ++i) want[i] += theirs[i];
        CHECK(sum == want);
        taco::destroy_group(g);
        taco::delete_on(members[0]);
        taco::delete_on(s);
    });
}

TEST_CASE("bulk: a large argument and the small invocations after it arrive in order", "[bulk]") {
    const auto mode = GENERATE(execution_mode::threads, execution_mode::processes);
    CAPTURE(mode == execution_mode::processes);
    test::run(test::cores{2, mode}, [] {
        const auto s = taco::new_on<bulk_store>(1).get();
        std::string expect;
        for (long round = 0; round < 20; ++round) {
            // Large, small carried, plain: each kind of message right behind the bulk one.
            const std::size_t n = round % 2 ? std::size_t(test::scaled(64 * 1024)) : 300 + std::size_t(round);
            taco::async(s, &bulk_store::put, pattern(n, double(round)));
            expect += "v" + std::to_string(n) + ":" + std::to_string(round) + ",";
            taco::async(s, &bulk_store::note, std::string("s") + std::to_string(round));
            expect += "s" + std::to_string(round) + ",";
            taco::async(s, &bulk_store::tick, round);
            expect += "t" + std::to_string(round) + ",";
        }
        CHECK(taco::sync(s, &bulk_store::take_log) == expect);
        taco::delete_on(s);
    });
}

TEST_CASE("bulk: many large messages in flight to one busy core (oversubscribed)", "[bulk]") {
    const auto mode = GENERATE(execution_mode::threads, execution_mode::processes);
    CAPTURE(mode == execution_mode::processes);
    constexpr taco::core_id cores = 8; // on 2 CPUs
    test::run(test::cores{cores, mode}, [] {
        const std::size_t n = std::size_t(test::scaled(128 * 1024)); // 1 MiB each
        const int per_sender = 6;
        sink target(cores);
        const auto gp = taco::to_global(&target);
        std::vector<taco::future<void>> done;
        for (taco::core_id c = 1; c < cores; ++c) done.push_back(taco::call(c, &send_burst, gp, n, per_sender));
        // Busy without serving: the senders' buffers pile up towards this core.
        test::spin_for(50'000'000);
        for (auto& d : done) d.get();
        taco::wait_until([&] {
            for (taco::core_id c = 1; c < cores; ++c)
                if (target.received[c] != per_sender) return false;
            return true;
        });
        for (taco::core_id c = 1; c < cores; ++c) {
            CAPTURE(c);
            CHECK(target.received[c] == per_sender);
            CHECK(target.wrong[c] == 0);
        }
    });
}
