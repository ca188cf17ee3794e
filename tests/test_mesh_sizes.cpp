// Arithmetic on sizes a user passes to MESH (counts for resize, reserve,
// append, grow_to, allocate): each is either done exactly or refused with
// std::length_error / std::bad_alloc saying what was asked and the limit,
// the container unchanged and no shared memory taken. Never a wrapped byte
// count: resize(size() - 1) on an empty vector once allocated 64 bytes for
// SIZE_MAX elements and filled the shared region with zeros.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <iterator>
#include <string>
#include <vector>

#include <test_support.hpp> // test::on_cores and test::mesh_cores: the platform these suites run on

namespace {
/// 0, 1, 2, ...: a range of any length that stores nothing, whose distance
/// is one subtraction. (std::views::iota's iterators would do, but clang 14
/// cannot compile them against libstdc++ 12's ranges.)
struct counting {
    using iterator_category = std::random_access_iterator_tag;
    using value_type = std::size_t;
    using difference_type = std::ptrdiff_t;
    using pointer = const std::size_t*;
    using reference = std::size_t;
    std::size_t i = 0;
    std::size_t operator*() const { return i; }
    counting& operator++() { return ++i, *this; }
    counting operator++(int) { return {i++}; }
    bool operator==(const counting&) const = default;
    friend difference_type operator-(counting a, counting b) { return difference_type(a.i - b.i); }
};
static_assert(std::forward_iterator<counting>);
} // namespace

namespace {

constexpr std::size_t size_max = std::numeric_limits<std::size_t>::max();

std::size_t cached_in_use() { return mesh::bytes_in_use(mesh::memory_mode::cached); }

template <class T>
std::vector<T> contents(const mesh::vector<T>& v) {
    return {v.begin(), v.end()};
}

/// An element larger than a word, so that n * sizeof(T) wraps at smaller n.
struct triple {
    std::uint64_t a, b, c;
    friend bool operator==(const triple&, const triple&) = default;
};
/// One whole chunk: the largest a chunked map takes.
struct page {
    char bytes[4096];
    friend bool operator==(const page& a, const page& b) { return std::memcmp(a.bytes, b.bytes, sizeof a.bytes) == 0; }
};

} // namespace

TEST_CASE("mesh::vector: resize(size() - 1) on an empty vector is refused, the vector and the region unchanged",
          "[mesh][containers][sizes]") {
    test::run(test::mesh_cores(1), [] {
        mesh::vector<int> v{1, 2, 3};
        v.clear();
        const std::size_t before = cached_in_use(), capacity = v.capacity();
        REQUIRE_THROWS_AS(v.resize(v.size() - 1), std::length_error);
        CHECK(v.empty());
        CHECK(v.capacity() == capacity);
        CHECK(cached_in_use() == before);
        CHECK_THROWS_WITH(v.resize(size_max),
                          Catch::Contains("mesh::vector<T>::resize(n)") && Catch::Contains("18446744073709551615") &&
                              Catch::Contains("max_size() = " + std::to_string(mesh::vector<int>::max_size())));
        CHECK_THROWS_AS(v.reserve(size_max / sizeof(int) + 1), std::length_error); // * 4 wraps to a small count
        CHECK_THROWS_AS(mesh::vector<triple>(size_max / sizeof(triple) + 2), std::length_error);
        v.push_back(7); // still a working vector
        CHECK(contents(v) == std::vector<int>{7});
        // assign refuses before it clears
        CHECK_THROWS_AS(v.assign(size_max, 1), std::length_error);
        CHECK_THROWS_AS(v.assign(mesh::vector<int>::max_size(), 1), std::bad_alloc);
        const counting from{0}, to{std::size_t(std::numeric_limits<int>::max())};
        CHECK_THROWS_AS(v.assign(from, to), std::bad_alloc); // 8 GiB: more than any region here
        CHECK(contents(v) == std::vector<int>{7});
        mesh::string s = "kept";
        CHECK_THROWS_AS(s.assign(std::string_view(s.data(), size_max / 2)), std::length_error); // a bad view, never read
        CHECK(s == "kept");
    });
}

