#pragma once
// An RDF term (IRI, literal with its datatype or language, blank node) and
// its canonical N-Triples key. The dictionary (dictionary.hpp) encodes
// terms by this key and the SPARQL parser produces constants in the same
// form, so a constant of a query finds its id by one hash lookup: no
// second normalisation path that could disagree with the loader's.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace rdf {

enum class term_kind : std::uint8_t { iri, literal, blank };

struct term {
    term_kind kind = term_kind::iri;
    std::string value;    ///< the IRI, the literal's lexical form (unescaped), or the blank node's label
    std::string datatype; ///< literals: datatype IRI, empty for plain (xsd:string) and language-tagged ones
    std::string lang;     ///< literals: language tag, empty if none
};

inline constexpr std::string_view xsd_string = "http://www.w3.org/2001/XMLSchema#string";
inline constexpr std::string_view rdf_lang_string = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString";
inline constexpr std::string_view rdf_type = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";

namespace detail {
/// Whether any of the eight bytes at p is one of `special` (bodies of IRIs
/// and literals are scanned a word at a time: loading escapes every term,
/// and a store's open reads every byte of its dictionary). May say yes for
/// a byte just past a match, never no for a match: a yes is looked at byte
/// by byte.
template <unsigned char... special>
bool word_may_hold(const char* p) noexcept {
    constexpr std::uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    auto zero_byte = [&](std::uint64_t v) { return (v - ones) & ~v & highs; };
    return ((zero_byte(w ^ (ones * special))) | ...) != 0;
}

/// The first byte of `s` that is not part of well-formed UTF-8 (an
/// overlong form, a surrogate, past U+10FFFF, a stray or missing
/// continuation byte), or npos. The loaders take only UTF-8, and a
/// store's open checks its keys with it.
inline std::size_t invalid_utf8_at(std::string_view s) noexcept {
    const auto* b = reinterpret_cast<const unsigned char*>(s.data());
    const std::size_t n = s.size();
    for (std::size_t i = 0; i < n;) {
        // Eight ASCII bytes at a time: keys are mostly ASCII, and a store's
        // open reads every byte of its dictionary.
        if (i + 8 <= n) {
            std::uint64_t w;
            std::memcpy(&w, b + i, 8);
            if ((w & 0x8080808080808080ull) == 0) {
                i += 8;
                continue;
            }
        }
        const unsigned c = b[i];
        if (c < 0x80) {
            ++i;
            continue;
        }
        std::size_t len = 0;
        unsigned lo = 0x80, hi = 0xbf; // the second byte's range
        if (c >= 0xc2 && c <= 0xdf) len = 2;
        else if (c >= 0xe0 && c <= 0xef) len = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
        else if (c >= 0xf0 && c <= 0xf4) len = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
        else return i;
        if (i + len > n || b[i + 1] < lo || b[i + 1] > hi) return i;
        for (std::size_t k = 2; k < len; ++k)
            if (b[i + k] < 0x80 || b[i + k] > 0xbf) return i;
        i += len;
    }
    return std::string_view::npos;
}

/// The first byte of s from `at` on that needs an escape in an IRI (iri)
/// or between a literal's quotes, or s.size().
inline std::size_t next_escape(std::string_view s, std::size_t at, bool iri) noexcept {
    const char quote = iri ? '>' : '"';
    for (;;) {
        if (iri)
            while (at + 8 <= s.size() && !word_may_hold<'>', '\\', '\n', '\r'>(s.data() + at)) at += 8;
        else
            while (at + 8 <= s.size() && !word_may_hold<'"', '\\', '\n', '\r'>(s.data() + at)) at += 8;
        for (const std::size_t stop = std::min(s.size(), at + 8); at < stop; ++at)
            if (const char c = s[at]; c == '\\' || c == '\n' || c == '\r' || c == quote) return at;
        if (at == s.size()) return at;
    }
}

/// Whether any byte of s needs an escape in an IRI or a literal's quotes.
inline bool needs_escape(std::string_view s, bool iri) noexcept { return next_escape(s, 0, iri) != s.size(); }

inline void append_escaped(std::string& out, std::string_view s, bool iri) {
    // Runs without an escape are appended whole: most terms are one run
    // (loading spends its time here otherwise; a literal-heavy file's
    // keys are most of its bytes).
    for (std::size_t from = 0;;) {
        const std::size_t at = next_escape(s, from, iri);
        out.append(s.data() + from, at - from);
        if (at == s.size()) return;
        switch (s[at]) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '>': out += "\\u003E"; break;
        }
        from = at + 1;
    }
}
inline char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; }
} // namespace detail

