// Index spaces and chunked maps (MESH paper, sections II.B and III.C), and
// write-back of only what changed: in process mode, where each core's view
// is private, a release moves the chunks its writer changed and a reader's
// acquire the chunks changed since its view was current; counted in bytes
// (mesh::events()).
#include <catch2/catch.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <test_support.hpp> // test::on_cores and test::mesh_cores: the platform these suites run on

namespace {

using tacomesh::posix::execution_mode;
namespace ctl = mesh::controllers;
using map = mesh::chunked_map<std::uint32_t, long>;
using map_ptr = mesh::sharing_ptr<map>;
constexpr std::size_t per_chunk = map::per_chunk; // 512 longs

long read_at(map_ptr m, std::uint32_t k) { return mesh::read(m).get(k); }
using test::bytes_moved;
using test::moved;

template <class Map, class C>
void one_change_moves_one_chunk() {
    using mem = mesh::map_memory;
    constexpr mem variant = Map::memory;
    INFO(C::name << " / " << (variant == mem::dcm ? "dcm" : variant == mem::ncm ? "ncm" : "wt"));
    using ptr = mesh::sharing_ptr<Map>;
    auto read = +[](ptr m, std::uint32_t k) { return mesh::read(m).get(k); };
    auto write = +[](ptr m, std::uint32_t k, long v) { mesh::write(m).set(k, v); };
    test::run(test::mesh_processes(3), [&] {
        auto m = mesh::make_shared_object<Map, C>(64 * per_chunk, 1L); // 64 chunks: 256 KiB
        REQUIRE(taco::sync(1, read, m, 5u) == 1);                      // core 1's view holds the map
        REQUIRE(taco::sync(1, read, m, std::uint32_t(40 * per_chunk)) == 1);
        const moved writer = bytes_moved(2, [&] { taco::sync(2, write, m, std::uint32_t(40 * per_chunk + 3), 7L); });
        long fresh = 0, untouched = 0;
        const moved reader = bytes_moved(1, [&] {
            fresh = taco::sync(1, read, m, std::uint32_t(40 * per_chunk + 3));
            untouched = taco::sync(1, read, m, 5u);
        });
        CHECK(untouched == 1);
        // The other reader, core 0, too (it made the map and never read it since).
        const long on_0 = read(m, std::uint32_t(40 * per_chunk + 3));
        CHECK(on_0 == (variant != mem::ncm && std::is_same_v<C, ctl::noop> ? 1 : 7));
        if constexpr (variant == mem::ncm) {
            // Values in shared memory: seen at once, with no event at all
            // (Overlapped Broadcast notifies at every write-acquire, modified
            // or not, as the paper says: the reader refreshes the map's own
            // bytes, no chunk).
            CHECK(fresh == 7);
            CHECK(writer.written_back == 0);
            CHECK(reader.invalidated == (std::is_same_v<C, ctl::overlapped_broadcast> ? sizeof(Map) : 0));
        } else if constexpr (std::is_same_v<C, ctl::noop>) {
            CHECK(fresh == 1); // no controller: core 1 keeps its stale view (the emulation is real)
            CHECK(writer.written_back == 0);
        } else {
            CHECK(fresh == 7);
            // dcm: one chunk and the map's own bytes each way, not the 256 KiB;
            // wt: the value went through at the set, so the release writes
            // back the map's own bytes only, and readers refresh the chunk.
            CHECK(writer.written_back == sizeof(Map) + (variant == mem::dcm ? Map::chunk_bytes : 0));
            CHECK(reader.invalidated == sizeof(Map) + Map::chunk_bytes);
        }
        mesh::destroy_shared_object(m);
    });
}

} // namespace

TEST_CASE("chunked_map: a changed element is seen by every reader, and only its chunk moves (dcm, ncm, wt x "
          "every controller)",
          "[mesh][chunked]") {
    test::for_each_map_and_controller([]<class Map, class C>() { one_change_moves_one_chunk<Map, C>(); });
}

