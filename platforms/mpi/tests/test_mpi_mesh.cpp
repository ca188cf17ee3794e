// What MESH across ranks adds to the MESH suites it runs with
// (tacomesh_tests_mpi_mesh): the ranks really hold views of their own with
// the canonical copy at rank 0, the control block's tables survive ranks
// that load the program at different addresses, shared words are atomic
// across ranks, and what cannot work across ranks is refused with a
// message. Run by mpirun, one core per rank (platforms/mpi/tests/CMakeLists.txt).
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <fstream>
#include <set>
#include <string>

#include <mesh/mesh.hpp>
#include <taco/taco.hpp>
#include <tacomesh/mpi/platform.hpp>

namespace {

struct counter {
    std::uint64_t n = 0;
};

std::uint64_t image_base_here() { return taco::detail::image_base(); }
int rank_here() { return tacomesh::mpi::rank(); }

/// A word of MESH bookkeeping memory, added to from this core.
void add_many(mesh::detail::address w, std::uint32_t times) {
    for (std::uint32_t i = 0; i < times; ++i)
        mesh::detail::shared_word<std::uint64_t>::fetch_add(*static_cast<std::atomic<std::uint64_t>*>(w.p), 1);
}

bool aslr_on() {
    std::ifstream f("/proc/sys/kernel/randomize_va_space");
    int v = 0;
    return f >> v && v != 0;
}

} // namespace

TEST_CASE("mpi mesh: every core of the run is a rank of its own, and a shared object works across them", "[mpi]") {
    constexpr taco::core_id cores = 4;
    std::set<int> ranks;
    std::set<std::uint64_t> bases;
    std::uint64_t total = 0;
    taco::run(tacomesh::mpi::config{.cores = cores}, [&] {
        auto p = mesh::make_shared_object<counter>();
        for (taco::core_id c = 0; c < cores; ++c) {
            ranks.insert(taco::sync(c, &rank_here));
            bases.insert(taco::sync(c, &image_base_here));
            taco::sync(c, +[](mesh::sharing_ptr<counter> q) { mesh::write(q)->n += 1; }, p);
        }
        total = mesh::read(p)->n;
        mesh::destroy_shared_object(p);
    });
    CHECK(ranks.size() == cores);
    CHECK(total == cores);
    // With address-space randomisation the ranks load the program at
    // different addresses, so the control blocks' image-relative tables are
    // what made the writes above work.
    if (aslr_on()) CHECK(bases.size() == cores);
}

TEST_CASE("mpi mesh: a shared word is atomic across ranks (atomics on a host's shared window, at the home, or "
          "MPI_Fetch_and_op)",
          "[mpi]") {
    constexpr taco::core_id cores = 4;
    constexpr std::uint32_t each = 500;
    const auto how = GENERATE(tacomesh::mpi::on_host::shared_memory, tacomesh::mpi::on_host::mpi);
    const auto remote = GENERATE(tacomesh::mpi::remote_memory::home_messages, tacomesh::mpi::remote_memory::rma);
    std::uint64_t sum = 0;
    tacomesh::mpi::run_report report;
    taco::run(tacomesh::mpi::config{.cores = cores, .on_host = how, .remote_memory = remote, .report = &report}, [&] {
        void* w = mesh::detail::allocate_bookkeeping(sizeof(std::uint64_t), 8);
        auto& word = *static_cast<std::atomic<std::uint64_t>*>(w);
        mesh::detail::shared_word<std::uint64_t>::store(word, 0);
        taco::future<void> done;
        taco::at_each(taco::all_cores(), taco::m2f(&add_many, mesh::detail::address{w}, each), done);
        done.get();
        sum = mesh::detail::shared_word<std::uint64_t>::load(word);
        CHECK(word.load() == 0); // this rank's view of the word was never written: the word lives at home
        mesh::detail::deallocate_bookkeeping(w);
    });
    CHECK(sum == std::uint64_t(cores) * each);
    // Rank 0 reaches the copy through a shared window where the ranks of its
    // host may use one: all ranks there, or (asking rank 0 for it) those of its host.
    CHECK(report.mesh_direct ==
          (how == tacomesh::mpi::on_host::shared_memory &&
           (remote == tacomesh::mpi::remote_memory::home_messages ||
            tacomesh::mpi::ranks_on_this_host() == tacomesh::mpi::ranks())));
}

