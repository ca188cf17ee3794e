// The memory model prices loads and stores as the SCC's caches and memory
// controllers would (emulated/memory_model.hpp): each test takes one rule
// (L1 and L2 capacity, no allocation on a store miss, the write-combine
// buffer, write gaps, the controllers' queues of the MESH paper's
// Figure 4) and checks the cycles it implies.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include <tacomesh/scc/emulated/chip.hpp>
#include <tacomesh/scc/emulated/memory_model.hpp>
#include <tacomesh/scc/emulated/priced_memory.hpp>

namespace emu = tacomesh::scc::emulated;
using emu::memory_kind;
using tacomesh::scc::line_bytes;

namespace {

const emu::memory_prices prices{};

/// Cycles of one load per line over [base, base + bytes).
std::uint64_t sweep(emu::core_memory& m, std::uintptr_t base, std::size_t bytes, memory_kind k, std::uint64_t& now) {
    std::uint64_t total = 0;
    for (std::uintptr_t a = base; a < base + bytes; a += line_bytes) {
        const std::uint64_t c = m.load(a, 4, k, now);
        now += c;
        total += c;
    }
    return total;
}

} // namespace

TEST_CASE("SCC memory model: L1 holds 16 KB, L2 256 KB, and beyond that every line comes from DRAM",
          "[scc][memory-model]") {
    emu::memory_controllers mcs(prices);
    emu::core_memory m(prices, mcs, 0);
    std::uint64_t now = 0;
    const std::uintptr_t base = 1 << 20;
    for (const std::size_t bytes : {std::size_t(8) << 10, std::size_t(128) << 10, std::size_t(1) << 20}) {
        INFO(bytes << " bytes");
        const std::uint64_t lines = bytes / line_bytes;
        const std::uint64_t first = sweep(m, base + (bytes << 4), bytes, memory_kind::private_memory, now);
        CHECK(first >= lines * prices.dcm_line_read); // every line read once from DRAM
        const std::uint64_t again = sweep(m, base + (bytes << 4), bytes, memory_kind::private_memory, now);
        if (bytes <= (16 << 10)) CHECK(again == lines * prices.l1_hit);
        else if (bytes <= (256 << 10)) CHECK(again == lines * prices.l2_hit);
        else CHECK(again >= lines * prices.dcm_line_read); // a 4-way pseudo-LRU streams past itself
    }
}

TEST_CASE("SCC memory model: a store that misses allocates no line, and a load after it reads DRAM",
          "[scc][memory-model]") {
    emu::memory_controllers mcs(prices);
    emu::core_memory m(prices, mcs, 0);
    CHECK(m.store(4096, 4, memory_kind::dcm, 0) == prices.ncm_write); // one word out to memory
    CHECK(m.load(4096, 4, memory_kind::dcm, 1000) == prices.dcm_line_read);
    CHECK(m.store(4096, 4, memory_kind::dcm, 2000) == prices.l1_hit); // now a hit, and modified
    CHECK(m.clean(4096, 4, 3000) == prices.dirty_write_back);
    CHECK(m.clean(4096, 4, 4000) == 0);                               // clean now
    CHECK(m.load(4096, 4, memory_kind::dcm, 5000) == prices.l1_hit); // and still cached
    (void)m.drop(4096, 4, 6000);
    CHECK(m.load(4096, 4, memory_kind::dcm, 7000) == prices.dcm_line_read); // the invalidate cost a DRAM read
}

TEST_CASE("SCC memory model: back-to-back stores wait for the write gap", "[scc][memory-model]") {
    emu::memory_controllers mcs(prices);
    emu::core_memory m(prices, mcs, 0);
    std::uint64_t now = 0;
    for (int i = 0; i < 10; ++i) now += m.store(std::uintptr_t(1) << 24 | std::uintptr_t(i) * 8, 4, memory_kind::ncm, now);
    // The first issues at once; each later one a write gap after the one before.
    CHECK(now == 9 * prices.ncm_write_gap + prices.ncm_write);
    // Spread out, each costs only its issue.
    CHECK(m.store(std::uintptr_t(1) << 24, 4, memory_kind::ncm, now + 1000) == prices.ncm_write);
}

