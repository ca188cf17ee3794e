// libFuzzer target: the store file reader (store_file.hpp) on arbitrary
// bytes. A file is either refused with a load_error, or opens into a store
// on which lookups and queries answer: a lookup that never stops (libFuzzer's
// -timeout), a crash, a memory or UB error, or an answer with an id the
// dictionary lacks is a finding. A store that opens passed every check a
// store made by the loader passes, so this is also the reader's checks
// against the readers they protect.
#include <cstdint>
#include <string>
#include <string_view>

#include <rdf/query_engine.hpp>
#include <rdf/results.hpp>
#include <rdf/store_file.hpp>

namespace {

void answer(const std::string& text, const rdf::store_view& v) {
    try {
        const rdf::query_answer a = rdf::run_query(text, v);
        if (a.rows.cells.size() != a.rows.rows() * a.rows.width()) __builtin_trap();
        for (const rdf::term_id id : a.rows.cells)
            if (id != rdf::no_term && id >= v.dict.size()) __builtin_trap();
        std::string out;
        rdf::append_tsv(out, a.rows, a.names, v.dict);
        rdf::append_json(out, a.rows, a.names, v.dict);
    } catch (const rdf::query_error&) { // a key that SPARQL cannot write as a constant
    }
    catch (const rdf::result_too_large&) { // a store whose triples multiply past the budget
    }
}

// The lookups and queries a store must answer without looping or reading
// out of bounds.
void exercise(const rdf::store_view& v, bool keys_found) {
    if (keys_found)
        for (rdf::term_id t = 0; t < v.dict.size(); ++t)
            if (v.dict.find(v.dict.key(t)) != t) __builtin_trap();
    // Keys no store made from N-Triples holds: the probe must stop at an empty slot.
    for (const std::string_view missing : {"", "<>", "<http://e/missing>", "\"\"", "_:missing"}) {
        const rdf::term_id id = v.dict.find(missing);
        if (id != rdf::no_term && (id >= v.dict.size() || v.dict.key(id) != missing)) __builtin_trap();
    }
    answer("SELECT * WHERE { ?s ?p ?o } LIMIT 64", v);
    answer("SELECT ?x WHERE { ?x <http://e/missing> ?y . ?y ?p ?x }", v);
    answer("SELECT DISTINCT ?s ?o WHERE { ?s ?p ?o . ?o ?p ?z . ?z ?q ?s }", v);
    // The first triple's terms as constants, so that the lookups hit.
    if (v.triple_count() != 0) {
        const rdf::permutation_view& spo = v[rdf::order::spo];
        rdf::term_id subject = 0;
        while (spo.of(subject).empty()) ++subject;
        const std::string s_key(v.dict.key(subject)), p_key(v.dict.key(spo.second[0])), o_key(v.dict.key(spo.third[0]));
        answer("SELECT * WHERE { " + s_key + " ?p ?o . ?o ?q ?r }", v);
        answer("SELECT * WHERE { ?s " + p_key + " ?o . ?s ?q " + o_key + " }", v);
        answer("SELECT * WHERE { " + s_key + " " + p_key + " " + o_key + " }", v);
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    // What a mapped store's open lets through (its checksums skipped: a
    // fuzzer cannot forge them, and the readers behind them are the point)
    // must be as safe to read as what open_store lets through: the orders
    // are not compared with each other there, nor every key's slot.
    try {
        const rdf::detail::aligned_bytes copy(bytes);
        const rdf::detail::store_arrays a = rdf::detail::locate_arrays(copy.bytes(), "fuzz");
        rdf::detail::check_arrays(a, "fuzz", rdf::detail::store_check::bounds, false);
        exercise(a.view(), false);
    } catch (const rdf::load_error&) {
    }
    rdf::store s;
    try {
        s = rdf::read_store(bytes, "fuzz");
    } catch (const rdf::load_error&) {
        return 0;
    }
    exercise(s.view(), true);
    return 0;
}