namespace {

/// An object of one range larger than a request carries inline
/// (home_requests::inline_bytes), so its copies travel as messages of their own.
struct page_run {
    std::array<std::uint64_t, 2048> words{}; // 16 KiB
    bool uniform(std::uint64_t v) const {
        return std::all_of(words.begin(), words.end(), [v](std::uint64_t w) { return w == v; });
    }
};
/// An object with a part: its copies are the controllers' word operations
/// and copies, not a versioned copy of one range.
struct with_part : mesh::sharing_aware<with_part> {
    mesh::vector<std::uint64_t> values;
};

struct seen_here {
    std::uint64_t counter, pages, part_sum, part_size;
    bool pages_uniform, versioned, on_home_host;
};

/// One core's turn: read what the previous core wrote, then write the next value.
seen_here take_turn(mesh::sharing_ptr<counter> c, mesh::sharing_ptr<page_run> p, mesh::sharing_ptr<with_part> v,
                    std::uint64_t next) {
    seen_here s{};
    s.versioned = taco::detail::runtime().versioned_copies;
    const auto& session = tacomesh::mpi::detail::session::get();
    s.on_home_host = session.host_of(session.rank()) == session.host_of(0);
    s.counter = mesh::read(c)->n;
    {
        auto r = mesh::read(p);
        s.pages = r->words[0];
        s.pages_uniform = r->uniform(s.pages);
    }
    {
        auto r = mesh::read(v);
        s.part_size = r->values.size();
        for (std::uint64_t x : r->values) s.part_sum += x;
    }
    mesh::write(c)->n = next;
    mesh::write(p)->words.fill(next);
    mesh::write(v)->values.push_back(next);
    return s;
}

template <class Controller>
void turns_across_ranks(tacomesh::mpi::on_host how, tacomesh::mpi::remote_memory remote) {
    constexpr taco::core_id cores = 4;
    constexpr std::uint64_t turns = 24;
    taco::run(tacomesh::mpi::config{.cores = cores, .on_host = how, .remote_memory = remote}, [&] {
        auto c = mesh::make_shared_object<counter, Controller>();
        auto p = mesh::make_shared_object<page_run, Controller>();
        auto v = mesh::make_shared_object<with_part, Controller>();
        std::uint64_t sum = 0;
        for (std::uint64_t t = 1; t <= turns; ++t) {
            const taco::core_id at = taco::core_id(t % cores);
            const seen_here s = taco::sync(at, &take_turn, c, p, v, t);
            INFO("turn " << t << " on core " << at);
            // Every write of the turn before is seen, whole.
            CHECK(s.counter == t - 1);
            CHECK(s.pages == t - 1);
            CHECK(s.pages_uniform);
            CHECK(s.part_size == t - 1);
            CHECK(s.part_sum == sum);
            sum += t;
            // The ranks that ask the home do a seqlock's side in one
            // exchange; the home, the ranks that share its copy (its host's,
            // on_host::shared_memory) and RMA go by words and copies.
            CHECK(s.versioned == (remote == tacomesh::mpi::remote_memory::home_messages && at != 0 &&
                                  !(how == tacomesh::mpi::on_host::shared_memory && s.on_home_host)));
        }
        CHECK(mesh::read(c)->n == turns);
        CHECK(mesh::read(p)->uniform(turns));
        CHECK(mesh::read(v)->values.size() == turns);
        mesh::destroy_shared_object(c);
        mesh::destroy_shared_object(p);
        mesh::destroy_shared_object(v);
    });
}

} // namespace

