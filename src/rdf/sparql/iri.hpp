#pragma once
// IRI references against BASE: RFC 3986's merge rules without removing dot
// segments (the simplification rdf/sparql_parser.hpp's comment describes).
#include <string>
#include <string_view>

namespace rdf::detail {

/// "scheme:" at the start: an absolute IRI, which resolves to itself.
bool has_iri_scheme(std::string_view iri);

/// `ref` resolved against `base`; with an empty base, `ref` as written.
std::string resolve_iri(std::string_view base, std::string_view ref);

} // namespace rdf::detail
