#pragma once
// One query, start to end, on one core: parse, encode, plan, execute,
// project. The parallel models (parallel.hpp) run the same steps; this is
// the single-core answer they must reproduce.
#include <chrono>
#include <string>
#include <string_view>

#include <rdf/execute.hpp>
#include <rdf/plan.hpp>
#include <rdf/results.hpp>
#include <rdf/sparql_parser.hpp>
#include <rdf/store.hpp>

namespace rdf {

struct query_answer {
    std::vector<std::string> names; ///< projected variables
    table rows;                     ///< one column per name; no_term where unbound
    plan used;
};

/// Parse and prepare: the query encoded against the store's dictionary, and its plan.
struct prepared_query {
    encoded_query encoded;
    plan chosen;
};

/// `ways`: planned to run split over that many cores (make_plan).
/// `limits`: the budget for the tables its joins build (execute.hpp).
inline prepared_query prepare(const query& q, const store_view& v, unsigned ways = 1, const query_limits& limits = {}) {
    prepared_query p;
    p.encoded = encode(q, v.dict, limits);
    p.chosen = make_plan(p.encoded, v, std::nullopt, ways);
    return p;
}

inline prepared_query prepare(std::string_view text, const store_view& v, unsigned ways = 1, const query_limits& limits = {}) {
    return prepare(parse_query(text), v, ways, limits);
}

/// Run a prepared query.
inline query_answer answer(const prepared_query& p, const store_view& v) {
    query_answer a;
    a.names = p.encoded.projection_names;
    a.rows = project(execute(v, p.encoded, p.chosen), p.encoded);
    a.used = p.chosen;
    return a;
}

inline query_answer run_query(std::string_view text, const store_view& v, const query_limits& limits = {}) {
    return answer(prepare(text, v, 1, limits), v);
}

/// An answer's TSV text, header and rows, into `out` (cleared first, its
/// capacity kept: a worker's or a benchmark's buffer).
inline void write_tsv(const query_answer& a, const dictionary_view& dict, std::string& out) {
    out.clear();
    // Room for the whole answer, its lines read before they are written
    // (results.hpp says why).
    std::size_t bytes = tsv_rows_bytes(a.rows, dict) + 1;
    for (const std::string& name : a.names) bytes += name.size() + 2;
    out.reserve(bytes);
    detail::read_lines_before_writing(out.data(), bytes);
    append_tsv(out, a.rows, a.names, dict);
}

/// Answer `text` with every term materialised as TSV into `out` (write_tsv),
/// as a user would have it; returns the rows. What the bench and the task
/// pool time.
inline std::size_t answer_as_tsv(std::string_view text, const store_view& v, std::string& out, const query_limits& limits = {}) {
    const query_answer a = run_query(text, v, limits);
    write_tsv(a, v.dict, out);
    return a.rows.rows();
}

} // namespace rdf