namespace {
// set(first, values): a run across three chunks (the end of one, a whole
// one, the start of the next) moves those three, as many set(k, v) would.
constexpr std::uint32_t run_first = 10 * per_chunk + 100, run_count = 2 * per_chunk;

template <class Map, class C>
void a_run_moves_its_chunks() {
    using mem = mesh::map_memory;
    constexpr mem variant = Map::memory;
    INFO(C::name << " / " << (variant == mem::dcm ? "dcm" : variant == mem::ncm ? "ncm" : "wt"));
    using ptr = mesh::sharing_ptr<Map>;
    auto sum = +[](ptr m) {
        auto r = mesh::read(m);
        long s = 0;
        for (std::uint32_t k = 0; k < r.size(); ++k) s += r.get(k);
        return s;
    };
    auto write_run = +[](ptr m) {
        std::vector<long> values(run_count);
        for (std::uint32_t i = 0; i < run_count; ++i) values[i] = long(i) + 2; // 1 -> i + 2: the sum grows by i + 1
        mesh::write(m).set(run_first, std::span<const long>(values));
    };
    test::run(test::mesh_processes(3), [&] {
        auto m = mesh::make_shared_object<Map, C>(64 * per_chunk, 1L);
        const long before = 64 * long(per_chunk);
        REQUIRE(taco::sync(1, sum, m) == before); // core 1's view holds every chunk
        const moved writer = bytes_moved(2, [&] { taco::sync(2, write_run, m); });
        long seen = 0;
        const moved reader = bytes_moved(1, [&] { seen = taco::sync(1, sum, m); });
        const long after = before + long(run_count) * (run_count + 1) / 2;
        if constexpr (variant != mem::ncm && std::is_same_v<C, ctl::noop>) {
            CHECK(seen == before); // no controller: core 1 keeps its stale view
        } else {
            CHECK(seen == after);
            CHECK(taco::sync(1, +[](ptr p) { return mesh::read(p).get(run_first - 1); }, m) == 1); // the run's edges
            CHECK(taco::sync(1, +[](ptr p) { return mesh::read(p).get(run_first + run_count); }, m) == 1);
        }
        if constexpr (variant == mem::ncm) {
            CHECK(writer.written_back == 0);
        } else if constexpr (!std::is_same_v<C, ctl::noop>) {
            CHECK(writer.written_back == sizeof(Map) + (variant == mem::dcm ? 3 * Map::chunk_bytes : 0));
            CHECK(reader.invalidated == sizeof(Map) + 3 * Map::chunk_bytes);
        }
        // A run past the end is refused whole: nothing of it is written.
        const std::vector<long> too_long(per_chunk + 1, 5L);
        CHECK_THROWS_WITH(mesh::write(m).set(std::uint32_t(63 * per_chunk), std::span<const long>(too_long)),
                          "mesh::chunked_map: " + std::to_string(per_chunk + 1) + " values from index " +
                              std::to_string(63 * per_chunk) + " into a map of size " + std::to_string(64 * per_chunk));
        CHECK(mesh::read(m).get(std::uint32_t(63 * per_chunk)) == 1);
        mesh::write(m).set(0, std::span<const long>()); // an empty run: nothing, anywhere
        mesh::destroy_shared_object(m);
    });
}
} // namespace

TEST_CASE("chunked_map: a run of values set at once is seen by every reader, and only its chunks move (dcm, ncm, "
          "wt x every controller)",
          "[mesh][chunked]") {
    test::for_each_map_and_controller([]<class Map, class C>() { a_run_moves_its_chunks<Map, C>(); });
}

