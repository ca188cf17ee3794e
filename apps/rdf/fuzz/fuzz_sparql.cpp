// libFuzzer target: the SPARQL parser, and behind it encoding, planning and
// execution over a small store, on arbitrary text: the BGP engine for basic
// graph patterns, the algebra (sparql_engine.hpp) for the rest. Anything
// but a query_error (or an answer) is a finding; under ASan/UBSan so is any
// memory or UB error on the way.
#include <cstdint>
#include <string>
#include <string_view>

#include <rdf/query_engine.hpp>
#include <rdf/sparql_algebra.hpp>
#include <rdf/sparql_engine.hpp>
#include <rdf/store.hpp>

namespace {
const rdf::store& sample() {
    static const rdf::store s = [] {
        rdf::store st;
        std::string text =
            "<http://e/a> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://e/C> .\n"
            "<http://e/b> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://e/C> .\n"
            "<http://e/a> <http://e/p> <http://e/b> .\n"
            "<http://e/b> <http://e/p> <http://e/a> .\n"
            "<http://e/b> <http://e/p> <http://e/b> .\n"
            "<http://e/a> <http://e/q> \"x\" .\n"
            "<http://e/a> <http://e/q> \"x\"@en .\n"
            "<http://e/b> <http://e/q> \"42\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n"
            "_:n <http://e/p> <http://e/a> .\n";
        st.load_text(text, "sample");
        return st;
    }();
    return s;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        const rdf::store_view v = sample().view();
        // A budget of a million rows: patterns that share no variable
        // multiply out, and a query past it is refused, not a finding.
        const rdf::sparql::query_tree q = rdf::sparql::parse_sparql(text);
        if (rdf::sparql::as_bgp_query(q)) {
            const rdf::query_answer a = rdf::run_query(text, v, {.max_rows = 1 << 20});
            if (a.rows.cells.size() != a.rows.rows() * a.rows.width()) __builtin_trap();
            for (rdf::term_id id : a.rows.cells)
                if (id != rdf::no_term && id >= v.dict.size()) __builtin_trap();
        } else {
            rdf::sparql::evaluate_options o;
            o.limits.max_rows = 1 << 20;
            o.seed = 1;
            const rdf::sparql::result r = rdf::sparql::evaluate(q, v, o);
            if (r.rows.cells.size() != r.rows.rows() * r.rows.width()) __builtin_trap();
            for (rdf::term_id id : r.rows.cells)
                if (id != rdf::no_term && id >= v.dict.size() + r.pool.size()) __builtin_trap();
        }
    } catch (const rdf::query_error&) {
    } catch (const rdf::result_too_large&) {
    }
    return 0;
}
