// Shared containers (mesh::vector, mesh::string, mesh::hash_map) inside
// shared objects, and mesh::allocator: in process mode, where each core's
// view is private, a release moves the chunks its writer changed and a
// reader's acquire the chunks changed since its view was current (counted
// in bytes, mesh::events()); without a controller a reader keeps stale data.
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <test_support.hpp> // test::on_cores and test::mesh_cores: the platform these suites run on

namespace {

using tacomesh::posix::execution_mode;
namespace ctl = mesh::controllers;
constexpr std::size_t chunk = 4096;

constexpr std::uint32_t values_n = 64 * chunk / sizeof(long); // 256 KiB of values
constexpr std::uint32_t keys_n = 5000;

/// What a user ports: a dictionary of names, a table of weights, a label.
/// Filled by its constructor, so that even without a controller every core
/// starts from the filled state (make_shared_object publishes it).
struct catalogue : mesh::sharing_aware<catalogue> {
    mesh::hash_map<mesh::string, std::uint32_t> ids;
    mesh::hash_map<std::uint64_t, double> weight;
    mesh::vector<long> values;
    mesh::string label;

    explicit catalogue(bool filled = false) {
        if (!filled) return;
        values.resize(values_n, 1L);
        for (std::uint32_t i = 0; i < keys_n; ++i) {
            ids.insert("name-" + std::to_string(i), i);
            weight.insert(i * 7919ull, double(i));
        }
        label = "first";
    }
    using shared_members =
        mesh::members<&catalogue::ids, &catalogue::weight, &catalogue::values, &catalogue::label>;
};
using cat_ptr = mesh::sharing_ptr<catalogue>;

using test::bytes_moved;
using test::moved;

struct seen {
    long value, untouched;
    std::uint32_t id;
    double weight;
    char label[16];
};
seen look(cat_ptr p, std::uint32_t at) {
    auto r = mesh::read(p);
    const std::uint32_t* id = r->ids.find("name-17");
    const double* w = r->weight.find(17 * 7919ull);
    seen s{r->values[at], r->values[5], id ? *id : 0, w ? *w : -1, {}};
    r->label.view().copy(s.label, sizeof s.label - 1);
    return s;
}

template <class C>
void one_change_per_container() {
    INFO(C::name);
    test::run(test::mesh_processes(3), [] {
        auto p = mesh::make_shared_object<catalogue, C>(true);
        const std::uint32_t at = 40 * chunk / sizeof(long) + 3;
        REQUIRE(taco::sync(1, &look, p, at).value == 1); // core 1's view holds everything

        // One value of the vector changes on core 2: one chunk moves each way.
        const moved writer = bytes_moved(2, [&] {
            taco::sync(2, [p] { mesh::write(p)->values.set(at, 7L); });
        });
        seen s{};
        const moved reader = bytes_moved(1, [&] { s = taco::sync(1, &look, p, at); });
        CHECK(s.untouched == 1);
        if constexpr (std::is_same_v<C, ctl::noop>) {
            CHECK(s.value == 1); // no controller: core 1 keeps its stale view (the emulation is real)
            CHECK(writer.written_back == 0);
            CHECK(reader.invalidated == 0);
        } else {
            CHECK(s.value == 7);
            CHECK(writer.written_back == sizeof(catalogue) + chunk);
            CHECK(reader.invalidated == sizeof(catalogue) + chunk);
        }

        // One key of each map and the label: a chunk or two each, not the maps.
        const moved writer2 = bytes_moved(2, [&] {
            taco::sync(2, [p] {
                auto w = mesh::write(p);
                w->ids.insert_or_assign("name-17", 1017u);
                *w->weight.find(17 * 7919ull) = 0.5;
                w->label = "second";
            });
        });
        const moved reader2 = bytes_moved(1, [&] { s = taco::sync(1, &look, p, at); });
        if constexpr (std::is_same_v<C, ctl::noop>) {
            CHECK(s.id == 17);
            CHECK(std::string(s.label) == "first");
        } else {
            CHECK(s.id == 1017);
            CHECK(s.weight == 0.5);
            CHECK(std::string(s.label) == "second");
            // Each map's slot is in one chunk, or two when it straddles a
            // chunk boundary; the label's characters are all of its buffer
            // (a cache line, smaller than a chunk).
            const std::uint64_t maps = writer2.written_back - sizeof(catalogue) - 64;
            CHECK(maps % chunk == 0);
            CHECK(maps / chunk >= 2);
            CHECK(maps / chunk <= 4);
            CHECK(reader2.invalidated == writer2.written_back);
        }
        mesh::destroy_shared_object(p);
    });
}

} // namespace

