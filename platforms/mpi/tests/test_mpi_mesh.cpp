// What MESH across ranks adds to the MESH suites it runs with
// (tacomesh_tests_mpi_mesh): the ranks really hold views of their own with
// the canonical copy at rank 0, the control block's tables survive ranks
// that load the program at different addresses, shared words are atomic
// across ranks, and what cannot work across ranks is refused with a
// message. Run by mpirun, one core per rank (platforms/mpi/tests/CMakeLists.txt).
#include <catch2/catch.hpp>

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

TEST_CASE("mpi mesh: a shared word is atomic across ranks (atomics on a host's shared window, or MPI_Fetch_and_op)",
          "[mpi]") {
    constexpr taco::core_id cores = 4;
    constexpr std::uint32_t each = 500;
    const auto how = GENERATE(tacomesh::mpi::on_host::shared_memory, tacomesh::mpi::on_host::mpi);
    std::uint64_t sum = 0;
    tacomesh::mpi::run_report report;
    taco::run(tacomesh::mpi::config{.cores = cores, .on_host = how, .report = &report}, [&] {
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
    // Loads and stores where all ranks share a host and may use it; MPI RMA otherwise.
    CHECK(report.mesh_direct ==
          (how == tacomesh::mpi::on_host::shared_memory && tacomesh::mpi::ranks_on_this_host() == tacomesh::mpi::ranks()));
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
