// libFuzzer target: the loader's front end (chunking at line ends, the
// line scanner and serd in strict mode, dictionary encoding, index
// building) on arbitrary bytes. A load either throws load_error and leaves
// the store as it was, or adds triples whose every key the dictionary finds
// again; and the scanner with serd for the rest reads the bytes as serd
// alone does: the same error, or the same keys and triples.
#include <cstdint>
#include <string>
#include <vector>

#include <rdf/store.hpp>

namespace {
struct parsed {
    std::string error;
    std::vector<std::string> keys;
    std::vector<rdf::term_id> ids;
};
parsed parse_by(std::string text, bool serd_only) {
    rdf::ntriples_parser p("fuzz", "f");
    parsed out;
    try {
        const rdf::text_chunk whole{0, text.size(), 1};
        serd_only ? p.parse_with_serd(text, whole) : p.parse(text, whole);
    } catch (const rdf::load_error& e) {
        out.error = e.what();
        return out;
    }
    for (rdf::term_id i = 0; i < p.dictionary().size(); ++i) out.keys.emplace_back(p.dictionary().key(i));
    for (const rdf::triple& t : p.triples()) out.ids.insert(out.ids.end(), {t.s, t.p, t.o});
    return out;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    {
        const std::string text(reinterpret_cast<const char*>(data), size);
        const parsed a = parse_by(text, false), b = parse_by(text, true);
        if (a.error != b.error || a.keys != b.keys || a.ids != b.ids) __builtin_trap();
    }
    rdf::store s;
    std::string first = "<http://e/a> <http://e/p> <http://e/b> .\n";
    s.load_text(first, "first");
    const std::uint64_t before = s.triple_count();
    std::string text(reinterpret_cast<const char*>(data), size);
    try {
        // Small chunks, so that inputs cross chunk boundaries.
        s.load_text(text, "fuzz", rdf::load_options::chunked(64));
    } catch (const rdf::load_error&) {
        if (s.triple_count() != before) __builtin_trap(); // a failed load adds nothing
        return 0;
    }
    const rdf::store_view v = s.view();
    for (rdf::term_id t = 0; t < v.dict.size(); ++t)
        if (v.dict.find(v.dict.key(t)) != t) __builtin_trap();
    if (v.triple_count() < before) __builtin_trap();
    return 0;
}