TEST_CASE("shared containers: one changed element is seen by the reader, and only its chunk moves (every "
          "controller, process mode)",
          "[mesh][containers][processes]") {
    if (test::private_views()) one_change_per_container<ctl::noop>(); // stale on purpose
    one_change_per_container<ctl::broadcast>();
    one_change_per_container<ctl::overlapped_broadcast>();
    one_change_per_container<ctl::timestamp>();
}

TEST_CASE("shared containers: every reader sees a change, in both execution modes", "[mesh][containers]") {
    for (auto mode : {execution_mode::threads, execution_mode::processes}) {
        INFO((mode == execution_mode::threads ? "threads" : "processes"));
        test::run(test::mesh_cores(4, mode), [] {
            auto p = mesh::make_shared_object<catalogue, ctl::broadcast>(true);
            for (taco::core_id c = 1; c < 4; ++c) REQUIRE(taco::sync(c, &look, p, 3u).id == 17);
            {
                auto w = mesh::write(p);
                w->ids["name-17"] = 99;
                w->values.set(3, -3);
            }
            for (taco::core_id c = 1; c < 4; ++c) {
                const seen s = taco::sync(c, &look, p, 3u);
                CHECK(s.id == 99);
                CHECK(s.value == -3);
            }
            mesh::destroy_shared_object(p);
        });
    }
}

namespace {
struct held_view {
    std::size_t size_during, size_after;
    long first_during, last_after;
};
} // namespace

// [private-views] (not on the emulated SCC): a view that stays as acquired
TEST_CASE("shared containers: growth while a reader holds a proxy (its view stays whole), seen at its next "
          "acquire, and outgrown buffers are freed with the object",
          "[mesh][containers][processes][private-views]") {
    test::run(test::mesh_processes(3), [] {
        const auto cached = mesh::bytes_in_use(mesh::memory_mode::cached);
        auto p = mesh::make_shared_object<catalogue, ctl::timestamp>();
        {
            auto w = mesh::write(p);
            w->values.assign(100, 5L);
        }
        const held_view h = taco::sync(1, [p] {
            auto r = mesh::read(p);
            // Core 2 grows the vector past several reallocations, in three
            // releases (so published buffers are outgrown), while this
            // reader holds its proxy.
            for (int round = 0; round < 3; ++round)
                taco::sync(2, [p, round] {
                    auto w = mesh::write(p);
                    for (int i = 0; i < 20000; ++i) w->values.push_back(round * 100000 + i);
                });
            held_view v{r->values.size(), 0, r->values[0], 0};
            for (long x : r->values) v.first_during += x == 5 ? 0 : 1000000; // all still 5
            auto again = mesh::read(p);
            v.size_after = again->values.size();
            v.last_after = again->values.back();
            return v;
        });
        CHECK(h.size_during == 100);
        CHECK(h.first_during == 5);
        CHECK(h.size_after == 60100);
        CHECK(h.last_after == 219999);
        // The buffers published and then outgrown (sizes 100, 25 600 and
        // 51 200: 0.75 of the current one) are still allocated; the ones
        // outgrown within a writer proxy are not.
        const std::size_t current = mesh::read(p)->values.capacity() * sizeof(long);
        CHECK(mesh::bytes_in_use(mesh::memory_mode::cached) - cached >= current + current / 2);
        // Destroyed from core 1, which never held the retired buffers' headers.
        taco::sync(1, [p] {
            auto q = p;
            mesh::destroy_shared_object(q);
        });
        CHECK(mesh::bytes_in_use(mesh::memory_mode::cached) == cached);
    });
}