TEST_CASE("mpi mesh: each rank sees the last release whole under every controller and every way to the home's copy",
          "[mpi]") {
    const auto how = GENERATE(tacomesh::mpi::on_host::shared_memory, tacomesh::mpi::on_host::mpi);
    const auto remote = GENERATE(tacomesh::mpi::remote_memory::home_messages, tacomesh::mpi::remote_memory::rma);
    INFO("on_host " << int(how) << ", remote_memory " << int(remote));
    SECTION("timestamp") { turns_across_ranks<mesh::controllers::timestamp>(how, remote); }
    SECTION("broadcast") { turns_across_ranks<mesh::controllers::broadcast>(how, remote); }
    SECTION("overlapped broadcast") { turns_across_ranks<mesh::controllers::overlapped_broadcast>(how, remote); }
}

namespace {

constexpr std::size_t large_words = 8192; // 64 KiB: beyond a request's inline payload

/// This core's write-back of the range, filled with `value`; then every
/// word of its refreshed view checked against `expect` first (0: no check).
std::uint64_t wrong_after_refresh(mesh::detail::address at, std::uint64_t expect, std::uint64_t value) {
    auto* words = static_cast<std::uint64_t*>(at.p);
    auto& port = mesh::detail::memory();
    port.invalidate(words, large_words * sizeof *words);
    const auto wrong = std::uint64_t(std::count_if(words, words + large_words, [&](std::uint64_t w) { return w != expect; }));
    std::fill(words, words + large_words, value);
    port.write_back(words, large_words * sizeof *words);
    return expect ? wrong : 0;
}

} // namespace

TEST_CASE("mpi mesh: a write-back and an invalidate larger than a request's payload go whole, in place", "[mpi]") {
    constexpr taco::core_id cores = 3;
    const auto remote = GENERATE(tacomesh::mpi::remote_memory::home_messages, tacomesh::mpi::remote_memory::rma);
    std::uint64_t wrong = 0;
    taco::run(tacomesh::mpi::config{.cores = cores, .on_host = tacomesh::mpi::on_host::mpi, .remote_memory = remote}, [&] {
        void* p = mesh::allocate(large_words * sizeof(std::uint64_t));
        const mesh::detail::address at{p};
        std::uint64_t value = 1;
        wrong += wrong_after_refresh(at, 0, value);
        for (taco::core_id c : {1u, 2u, 0u, 2u, 1u}) {
            wrong += taco::sync(c, &wrong_after_refresh, at, value, value + 1);
            ++value;
        }
        mesh::deallocate(p);
    });
    CHECK(wrong == 0);
}

TEST_CASE("mpi mesh: non-cached memory, which no store carries across ranks, is refused with a message", "[mpi]") {
    taco::run(tacomesh::mpi::config{.cores = 2}, [] {
        CHECK_THROWS_WITH(mesh::allocate(64, mesh::memory_mode::non_cached),
                          Catch::Contains("not shared by this platform's cores") && Catch::Contains("dcm"));
        using ncm_map = mesh::chunked_map<std::uint32_t, int, mesh::map_memory::ncm>;
        CHECK_THROWS_WITH(mesh::make_shared_object<ncm_map>(std::size_t(100)), Catch::Contains("non-cached"));
        // Cached memory still works after the refusals.
        auto p = mesh::make_shared_object<counter>();
        mesh::destroy_shared_object(p);
    });
}

TEST_CASE("mpi mesh: cores that are threads of one rank are refused MESH, with the way out", "[mpi]") {
    taco::run(tacomesh::mpi::config{.cores = 2 * taco::core_id(tacomesh::mpi::ranks())}, [] {
        CHECK_THROWS_WITH(mesh::make_shared_object<counter>(),
                          Catch::Contains("one core per rank") && Catch::Contains("mpirun -np"));
    });
}
