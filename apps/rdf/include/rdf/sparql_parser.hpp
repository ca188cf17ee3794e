#pragma once
// The SPARQL front end: a hand-written recursive-descent parser for SPARQL
// 1.1 queries (SELECT, CONSTRUCT, ASK, DESCRIBE, with every graph pattern,
// expression, property path, aggregate and solution modifier of the
// grammar), producing the algebra (sparql_algebra.hpp: parse_sparql), which
// sparql_engine.hpp answers. parse_query gives the form the BGP engine and
// the parallel models take, for a query that is one basic graph pattern
// under SELECT:
//
//   rdf::query q = rdf::parse_query("SELECT ?x WHERE { ?x a <http://e/C> }");
//
// What is refused, with its position: SPARQL Update, dataset clauses (FROM,
// FROM NAMED: queries run over the loaded data, the default graph), SERVICE.
// GRAPH is parsed and matches nothing: the store has no named graphs.
//
// Blank nodes of the query are variables named "_:label" (see query.hpp);
// '[]' and '[ props ]' get fresh names "_:anonN" that no label of the query
// uses. Comments run from '#' to the end of the line.
//
// Simplifications, on purpose:
// - IRIs are resolved against BASE by RFC 3986 section 5.2 (uriparser),
//   dot segments removed ("a/../b" is "b"), nothing else normalised (case,
//   percent escapes and non-ASCII characters stay as written). The first
//   BASE must be absolute; a later one resolves against it. With no BASE
//   (and no base given to parse_sparql) a relative IRI is an error: the
//   data's IRIs are absolute, so it would match nothing. A prefixed name is
//   its namespace (resolved when declared) and local part put together.
// - \u and \U escapes are decoded inside IRIs and strings only, not in the
//   whole query text as SPARQL 1.1 (19.2) allows; nobody writes keywords that
//   way, and decoding first would make error columns point at the wrong bytes.
// - Names (variables, prefixed names, labels) are checked against the
//   SPARQL character classes after UTF-8 decoding; invalid UTF-8 there is an
//   error, inside strings and IRIs it is passed through unchanged.
// - Error columns count bytes, not characters, from 1; lines count '\n'.
//
// The parser is compiled code (src/rdf/sparql/: UTF-8, IRI resolution, the
// lexer and the grammar); this header is its interface.
#include <cstddef>
#include <string_view>

#include <rdf/query.hpp>

namespace rdf {

namespace detail {

// Generated queries of a few megabytes are plausible; anything much larger
// is a mistake, and capping it keeps error reporting (which rescans the
// text for the line number) and memory bounded.
inline constexpr std::size_t sparql_max_query_bytes = std::size_t(16) << 20;

} // namespace detail

/// Parses a SELECT query over one basic graph pattern (DISTINCT, REDUCED,
/// LIMIT allowed). Throws query_error (what() starts with "line L, column
/// C: ") for a syntax error, and for any other query: parse_sparql
/// (sparql_algebra.hpp) takes those.
query parse_query(std::string_view text);

} // namespace rdf