TEST_CASE("shared containers: buffers outgrown within one writer's proxy are freed at once (never published)",
          "[mesh][containers]") {
    test::run(test::mesh_processes(2), [] {
        auto p = mesh::make_shared_object<catalogue>();
        const auto before = mesh::bytes_in_use(mesh::memory_mode::cached);
        {
            auto w = mesh::write(p);
            for (std::uint64_t i = 0; i < 100000; ++i) w->weight.insert(i, 1.0); // ~17 doublings
        }
        const std::size_t table = mesh::read(p)->weight.capacity() / 8 * (8 + 8 * 16);
        const auto grown = mesh::bytes_in_use(mesh::memory_mode::cached) - before;
        CHECK(grown >= table);
        CHECK(grown < table + table / 4); // not the sum of every size it passed through
        CHECK(taco::sync(1, [p] { return mesh::read(p)->weight.size(); }) == 100000);
        mesh::destroy_shared_object(p);
    });
}

TEST_CASE("mesh::hash_map behaves as std::unordered_map under random inserts, updates and erases",
          "[mesh][containers]") {
    test::run(test::mesh_cores(1), [] {
        struct maps : mesh::sharing_aware<maps> {
            mesh::hash_map<std::uint32_t, std::uint64_t> numbers;
            mesh::hash_map<mesh::string, std::uint32_t> names;
        };
        auto p = mesh::make_shared_object<maps>();
        std::unordered_map<std::uint32_t, std::uint64_t> want_numbers;
        std::unordered_map<std::string, std::uint32_t> want_names;
        std::mt19937_64 rng(12);
        auto w = mesh::write(p);
        for (int op = 0; op < 200000; ++op) {
            const auto k = std::uint32_t(rng() % 3000);
            const std::string name = "n" + std::to_string(k);
            switch (rng() % 5) {
            case 0:
            case 1:
                w->numbers.insert_or_assign(k, op);
                want_numbers[k] = std::uint64_t(op);
                w->names[name] = k + 1;
                want_names[name] = k + 1;
                break;
            case 2:
                CHECK(w->numbers.erase(k) == (want_numbers.erase(k) == 1));
                CHECK(w->names.erase(name) == (want_names.erase(name) == 1));
                break;
            case 3:
                CHECK(w->numbers.try_emplace(k, 7u).second == want_numbers.try_emplace(k, 7u).second);
                break;
            default: {
                const std::uint64_t* v = w.peek().numbers.find(k);
                const auto it = want_numbers.find(k);
                REQUIRE((v != nullptr) == (it != want_numbers.end()));
                if (v) CHECK(*v == it->second);
            }
            }
        }
        CHECK(w.peek().numbers.size() == want_numbers.size());
        CHECK(w.peek().names.size() == want_names.size());
        std::map<std::uint32_t, std::uint64_t> got(w.peek().numbers.begin(), w.peek().numbers.end());
        CHECK(got == std::map<std::uint32_t, std::uint64_t>(want_numbers.begin(), want_numbers.end()));
        std::map<std::string, std::uint32_t> got_names;
        for (auto [k, v] : w.peek().names) got_names.emplace(k, v);
        CHECK(got_names == std::map<std::string, std::uint32_t>(want_names.begin(), want_names.end()));
        CHECK_THROWS_WITH(w.peek().names.at("absent"), "mesh::hash_map: no key \"absent\"");
        CHECK_THROWS_WITH(w.peek().numbers.at(123456u), "mesh::hash_map: no key 123456");
        w.release();
        mesh::destroy_shared_object(p);
    });
}