TEST_CASE("mesh::vector: max_size() is what a buffer's byte count allows, and a count beyond it is refused",
          "[mesh][containers][sizes]") {
    STATIC_REQUIRE(mesh::vector<char>::max_size() <= std::size_t(PTRDIFF_MAX));
    STATIC_REQUIRE(mesh::vector<triple>::max_size() == mesh::vector<char>::max_size() / sizeof(triple));
    STATIC_REQUIRE(mesh::string::max_size() == mesh::vector<char>::max_size() - 1);
    test::run(test::mesh_cores(1), [] {
        mesh::vector<std::size_t> v(3, 5);
        // A range of max_size() - 1 more elements than fit, that no one stores.
        const counting from{0}, to{mesh::vector<std::size_t>::max_size() - 1};
        CHECK_THROWS_WITH(v.append(from, to), Catch::Contains("size() + n"));
        CHECK(contents(v) == std::vector<std::size_t>{5, 5, 5});
        // At the limit itself the count is fine but no region has the memory.
        CHECK_THROWS_AS(v.reserve(mesh::vector<std::size_t>::max_size()), std::bad_alloc);
        CHECK(contents(v) == std::vector<std::size_t>{5, 5, 5});
    });
}

TEST_CASE("mesh::string: sizes past max_size() are refused, and growth from its own characters is right",
          "[mesh][containers][sizes]") {
    test::run(test::mesh_cores(1), [] {
        mesh::string s = "abc";
        const std::size_t before = cached_in_use();
        CHECK_THROWS_AS(s.reserve(size_max), std::length_error); // n + 1 wrapped to 0: a silent no-op
        CHECK_THROWS_WITH(s.resize(size_max), Catch::Contains("mesh::string::resize(n)"));
        CHECK_THROWS_AS(s.resize(mesh::string::max_size() + 1), std::length_error);
        CHECK(s == "abc");
        CHECK(cached_in_use() == before);
        for (int i = 0; i < 6; ++i) s += s.view(); // each doubling reallocates: the source is the old buffer
        CHECK(s.size() == 3 * 64);
        CHECK(s.view().substr(186) == "abcabc");
        s.resize(200, 'x');
        CHECK(s.view().substr(190) == "bcxxxxxxxx");
        mesh::vector<int> v{1, 2};
        for (int i = 0; i < 5; ++i) v.push_back(v[0]); // the argument is an element, growth frees it
        v.resize(40, v[1]);
        CHECK(v[6] == 1);
        CHECK(v[39] == 2);
    });
}

TEST_CASE("mesh::hash_map: reserve past max_size() is refused, the map unchanged", "[mesh][containers][sizes]") {
    test::run(test::mesh_cores(1), [] {
        mesh::hash_map<std::uint64_t, std::uint64_t> m;
        m.insert(1, 2);
        const std::size_t capacity = m.capacity(), before = cached_in_use();
        CHECK_THROWS_WITH(m.reserve(size_max), Catch::Contains("mesh::hash_map::reserve(n)") && Catch::Contains("max_size()"));
        CHECK_THROWS_AS(m.reserve(size_max / 8 + 1), std::length_error); // n * 8 / 7 wrapped to a small table
        CHECK_THROWS_AS(m.reserve(m.max_size()), std::bad_alloc);
        CHECK(m.capacity() == capacity);
        CHECK(cached_in_use() == before);
        CHECK(m.size() == 1);
        CHECK(*m.find(1) == 2);
    });
}

