#include "iri.hpp"

#include <uriparser/Uri.h>

#include <cstddef>
#include <string>

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

namespace {

// uriparser reads RFC 3986 URIs, whose characters are a subset of an IRI's
// (non-ASCII, and '%' not followed by two hex digits, are not in it). Every
// byte outside RFC 3986's unreserved and reserved sets, and every '%', is
// percent-encoded before parsing, and every "%XX" decoded after: as the
// input had no '%' left, each one in the output is one of ours, so the
// round trip gives back exactly the bytes written. Resolution never
// creates, splits or decodes an escape, and the encoded bytes are never
// '.' or '/', so remove_dot_segments sees the same segments as on the IRI.
bool is_uri_char(unsigned char c) {
    return is_ascii_alpha(c) || is_ascii_digit(c) || std::string_view("-._~:/?#[]@!$&'()*+,;=").find(char(c)) != std::string_view::npos;
}

std::string encode(std::string_view iri) {
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(iri.size());
    for (const char ch : iri) {
        const auto c = static_cast<unsigned char>(ch);
        if (c != 0 && is_uri_char(c)) {
            out += ch;
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1; // encode() writes upper case only
}

std::optional<std::string> decode(std::string_view uri) {
    std::string out;
    out.reserve(uri.size());
    for (std::size_t i = 0; i < uri.size(); ++i) {
        if (uri[i] != '%') {
            out += uri[i];
            continue;
        }
        const int hi = i + 2 < uri.size() ? hex_value(uri[i + 1]) : -1, lo = hi < 0 ? -1 : hex_value(uri[i + 2]);
        if (lo < 0) return std::nullopt; // not one of encode()'s: uriparser changed an escape
        out += char(hi * 16 + lo);
        i += 2;
    }
    return out;
}

/// A parsed URI, freed on scope exit. `text` must outlive it: uriparser's
/// parts point into the text.
struct parsed_uri {
    UriUriA uri{};
    bool ok = false;
    explicit parsed_uri(const std::string& text) {
        const char* error_at = nullptr;
        ok = uriParseSingleUriExA(&uri, text.data(), text.data() + text.size(), &error_at) == URI_SUCCESS;
    }
    parsed_uri() = default;
    parsed_uri(const parsed_uri&) = delete;
    parsed_uri& operator=(const parsed_uri&) = delete;
    // uriparser frees what it allocated itself when it fails.
    ~parsed_uri() {
        if (ok) uriFreeUriMembersA(&uri);
    }
};

} // namespace

std::optional<std::string> resolve_iri(std::string_view base, std::string_view ref) {
    const std::string base_text = encode(base), ref_text = encode(ref);
    const parsed_uri b(base_text), r(ref_text);
    if (!b.ok || !r.ok || b.uri.scheme.first == nullptr) return std::nullopt;
    parsed_uri resolved;
    // Strict (URI_RESOLVE_STRICTLY): RFC 3986 5.2.2 as written, "http:g" absolute.
    resolved.ok = uriAddBaseUriExA(&resolved.uri, &r.uri, &b.uri, URI_RESOLVE_STRICTLY) == URI_SUCCESS;
    if (!resolved.ok) return std::nullopt;
    int chars = 0;
    if (uriToStringCharsRequiredA(&resolved.uri, &chars) != URI_SUCCESS) return std::nullopt;
    std::string out(std::size_t(chars) + 1, '\0');
    if (uriToStringA(out.data(), &resolved.uri, chars + 1, nullptr) != URI_SUCCESS) return std::nullopt;
    out.resize(std::size_t(chars));
    return decode(out);
}

} // namespace rdf::detail
