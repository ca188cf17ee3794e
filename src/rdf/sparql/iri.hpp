#pragma once
// IRI references against BASE: RFC 3986 section 5.2 (merge and
// remove_dot_segments) by liburiparser, compiled in iri.cpp alone.
#include <optional>
#include <string>
#include <string_view>

namespace rdf::detail {

/// "scheme:" at the start: an absolute IRI.
bool has_iri_scheme(std::string_view iri);

/// `ref` resolved against the absolute IRI `base` (RFC 3986 5.2.2, strict:
/// "http:g" stays as written), with nothing else normalised: no case
/// folding, no percent-decoding. Non-ASCII characters (IRIs, RFC 3987) and
/// percent signs are carried through unchanged. nullopt when `ref` or
/// `base` is not an IRI reference by RFC 3986's grammar.
std::optional<std::string> resolve_iri(std::string_view base, std::string_view ref);

} // namespace rdf::detail
