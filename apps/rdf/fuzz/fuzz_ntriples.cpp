// libFuzzer target: the loader's front end (chunking at line ends, serd in
// strict mode, dictionary encoding, index building) on arbitrary bytes. A
// load either throws load_error and leaves the store as it was, or adds
// triples whose every key the dictionary finds again.
#include <cstdint>
#include <string>

#include <rdf/store.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
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