namespace {
template <class Map, class C>
void growth_while_reading() {
    using mem = mesh::map_memory;
    INFO(C::name << " / " << (Map::memory == mem::dcm ? "dcm" : Map::memory == mem::ncm ? "ncm" : "wt"));
    using ptr = mesh::sharing_ptr<Map>;
    test::run(test::mesh_processes(3), [] {
        auto m = mesh::make_shared_object<Map, C>(std::size_t(10), 2L);
        struct sizes {
            std::size_t during, after;
            long old_value, grown_value, set_value, grown_in_old_chunk;
        };
        const sizes seen = taco::sync(1, [m] {
            auto r = mesh::read(m); // held while core 2 grows the map
            taco::sync(2, [m] {
                auto w = mesh::write(m);
                w.grow_to(3 * per_chunk + 1, 9L);
                w.set(std::uint32_t(3 * per_chunk), 11L);
            });
            const std::size_t during = r.size();
            const long old_value = r.get(9);
            auto again = mesh::read(m);
            if (again.size() <= 3 * per_chunk) return sizes{during, again.size(), old_value, 0, 0, 0};
            return sizes{during, again.size(), old_value, again.get(std::uint32_t(per_chunk + 5)),
                         again.get(std::uint32_t(3 * per_chunk)), again.get(11)};
        });
        CHECK(seen.during == 10); // its view is the one it acquired
        CHECK(seen.old_value == 2);
        if constexpr (std::is_same_v<C, ctl::noop>) {
            CHECK(seen.after == 10); // no controller: the growth never reaches core 1's view
        } else {
            CHECK(seen.after == 3 * per_chunk + 1);
            CHECK(seen.grown_value == 9);
            CHECK(seen.set_value == 11);
            CHECK(seen.grown_in_old_chunk == 9); // a new index in a chunk the reader held already
            CHECK(taco::sync(0, +[](ptr p) { return mesh::read(p).size(); }, m) == 3 * per_chunk + 1);
        }
        mesh::destroy_shared_object(m);
    });
}
} // namespace

// [private-views] (not on the emulated SCC): a view that stays as acquired
TEST_CASE("chunked_map: growth while a reader holds a proxy, seen by the reader at its next acquire (dcm, ncm, wt "
          "x every controller)",
          "[mesh][chunked][private-views]") {
    test::for_each_map_and_controller([]<class Map, class C>() { growth_while_reading<Map, C>(); });
}

TEST_CASE("chunked_map: many changed chunks (more than the writer lists) all reach the readers", "[mesh][chunked]") {
    for (auto mode : {execution_mode::threads, execution_mode::processes}) {
        test::run(test::mesh_cores(2, mode), [] {
            auto m = mesh::make_shared_object<map, ctl::broadcast>(100 * per_chunk, 0L);
            REQUIRE(taco::sync(1, &read_at, m, 0u) == 0);
            {
                auto w = mesh::write(m);
                for (std::uint32_t c = 0; c < 100; ++c) w.set(std::uint32_t(c * per_chunk + c), long(c) + 1);
            }
            long sum = taco::sync(1, [m] {
                auto r = mesh::read(m);
                long s = 0;
                for (std::uint32_t c = 0; c < 100; ++c) s += r.get(std::uint32_t(c * per_chunk + c));
                return s;
            });
            CHECK(sum == 100 * 101 / 2);
            mesh::destroy_shared_object(m);
        });
    }
}

TEST_CASE("chunked_map: the lookup tables and stamps it outgrew are kept while it lives, and all freed when any "
          "core destroys it",
          "[mesh][chunked]") {
    test::run(test::mesh_processes(3), [] {
        const auto cached = mesh::bytes_in_use(mesh::memory_mode::cached);
        const auto non_cached = mesh::bytes_in_use(mesh::memory_mode::non_cached);
        auto m = mesh::make_shared_object<map>(std::size_t(10), 0L);
        const bool block_on_chip = mesh::detail::on_chip(m.block()); // not counted in non-cached memory
        // Core 2 grows it chunk by chunk: 40 lookup tables and stamp arrays outgrown.
        taco::sync(2, [m] {
            auto w = mesh::write(m);
            for (std::size_t c = 1; c <= 200; ++c) w.grow_to(c * per_chunk);
            w.set(std::uint32_t(200 * per_chunk - 1), 3L);
        });
        CHECK(taco::sync(1, &read_at, m, std::uint32_t(200 * per_chunk - 1)) == 3);
        CHECK(mesh::bytes_in_use(mesh::memory_mode::cached) > cached + 200 * map::chunk_bytes);
        // Core 1, which never held the old tables in its view, destroys it.
        taco::sync(1, [m] {
            auto p = m;
            mesh::destroy_shared_object(p);
        });
        CHECK(mesh::bytes_in_use(mesh::memory_mode::cached) == cached);
        // Debug builds keep the control block back (see destroy_shared_object).
        CHECK(mesh::bytes_in_use(mesh::memory_mode::non_cached) - non_cached ==
              (TACO_DEBUG_CHECKS && !block_on_chip ? sizeof(mesh::detail::control_block) : 0));
    });
}

