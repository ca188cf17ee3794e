#include "iri.hpp"

#include "utf8.hpp"

namespace rdf::detail {

bool has_iri_scheme(std::string_view iri) {
    if (iri.empty() || !is_ascii_alpha(static_cast<unsigned char>(iri[0]))) return false;
    for (std::size_t i = 1; i < iri.size(); ++i) {
        const char c = iri[i];
        if (c == ':') return true;
        if (!(is_ascii_alpha(static_cast<unsigned char>(c)) || is_ascii_digit(static_cast<unsigned char>(c)) ||
              c == '+' || c == '-' || c == '.'))
            return false;
    }
    return false;
}

// RFC 3986 section 5.2.2 without remove_dot_segments (see rdf/sparql_parser.hpp).
std::string resolve_iri(std::string_view base, std::string_view ref) {
    if (base.empty() || has_iri_scheme(ref)) return std::string(ref);
    const std::size_t colon = has_iri_scheme(base) ? base.find(':') : std::string_view::npos;
    const std::size_t scheme_end = colon == std::string_view::npos ? 0 : colon + 1;
    std::size_t authority_end = scheme_end;
    if (base.substr(scheme_end, 2) == "//") {
        authority_end = base.find_first_of("/?#", scheme_end + 2);
        if (authority_end == std::string_view::npos) authority_end = base.size();
    }
    std::size_t path_end = base.find_first_of("?#", authority_end);
    if (path_end == std::string_view::npos) path_end = base.size();
    std::size_t query_end = base.find('#', authority_end);
    if (query_end == std::string_view::npos) query_end = base.size();

    std::string out;
    if (ref.substr(0, 2) == "//") {
        out = base.substr(0, scheme_end);
    } else if (!ref.empty() && ref[0] == '/') {
        out = base.substr(0, authority_end);
    } else if (!ref.empty() && ref[0] == '?') {
        out = base.substr(0, path_end);
    } else if (ref.empty() || ref[0] == '#') {
        out = base.substr(0, query_end);
    } else {
        const std::string_view path = base.substr(authority_end, path_end - authority_end);
        const std::size_t slash = path.rfind('/');
        if (slash != std::string_view::npos) {
            out = base.substr(0, authority_end + slash + 1);
        } else {
            out = base.substr(0, authority_end);
            if (authority_end > scheme_end) out += '/'; // RFC 3986 5.2.3: an authority with an empty path
        }
    }
    out += ref;
    return out;
}

} // namespace rdf::detail
