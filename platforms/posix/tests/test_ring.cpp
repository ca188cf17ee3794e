// The POSIX channel on its own: bounded, in order, full rings refuse, and
// a handler may consume from the ring it is called from (nested waiting).
#include <catch2/catch.hpp>

#include <cstring>
#include <thread>
#include <vector>

#include <tacomesh/posix/arena.hpp>
#include <tacomesh/posix/ring.hpp>

#include <test_support.hpp>

using tacomesh::posix::detail::arena;
using tacomesh::posix::detail::ring;

namespace {
ring* make_ring(arena& a, std::uint32_t slots) { return ring::create(a.allocate(ring::bytes_for(slots)), slots, 0); }

std::uint64_t read_u64(const std::byte* p) {
    std::uint64_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
} // namespace

TEST_CASE("ring: try_acquire fails when full and succeeds again after consume", "[ring]") {
    arena a(1 << 20);
    ring* r = make_ring(a, 4);
    auto prod = r->make_producer();
    for (std::uint64_t i = 0; i < 4; ++i) {
        std::byte* s = prod.try_acquire();
        REQUIRE(s != nullptr);
        std::memcpy(s, &i, sizeof i);
        prod.publish(sizeof(std::uint64_t));
    }
    REQUIRE(prod.try_acquire() == nullptr);
    std::vector<std::uint64_t> got;
    REQUIRE(r->consume([&](std::byte* m) { got.push_back(read_u64(m)); }, 1) == 1);
    REQUIRE(prod.try_acquire() != nullptr); // one slot free again
    r->consume([&](std::byte* m) { got.push_back(read_u64(m)); }, 100);
    REQUIRE(got == std::vector<std::uint64_t>{0, 1, 2, 3});
    REQUIRE_FALSE(r->has_message());
}

TEST_CASE("ring: a handler may consume later messages of its own ring", "[ring]") {
    arena a(1 << 20);
    ring* r = make_ring(a, 8);
    auto prod = r->make_producer();
    for (std::uint64_t i = 0; i < 3; ++i) {
        std::memcpy(prod.try_acquire(), &i, sizeof i);
        prod.publish(sizeof(std::uint64_t));
    }
    std::vector<std::uint64_t> order;
    r->consume(
        [&](std::byte* m) {
            const auto v = read_u64(m);
            order.push_back(v);
            if (v == 0) {
                r->consume([&](std::byte* inner) { order.push_back(read_u64(inner)); }, 100);
                REQUIRE(read_u64(m) == 0); // outer message intact while nested polling ran
            }
        },
        100);
    REQUIRE(order == std::vector<std::uint64_t>{0, 1, 2});
    // Every slot was released: the producer can fill the ring again.
    for (int i = 0; i < 8; ++i) {
        REQUIRE(prod.try_acquire() != nullptr);
        prod.publish(sizeof(std::uint64_t));
    }
}

TEST_CASE("ring: two threads, tiny ring, every message once and in order", "[ring]") {
    arena a(1 << 20);
    ring* r = make_ring(a, 2);
    const std::uint64_t n = std::uint64_t(test::scaled(2'000'000));
    std::thread producer([&] {
        auto prod = r->make_producer();
        for (std::uint64_t i = 0; i < n; ++i) {
            std::byte* s;
            while (!(s = prod.try_acquire())) std::this_thread::yield();
            std::memcpy(s, &i, sizeof i);
            prod.publish(sizeof(std::uint64_t));
        }
    });
    std::uint64_t expected = 0, bad = 0;
    while (expected < n) {
        if (r->consume([&](std::byte* m) { bad += read_u64(m) != expected++; }, 64) == 0) std::this_thread::yield();
    }
    producer.join();
    REQUIRE(bad == 0);
    REQUIRE(expected == n);
    REQUIRE_FALSE(r->has_message());
}