TEST_CASE("SCC memory model: write-through stores combine a line in the WCB, and CL1INVMB drops the L1 copies",
          "[scc][memory-model]") {
    emu::memory_controllers mcs(prices);
    emu::core_memory m(prices, mcs, 0);
    std::uint64_t now = 0;
    for (std::size_t i = 0; i < line_bytes / 4; ++i) now += m.store(8192 + i * 4, 4, memory_kind::write_through, now);
    CHECK(now == line_bytes / 4 * prices.l1_hit); // all in the write-combine buffer
    const std::uint64_t out = m.store(8192 + line_bytes, 4, memory_kind::write_through, now); // another line
    CHECK(out == prices.wt_write + prices.l1_hit);                                          // pushes the first out
    CHECK(m.flush_wcb(now + 1000) == prices.wt_write);
    CHECK(m.flush_wcb(now + 2000) == 0);

    CHECK(m.load(8192, 4, memory_kind::write_through, 10000) == prices.wt_line_read);
    CHECK(m.load(8192, 4, memory_kind::write_through, 11000) == prices.l1_hit);
    m.drop_write_through();
    CHECK(m.load(8192, 4, memory_kind::write_through, 12000) == prices.wt_line_read);
}

TEST_CASE("SCC memory model: NCM reads each go to DRAM, the on-chip SRAM answers faster", "[scc][memory-model]") {
    emu::memory_controllers mcs(prices);
    emu::core_memory m(prices, mcs, 0);
    CHECK(m.load(1 << 20, 4, memory_kind::ncm, 0) == prices.ncm_read);
    CHECK(m.load(1 << 20, 4, memory_kind::ncm, 1000) == prices.ncm_read); // not cached
    CHECK(m.load(1 << 20, 16, memory_kind::ncm, 2000) == 2 * prices.ncm_read);
    CHECK(m.load(1 << 20, 4, memory_kind::on_chip, 3000) == prices.sram_read);
    CHECK(prices.sram_read < prices.ncm_read);
}

namespace {

/// The MESH paper's Figure 4 experiment in modelled time: `readers` cores
/// read uncached words of one controller back to back (`spread`: or of
/// every controller, the words interleaved over them); the mean cycles a
/// read takes. The core with the smallest clock goes next, as on the chip.
double read_latency(unsigned readers, bool spread) {
    emu::memory_prices p = prices;
    if (!spread) p.interleave_bytes = std::size_t(1) << 40; // all on controller 0
    emu::memory_controllers mcs(p);
    std::vector<emu::core_memory> cores;
    for (unsigned c = 0; c < readers; ++c) cores.emplace_back(p, mcs, c);
    std::vector<std::uint64_t> clock(readers, 0);
    std::uint64_t total = 0, reads = 0;
    for (int step = 0; step < 2000 * int(readers); ++step) {
        unsigned c = 0;
        for (unsigned i = 1; i < readers; ++i)
            if (clock[i] < clock[c]) c = i;
        const std::uintptr_t addr = std::uintptr_t(step) * 4096 + c * 8; // a page per read: every controller in turn
        const std::uint64_t cost = cores[c].load(addr, 4, memory_kind::ncm, clock[c]);
        clock[c] += cost;
        total += cost;
        ++reads;
    }
    return double(total) / double(reads);
}

} // namespace

