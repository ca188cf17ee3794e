// What the MPI platform adds to the platform-independent suites it runs
// with (tacomesh_tests_mpi): back-pressure by credits, order per source
// across ranks and threads, runs after runs, and the configuration's
// errors. Run by mpirun (platforms/mpi/tests/CMakeLists.txt).
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <taco/taco.hpp>
#include <tacomesh/mpi/platform.hpp>

#include "on_host.hpp"
#include <test_support.hpp>

namespace {

struct inbox {
    std::vector<std::uint32_t> seen;
    void put(std::uint32_t v) { seen.push_back(v); }
    bool in_order(std::uint32_t n) const {
        if (seen.size() != n) return false;
        for (std::uint32_t i = 0; i < n; ++i)
            if (seen[i] != i) return false;
        return true;
    }
};

void nap(long ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

} // namespace

TEST_CASE("mpi: a slow receiver holds its sender back to the window, and every message arrives in order",
          "[mpi]") {
    constexpr std::uint32_t n = 1000; // below the runtime's soft limit of locally queued messages (1024)
    std::size_t queued_while_busy = 0;
    bool in_order = false;
    taco::run(tacomesh::mpi::config{.cores = 2, .window = 4, .on_host = test::mpi_on_host()}, [&] {
        auto box = taco::new_on<inbox>(1).get();
        taco::async(1, &nap, 1500L); // core 1 takes nothing for 1.5 s (sending takes milliseconds)
        for (std::uint32_t i = 0; i < n; ++i) taco::async(box, &inbox::put, i);
        // At most `window` of them left this core; the rest wait here.
        queued_while_busy = taco::detail::runtime().queued_count();
        in_order = taco::sync(box, &inbox::in_order, n);
        taco::delete_on(box);
    });
    INFO(queued_while_busy << " of " << n << " messages kept by the sender while the receiver slept");
    CHECK(queued_while_busy >= n - 4);
    CHECK(in_order);
}

TEST_CASE("mpi: every core's messages to one core arrive in order per source, ranks and threads mixed", "[mpi]") {
    constexpr taco::core_id cores = 6;
    constexpr std::uint32_t per_source = 300;
    long out_of_order = -1;
    taco::run(tacomesh::mpi::config{.cores = cores, .on_host = test::mpi_on_host()}, [&] {
        std::vector<taco::global_ptr<inbox>> boxes;
        for (taco::core_id c = 0; c < cores; ++c) boxes.push_back(taco::new_on<inbox>(0).get());
        // Core c sends 0..per_source-1 to its own inbox on core 0; its
        // completion comes after them on the same channel.
        auto send_all = +[](taco::global_ptr<inbox> b, std::uint32_t k) {
            for (std::uint32_t i = 0; i < k; ++i) taco::async(b, &inbox::put, i);
        };
        std::vector<taco::future<void>> done(cores);
        for (taco::core_id c = 1; c < cores; ++c) taco::async(c, taco::m2f(send_all, boxes[c], per_source), done[c]);
        for (taco::core_id c = 1; c < cores; ++c) done[c].get();
        out_of_order = 0;
        for (taco::core_id c = 1; c < cores; ++c) out_of_order += !taco::sync(boxes[c], &inbox::in_order, per_source);
        for (auto b : boxes) taco::delete_on(b);
    });
    CHECK(out_of_order == 0);
}

TEST_CASE("mpi: a bad configuration is refused on rank 0 before any rank starts the run", "[mpi]") {
    CHECK_THROWS_WITH(taco::run(tacomesh::mpi::config{.cores = 2, .window = 0}, [] {}),
                      Catch::Contains("config.window must be 1 to 65536"));
    // MESH's memory: a size that wrapped when rounded to pages (the run went
    // on without that memory), one past what a rank may reserve, and a sum.
    const std::size_t most = std::numeric_limits<std::size_t>::max(), tib = std::size_t(1) << 40;
    CHECK_THROWS_WITH(taco::run(tacomesh::mpi::config{.cores = 2, .cached_bytes = most}, [] {}),
                      Catch::Contains("config.cached_bytes = " + std::to_string(most)) &&
                          Catch::Contains("lower config.cached_bytes"));
    CHECK_THROWS_WITH(taco::run(tacomesh::mpi::config{.cores = 2, .non_cached_bytes = 64 * tib}, [] {}),
                      Catch::Contains("config.non_cached_bytes = 70368744177664 is more than the 32 TiB"));
    CHECK_THROWS_WITH(taco::run(tacomesh::mpi::config{.cores = 2, .private_bytes = most - 4000}, [] {}),
                      Catch::Contains("config.private_bytes"));
    CHECK_THROWS_WITH(taco::run(tacomesh::mpi::config{.cores = 2, .cached_bytes = 20 * tib, .private_bytes = 20 * tib}, [] {}),
                      Catch::Contains("MESH's memory would take") && Catch::Contains("private_bytes = 21990232555520 per core"));
    // The ranks are still serving: a good run afterwards works.
    long sum = 0;
    taco::run(tacomesh::mpi::config{.cores = 3}, [&] {
        for (taco::core_id c = 0; c < 3; ++c) sum += taco::sync(c, +[] { return long(taco::this_core()); });
    });
    CHECK(sum == 3);
}

TEST_CASE("mpi: MPI starts without hwloc's GL component, unless the user chose hwloc's components", "[mpi]") {
    // The component probes X displays, and each probe waits for DNS on a
    // host without /etc/hosts: 5-15 s of MPI_Init per rank (session.hpp).
    // ctest does not set the variable, so the session must have (to "-gl";
    // a user's own choice is kept, which this cannot tell apart).
    (void)tacomesh::mpi::detail::session::get();
    CHECK(std::getenv("HWLOC_COMPONENTS") != nullptr);
}

TEST_CASE("mpi: cores on one host talk through rings in MPI shared memory, or by MPI alone when asked", "[mpi]") {
    // Rank 0's core 0 calls every other core: each answers on its channel
    // to core 0, a ring where the host's shared memory is used.
    auto rings_with = [](tacomesh::mpi::on_host how) {
        tacomesh::mpi::run_report report;
        long sum = 0;
        taco::run(tacomesh::mpi::config{.cores = 4, .on_host = how, .report = &report}, [&] {
            for (taco::core_id c = 1; c < 4; ++c) sum += taco::sync(c, +[] { return long(taco::this_core()); });
        });
        CHECK(sum == 6);
        return report.rings_to_core0;
    };
    // Every answer from a core on rank 0's host came by ring; across hosts
    // (netns_multihost.sh: a hostname per namespace) the others by MPI.
    const auto& session = tacomesh::mpi::detail::session::get();
    std::uint64_t on_rank0_host = 0;
    for (taco::core_id c = 1; c < 4; ++c)
        on_rank0_host += session.host_of(int(c % taco::core_id(session.ranks()))) == session.host_of(0);
    CHECK(rings_with(tacomesh::mpi::on_host::shared_memory) == on_rank0_host);
    CHECK(rings_with(tacomesh::mpi::on_host::mpi) == 0);
}

namespace {
/// Takes large vectors from many cores, each core's in the order sent.
struct bulk_inbox {
    std::vector<long> received, wrong;
    explicit bulk_inbox(taco::core_id cores) : received(cores), wrong(cores) {}
    void take(taco::core_id from, std::uint32_t k, std::vector<std::uint64_t> v) {
        bool right = k == std::uint64_t(received[from]);
        for (std::size_t i = 0; i < v.size() && right; ++i) right = v[i] == (std::uint64_t(from) << 40 | std::uint64_t(k) << 24 | i);
        wrong[from] += !right;
        ++received[from];
    }
};
std::vector<std::uint64_t> numbered(taco::core_id from, std::uint32_t k, std::size_t n) {
    std::vector<std::uint64_t> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = std::uint64_t(from) << 40 | std::uint64_t(k) << 24 | i;
    return v;
}
} // namespace

TEST_CASE("mpi: a large vector to a core reached by MPI goes as one message, whole and in order per sender", "[mpi]") {
    // 6 cores on the ranks (2 to 4: several cores per rank), by MPI alone:
    // cores of one rank share its bulk tags, so core 0 takes some of one
    // core's messages while waiting for another's (endpoint::bulk_receive
    // keeps them aside).
    constexpr taco::core_id cores = 6;
    constexpr std::uint32_t per_sender = 5;
    const std::size_t n = std::size_t(test::scaled(128 * 1024)); // 1 MiB each
    std::uint64_t sent_for_one = 0;
    std::vector<long> received, wrong;
    taco::run(tacomesh::mpi::config{.cores = cores, .on_host = tacomesh::mpi::on_host::mpi}, [&] {
        bulk_inbox box(cores);
        const auto to = taco::to_global(&box);
        // One vector from core 1 (rank 1): the channel messages it took.
        sent_for_one = taco::sync(1, +[](taco::global_ptr<bulk_inbox> b, std::size_t n) {
            const std::uint64_t before = taco::detail::runtime().stats().sent;
            taco::async(b, &bulk_inbox::take, taco::this_core(), std::uint32_t(0), numbered(taco::this_core(), 0, n));
            return taco::detail::runtime().stats().sent - before;
        }, to, n);
        taco::wait_until([&] { return box.received[1] == 1; });
        box.received[1] = 0;
        // Then every core at once.
        std::vector<taco::future<void>> done;
        for (taco::core_id c = 1; c < cores; ++c)
            done.push_back(taco::call(c, +[](taco::global_ptr<bulk_inbox> b, std::size_t n, std::uint32_t k) {
                for (std::uint32_t i = 0; i < k; ++i)
                    taco::async(b, &bulk_inbox::take, taco::this_core(), i, numbered(taco::this_core(), i, n));
            }, to, n, per_sender));
        for (auto& d : done) d.get();
        taco::wait_until([&] {
            for (taco::core_id c = 1; c < cores; ++c)
                if (box.received[c] != long(per_sender)) return false;
            return true;
        });
        received = box.received;
        wrong = box.wrong;
    });
    INFO("channel messages for one 1 MiB vector: " << sent_for_one << " (in pieces: some 9,600)");
    CHECK(sent_for_one <= 4);
    for (taco::core_id c = 1; c < cores; ++c) {
        CAPTURE(c);
        CHECK(received[c] == long(per_sender));
        CHECK(wrong[c] == 0);
    }
}