TEST_CASE("mesh::chunked_map and mesh::range_space: counts past their keys are refused, 64-bit keys work",
          "[mesh][sizes]") {
    test::run(test::mesh_cores(1), [] {
        // 2^64 keys: max + 1 wrapped to 0, and every growth was refused.
        auto wide = mesh::make_shared_object<mesh::chunked_map<std::uint64_t, long>>(std::size_t(10), 3L);
        CHECK(mesh::read(wide).get(9) == 3);
        STATIC_REQUIRE(mesh::chunked_map<std::uint64_t, long>::max_size() == size_max);
        CHECK_THROWS_WITH(mesh::write(wide).grow_to(size_max), Catch::Contains("asked for")); // a count it may have, no memory
        CHECK(mesh::read(wide).size() == 10);
        auto narrow = mesh::make_shared_object<mesh::chunked_map<std::uint8_t, page>>(std::size_t(256));
        CHECK_THROWS_AS(mesh::write(narrow).grow_to(257), std::length_error);
        CHECK(mesh::read(narrow).size() == 256);
        using space = mesh::range_space;
        CHECK_THROWS_AS(mesh::make_shared_object<space>(std::size_t(1) << 33), std::length_error);
        auto s = mesh::make_shared_object<space>(space::max_size() - 2);
        CHECK_THROWS_WITH(mesh::write(s).add(3), Catch::Contains("max_size() = 4294967295"));
        CHECK(mesh::read(s).size() == space::max_size() - 2);
        mesh::destroy_shared_object(s);
        mesh::destroy_shared_object(narrow);
        mesh::destroy_shared_object(wide);
    });
}

TEST_CASE("mesh::allocate: a size or alignment that would wrap when rounded is refused with the size asked",
          "[mesh][sizes]") {
    test::run(test::mesh_cores(1), [] {
        const std::size_t before = cached_in_use();
        for (const std::size_t n : {size_max, size_max - 1, size_max - 63, size_max - 64, std::size_t(1) << 63}) {
            INFO(n);
            CHECK_THROWS_WITH(mesh::allocate(n), Catch::Contains("asked for " + std::to_string(n) + " bytes"));
        }
        CHECK_THROWS_AS(mesh::allocate(64, mesh::memory_mode::cached, std::size_t(1) << 63), std::bad_alloc);
        void* aligned = mesh::allocate(64, mesh::memory_mode::cached, std::size_t(1) << 20);
        CHECK(reinterpret_cast<std::uintptr_t>(aligned) % (std::size_t(1) << 20) == 0); // the address, not the offset
        mesh::deallocate(aligned);
        CHECK_THROWS_AS(mesh::allocator<triple>().allocate(size_max / 16), std::bad_alloc);
        CHECK(cached_in_use() == before);
    });
}

TEST_CASE("mesh::allocate and allocate_private near SIZE_MAX: refused, never a block the next allocation gets too",
          "[mesh][sizes]") {
    // Rounding SIZE_MAX - 10 up to whole cache lines wrapped to a handful of
    // bytes: the "block" came back at the address the next allocate(64) got.
    test::run(test::mesh_cores(1), [] {
        const std::size_t cached = cached_in_use();
        for (const std::size_t n : {size_max, size_max - 10, size_max - 64, size_max / 2 + 1}) {
            INFO(n);
            CHECK_THROWS_AS(mesh::allocate(n), mesh::out_of_memory);
            CHECK_THROWS_WITH(mesh::allocate_private(n), Catch::Contains("core-private memory") &&
                                                             Catch::Contains("asked for " + std::to_string(n)));
        }
        CHECK(cached_in_use() == cached);
        void* a = mesh::allocate(64);
        void* b = mesh::allocate(64);
        CHECK(a != b);
        mesh::deallocate(b);
        mesh::deallocate(a);
    });
}

