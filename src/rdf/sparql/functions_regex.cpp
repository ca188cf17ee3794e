// REGEX and REPLACE (17.4.3.14, 17.4.3.15): XPath regular expressions
// (F&O 3.1, 5.6) on PCRE2 in UTF mode. PCRE2 reads nearly all of XPath's
// syntax as XPath means it; what differs is rewritten first:
//  - \i \c (XML name characters; PCRE's \c is a control character) become
//    classes of Unicode properties (approximately XML 1.0's Letter etc.);
//    \I and \C outside a class too, inside one they are an error;
//  - class subtraction [a-z-[aeiou]] becomes (?:(?![aeiou])[a-z]);
//  - flag x removes whitespace outside classes (PCRE's own x would also
//    take '#' as a comment);
//  - "(?" other than "(?:" is an error (XPath has no lookaround, inline
//    flags or named groups).
// Flags: s -> DOTALL, m -> MULTILINE, i -> CASELESS (Unicode case folding),
// q -> LITERAL; without m, $ matches at the very end only, as in XPath. Not
// covered: XPath's block escapes \p{IsBasicLatin} (PCRE2 knows scripts,
// not blocks: such a pattern is an error), and PCRE2-only syntax that
// XPath would reject (possessive quantifiers, \b, \x{..}) is accepted.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "functions_state.hpp"

namespace rdf::sparql::detail {

struct compiled_regex {
    pcre2_code* code = nullptr;
    pcre2_match_data* match = nullptr;
    std::uint32_t groups = 0;
    bool matches_empty = false;
    bool literal = false; // q: the replacement string is literal too

