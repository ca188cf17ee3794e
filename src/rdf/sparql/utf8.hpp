#pragma once
// UTF-8 in and out, and the SPARQL 1.1 grammar's character classes over
// code points (section 19.8): what the lexer checks names against. The
// classes stay inline: the lexer asks them once per character.
#include <cstddef>
#include <string>
#include <string_view>

namespace rdf::detail {

inline constexpr char32_t invalid_code_point = 0x110000;

struct decoded_char {
    char32_t cp;
    std::size_t len;
};

// Invalid sequences decode to invalid_code_point with length 1, so callers
// always make progress and never read past the end.
decoded_char decode_utf8(std::string_view s, std::size_t i);

void append_utf8(std::string& out, char32_t cp);

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

} // namespace rdf::detail