TEST_CASE("mesh::vector<long>, hash_map and string: counts near SIZE_MAX are a std::length_error, nothing changed",
          "[mesh][containers][sizes]") {
    // Each was once a crash or a silent no-op: resize(SIZE_MAX) wrote past a
    // wrapped buffer, resize(SIZE_MAX / 8 + 2, 7) left a small vector of the
    // wrong size, reserve(SIZE_MAX) reported a small capacity, and the
    // hash_map's and string's reserve(SIZE_MAX) did nothing.
    test::run(test::mesh_cores(1), [] {
        mesh::vector<long> v{1, 2};
        CHECK_THROWS_AS(v.resize(size_max), std::length_error);
        CHECK_THROWS_AS(v.resize(size_max / 8 + 2, 7L), std::length_error);
        CHECK_THROWS_AS(v.reserve(size_max), std::length_error);
        CHECK(contents(v) == std::vector<long>{1, 2});
        CHECK(v.capacity() < 1000);
        mesh::hash_map<long, long> m;
        CHECK_THROWS_AS(m.reserve(size_max), std::length_error);
        mesh::string s = "x";
        CHECK_THROWS_AS(s.reserve(size_max), std::length_error);
        CHECK(s == "x");
    });
}

namespace {

/// Counts to try against a limit: near SIZE_MAX, near SIZE_MAX / element,
/// near max_size(), powers of two and their neighbours, and small counts
/// (which must work exactly). Counts whose bytes lie between 1 MiB and
/// 4 GiB are left out: a region may have them, and filling them is slow.
std::size_t pick_count(std::mt19937_64& rng, std::size_t element, std::size_t max_size) {
    const std::size_t k = rng() % 5;
    std::size_t n = 0;
    switch (rng() % 6) {
    case 0: n = size_max - k; break;
    case 1: n = size_max / element + k - 2; break;
    case 2: n = max_size + k - 2; break;
    case 3: {
        const std::size_t p = std::size_t(1) << (rng() % 64);
        n = rng() % 2 ? p + k : p - k;
        break;
    }
    case 4: n = PTRDIFF_MAX / element + k - 2; break;
    default: n = rng() % 200; break;
    }
    const auto bytes = mesh::detail::checked_mul(n, element);
    if (bytes && *bytes > (std::size_t(1) << 20) && *bytes <= (std::size_t(4) << 30)) return rng() % 200;
    return n;
}

/// Either done exactly, or refused cleanly with the container as it was.
template <class T>
void vector_ops(std::mt19937_64& rng, int rounds) {
    mesh::vector<T> v;
    for (int round = 0; round < rounds; ++round) {
        const std::size_t n = pick_count(rng, sizeof(T), mesh::vector<T>::max_size());
        const int op = int(rng() % 3);
        INFO("sizeof(T) = " << sizeof(T) << ", op " << op << " (resize, reserve, append), n = " << n
                            << ", size() = " << v.size());
        const std::vector<T> was = contents(v);
        const std::size_t capacity = v.capacity(), in_use = cached_in_use();
        T fill{};
        std::memset(static_cast<void*>(&fill), 0x5A ^ round, sizeof fill);
        try {
            switch (op) {
            case 0:
                v.resize(n, fill);
                REQUIRE(v.size() == n);
                for (std::size_t i = std::min(was.size(), n); i < n; ++i) REQUIRE(v[i] == fill);
                break;
            case 1:
                v.reserve(n);
                REQUIRE(v.capacity() >= n);
                REQUIRE(contents(v) == was);
                break;
            default: {
                if (const auto bytes = mesh::detail::checked_mul(n, sizeof(T)); bytes && *bytes <= (1u << 20)) {
                    const std::vector<T> more(n, fill);
                    v.append(more.begin(), more.end());
                    REQUIRE(v.size() == was.size() + n);
                    for (std::size_t i = was.size(); i < v.size(); ++i) REQUIRE(v[i] == fill);
                } else { // a range of n elements that exists only as a count, and cannot fit
                    mesh::vector<std::size_t> w(was.size() % 3);
                    const std::size_t w_size = w.size();
                    try {
                        w.append(counting{0}, counting{n});
                        FAIL("an append of " << n << " elements succeeded");
                    } catch (const std::length_error& e) {
                        REQUIRE(std::string(e.what()).find("max_size()") != std::string::npos);
                    } catch (const std::bad_alloc& e) {
                        REQUIRE(std::string(e.what()).find("asked for") != std::string::npos);
                    }
                    REQUIRE(w.size() == w_size);
                }
            }
            }
        } catch (const std::length_error& e) {
            INFO(e.what());
            REQUIRE(n > mesh::vector<T>::max_size() - (op == 2 ? was.size() : 0));
            REQUIRE(std::string(e.what()).find("max_size()") != std::string::npos);
            REQUIRE(contents(v) == was);
            REQUIRE(v.capacity() == capacity);
            REQUIRE(cached_in_use() == in_use);
        } catch (const std::bad_alloc& e) {
            INFO(e.what());
            REQUIRE(std::string(e.what()).find("asked for") != std::string::npos);
            REQUIRE(n > 200);
            REQUIRE(contents(v) == was);
            REQUIRE(v.capacity() == capacity);
            REQUIRE(cached_in_use() == in_use);
        }
        if (v.size() > 1000) v.clear(); // keep the fills small
    }
}

} // namespace

