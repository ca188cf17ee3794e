// The RDF engine on the emulated SCC, its loads and stores priced
// (tacomesh::scc_counted): what the chip's caches make of the engine's
// writes. A program of its own, since the flags apply to every unit of a
// program.
#include <catch2/catch.hpp>

#include <cstddef>
#include <string>

#include <rdf/query_engine.hpp>
#include <taco/taco.hpp>
#include <tacomesh/scc/emulated/platform.hpp>

namespace scc = tacomesh::scc::emulated;

static_assert(scc::cost_model{}.price_memory, "this program is built with tacomesh::scc_counted: memory is priced");

namespace {
/// Core 0's DRAM writes and line reads while it writes `a`'s TSV text, on a
/// chip whose caches start empty (the text's buffer included).
scc::memory_counts writing(const rdf::query_answer& a, const rdf::store& s, std::size_t& bytes) {
    scc::memory_counts spent;
    taco::run(scc::config{.cores = 1}, [&] {
        std::string out;
        const scc::memory_counts before = scc::detail::this_core->memory_counts();
        rdf::write_tsv(a, s.view().dict, out);
        const scc::memory_counts& after = scc::detail::this_core->memory_counts();
        spent.dram_writes = after.dram_writes - before.dram_writes;
        spent.dram_reads = after.dram_reads - before.dram_reads;
        bytes = out.size();
    });
    return spent;
}
} // namespace

TEST_CASE("SCC priced: a TSV answer's text is read into the caches before it is written, not sent to memory store "
          "by store",
          "[rdf][scc][priced]") {
    // The SCC's caches do not allocate on a write miss: a buffer written
    // cold goes to memory a store at a time (results.hpp). 2,000 rows of
    // about 48 bytes, 96 KB: within the 256 KB L2 once read.
    std::string nt;
    for (int i = 0; i < 2000; ++i)
        nt += "<http://example.org/s" + std::to_string(i) + "> <http://example.org/p> \"a value of row " +
              std::to_string(i) + "\" .\n";
    rdf::store s;
    s.load_text(nt, "rows.nt");
    const rdf::query_answer a = rdf::run_query("SELECT ?s ?o WHERE { ?s <http://example.org/p> ?o }", s.view());
    std::size_t bytes = 0;
    const scc::memory_counts m = writing(a, s, bytes);
    INFO(bytes << " bytes of TSV: " << m.dram_writes << " DRAM writes, " << m.dram_reads << " line reads");
    REQUIRE(bytes > 90'000);
    // Read first: a line fill per 32 bytes of text and no word writes for
    // it (written cold: a write per tab and line end at least, 4,000).
    CHECK(m.dram_writes < 500);
}

