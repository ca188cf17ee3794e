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
// - Relative IRIs are resolved against BASE by RFC 3986's merge rules
//   ("//auth", "/path", "?query", "#frag", "name"), without removing dot
//   segments ("a/../b" stays as written). With no BASE they stay relative.
// - \u and \U escapes are decoded inside IRIs and strings only, not in the
//   whole query text as SPARQL 1.1 (19.2) allows; nobody writes keywords that
//   way, and decoding first would make error columns point at the wrong bytes.
// - Names (variables, prefixed names, labels) are checked against the
//   SPARQL character classes after UTF-8 decoding; invalid UTF-8 there is an
//   error, inside strings and IRIs it is passed through unchanged.
// - Error columns count bytes, not characters, from 1; lines count '\n'.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <rdf/query.hpp>
#include <rdf/term.hpp>

namespace rdf {

namespace detail {

// Generated queries of a few megabytes are plausible; anything much larger
// is a mistake, and capping it keeps error reporting (which rescans the
// text for the line number) and memory bounded.
inline constexpr std::size_t sparql_max_query_bytes = std::size_t(16) << 20;
// '[ p [ p [ ... ] ] ]' recurses once per bracket; the bound keeps a
// hostile query from exhausting the stack.
inline constexpr int sparql_max_nesting = 64;

inline constexpr std::string_view xsd_prefix = "http://www.w3.org/2001/XMLSchema#";

inline constexpr char32_t invalid_code_point = 0x110000;

struct decoded_char {
    char32_t cp;
    std::size_t len;
};

// Invalid sequences decode to invalid_code_point with length 1, so callers
// always make progress and never read past the end.
inline decoded_char decode_utf8(std::string_view s, std::size_t i) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80) return {b0, 1};
    std::size_t len = 0;
    char32_t cp = 0, min = 0;
    if (b0 >= 0xC2 && b0 <= 0xDF) len = 2, cp = b0 & 0x1F, min = 0x80;
    else if (b0 >= 0xE0 && b0 <= 0xEF) len = 3, cp = b0 & 0x0F, min = 0x800;
    else if (b0 >= 0xF0 && b0 <= 0xF4) len = 4, cp = b0 & 0x07, min = 0x10000;
    else return {invalid_code_point, 1};
    if (s.size() - i < len) return {invalid_code_point, 1};
    for (std::size_t k = 1; k < len; ++k) {
        const auto b = static_cast<unsigned char>(s[i + k]);
        if ((b & 0xC0) != 0x80) return {invalid_code_point, 1};
        cp = (cp << 6) | (b & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {invalid_code_point, 1};
    return {cp, len};
}

inline void append_utf8(std::string& out, char32_t cp) {
    if (cp < 0x80) {
        out += char(cp);
    } else if (cp < 0x800) {
        out += char(0xC0 | (cp >> 6));
        out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += char(0xE0 | (cp >> 12));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    } else {
        out += char(0xF0 | (cp >> 18));
        out += char(0x80 | ((cp >> 12) & 0x3F));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    }
}

// Character classes of the SPARQL 1.1 grammar (section 19.8).
inline bool is_ascii_alpha(char32_t c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
inline bool is_ascii_digit(char32_t c) { return c >= '0' && c <= '9'; }
inline bool is_hex_digit(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
inline bool is_pn_chars_base(char32_t c) {
    return is_ascii_alpha(c) || (c >= 0xC0 && c <= 0xD6) || (c >= 0xD8 && c <= 0xF6) || (c >= 0xF8 && c <= 0x2FF) ||
           (c >= 0x370 && c <= 0x37D) || (c >= 0x37F && c <= 0x1FFF) || (c >= 0x200C && c <= 0x200D) ||
           (c >= 0x2070 && c <= 0x218F) || (c >= 0x2C00 && c <= 0x2FEF) || (c >= 0x3001 && c <= 0xD7FF) ||
           (c >= 0xF900 && c <= 0xFDCF) || (c >= 0xFDF0 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0xEFFFF);
}
inline bool is_pn_chars_u(char32_t c) { return is_pn_chars_base(c) || c == '_'; }
inline bool is_name_extender(char32_t c) {
    return c == 0xB7 || (c >= 0x300 && c <= 0x36F) || (c >= 0x203F && c <= 0x2040);
}
inline bool is_pn_chars(char32_t c) { return is_pn_chars_u(c) || c == '-' || is_ascii_digit(c) || is_name_extender(c); }
inline bool is_varname_start(char32_t c) { return is_pn_chars_u(c) || is_ascii_digit(c); }
inline bool is_varname_char(char32_t c) { return is_varname_start(c) || is_name_extender(c); }
inline bool is_pn_local_esc(char c) {
    return std::string_view("_~.-!$&'()*+,;=/?#@%").find(c) != std::string_view::npos;
}

inline bool has_iri_scheme(std::string_view iri) {
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

// RFC 3986 section 5.2.2 without remove_dot_segments (see the file comment).
inline std::string resolve_iri(std::string_view base, std::string_view ref) {
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

struct sparql_token {
    enum class kind : std::uint8_t {
        end,
        word,    ///< a bare keyword: SELECT, a, true, FILTER, ...
        var,     ///< value: the name without the sigil
        iri,     ///< value: the IRI with escapes decoded, not yet resolved
        pname,   ///< prefix: before ':'; value: the local part, unescaped
        blank,   ///< value: the label after "_:"
        string,  ///< value: the lexical form, unescaped
        langtag, ///< value: the tag without '@'
        integer,
        decimal,
        dbl,     ///< numbers: value is the text as written, sign included
        punct,   ///< value: the character(s), "^^" being the only two-character one
    };
    kind k = kind::end;
    std::size_t begin = 0, end = 0; ///< byte offsets in the query text
    std::string value;
    std::string prefix;
    bool has_local = false; ///< pname: "p:x" rather than "p:" (PREFIX declarations need the latter)
};

class sparql_parser {
public:
    explicit sparql_parser(std::string_view text) : text_(text) {}

    query parse() {
        if (text_.size() > sparql_max_query_bytes)
            fail(sparql_max_query_bytes, "query too long (" + std::to_string(text_.size()) + " bytes; at most " +
                                             std::to_string(sparql_max_query_bytes) + " are accepted)");
        advance();
        if (tok_.k == kind::end) fail(tok_.begin, "empty query: expected a SELECT query");
        parse_prologue();
        parse_select();
        parse_where();
        parse_modifiers();
        if (tok_.k != kind::end) expected("end of query");
        finish();
        return std::move(q_);
    }

private:
    using kind = sparql_token::kind;

    std::string_view text_;
    std::size_t pos_ = 0;
    sparql_token tok_;
    query q_;
    std::string base_;
    std::unordered_map<std::string, std::string> prefixes_;
    std::vector<std::string> var_order_; ///< named variables by first appearance, for SELECT *
    std::unordered_set<std::string> vars_seen_;
    std::unordered_set<std::string> labels_; ///< "_:label" names written in the query
    std::size_t anon_count_ = 0;
    int depth_ = 0;

    // ---- errors ------------------------------------------------------------

    [[noreturn]] void fail(std::size_t offset, const std::string& message) const {
        offset = std::min(offset, text_.size());
        std::size_t line = 1, line_start = 0;
        for (std::size_t i = 0; i < offset; ++i)
            if (text_[i] == '\n') ++line, line_start = i + 1;
        const std::size_t column = offset - line_start + 1;
        throw query_error("line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + message, line,
                          column);
    }

    // Query text quoted into messages: bounded in length and with control
    // bytes made visible, since it may be anything a fuzzer produced.
    static std::string quote(std::string_view s) {
        constexpr std::size_t max_shown = 40;
        std::string out = "'";
        const bool cut = s.size() > max_shown;
        for (const char c : s.substr(0, max_shown)) {
            const auto u = static_cast<unsigned char>(c);
            if (u < 0x20 || u == 0x7F) {
                static constexpr char hex[] = "0123456789ABCDEF";
                out += "\\x";
                out += hex[u >> 4];
                out += hex[u & 15];
            } else {
                out += c;
            }
        }
        out += cut ? "...'" : "'";
        return out;
    }

    std::string describe(const sparql_token& t) const {
        if (t.k == kind::end) return "end of query";
        return quote(text_.substr(t.begin, t.end - t.begin));
    }

    [[noreturn]] void expected(const std::string& what) const {
        fail(tok_.begin, "expected " + what + ", found " + describe(tok_));
    }

    [[noreturn]] void unsupported(std::size_t offset, const std::string& construct, std::string_view hint) const {
        fail(offset, construct + " is not supported (" + std::string(hint) + ")");
    }

    static constexpr std::string_view bgp_hint =
        "the WHERE clause takes only a basic graph pattern: triple patterns joined by '.', ';' and ','";
    static constexpr std::string_view modifier_hint = "only LIMIT may follow the WHERE clause";
    static constexpr std::string_view form_hint = "only SELECT queries are";
    static constexpr std::string_view projection_hint = "SELECT takes only variables or '*'";
    static constexpr std::string_view path_hint = "a predicate must be an IRI, a prefixed name, 'a' or a variable";

    // ---- lexer -------------------------------------------------------------

    char at(std::size_t i) const { return i < text_.size() ? text_[i] : '\0'; }

    void skip_space() {
        while (pos_ < text_.size()) {
            const char c = text_[pos_];
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
                ++pos_;
            } else if (c == '#') {
                while (pos_ < text_.size() && text_[pos_] != '\n' && text_[pos_] != '\r') ++pos_;
            } else {
                break;
            }
        }
    }

    [[noreturn]] void bad_char(std::size_t i) const {
        const auto u = static_cast<unsigned char>(text_[i]);
        if (u >= 0x80) {
            const decoded_char d = decode_utf8(text_, i);
            if (d.cp == invalid_code_point) fail(i, "invalid UTF-8 byte " + quote(text_.substr(i, 1)));
            fail(i, "unexpected character " + quote(text_.substr(i, d.len)));
        }
        fail(i, "unexpected character " + quote(text_.substr(i, 1)));
    }

    void advance() {
        skip_space();
        tok_ = sparql_token{};
        tok_.begin = pos_;
        if (pos_ >= text_.size()) {
            tok_.k = kind::end;
            tok_.end = pos_;
            return;
        }
        lex_token();
        tok_.end = pos_;
    }

    void lex_token() {
        const char c = text_[pos_];
        const char c1 = at(pos_ + 1);
        if (c == '<') return lex_iri();
        if (c == '"' || c == '\'') return lex_string(c);
        if (c == '?' || c == '$') {
            if (pos_ + 1 < text_.size() && is_varname_start(decode_utf8(text_, pos_ + 1).cp)) return lex_var();
            if (c == '$') fail(pos_, "expected a variable name after '$'");
            return punct(1);
        }
        if (c == '@') return lex_langtag();
        if (c == '_') {
            if (c1 == ':') return lex_blank_label();
            bad_char(pos_);
        }
        const bool digit_next = is_ascii_digit(static_cast<unsigned char>(c1));
        const bool dot_digit_next = c1 == '.' && is_ascii_digit(static_cast<unsigned char>(at(pos_ + 2)));
        if (is_ascii_digit(static_cast<unsigned char>(c)) || (c == '.' && digit_next) ||
            ((c == '+' || c == '-') && (digit_next || dot_digit_next)))
            return lex_number();
        if (c == ':') return lex_pname(pos_);
        if (c == '^' && c1 == '^') return punct(2);
        const auto u = static_cast<unsigned char>(c);
        if (u >= 0x80 || is_ascii_alpha(u)) return lex_word();
        if (u > 0x20 && u < 0x7F && !is_ascii_digit(u)) return punct(1); // '{', '.', and operators to reject by name
        bad_char(pos_);
    }

    void punct(std::size_t n) {
        tok_.k = kind::punct;
        tok_.value = std::string(text_.substr(pos_, n));
        pos_ += n;
    }

    char32_t read_uchar(std::size_t backslash) {
        const std::size_t digits = at(backslash + 1) == 'u' ? 4 : 8;
        char32_t cp = 0;
        for (std::size_t k = 0; k < digits; ++k) {
            const char h = at(backslash + 2 + k);
            if (!is_hex_digit(h))
                fail(backslash, std::string("expected ") + (digits == 4 ? "4" : "8") + " hex digits after '\\" +
                                    at(backslash + 1) + "'");
            cp = cp * 16 + char32_t(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
        }
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            fail(backslash, "escape " + quote(text_.substr(backslash, 2 + digits)) + " is not a Unicode scalar value");
        pos_ = backslash + 2 + digits;
        return cp;
    }

    void lex_iri() {
        const std::size_t start = pos_;
        ++pos_;
        while (true) {
            if (pos_ >= text_.size()) fail(start, "unterminated IRI (missing '>')");
            const char c = text_[pos_];
            const auto u = static_cast<unsigned char>(c);
            if (c == '>') break;
            if (c == '\\') {
                if (at(pos_ + 1) != 'u' && at(pos_ + 1) != 'U')
                    fail(pos_, "invalid escape in IRI (only \\uXXXX and \\UXXXXXXXX are allowed)");
                append_utf8(tok_.value, read_uchar(pos_));
                continue;
            }
            if (u <= 0x20 || c == '<' || c == '"' || c == '{' || c == '}' || c == '|' || c == '^' || c == '`')
                fail(pos_, "character " + quote(text_.substr(pos_, 1)) +
                               " is not allowed in an IRI (percent-encode it; or is the closing '>' missing?)");
            tok_.value += c;
            ++pos_;
        }
        ++pos_;
        tok_.k = kind::iri;
    }

    void lex_string(char q) {
        const std::size_t start = pos_;
        const bool long_form = at(pos_ + 1) == q && at(pos_ + 2) == q;
        pos_ += long_form ? 3 : 1;
        while (true) {
            if (pos_ >= text_.size()) fail(start, "unterminated string literal");
            const char c = text_[pos_];
            if (c == q && (!long_form || (at(pos_ + 1) == q && at(pos_ + 2) == q))) break;
            if (!long_form && (c == '\n' || c == '\r'))
                fail(start, "unterminated string literal (line break before the closing quote; write \\n, or use a "
                            "\"\"\"long string\"\"\")");
            if (c != '\\') {
                tok_.value += c;
                ++pos_;
                continue;
            }
            const char e = at(pos_ + 1);
            switch (e) {
            case 't': tok_.value += '\t'; break;
            case 'b': tok_.value += '\b'; break;
            case 'n': tok_.value += '\n'; break;
            case 'r': tok_.value += '\r'; break;
            case 'f': tok_.value += '\f'; break;
            case '"': tok_.value += '"'; break;
            case '\'': tok_.value += '\''; break;
            case '\\': tok_.value += '\\'; break;
            case 'u':
            case 'U': append_utf8(tok_.value, read_uchar(pos_)); continue;
            default:
                fail(pos_, "invalid escape " + quote(text_.substr(pos_, pos_ + 1 < text_.size() ? 2 : 1)) +
                               " in string literal (allowed: \\t \\b \\n \\r \\f \\\" \\' \\\\ \\uXXXX \\UXXXXXXXX)");
            }
            pos_ += 2;
        }
        pos_ += long_form ? 3 : 1;
        tok_.k = kind::string;
    }

    void lex_var() {
        ++pos_; // the sigil; '?x' and '$x' are the same variable
        while (pos_ < text_.size()) {
            const decoded_char d = decode_utf8(text_, pos_);
            if (!is_varname_char(d.cp)) break;
            pos_ += d.len;
        }
        tok_.k = kind::var;
        tok_.value = std::string(text_.substr(tok_.begin + 1, pos_ - tok_.begin - 1));
    }

    void lex_langtag() {
        std::size_t i = pos_ + 1;
        while (is_ascii_alpha(static_cast<unsigned char>(at(i)))) ++i;
        if (i == pos_ + 1) fail(pos_, "expected a language tag after '@'");
        while (at(i) == '-' && (is_ascii_alpha(static_cast<unsigned char>(at(i + 1))) ||
                                is_ascii_digit(static_cast<unsigned char>(at(i + 1))))) {
            ++i;
            while (is_ascii_alpha(static_cast<unsigned char>(at(i))) || is_ascii_digit(static_cast<unsigned char>(at(i))))
                ++i;
        }
        tok_.k = kind::langtag;
        tok_.value = std::string(text_.substr(pos_ + 1, i - pos_ - 1));
        pos_ = i;
    }

    // A name that may contain '.' but not end with one: "ex:a.b." is ex:a.b
    // followed by the '.' ending the triple. Returns where the name ends.
    std::size_t scan_dotted_name(std::size_t i, bool (*allowed)(char32_t)) const {
        std::size_t good_end = i;
        while (i < text_.size()) {
            if (text_[i] == '.') {
                ++i;
                continue;
            }
            const decoded_char d = decode_utf8(text_, i);
            if (!allowed(d.cp)) break;
            i += d.len;
            good_end = i;
        }
        return good_end;
    }

    void lex_blank_label() {
        const std::size_t start = pos_ + 2;
        if (start >= text_.size() || !is_varname_start(decode_utf8(text_, start).cp))
            fail(pos_, "expected a blank node label after '_:'");
        const std::size_t first_len = decode_utf8(text_, start).len;
        pos_ = scan_dotted_name(start + first_len, is_pn_chars);
        tok_.k = kind::blank;
        tok_.value = std::string(text_.substr(start, pos_ - start));
    }

    void lex_word() {
        const std::size_t start = pos_;
        // A prefix name: PN_CHARS_BASE ((PN_CHARS | '.')* PN_CHARS)? ':'
        const decoded_char first = decode_utf8(text_, start);
        if (is_pn_chars_base(first.cp)) {
            const std::size_t end = scan_dotted_name(start + first.len, is_pn_chars);
            if (at(end) == ':') return lex_pname(end);
        }
        std::size_t i = start;
        while (i < text_.size()) {
            const auto u = static_cast<unsigned char>(text_[i]);
            if (!(is_ascii_alpha(u) || is_ascii_digit(u) || u == '_')) break;
            ++i;
        }
        if (i == start) bad_char(start);
        tok_.k = kind::word;
        tok_.value = std::string(text_.substr(start, i - start));
        pos_ = i;
    }

    // PN_LOCAL, unescaping '\'-escapes and keeping %XX as written (the
    // grammar says so: a prefixed name expands to exactly those bytes).
    void lex_pname(std::size_t colon) {
        tok_.k = kind::pname;
        tok_.prefix = std::string(text_.substr(pos_, colon - pos_));
        std::size_t i = colon + 1, good_end = i, good_len = 0;
        bool first = true;
        while (i < text_.size()) {
            const char c = text_[i];
            if (c == '%') {
                if (!is_hex_digit(at(i + 1)) || !is_hex_digit(at(i + 2)))
                    fail(i, "'%' in a prefixed name must be followed by two hex digits");
                tok_.value.append(text_.substr(i, 3));
                i += 3;
            } else if (c == '\\') {
                if (!is_pn_local_esc(at(i + 1)))
                    fail(i, "invalid escape in prefixed name (only \\ before one of _~.-!$&'()*+,;=/?#@% is allowed)");
                tok_.value += text_[i + 1];
                i += 2;
            } else if (c == ':') {
                tok_.value += c;
                ++i;
            } else if (c == '.' && !first) {
                tok_.value += c;
                ++i;
                continue; // not a valid end: see scan_dotted_name
            } else {
                const decoded_char d = decode_utf8(text_, i);
                if (!(first ? is_varname_start(d.cp) : is_pn_chars(d.cp))) break;
                tok_.value.append(text_.substr(i, d.len));
                i += d.len;
            }
            first = false;
            good_end = i;
            good_len = tok_.value.size();
        }
        tok_.value.resize(good_len);
        tok_.has_local = good_end > colon + 1;
        pos_ = good_end;
    }

    void lex_number() {
        std::size_t i = pos_;
        if (text_[i] == '+' || text_[i] == '-') ++i;
        const auto digits = [&](std::size_t j) {
            while (is_ascii_digit(static_cast<unsigned char>(at(j)))) ++j;
            return j;
        };
        const auto exponent_end = [&](std::size_t j) -> std::size_t { // 0: no exponent at j
            if (at(j) != 'e' && at(j) != 'E') return 0;
            ++j;
            if (at(j) == '+' || at(j) == '-') ++j;
            const std::size_t e = digits(j);
            return e > j ? e : 0;
        };
        const std::size_t int_end = digits(i);
        kind k = kind::integer;
        std::size_t end = int_end;
        if (at(int_end) == '.') {
            const std::size_t frac_end = digits(int_end + 1);
            const std::size_t exp = exponent_end(frac_end);
            if (exp != 0 && (frac_end > int_end + 1 || int_end > i)) {
                k = kind::dbl, end = exp;
            } else if (frac_end > int_end + 1) {
                k = kind::decimal, end = frac_end;
            } // else "1." is the integer 1 followed by the '.' ending a triple
        } else if (const std::size_t exp = exponent_end(int_end); exp != 0) {
            k = kind::dbl, end = exp;
        }
        tok_.k = k;
        tok_.value = std::string(text_.substr(pos_, end - pos_));
        pos_ = end;
    }

    // ---- parser helpers ----------------------------------------------------

    bool is_punct(std::string_view p) const { return tok_.k == kind::punct && tok_.value == p; }

    bool is_keyword(std::string_view kw) const {
        if (tok_.k != kind::word || tok_.value.size() != kw.size()) return false;
        for (std::size_t i = 0; i < kw.size(); ++i)
            if (ascii_lower(tok_.value[i]) != ascii_lower(kw[i])) return false;
        return true;
    }

    std::string upper_word() const {
        std::string s = tok_.value;
        for (char& c : s)
            if (c >= 'a' && c <= 'z') c = char(c - 'a' + 'A');
        return s;
    }

    bool is_one_of(std::initializer_list<std::string_view> kws) const {
        for (const std::string_view kw : kws)
            if (is_keyword(kw)) return true;
        return false;
    }

    std::string expand(const sparql_token& t) const {
        const auto it = prefixes_.find(t.prefix);
        if (it == prefixes_.end())
            fail(t.begin, "undefined prefix '" + t.prefix + ":' (declare it with PREFIX " + t.prefix +
                              ": <http://...> before SELECT)");
        return it->second + t.value;
    }

    pattern_term make_var(std::string name) {
        if (name.rfind("_:", 0) != 0 && vars_seen_.insert(name).second) var_order_.push_back(name);
        pattern_term t;
        t.is_variable = true;
        t.variable = std::move(name);
        return t;
    }

    static pattern_term make_constant(term c) {
        pattern_term t;
        t.constant = std::move(c);
        return t;
    }

    static pattern_term make_iri(std::string iri) { return make_constant(term{term_kind::iri, std::move(iri), {}, {}}); }

    // '[]' nodes get a name no label can have ('#' is not a label character)
    // until finish() renames them, because a label "_:anon1" may still
    // come later in the text.
    pattern_term fresh_blank() { return make_var("_:#" + std::to_string(++anon_count_)); }

    // ---- grammar -----------------------------------------------------------

    void parse_prologue() {
        while (true) {
            if (is_keyword("BASE")) {
                advance();
                if (tok_.k != kind::iri) expected("an IRI in angle brackets after BASE");
                base_ = resolve_iri(base_, tok_.value);
                advance();
            } else if (is_keyword("PREFIX")) {
                advance();
                if (tok_.k != kind::pname || tok_.has_local) expected("a prefix name ending in ':' after PREFIX");
                std::string name = tok_.prefix;
                advance();
                if (tok_.k != kind::iri) expected("an IRI in angle brackets after PREFIX " + name + ":");
                prefixes_[std::move(name)] = resolve_iri(base_, tok_.value);
                advance();
            } else {
                return;
            }
        }
    }

    void reject_query_form() const {
        if (is_one_of({"CONSTRUCT", "ASK", "DESCRIBE"})) unsupported(tok_.begin, upper_word(), form_hint);
        if (is_one_of({"INSERT", "DELETE", "LOAD", "CLEAR", "DROP", "CREATE", "ADD", "MOVE", "COPY", "WITH"}))
            unsupported(tok_.begin, "SPARQL Update (" + upper_word() + ")", form_hint);
    }

    bool is_aggregate() const {
        return is_one_of({"COUNT", "SUM", "MIN", "MAX", "AVG", "SAMPLE", "GROUP_CONCAT"});
    }

    void parse_select() {
        reject_query_form();
        if (!is_keyword("SELECT")) expected("SELECT (or PREFIX/BASE)");
        advance();
        if (is_one_of({"DISTINCT", "REDUCED"})) {
            q_.distinct = true; // REDUCED permits removing duplicates, so removing all of them is correct
            advance();
        }
        if (is_punct("*")) {
            q_.select_all = true;
            advance();
            return;
        }
        while (true) {
            if (tok_.k == kind::var) {
                q_.projection.push_back(tok_.value);
                advance();
            } else if (is_punct("(")) {
                const std::size_t open = tok_.begin;
                advance();
                if (is_aggregate()) unsupported(tok_.begin, "aggregate " + upper_word(), projection_hint);
                unsupported(open, "expression in SELECT '(expr AS ?var)'", projection_hint);
            } else if (is_aggregate()) {
                unsupported(tok_.begin, "aggregate " + upper_word(), projection_hint);
            } else {
                break;
            }
        }
        if (q_.projection.empty()) expected("a variable or '*' after SELECT");
    }

    void parse_where() {
        if (is_keyword("FROM")) {
            const std::size_t from = tok_.begin;
            advance();
            unsupported(from, is_keyword("NAMED") ? "FROM NAMED" : "FROM",
                        "queries run over the loaded data; no dataset clause");
        }
        if (is_keyword("WHERE")) advance();
        if (!is_punct("{")) expected("'{' to start the WHERE clause");
        advance();
        parse_group_body();
    }

    // Constructs that may start where a triple pattern could.
    void reject_group_construct() const {
        if (is_one_of({"OPTIONAL", "FILTER", "UNION", "MINUS", "GRAPH", "SERVICE", "BIND", "VALUES"}))
            unsupported(tok_.begin, upper_word(), bgp_hint);
        if (is_keyword("SELECT")) unsupported(tok_.begin, "subquery (SELECT inside WHERE)", bgp_hint);
        if (is_punct("{")) unsupported(tok_.begin, "nested group '{ ... }'", bgp_hint);
    }

    void parse_group_body() {
        while (!is_punct("}")) {
            reject_group_construct();
            parse_triples();
            if (is_punct(".")) {
                advance();
                continue;
            }
            if (is_punct("}")) break;
            reject_group_construct();
            expected("'.' or '}' after a triple pattern");
        }
        advance();
    }

    void parse_triples() {
        const sparql_token subject_tok = tok_;
        if (is_punct("[")) {
            const std::size_t open = tok_.begin;
            advance();
            if (!is_punct("]")) {
                const pattern_term node = parse_blank_property_list(open);
                if (!is_punct(".") && !is_punct("}")) parse_property_list(node);
                return;
            }
            advance();
            parse_property_list(fresh_blank());
            return;
        }
        if (is_keyword("a")) fail(tok_.begin, "'a' (rdf:type) can only be used as a predicate");
        if (tok_.k == kind::string || tok_.k == kind::integer || tok_.k == kind::decimal || tok_.k == kind::dbl ||
            is_one_of({"true", "false"}))
            fail(subject_tok.begin, "a literal (" + describe(subject_tok) + ") cannot be the subject of a triple pattern");
        parse_property_list(parse_object_or_subject("a subject"));
    }

    // After '[' (at open) when the next token is not ']': '[ props ]' as a node.
    pattern_term parse_blank_property_list(std::size_t open) {
        if (++depth_ > sparql_max_nesting)
            fail(open, "blank node property lists nested more than " + std::to_string(sparql_max_nesting) +
                                 " deep");
        pattern_term node = fresh_blank();
        parse_property_list(node);
        if (!is_punct("]")) expected("']' to close the blank node property list");
        advance();
        --depth_;
        return node;
    }

    void parse_property_list(const pattern_term& subject) {
        while (true) {
            const pattern_term verb = parse_verb();
            while (true) {
                pattern_term object = parse_object_or_subject("an object");
                q_.patterns.push_back(triple_pattern{subject, verb, std::move(object)});
                if (!is_punct(",")) break;
                advance();
            }
            if (!is_punct(";")) return;
            while (is_punct(";")) advance();
            if (is_punct(".") || is_punct("}") || is_punct("]") || tok_.k == kind::end) return;
        }
    }

    pattern_term parse_verb() {
        pattern_term verb;
        if (tok_.k == kind::var) {
            verb = make_var(tok_.value);
        } else if (tok_.k == kind::iri) {
            verb = make_iri(resolve_iri(base_, tok_.value));
        } else if (tok_.k == kind::pname) {
            verb = make_iri(expand(tok_));
        } else if (tok_.k == kind::word && tok_.value == "a") {
            verb = make_iri(std::string(rdf_type));
        } else if (is_punct("^")) {
            unsupported(tok_.begin, "property path '^' (inverse)", path_hint);
        } else if (is_punct("!")) {
            unsupported(tok_.begin, "property path '!' (negated property set)", path_hint);
        } else if (is_punct("(")) {
            unsupported(tok_.begin, "property path group '( ... )'", path_hint);
        } else if (tok_.k == kind::string || tok_.k == kind::integer || tok_.k == kind::decimal ||
                   tok_.k == kind::dbl || is_one_of({"true", "false"})) {
            fail(tok_.begin, "a literal (" + describe(tok_) + ") cannot be a predicate");
        } else if (tok_.k == kind::blank || is_punct("[")) {
            fail(tok_.begin, "a blank node (" + describe(tok_) + ") cannot be a predicate");
        } else {
            expected("a predicate (IRI, prefixed name, 'a' or variable)");
        }
        advance();
        if (tok_.k == kind::punct && (tok_.value == "/" || tok_.value == "|" || tok_.value == "*" ||
                                      tok_.value == "+" || tok_.value == "?"))
            unsupported(tok_.begin, "property path '" + tok_.value + "'", path_hint);
        return verb;
    }

    pattern_term parse_object_or_subject(const char* role) {
        switch (tok_.k) {
        case kind::var: {
            pattern_term t = make_var(tok_.value);
            advance();
            return t;
        }
        case kind::iri: {
            pattern_term t = make_iri(resolve_iri(base_, tok_.value));
            advance();
            return t;
        }
        case kind::pname: {
            pattern_term t = make_iri(expand(tok_));
            advance();
            return t;
        }
        case kind::blank: {
            std::string name = "_:" + tok_.value;
            labels_.insert(name);
            advance();
            return make_var(std::move(name));
        }
        case kind::string: return parse_rdf_literal();
        case kind::integer: return numeric_literal("integer");
        case kind::decimal: return numeric_literal("decimal");
        case kind::dbl: return numeric_literal("double");
        default: break;
        }
        if (is_one_of({"true", "false"})) {
            std::string lexical = tok_.value;
            for (char& c : lexical) c = ascii_lower(c); // the keyword is case-insensitive, the lexical form is not
            advance();
            return make_constant(term{term_kind::literal, std::move(lexical), std::string(xsd_prefix) + "boolean", {}});
        }
        if (is_punct("[")) {
            const std::size_t open = tok_.begin;
            advance();
            if (!is_punct("]")) return parse_blank_property_list(open);
            advance();
            return fresh_blank();
        }
        if (is_punct("(")) unsupported(tok_.begin, "collection '( ... )'", "terms are variables, IRIs, prefixed names, blank nodes or literals");
        if (tok_.k == kind::word && tok_.value == "a") fail(tok_.begin, "'a' (rdf:type) can only be used as a predicate");
        expected(std::string(role) + " (variable, IRI, prefixed name, blank node or literal)");
    }

    pattern_term numeric_literal(const char* type) {
        pattern_term t = make_constant(term{term_kind::literal, tok_.value, std::string(xsd_prefix) + type, {}});
        advance();
        return t;
    }

    pattern_term parse_rdf_literal() {
        term lit{term_kind::literal, std::move(tok_.value), {}, {}};
        advance();
        if (tok_.k == kind::langtag) {
            // Tags compare case-insensitively; storing them lower-cased
            // makes term equality agree with key() equality.
            for (const char c : tok_.value) lit.lang += ascii_lower(c);
            advance();
        } else if (is_punct("^^")) {
            advance();
            if (tok_.k == kind::iri) lit.datatype = resolve_iri(base_, tok_.value);
            else if (tok_.k == kind::pname) lit.datatype = expand(tok_);
            else expected("a datatype IRI or prefixed name after '^^'");
            advance();
            if (lit.datatype == xsd_string) lit.datatype.clear(); // term.hpp: plain and xsd:string are one term
        }
        return make_constant(std::move(lit));
    }

    void parse_modifiers() {
        bool have_limit = false;
        while (tok_.k == kind::word) {
            if (is_keyword("GROUP")) unsupported(tok_.begin, "GROUP BY", modifier_hint);
            if (is_keyword("HAVING")) unsupported(tok_.begin, "HAVING", modifier_hint);
            if (is_keyword("ORDER")) unsupported(tok_.begin, "ORDER BY", modifier_hint);
            if (is_keyword("OFFSET")) unsupported(tok_.begin, "OFFSET", modifier_hint);
            if (is_keyword("VALUES")) unsupported(tok_.begin, "VALUES", modifier_hint);
            reject_group_construct(); // '{ ... } UNION { ... }' and the like
            if (!is_keyword("LIMIT") || have_limit) return;
            have_limit = true;
            advance();
            q_.limit = parse_limit_value();
        }
    }

    std::uint64_t parse_limit_value() {
        if (tok_.k != kind::integer || tok_.value[0] == '+' || tok_.value[0] == '-')
            expected("a non-negative integer after LIMIT");
        std::uint64_t n = 0;
        constexpr std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
        for (const char c : tok_.value) {
            const auto d = std::uint64_t(c - '0');
            if (n > (max - d) / 10) fail(tok_.begin, "LIMIT " + describe(tok_) + " is too large (at most " + std::to_string(max) + ")");
            n = n * 10 + d;
        }
        advance();
        return n;
    }

    void finish() {
        if (q_.select_all) q_.projection = var_order_;
        if (anon_count_ == 0) return;
        // Number '[]' nodes in order, skipping names a label already took.
        std::unordered_map<std::string, std::string> names;
        std::size_t next = 0;
        for (std::size_t i = 1; i <= anon_count_; ++i) {
            std::string name;
            do name = "_:anon" + std::to_string(++next);
            while (labels_.count(name) != 0);
            names.emplace("_:#" + std::to_string(i), std::move(name));
        }
        for (triple_pattern& p : q_.patterns)
            for (pattern_term* t : {&p.s, &p.p, &p.o})
                if (t->is_variable) {
                    const auto it = names.find(t->variable);
                    if (it != names.end()) t->variable = it->second;
                }
    }
};

} // namespace detail

/// Parses one SELECT query of the subset described at the top of this
/// file. Throws query_error (what() starts with "line L, column C: ").
inline query parse_query(std::string_view text) { return detail::sparql_parser(text).parse(); }

} // namespace rdf