    compiled_regex() = default;
    compiled_regex(const compiled_regex&) = delete;
    compiled_regex& operator=(const compiled_regex&) = delete;
    ~compiled_regex() {
        pcre2_match_data_free(match);
        pcre2_code_free(code);
    }
};

struct regex_cache {
    // Failures are cached too (nullptr): a bad pattern in a FILTER is
    // compiled once, not once per row.
    std::unordered_map<std::string, std::unique_ptr<compiled_regex>> entries;
};

void regex_cache_deleter::operator()(regex_cache* c) const noexcept { delete c; }

namespace {

// Approximations of XML 1.0's NameStartChar-as-Letter and NameChar.
constexpr std::string_view name_start_chars = "\\p{L}\\p{Nl}_:";
constexpr std::string_view name_chars = "\\p{L}\\p{Nl}\\p{Nd}\\p{Mn}\\p{Mc}\\p{Lm}._:\\-\\x{B7}";

bool is_xml_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// A character class from s[i] == '[' on: its PCRE form, i past its ']'.
std::optional<std::string> translate_class(std::string_view s, std::size_t& i) {
    std::string base = "[";
    ++i;
    if (i < s.size() && s[i] == '^') base += s[i++];
    if (i < s.size() && s[i] == ']') base += "\\]", ++i; // XPath needs it escaped; PCRE's reading
    while (i < s.size()) {
        const char c = s[i];
        if (c == ']') {
            ++i;
            return base + "]";
        }
        if (c == '\\') {
            if (i + 1 >= s.size()) return std::nullopt;
            const char n = s[i + 1];
            if (n == 'i') base += name_start_chars;
            else if (n == 'c') base += name_chars;
            else if (n == 'I' || n == 'C') return std::nullopt; // no negation inside a class in PCRE
            else base.append(s.substr(i, 2));
            i += 2;
            continue;
        }
        if (c == '-' && i + 1 < s.size() && s[i + 1] == '[') {
            ++i;
            const std::optional<std::string> minus = translate_class(s, i);
            if (!minus || i >= s.size() || s[i] != ']') return std::nullopt; // the subtraction ends the class
            ++i;
            return "(?:(?!" + *minus + ")" + base + "])";
        }
        if (c == '[') {
            base += "\\["; // PCRE would read "[:alpha:]" as a POSIX class
            ++i;
            continue;
        }
        base += c;
        ++i;
    }
    return std::nullopt;
}

std::optional<std::string> translate(std::string_view s, bool strip_space) {
    std::string out;
    out.reserve(s.size() + 8);
    std::size_t i = 0;
    while (i < s.size()) {
        const char c = s[i];
        if (strip_space && is_xml_space(c)) {
            ++i;
        } else if (c == '\\') {
            if (i + 1 >= s.size()) return std::nullopt;
            const char n = s[i + 1];
            if (n == 'i' || n == 'I' || n == 'c' || n == 'C') {
                out += n == 'i' || n == 'c' ? "[" : "[^";
                out += n == 'i' || n == 'I' ? name_start_chars : name_chars;
                out += ']';
            } else {
                out.append(s.substr(i, 2));
            }
            i += 2;
        } else if (c == '[') {
            const std::optional<std::string> cls = translate_class(s, i);
            if (!cls) return std::nullopt;
            out += *cls;
        } else if (c == '(' && i + 1 < s.size() && s[i + 1] == '?') {
            if (i + 2 >= s.size() || s[i + 2] != ':') return std::nullopt;
            out += "(?:";
            i += 3;
        } else {
            out += c;
            ++i;
        }
    }
    return out;
}

std::unique_ptr<compiled_regex> compile(std::string_view pattern, std::string_view flags) {
    std::uint32_t options = PCRE2_UTF;
    bool dotall = false, multiline = false, caseless = false, extended = false, literal = false;
    for (const char f : flags) {
        switch (f) {
        case 's': dotall = true; break;
        case 'm': multiline = true; break;
        case 'i': caseless = true; break;
        case 'x': extended = true; break;
        case 'q': literal = true; break;
        default: return nullptr; // err:FORX0001
        }
    }
    std::string text;
    if (literal) {
        // q: every character stands for itself; with it s, m and x have no
        // effect (F&O 5.6.1), and PCRE2_LITERAL admits none of them.
        options |= PCRE2_LITERAL;
        text = pattern;
    } else {
        options |= PCRE2_UCP | PCRE2_NEVER_BACKSLASH_C;
        if (dotall) options |= PCRE2_DOTALL;
        if (multiline) options |= PCRE2_MULTILINE;
        else options |= PCRE2_DOLLAR_ENDONLY;
        std::optional<std::string> t = translate(pattern, extended);
        if (!t) return nullptr;
        text = std::move(*t);
    }
    if (caseless) options |= PCRE2_CASELESS;
    // '.' stops at CR as well as LF, as XPath's does.
    pcre2_compile_context* cc = pcre2_compile_context_create(nullptr);
    if (cc == nullptr) return nullptr;
    pcre2_set_newline(cc, PCRE2_NEWLINE_ANYCRLF);
    int error = 0;
    PCRE2_SIZE offset = 0;
    auto re = std::make_unique<compiled_regex>();
    re->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), options, &error, &offset, cc);
    pcre2_compile_context_free(cc);
    if (re->code == nullptr) return nullptr;
    pcre2_jit_compile(re->code, PCRE2_JIT_COMPLETE); // where JIT is missing, the interpreter runs
    re->match = pcre2_match_data_create_from_pattern(re->code, nullptr);
    if (re->match == nullptr) return nullptr;
    pcre2_pattern_info(re->code, PCRE2_INFO_CAPTURECOUNT, &re->groups);
    re->literal = literal;
    re->matches_empty = pcre2_match(re->code, reinterpret_cast<PCRE2_SPTR>(""), 0, 0, 0, re->match, nullptr) >= 0;
    return re;
}

} // namespace