TEST_CASE("mesh::hash_map: erased string keys are reclaimed, so churning through distinct keys while one stays "
          "keeps the shared memory bounded, and every core sees the moved keys",
          "[mesh][containers][processes]") {
    test::run(test::mesh_processes(2), [] {
        struct names : mesh::sharing_aware<names> {
            mesh::hash_map<mesh::string, std::uint32_t> ids;
        };
        auto p = mesh::make_shared_object<names>();
        struct found {
            std::uint32_t kept, last;
            bool operator==(const found&) const = default;
        };
        auto look = +[](mesh::sharing_ptr<names> q, std::uint32_t i) {
            auto r = mesh::read(q);
            const std::uint32_t* kept = r->ids.find("kept");
            const std::uint32_t* last = r->ids.find("churned-key-" + std::to_string(i));
            return found{kept ? *kept : 0u, last ? *last : 0u};
        };
        mesh::write(p)->ids.insert("kept", 42u);
        REQUIRE(taco::sync(1, look, p, 0u).kept == 42u);
        const std::size_t before = mesh::bytes_in_use(mesh::memory_mode::cached);
        // Without reclaiming, 200 000 keys of ~18 bytes leave 3.6 MB in the key pool.
        std::uint32_t i = 0;
        for (int round = 0; round < 200; ++round) {
            {
                auto w = mesh::write(p); // each round released: outgrown pools would be retired, not freed
                for (int k = 0; k < 1000; ++k, ++i) {
                    const std::string key = "churned-key-" + std::to_string(i);
                    REQUIRE(w->ids.insert(key, i).second);
                    REQUIRE(w.peek().ids.contains("kept"));
                    REQUIRE(w->ids.erase(key));
                }
                w->ids.insert("churned-key-" + std::to_string(i), i); // one more, left for the reader
            }
            REQUIRE(taco::sync(1, look, p, i) == found{42u, i}); // core 1 sees the keys where they moved
            REQUIRE(mesh::write(p)->ids.erase("churned-key-" + std::to_string(i)));
        }
        const std::size_t grown = mesh::bytes_in_use(mesh::memory_mode::cached) - before;
        INFO(grown << " bytes more in cached memory after " << i << " keys came and went");
        CHECK(grown < 64 * 1024);
        CHECK(mesh::read(p)->ids.size() == 1);
        mesh::destroy_shared_object(p);
        CHECK(mesh::bytes_in_use(mesh::memory_mode::cached) < before);
    });
}

TEST_CASE("mesh::hash_map: key views from an iteration stay valid through erases, and a key read back from an "
          "erased key's bytes is inserted as it reads",
          "[mesh][containers]") {
    test::run(test::mesh_cores(1), [] {
        mesh::hash_map<mesh::string, std::uint32_t> m;
        for (std::uint32_t i = 0; i < 3000; ++i) m.insert("a-rather-long-key-" + std::to_string(i), i);
        std::vector<std::string_view> keys;
        for (auto [k, v] : m) keys.push_back(k);
        for (std::string_view k : keys) REQUIRE(m.erase(k)); // erased bytes pile up: the views must not move
        CHECK(m.empty());
        for (std::uint32_t i = 0; i < 3000; ++i) REQUIRE(m.insert("b-" + std::to_string(i), i).second);
        std::string_view gone;
        for (auto [k, v] : m)
            if (v == 7) gone = k;
        REQUIRE(m.erase(gone));
        for (std::uint32_t i = 0; i < 3000; ++i) REQUIRE(m.erase("b-" + std::to_string(i)) == (i != 7));
        // gone views erased bytes of the pool, which this insert reclaims.
        REQUIRE(m.insert(gone, 77u).second);
        CHECK(m.size() == 1);
        CHECK(m.at("b-7") == 77u);
    });
}