TEST_CASE("SCC memory model: a controller takes three readers, and past three each read takes linearly longer "
          "(MESH paper, Figure 4)",
          "[scc][memory-model]") {
    const double one = read_latency(1, false);
    CHECK(one == Approx(double(prices.ncm_read)).epsilon(0.01));
    CHECK(read_latency(2, false) == Approx(one).epsilon(0.05));
    CHECK(read_latency(3, false) == Approx(one).epsilon(0.05));
    const double six = read_latency(6, false), twelve = read_latency(12, false);
    CHECK(six == Approx(6.0 / 3 * one).epsilon(0.1));
    CHECK(twelve == Approx(12.0 / 3 * one).epsilon(0.1));
    // Spread over the four controllers, twelve readers still do not wait
    // (the paper: "at least 12 cores are necessary to utilize the memory
    // bandwidth"); sixteen do.
    CHECK(read_latency(12, true) == Approx(one).epsilon(0.05));
    CHECK(read_latency(16, true) > 1.15 * one);
}

TEST_CASE("SCC memory model: a request late in host order still finds the slot its modelled cycle had",
          "[scc][memory-model]") {
    emu::memory_controllers mcs(1, 50);
    CHECK(mcs.serve(0, 100000) == 0); // a core far ahead in modelled time books first
    CHECK(mcs.serve(0, 100) == 0);    // one far behind is not queued behind it
    CHECK(mcs.serve(0, 100) == 50);   // but two at once are
    CHECK(mcs.serve(0, 100) == 100);
}

TEST_CASE("SCC memory model: each quadrant's cores keep private memory at their own controller", "[scc][memory-model]") {
    const tacomesh::scc::chip_shape scc{};
    CHECK(scc.controller_of(0) == 0);  // tile (0, 0)
    CHECK(scc.controller_of(11) == 1); // tile 5: (5, 0)
    CHECK(scc.controller_of(24) == 2); // tile 12: (0, 2)
    CHECK(scc.controller_of(47) == 3); // tile 23: (5, 3)
    // A bigger mesh splits each half into as many runs of tiles as its edge
    // has controllers, each run the same size: 16 x 8 tiles, 16 controllers.
    const tacomesh::scc::chip_shape big = emu::grid(16, 8);
    REQUIRE(big.controllers == 16);
    std::vector<int> per_controller(big.controllers);
    for (tacomesh::scc::core_index c = 0; c < big.cores(); ++c) ++per_controller.at(big.controller_of(c));
    for (int n : per_controller) CHECK(n == 16);
    CHECK(big.controller_of(0) == 0);
    CHECK(big.controller_of(big.cores() - 1) == big.controllers - 1);
}

TEST_CASE("SCC memory model: a shared region is priced at its chip address, wherever the host mapped it",
          "[scc][memory-model]") {
    // Four private lines fill one set of L1 and of L2; a DCM line that maps
    // to the same set evicts one of them. Priced at host addresses, that
    // would depend on where the host put the region (here: a page, or a
    // page and a line, into the address space), and with it every figure.
    auto cycles_with_region_at = [](std::uintptr_t host_base) {
        emu::memory_controllers mcs(prices);
        emu::detail::memory_pricing pricing{emu::core_memory(prices, mcs, 0), {}, {}, {}, {}, {}};
        pricing.dcm = {host_base, host_base + (std::uintptr_t(1) << 20)};
        const auto at = [](std::uintptr_t a) { return reinterpret_cast<const void*>(a); };
        constexpr std::uintptr_t private_lines = std::uintptr_t(1) << 32, same_set = std::uintptr_t(1) << 16;
        for (int round = 0; round < 2; ++round) {
            for (std::uintptr_t k = 0; k < 4; ++k) pricing.price(at(private_lines + k * same_set), 4, false);
            pricing.price(at(host_base), 4, false);
        }
        REQUIRE(pricing.chip_address(at(host_base)) == emu::detail::memory_pricing::chip_region(0));
        return pricing.pending;
    };
    const std::uint64_t page = cycles_with_region_at(std::uintptr_t(1) << 33);
    CHECK(page == cycles_with_region_at((std::uintptr_t(1) << 33) + line_bytes));
    CHECK(page == cycles_with_region_at((std::uintptr_t(1) << 33) + 5 * 4096 + 3 * line_bytes));
}