TEST_CASE("sizes near the limits: each resize, reserve, append, allocate is exact or a clean refusal, never a wrap",
          "[mesh][containers][sizes]") {
    // --rng-seed <n> replays a run; the seed is printed with any failure.
    const std::uint64_t seed = Catch::rngSeed() ? Catch::rngSeed() : 20240611;
    CAPTURE(seed);
    test::run(test::mesh_cores(1), [seed] {
        std::mt19937_64 rng(seed);
        vector_ops<char>(rng, 300);
        vector_ops<int>(rng, 300);
        vector_ops<triple>(rng, 300);
        vector_ops<page>(rng, 100);

        mesh::string s = "seed";
        mesh::hash_map<mesh::string, int> names;
        names.insert("kept", 1);
        for (int round = 0; round < 300; ++round) {
            const std::size_t n = round % 2 ? pick_count(rng, 1, mesh::string::max_size())
                                            : pick_count(rng, 16, names.max_size()); // a slot: a key and a value
            INFO("n = " << n);
            const std::string was(s.view());
            const std::size_t capacity = names.capacity(), in_use = cached_in_use();
            try {
                if (round % 2) {
                    s.resize(n, 'q');
                    REQUIRE(s.size() == n);
                    REQUIRE(s.view().substr(0, std::min(n, was.size())) == std::string_view(was).substr(0, n));
                    if (n > was.size()) REQUIRE(s[n - 1] == 'q');
                    REQUIRE(s.c_str()[n] == '\0');
                } else {
                    names.reserve(n);
                    REQUIRE(names.capacity() * 7 / 8 >= n);
                }
            } catch (const std::length_error& e) {
                REQUIRE(std::string(e.what()).find("max_size()") != std::string::npos);
                REQUIRE(s == was);
                REQUIRE(names.capacity() == capacity);
                REQUIRE(cached_in_use() == in_use);
            } catch (const std::bad_alloc& e) {
                REQUIRE(std::string(e.what()).find("asked for") != std::string::npos);
                REQUIRE(s == was);
                REQUIRE(names.capacity() == capacity);
                REQUIRE(cached_in_use() == in_use);
            }
            REQUIRE(*names.find("kept") == 1);
            if (s.size() > 1000) s = "seed";
        }

        for (int round = 0; round < 300; ++round) {
            const std::size_t n = pick_count(rng, 1, size_max);
            INFO("allocate(" << n << ")");
            const std::size_t in_use = cached_in_use();
            void* p = nullptr;
            try {
                p = mesh::allocate(n);
            } catch (const std::bad_alloc& e) {
                REQUIRE(std::string(e.what()).find("asked for " + std::to_string(n) + " bytes") != std::string::npos);
                REQUIRE(cached_in_use() == in_use);
                continue;
            }
            REQUIRE(n <= (std::size_t(4) << 30));
            REQUIRE(cached_in_use() - in_use >= n);
            REQUIRE(cached_in_use() - in_use < n + 128);
            mesh::deallocate(p);
        }
    });
}