const compiled_regex* regex_for(function_state& state, std::string_view pattern, std::string_view flags) {
    if (!state.regexes) state.regexes.reset(new regex_cache);
    std::unordered_map<std::string, std::unique_ptr<compiled_regex>>& entries = state.regexes->entries;
    std::string key;
    key.reserve(flags.size() + 1 + pattern.size());
    key += flags;
    key += '/'; // flags never hold '/': a valid one is one of "smixq"
    key += pattern;
    if (const auto it = entries.find(key); it != entries.end()) return it->second.get();
    if (entries.size() >= 1024) entries.clear(); // patterns built per row: bounded memory
    return entries.emplace(std::move(key), compile(pattern, flags)).first->second.get();
}

std::optional<bool> regex_matches(const compiled_regex& re, std::string_view text) {
    const auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    const int rc = pcre2_match(re.code, subject, text.size(), 0, 0, re.match, nullptr);
    if (rc >= 0) return true;
    if (rc == PCRE2_ERROR_NOMATCH) return false;
    return std::nullopt; // not UTF-8, or a match limit
}

namespace {

// The replacement string's parts (F&O 5.6.3): literal text, and $N for
// group N (-1: none).
struct replacement_part {
    std::string text;
    int group = -1;
};

std::optional<std::vector<replacement_part>> parse_replacement(std::string_view r, std::uint32_t groups, bool literal) {
    std::vector<replacement_part> parts(1);
    if (literal) {
        parts[0].text = r;
        return parts;
    }
    for (std::size_t i = 0; i < r.size(); ++i) {
        const char c = r[i];
        if (c == '\\') {
            if (i + 1 >= r.size() || (r[i + 1] != '\\' && r[i + 1] != '$')) return std::nullopt;
            parts.back().text += r[++i];
        } else if (c == '$') {
            std::size_t j = i + 1;
            while (j < r.size() && r[j] >= '0' && r[j] <= '9') ++j;
            if (j == i + 1) return std::nullopt;
            // The longest digit string naming a group; digits past a group
            // number above 9 that does not exist are literal text.
            std::size_t end = j;
            auto number = [&](std::size_t e) {
                unsigned long long n = 0;
                for (std::size_t k = i + 1; k < e; ++k) n = std::min(n * 10 + unsigned(r[k] - '0'), 1ULL << 40);
                return n;
            };
            while (number(end) > groups && number(end) > 9) --end;
            const unsigned long long n = number(end);
            parts.push_back({{}, n <= groups ? int(n) : -1});
            parts.push_back({std::string(r.substr(end, j - end)), -1});
            i = j - 1;
        } else {
            parts.back().text += c;
        }
    }
    return parts;
}

} // namespace

std::optional<std::string> regex_replace(const compiled_regex& re, std::string_view text,
                                         std::string_view replacement) {
    if (re.matches_empty) return std::nullopt; // err:FORX0003
    const std::optional<std::vector<replacement_part>> parts = parse_replacement(replacement, re.groups, re.literal);
    if (!parts) return std::nullopt; // err:FORX0004
    std::string out;
    std::size_t done = 0, from = 0;
    std::uint32_t options = 0;
    while (from <= text.size()) {
        const auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
        const int rc = pcre2_match(re.code, subject, text.size(), from, options, re.match, nullptr);
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) return std::nullopt;
        options = PCRE2_NO_UTF_CHECK; // the first call checked the subject
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(re.match);
        // A pattern that cannot match "" may still match an empty string
        // inside the text (\b): F&O's error as well, and no endless loop.
        if (ov[1] == ov[0]) return std::nullopt;
        out.append(text, done, ov[0] - done);
        for (const replacement_part& p : *parts) {
            if (p.group >= 0 && std::uint32_t(p.group) < std::uint32_t(rc) && ov[2 * p.group] != PCRE2_UNSET)
                out.append(text, ov[2 * p.group], ov[2 * p.group + 1] - ov[2 * p.group]);
            out += p.text;
        }
        done = from = ov[1];
    }
    out.append(text, done);
    return out;
}

} // namespace rdf::sparql::detail