TEST_CASE("mesh::vector and mesh::string follow their std counterparts", "[mesh][containers]") {
    test::run(test::mesh_cores(1), [] {
        mesh::vector<int> v{1, 2, 3};
        v.insert(v.begin() + 1, 9);
        v.erase(v.begin() + 2);
        v.push_back(4);
        CHECK(std::vector<int>(v.cbegin(), v.cend()) == std::vector<int>{1, 9, 3, 4});
        CHECK_THROWS_WITH(v.at(4), "mesh::vector: index 4 of a vector of size 4");
        mesh::vector<int> copy = v;
        CHECK(copy == v);
        mesh::string s = "Cottbus";
        s += " Hbf";
        CHECK(s == "Cottbus Hbf");
        CHECK(std::string(s.c_str()) == "Cottbus Hbf");
        s.resize(7);
        CHECK(s.view() == "Cottbus");
        CHECK(s < mesh::string("Dresden"));
        CHECK_THROWS_AS(s.set(7, 'x'), std::out_of_range);
    });
}

// [one-memory] (not across MPI ranks): no memory that stores reach across ranks
namespace {
/// A standard container whose memory is non-cached shared memory (the
/// paper's NCM): every write is seen at once, so it may be shared as is.
struct ncm_list {
    std::vector<int, mesh::allocator<int, mesh::memory_mode::non_cached>> items;
};
} // namespace
template <>
inline constexpr bool mesh::enable_sharing<ncm_list> = true;

TEST_CASE("mesh::allocator: a standard container in non-cached shared memory, seen by every core",
          "[mesh][containers][processes][one-memory]") {
    static_assert(std::is_same_v<std::allocator_traits<mesh::allocator<int>>::rebind_alloc<long>,
                                 mesh::allocator<long>>);
    test::run(test::mesh_processes(3), [] {
        const auto in_use = mesh::bytes_in_use(mesh::memory_mode::non_cached);
        auto p = mesh::make_shared_object<ncm_list, ctl::timestamp>();
        const bool block_on_chip = mesh::detail::on_chip(p.block()); // not counted in non-cached memory
        taco::sync(2, [p] {
            auto w = mesh::write(p);
            for (int i = 0; i < 1000; ++i) w->items.push_back(i);
        });
        CHECK(taco::sync(1, [p] {
                  auto r = mesh::read(p);
                  long s = 0;
                  for (int x : r->items) s += x;
                  return s;
              }) == 999 * 1000 / 2);
        CHECK(mesh::bytes_in_use(mesh::memory_mode::non_cached) > in_use);
        taco::sync(2, [p] { mesh::write(p)->items = {}; }); // freed by core 2, allocated there too
        mesh::destroy_shared_object(p);
        CHECK(mesh::bytes_in_use(mesh::memory_mode::non_cached) - in_use ==
              (TACO_DEBUG_CHECKS && !block_on_chip ? sizeof(mesh::detail::control_block) : 0)); // see destroy_shared_object
    });
}

TEST_CASE("read_all acquires several shared objects once each, in order", "[mesh][containers]") {
    test::run(test::mesh_processes(2), [] {
        auto a = mesh::make_shared_object<catalogue>();
        auto b = mesh::make_shared_object<mesh::chunked_map<std::uint32_t, long>>(std::size_t(10), 4L);
        {
            auto w = mesh::write(a);
            w->label = "a";
        }
        const auto r = taco::sync(1, [a, b] {
            const auto before = mesh::events().invalidations;
            auto proxies = mesh::read_all(a, b);
            static_assert(std::is_same_v<decltype(proxies),
                                         std::tuple<mesh::reader<catalogue>,
                                                    mesh::chunked_map<std::uint32_t, long>::reader_proxy>>);
            auto& [ra, rb] = proxies;
            long s = 0;
            for (int i = 0; i < 10; ++i) s += rb.get(std::uint32_t(i)) + long(ra->label.size());
            struct result {
                long sum;
                std::uint64_t acquires;
            };
            return result{s, mesh::events().invalidations - before};
        });
        CHECK(r.sum == 50);
        CHECK(r.acquires == 1); // a changed since core 1 adopted it, b did not
        mesh::destroy_shared_object(b);
        mesh::destroy_shared_object(a);
    });
}