TEST_CASE("chunked_map: an index out of range is an error, not a stray read", "[mesh][chunked]") {
    test::run(test::mesh_cores(1), [] {
        auto m = mesh::make_shared_object<map>(3, 0L);
        CHECK_THROWS_WITH(mesh::read(m).get(3), "mesh::chunked_map: index 3 of a map of size 3");
        CHECK_THROWS_AS(mesh::write(m).set(7, 1L), std::out_of_range);
        mesh::destroy_shared_object(m);
    });
}

namespace {
using weights = mesh::chunked_map<std::uint32_t, double>;
static_assert(std::forward_iterator<mesh::range_space::iterator>);
std::size_t space_size(mesh::sharing_ptr<mesh::range_space> s) { return mesh::read(s).size(); }
double weight_at(mesh::sharing_ptr<weights> w, std::uint32_t k) { return mesh::read(w).get(k); }
} // namespace

TEST_CASE("range_space: observers grow only when the smallest reserve runs out, and every core sees the new "
          "indices with values",
          "[mesh][range_space]") {
    for (auto mode : {execution_mode::threads, execution_mode::processes}) {
        INFO((mode == execution_mode::threads ? "threads" : "processes"));
        test::run(test::mesh_cores(3, mode), [] {
            auto space = mesh::make_shared_object<mesh::range_space>(100);
            auto a = mesh::make_mapping<weights>(space, 1.0);
            auto b = mesh::make_mapping<weights, ctl::broadcast>(space, 2.0);
            std::size_t reserve = 0;
            {
                auto w = mesh::write(space);
                reserve = w.reserve();
                CHECK(reserve == 100); // both mappings hold exactly the space so far
                CHECK(w.add() == 100); // runs out: every observer grows to 1.5x
            }
            std::uint64_t rounds = mesh::read(space).growth_rounds();
            CHECK(rounds == 1);
            CHECK(mesh::read(a).size() == 151); // 101 + 101 / 2
            CHECK(mesh::read(b).size() == 151);
            {
                auto w = mesh::write(space);
                for (int i = 0; i < 49; ++i) w.add(); // 150: within the reserve
            }
            CHECK(mesh::read(space).growth_rounds() == 1);
            CHECK(taco::sync(2, &space_size, space) == 150);
            {
                auto w = mesh::write(space);
                CHECK(w.add(10) == 150); // 160: beyond the reserve, a second round
            }
            CHECK(mesh::read(space).growth_rounds() == 2);
            // Another core sees the indices, and values for them, in both mappings.
            CHECK(taco::sync(1, &space_size, space) == 160);
            CHECK(taco::sync(1, &weight_at, a, 159u) == 1.0);
            CHECK(taco::sync(2, &weight_at, b, 159u) == 2.0);
            std::size_t visited = 0;
            for (auto i : mesh::read(space)) visited += (i == visited);
            CHECK(visited == 160);
            mesh::destroy_shared_object(a);
            mesh::destroy_shared_object(b);
            mesh::destroy_shared_object(space);
        });
    }
}

TEST_CASE("range_space: the observer list is shared memory the space owns (written back and refreshed with it)",
          "[mesh][range_space]") {
    // Core 2 registers the observer and grows the space; in process mode
    // core 1 could only grow the mapping through the list if it came along.
    test::run(test::mesh_processes(3), [] {
        auto space = mesh::make_shared_object<mesh::range_space>(8);
        auto m = mesh::make_shared_object<weights>(std::size_t(8), 5.0);
        taco::sync(2, [space, m] { mesh::write(space).observe(m); });
        taco::sync(1, [space] { mesh::write(space).add(100); });
        CHECK(mesh::read(m).size() >= 108);
        CHECK(taco::sync(2, &weight_at, m, 107u) == 5.0);
        mesh::destroy_shared_object(m);
        mesh::destroy_shared_object(space);
    });
}
