#include "lexer.hpp"

#include <algorithm>

#include <rdf/query.hpp>

#include "utf8.hpp"

namespace rdf::detail {

void sparql_lexer::fail(std::size_t offset, const std::string& message) const {
    offset = std::min(offset, text_.size());
    std::size_t line = 1, line_start = 0;
    for (std::size_t i = 0; i < offset; ++i)
        if (text_[i] == '\n') ++line, line_start = i + 1;
    const std::size_t column = offset - line_start + 1;
    throw query_error("line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + message, line,
                      column);
}

std::string sparql_lexer::quote(std::string_view s) {
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

std::string sparql_lexer::describe(const sparql_token& t) const {
    if (t.k == kind::end) return "end of query";
    return quote(text_.substr(t.begin, t.end - t.begin));
}

void sparql_lexer::skip_space() {
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

void sparql_lexer::bad_char(std::size_t i) const {
    const auto u = static_cast<unsigned char>(text_[i]);
    if (u >= 0x80) {
        const decoded_char d = decode_utf8(text_, i);
        if (d.cp == invalid_code_point) fail(i, "invalid UTF-8 byte " + quote(text_.substr(i, 1)));
        fail(i, "unexpected character " + quote(text_.substr(i, d.len)));
    }
    fail(i, "unexpected character " + quote(text_.substr(i, 1)));
}

void sparql_lexer::advance() {
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

void sparql_lexer::lex_token() {
    const char c = text_[pos_];
    const char c1 = at(pos_ + 1);
    // '<' starts an IRI only if one closes before a character no IRI may
    // hold (the grammar's IRIREF token, longest match): else it is the
    // operator '<' or '<=' (FILTER(?a < 3)).
    if (c == '<') {
        if (iri_ahead()) return lex_iri();
        return punct(c1 == '=' ? 2 : 1);
    }
    if ((c == '!' || c == '>') && c1 == '=') return punct(2);
    if ((c == '&' && c1 == '&') || (c == '|' && c1 == '|')) return punct(2);
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

bool sparql_lexer::iri_ahead() const {
    for (std::size_t i = pos_ + 1; i < text_.size(); ++i) {
        const char c = text_[i];
        if (c == '>') return true;
        if (static_cast<unsigned char>(c) <= 0x20 || c == '<' || c == '"' || c == '{' || c == '}' || c == '|' ||
            c == '^' || c == '`')
            return false;
    }
    return false;
}

void sparql_lexer::punct(std::size_t n) {
    tok_.k = kind::punct;
    tok_.value = std::string(text_.substr(pos_, n));
    pos_ += n;
}

char32_t sparql_lexer::read_uchar(std::size_t backslash) {
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

void sparql_lexer::lex_iri() {
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

void sparql_lexer::lex_string(char q) {
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

void sparql_lexer::lex_var() {
    ++pos_; // the sigil; '?x' and '$x' are the same variable
    while (pos_ < text_.size()) {
        const decoded_char d = decode_utf8(text_, pos_);
        if (!is_varname_char(d.cp)) break;
        pos_ += d.len;
    }
    tok_.k = kind::var;
    tok_.value = std::string(text_.substr(tok_.begin + 1, pos_ - tok_.begin - 1));
}

void sparql_lexer::lex_langtag() {
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

std::size_t sparql_lexer::scan_dotted_name(std::size_t i, bool (*allowed)(char32_t)) const {
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

void sparql_lexer::lex_blank_label() {
    const std::size_t start = pos_ + 2;
    if (start >= text_.size() || !is_varname_start(decode_utf8(text_, start).cp))
        fail(pos_, "expected a blank node label after '_:'");
    const std::size_t first_len = decode_utf8(text_, start).len;
    pos_ = scan_dotted_name(start + first_len, is_pn_chars);
    tok_.k = kind::blank;
    tok_.value = std::string(text_.substr(start, pos_ - start));
}

void sparql_lexer::lex_word() {
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

void sparql_lexer::lex_pname(std::size_t colon) {
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

void sparql_lexer::lex_number() {
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

} // namespace rdf::detail
