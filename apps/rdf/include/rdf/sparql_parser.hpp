#pragma once
// The SPARQL front end: a hand-written recursive-descent parser for the
// subset of SPARQL 1.1 the engine can answer, producing rdf::query. Anything
// outside the subset is rejected with an rdf::query_error that names the
// construct, rather than being half-understood: a query that silently drops
// an OPTIONAL or a FILTER would print wrong answers with no hint why.
//
//   rdf::query q = rdf::parse_query("SELECT ?x WHERE { ?x a <http://e/C> }");
//
// The accepted language (keywords case-insensitive, except 'a'):
//
//   query    := prologue SELECT (DISTINCT|REDUCED)? (var+ | '*') WHERE? group (LIMIT integer)?
//   prologue := (BASE iri | PREFIX pname_ns iri)*
//   group    := '{' (triples ('.' triples?)*)? '}'
//   triples  := subject props | '[' props ']' props?
//   props    := verb object (',' object)* (';' (verb object (',' object)*)?)*
//   verb     := var | iri | pname | 'a'
//   subject  := var | iri | pname | blank
//   object   := subject | literal
//   blank    := _:label | '[' ']' | '[' props ']'
//   literal  := string ('@' lang | '^^' (iri | pname))? | number | true | false
//
// Blank nodes of the query are variables named "_:label" (see query.hpp);
// '[]' and '[ props ]' get fresh names "_:anonN" that no label of the query
// uses. Comments run from '#' to the end of the line.
//
// Simplifications, on purpose:
// - IRIs are resolved against BASE by RFC 3986 section 5.2 (uriparser),
//   dot segments removed ("a/../b" is "b"), nothing else normalised (case,
//   percent escapes and non-ASCII characters stay as written). The first
//   BASE must be absolute; a later one resolves against it. With no BASE,
//   IRIs stay as written, relative ones too. A prefixed name is its
//   namespace (resolved when declared) and local part put together.
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

/// Parses one SELECT query of the subset described at the top of this
/// file. Throws query_error (what() starts with "line L, column C: ").
query parse_query(std::string_view text);

} // namespace rdf