/// The canonical N-Triples form: <iri>, "lexical", "lexical"@lang (tag in
/// lower case: tags compare case-insensitively), "lexical"^^<datatype>
/// (xsd:string dropped: RDF 1.1 makes "x" and "x"^^xsd:string one term),
/// _:label. Printing a key gives valid N-Triples.
inline void append_key(std::string& out, term_kind kind, std::string_view value, std::string_view datatype = {},
                       std::string_view lang = {}) {
    switch (kind) {
    case term_kind::iri:
        out += '<';
        detail::append_escaped(out, value, true);
        out += '>';
        break;
    case term_kind::blank:
        out += "_:";
        out += value;
        break;
    case term_kind::literal:
        out += '"';
        detail::append_escaped(out, value, false);
        out += '"';
        if (!lang.empty()) {
            out += '@';
            for (const char c : lang) out += detail::ascii_lower(c);
        } else if (!datatype.empty() && datatype != xsd_string && datatype != rdf_lang_string) {
            out += "^^<";
            detail::append_escaped(out, datatype, true);
            out += '>';
        }
        break;
    }
}

inline std::string key(const term& t) {
    std::string out;
    append_key(out, t.kind, t.value, t.datatype, t.lang);
    return out;
}

} // namespace rdf

namespace rdf {

namespace detail {
/// A canonical key's parts as slices of the key itself, still in its escapes
/// (append_key's: \\ \" \n \r, and \u003E in IRIs): what an output format
/// needs without a copy. `escaped`: whether value or datatype holds a backslash.
struct key_parts {
    term_kind kind = term_kind::iri;
    std::string_view value, datatype, lang;
    bool escaped = false;
};

inline key_parts split_key(std::string_view k) noexcept {
    key_parts p;
    if (k.starts_with("_:")) {
        p.kind = term_kind::blank;
        p.value = k.substr(2);
        return p; // labels have no escapes
    }
    if (k.starts_with('<') && k.size() >= 2) {
        p.value = k.substr(1, k.size() - 2);
    } else if (k.starts_with('"')) {
        p.kind = term_kind::literal;
        std::size_t end = 1; // the closing quote: the first one not escaped
        while (end < k.size() && k[end] != '"') end += k[end] == '\\' ? 2 : 1;
        p.value = k.substr(1, std::min(end, k.size()) - 1);
        const std::string_view rest = end < k.size() ? k.substr(end + 1) : std::string_view();
        if (rest.starts_with('@')) p.lang = rest.substr(1);
        else if (rest.starts_with("^^<") && rest.size() >= 4) p.datatype = rest.substr(3, rest.size() - 4);
    } else {
        p.value = k;
        return p;
    }
    p.escaped = p.value.find('\\') != std::string_view::npos || p.datatype.find('\\') != std::string_view::npos;
    return p;
}

/// Append a key slice's text with append_key's escapes undone.
inline void append_unescaped(std::string& out, std::string_view s) {
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '\\' || i + 1 == s.size()) {
            out += s[i];
            continue;
        }
        const char c = s[++i];
        if (c == 'n') out += '\n';
        else if (c == 'r') out += '\r';
        else if (c == 'u' && s.substr(i + 1, 4) == "003E") {
            out += '>';
            i += 4;
        } else out += c;
    }
}
} // namespace detail

/// The term behind a canonical key (append_key's inverse), for output
/// formats that take the parts apart.
inline term parse_key(std::string_view k) {
    const detail::key_parts p = detail::split_key(k);
    term t;
    t.kind = p.kind;
    if (p.escaped || p.kind == term_kind::blank) {
        t.value.reserve(p.value.size());
        if (p.kind == term_kind::blank) t.value = p.value;
        else detail::append_unescaped(t.value, p.value);
        detail::append_unescaped(t.datatype, p.datatype);
    } else {
        t.value = p.value;
        t.datatype = p.datatype;
    }
    t.lang = p.lang;
    return t;
}

} // namespace rdf
