#include "functions_xsd.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <system_error>
#include <vector>

namespace rdf::sparql::detail {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

constexpr std::array<uint128, 39> make_pow10() {
    std::array<uint128, 39> p{};
    p[0] = 1;
    for (std::size_t i = 1; i < p.size(); ++i) p[i] = p[i - 1] * 10;
    return p;
}
// 10^38 < 2^127 < 10^39: every power a 127-bit magnitude can be divided by.
constexpr std::array<uint128, 39> pow10 = make_pow10();

// Scales beyond this are rounded away: a decimal's fraction keeps 400
// digits at most, far past a double's 1e-324, so that the exact
// comparisons with doubles below stay bounded.
constexpr int max_scale = 400;

uint128 magnitude(int128 v) { return v < 0 ? uint128(0) - uint128(v) : uint128(v); }

// ---- 256-bit magnitudes: the exact intermediate products and sums of
// decimal arithmetic, rounded back into 127 bits by fit().
struct u256 {
    uint128 hi = 0, lo = 0;
};

u256 mul_wide(uint128 a, uint128 b) {
    const std::uint64_t a0 = std::uint64_t(a), a1 = std::uint64_t(a >> 64);
    const std::uint64_t b0 = std::uint64_t(b), b1 = std::uint64_t(b >> 64);
    const uint128 p00 = uint128(a0) * b0, p01 = uint128(a0) * b1, p10 = uint128(a1) * b0, p11 = uint128(a1) * b1;
    const uint128 mid = (p00 >> 64) + std::uint64_t(p01) + std::uint64_t(p10);
    u256 r;
    r.lo = (mid << 64) | std::uint64_t(p00);
    r.hi = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
    return r;
}

u256 add(u256 a, u256 b) {
    u256 r;
    r.lo = a.lo + b.lo;
    r.hi = a.hi + b.hi + (r.lo < a.lo ? 1 : 0);
    return r;
}

u256 sub(u256 a, u256 b) { // a >= b
    u256 r;
    r.lo = a.lo - b.lo;
    r.hi = a.hi - b.hi - (a.lo < b.lo ? 1 : 0);
    return r;
}

bool less(u256 a, u256 b) { return a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo; }

std::uint64_t divmod_small(u256& n, std::uint64_t d) {
    std::uint64_t limbs[4] = {std::uint64_t(n.hi >> 64), std::uint64_t(n.hi), std::uint64_t(n.lo >> 64),
                              std::uint64_t(n.lo)};
    uint128 rem = 0;
    for (std::uint64_t& limb : limbs) {
        const uint128 cur = (rem << 64) | limb;
        limb = std::uint64_t(cur / d);
        rem = cur % d;
    }
    n.hi = (uint128(limbs[0]) << 64) | limbs[1];
    n.lo = (uint128(limbs[2]) << 64) | limbs[3];
    return std::uint64_t(rem);
}

// Long division by a 128-bit divisor: by machine words where the operands
// allow (nearly always), else by shift and subtract.
u256 divmod(u256 n, uint128 d, uint128& rem) {
    if (n.hi == 0) {
        rem = n.lo % d;
        return u256{0, n.lo / d};
    }
    if (d <= ~std::uint64_t(0)) {
        rem = divmod_small(n, std::uint64_t(d));
        return n;
    }
    u256 q;
    uint128 r = 0;
    for (int i = 255; i >= 0; --i) {
        const bool carry = (r >> 127) != 0;
        const uint128 bit = i >= 128 ? (n.hi >> (i - 128)) & 1 : (n.lo >> i) & 1;
        r = (r << 1) | bit;
        if (carry || r >= d) {
            r -= d;
            if (i >= 128) q.hi |= uint128(1) << (i - 128);
            else q.lo |= uint128(1) << i;
        }
    }
    rem = r;
    return q;
}

bool fits(u256 v) { return v.hi == 0 && v.lo <= uint128(int128_max); }

// A magnitude at `scale` as a decimal: digits dropped from the right,
// rounded half away from zero (the most significant dropped digit
// decides), until it fits 127 bits and max_scale.
std::optional<decimal> fit(u256 mag, bool negative, int scale) {
    int dropped_top = -1;
    while ((!fits(mag) || scale > max_scale) && scale > 0) {
        dropped_top = int(divmod_small(mag, 10));
        --scale;
    }
    if (dropped_top >= 5) {
        mag = add(mag, u256{0, 1});
        if (!fits(mag)) {
            if (scale == 0) return std::nullopt;
            if (divmod_small(mag, 10) >= 5) mag = add(mag, u256{0, 1});
            --scale;
        }
    }
    if (!fits(mag)) return std::nullopt;
    const int128 m = int128(mag.lo);
    return normalised(decimal{negative ? -m : m, scale});
}

unsigned digit_count(uint128 v) {
    unsigned n = 1;
    while (n < pow10.size() && v >= pow10[n]) ++n;
    return n;
}

// ---- small arbitrary-precision naturals, for the exact comparison of a
// decimal with a double (ORDER BY's total order): at most a few thousand
// bits, and only when the two have the same integer part.
struct big {
    std::vector<std::uint32_t> limbs; // little-endian

    explicit big(uint128 v) {
        while (v != 0) {
            limbs.push_back(std::uint32_t(v));
            v >>= 32;
        }
    }
    void mul_small(std::uint32_t f) {
        std::uint64_t carry = 0;
        for (std::uint32_t& l : limbs) {
            const std::uint64_t cur = std::uint64_t(l) * f + carry;
            l = std::uint32_t(cur);
            carry = cur >> 32;
        }
        if (carry != 0) limbs.push_back(std::uint32_t(carry));
    }
    void mul_pow10(int e) {
        for (; e >= 9; e -= 9) mul_small(1000000000u);
        for (; e > 0; --e) mul_small(10);
    }
    void shl(int bits) {
        if (limbs.empty()) return;
        limbs.insert(limbs.begin(), std::size_t(bits / 32), 0);
        const int s = bits % 32;
        if (s == 0) return;
        std::uint32_t carry = 0;
        for (std::uint32_t& l : limbs) {
            const std::uint32_t next = l >> (32 - s);
            l = (l << s) | carry;
            carry = next;
        }
        if (carry != 0) limbs.push_back(carry);
    }
    friend int cmp(const big& a, const big& b) {
        if (a.limbs.size() != b.limbs.size()) return a.limbs.size() < b.limbs.size() ? -1 : 1;
        for (std::size_t i = a.limbs.size(); i-- > 0;)
            if (a.limbs[i] != b.limbs[i]) return a.limbs[i] < b.limbs[i] ? -1 : 1;
        return 0;
    }
};

// The XSD double/float lexical space (3.2.5): decimal digits with an
// optional point and exponent, INF, -INF (+INF: XSD 1.1) and NaN.
// Returns the text std::from_chars can read (no leading '+'), or nothing.
std::optional<std::string_view> double_lexical(std::string_view s, bool& negative, bool& inf, bool& nan) {
    negative = inf = nan = false;
    if (s.empty()) return std::nullopt;
    if (s == "NaN") return nan = true, s;
    if (s == "INF" || s == "+INF") return inf = true, s;
    if (s == "-INF") return inf = negative = true, s;
    std::size_t i = 0;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
    const std::size_t start = s[0] == '+' ? 1 : 0;
    std::size_t digits = 0;
    while (i < s.size() && is_digit(s[i])) ++i, ++digits;
    if (i < s.size() && s[i] == '.') {
        ++i;
        while (i < s.size() && is_digit(s[i])) ++i, ++digits;
    }
    if (digits == 0) return std::nullopt;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
        const std::size_t e0 = i;
        while (i < s.size() && is_digit(s[i])) ++i;
        if (i == e0) return std::nullopt;
    }
    if (i != s.size()) return std::nullopt;
    return s.substr(start);
}

// Beyond the type's range, from_chars reports out_of_range without a
// value: XSD 1.1 rounds such forms to an infinity or a zero, decided by
// where the first significant digit sits.
template <class F> double read_floating(std::string_view text, bool negative) {
    F v{};
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc()) return double(v);
    long long exponent = 0, position = 0;
    bool seen_point = false, seen_nonzero = false;
    std::size_t i = text[0] == '-' ? 1 : 0;
    for (; i < text.size() && text[i] != 'e' && text[i] != 'E'; ++i) {
        if (text[i] == '.') {
            seen_point = true;
        } else if (!seen_nonzero) {
            if (text[i] != '0') {
                seen_nonzero = true;
                if (!seen_point) ++position;
            } else if (seen_point) {
                --position;
            }
        } else if (!seen_point) {
            ++position;
        }
    }
    if (i < text.size()) {
        ++i;
        const bool neg_exp = i < text.size() && text[i] == '-';
        if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
        for (; i < text.size(); ++i) exponent = std::min(exponent * 10 + (text[i] - '0'), 1000000000LL);
        if (neg_exp) exponent = -exponent;
    }
    const double big_or_zero = (seen_nonzero && position + exponent > 0) ? HUGE_VAL : 0.0;
    return negative ? -big_or_zero : big_or_zero;
}

// The shortest digits that read back as the value (as float or double):
// the mantissa's digits and the decimal exponent of the first one.
struct shortest {
    char digits[24];
    int count = 0;
    int exponent = 0; // value = 0.d1d2d3... * 10^(exponent + 1)
    bool negative = false;
};

shortest shortest_digits(double v, bool as_float) {
    char buf[64];
    const auto res = as_float ? std::to_chars(buf, buf + sizeof buf, float(v), std::chars_format::scientific)
                              : std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
    shortest s;
    const char* p = buf;
    if (*p == '-') s.negative = true, ++p;
    for (; p < res.ptr && *p != 'e'; ++p)
        if (is_digit(*p) && s.count < int(sizeof s.digits)) s.digits[s.count++] = *p;
    if (p < res.ptr) std::from_chars(p[1] == '+' ? p + 2 : p + 1, res.ptr, s.exponent);
    while (s.count > 1 && s.digits[s.count - 1] == '0') --s.count;
    return s;
}

std::optional<decimal> shortest_to_decimal(double v, bool as_float) {
    if (!std::isfinite(v)) return std::nullopt;
    if (v == 0) return decimal{};
    const shortest s = shortest_digits(v, as_float);
    uint128 m = 0;
    for (int i = 0; i < s.count; ++i) m = m * 10 + uint128(s.digits[i] - '0');
    int scale = s.count - 1 - s.exponent;
    if (scale < 0) {
        if (-scale >= int(pow10.size())) return std::nullopt;
        const u256 p = mul_wide(m, pow10[std::size_t(-scale)]);
        if (!fits(p)) return std::nullopt;
        m = p.lo;
        scale = 0;
    }
    return fit(u256{0, m}, s.negative, scale);
}

std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a / b - ((a % b != 0 && (a < 0) != (b < 0)) ? 1 : 0); }

bool leap_year(std::int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int days_in_month(std::int64_t y, int m) {
    static constexpr int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && leap_year(y) ? 29 : days[m - 1];
}

// Days since 1970-01-01 of the proleptic Gregorian date (H. Hinnant's
// days_from_civil), year 0 being 1 BCE as XSD 1.1 counts.
int128 days_from_civil(std::int64_t y, int m, int d) {
    y -= m <= 2 ? 1 : 0;
    const std::int64_t era = floor_div(y, 400);
    const std::int64_t yoe = y - era * 400;
    const std::int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return int128(era) * 146097 + doe - 719468;
}

void civil_from_days(std::int64_t z, std::int64_t& y, int& m, int& d) {
    z += 719468;
    const std::int64_t era = floor_div(z, 146097);
    const std::int64_t doe = z - era * 146097;
    const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const std::int64_t mp = (5 * doy + 2) / 153;
    d = int(doy - (153 * mp + 2) / 5 + 1);
    m = int(mp < 10 ? mp + 3 : mp - 9);
    y = yoe + era * 400 + (m <= 2 ? 1 : 0);
}

// Integer part (toward zero) and remainder of m / 10^scale.
void split(decimal d, int128& q, int128& r) {
    if (d.scale >= int(pow10.size())) {
        q = 0;
        r = d.m;
        return;
    }
    const auto p = int128(pow10[std::size_t(d.scale)]);
    q = d.m / p;
    r = d.m % p;
}

// A point on the time line: whole seconds since the epoch and the
// fraction of the next one (a decimal in [0, 1)).
struct instant {
    int128 seconds = 0;
    decimal fraction;
};

instant instant_of(const date_time& t, int shift_minutes) {
    int128 whole = 0, fraction = 0;
    split(t.second, whole, fraction);
    instant i;
    i.seconds = days_from_civil(t.year, t.month, t.day) * 86400 + t.hour * 3600 + t.minute * 60 + whole -
                int128(shift_minutes) * 60;
    i.fraction = decimal{fraction, t.second.scale};
    return i;
}

int compare_instants(const instant& a, const instant& b) {
    if (a.seconds != b.seconds) return a.seconds < b.seconds ? -1 : 1;
    return decimal_compare(a.fraction, b.fraction);
}

bool parse_2(std::string_view s, std::size_t at, int& out) {
    if (at + 2 > s.size() || !is_digit(s[at]) || !is_digit(s[at + 1])) return false;
    out = (s[at] - '0') * 10 + (s[at + 1] - '0');
    return true;
}

// "-?YYYY-MM-DD" at the start of s; the index past it.
parse_status parse_ymd(std::string_view s, std::size_t& i, date_time& out) {
    i = 0;
    const bool negative = !s.empty() && s[0] == '-';
    if (negative) ++i;
    const std::size_t y0 = i;
    while (i < s.size() && is_digit(s[i])) ++i;
    const std::size_t year_digits = i - y0;
    if (year_digits < 4 || (year_digits > 4 && s[y0] == '0')) return parse_status::invalid;
    if (year_digits > 15) return parse_status::out_of_range;
    std::int64_t year = 0;
    for (std::size_t k = y0; k < i; ++k) year = year * 10 + (s[k] - '0');
    out.year = negative ? -year : year;
    if (i >= s.size() || s[i] != '-' || !parse_2(s, i + 1, out.month) || i + 3 >= s.size() || s[i + 3] != '-' ||
        !parse_2(s, i + 4, out.day))
        return parse_status::invalid;
    i += 6;
    if (out.month < 1 || out.month > 12 || out.day < 1 || out.day > days_in_month(out.year, out.month))
        return parse_status::invalid;
    return parse_status::ok;
}

// The timezone at s[i..]: nothing, "Z" or "(+|-)hh:mm" (at most 14:00).
bool parse_tz(std::string_view s, std::size_t i, date_time& out) {
    out.has_tz = false;
    out.tz_minutes = 0;
    out.tz_text = {};
    if (i == s.size()) return true;
    if (s.substr(i) == "Z") {
        out.has_tz = true;
        out.tz_text = s.substr(i);
        return true;
    }
    int h = 0, m = 0;
    if (s.size() - i != 6 || (s[i] != '+' && s[i] != '-') || !parse_2(s, i + 1, h) || s[i + 3] != ':' ||
        !parse_2(s, i + 4, m) || m > 59 || h > 14 || (h == 14 && m != 0))
        return false;
    out.has_tz = true;
    out.tz_minutes = (s[i] == '-' ? -1 : 1) * (h * 60 + m);
    out.tz_text = s.substr(i);
    return true;
}

void add_one_day(date_time& t) {
    if (++t.day > days_in_month(t.year, t.month)) {
        t.day = 1;
        if (++t.month > 12) {
            t.month = 1;
            ++t.year;
        }
    }
}

void append_2(std::string& out, int v) {
    out += char('0' + v / 10);
    out += char('0' + v % 10);
}

} // namespace

std::string_view trim_xml_space(std::string_view s) {
    auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
    while (!s.empty() && space(s.front())) s.remove_prefix(1);
    while (!s.empty() && space(s.back())) s.remove_suffix(1);
    return s;
}

type_info type_of_datatype(std::string_view iri) {
    if (iri.empty()) return {value_type::string};
    if (!iri.starts_with(xsd_ns)) return {iri == rdf_lang_string ? value_type::lang_string : value_type::other};
    const std::string_view n = iri.substr(xsd_ns.size());
    using s = integer_subtype;
    using v = value_type;
    // One comparison per name: the operators ask for every row.
    switch (n.size()) {
    case 3:
        if (n == "int") return {v::integer, s::int_};
        break;
    case 4:
        if (n == "date") return {v::date};
        if (n == "long") return {v::integer, s::long_};
        if (n == "byte") return {v::integer, s::byte_};
        break;
    case 5:
        if (n == "float") return {v::float_};
        if (n == "short") return {v::integer, s::short_};
        break;
    case 6:
        if (n == "string") return {v::string};
        if (n == "double") return {v::double_};
        break;
    case 7:
        if (n == "integer") return {v::integer, s::integer};
        if (n == "decimal") return {v::decimal};
        if (n == "boolean") return {v::boolean};
        break;
    case 8:
        if (n == "dateTime") return {v::date_time};
        break;
    case 11:
        if (n == "unsignedInt") return {v::integer, s::unsigned_int};
        break;
    case 12:
        if (n == "unsignedLong") return {v::integer, s::unsigned_long};
        if (n == "unsignedByte") return {v::integer, s::unsigned_byte};
        break;
    case 13:
        if (n == "unsignedShort") return {v::integer, s::unsigned_short};
        break;
    case 15:
        if (n == "positiveInteger") return {v::integer, s::positive};
        if (n == "negativeInteger") return {v::integer, s::negative};
        break;
    case 18:
        if (n == "nonNegativeInteger") return {v::integer, s::non_negative};
        if (n == "nonPositiveInteger") return {v::integer, s::non_positive};
        break;
    default: break;
    }
    return {v::other};
}

type_info type_of(const term& t) {
    if (t.kind != term_kind::literal) return {value_type::not_literal};
    if (!t.lang.empty()) return {value_type::lang_string};
    const type_info info = type_of_datatype(t.datatype);
    // rdf:langString without a tag is no string literal (RDF 1.1 3.3).
    return info.type == value_type::lang_string ? type_info{value_type::other} : info;
}

bool in_range(integer_subtype sub, int128 v) {
    using s = integer_subtype;
    switch (sub) {
    case s::integer: return true;
    case s::non_positive: return v <= 0;
    case s::negative: return v < 0;
    case s::long_: return v >= -(int128(1) << 63) && v < (int128(1) << 63);
    case s::int_: return v >= -(int128(1) << 31) && v < (int128(1) << 31);
    case s::short_: return v >= -32768 && v <= 32767;
    case s::byte_: return v >= -128 && v <= 127;
    case s::non_negative: return v >= 0;
    case s::unsigned_long: return v >= 0 && v < (int128(1) << 64);
    case s::unsigned_int: return v >= 0 && v < (int128(1) << 32);
    case s::unsigned_short: return v >= 0 && v <= 65535;
    case s::unsigned_byte: return v >= 0 && v <= 255;
    case s::positive: return v > 0;
    }
    return false;
}

parse_status parse_integer(std::string_view s, int128& out) {
    s = trim_xml_space(s);
    std::size_t i = 0;
    bool negative = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
    if (i == s.size()) return parse_status::invalid;
    for (std::size_t k = i; k < s.size(); ++k)
        if (!is_digit(s[k])) return parse_status::invalid;
    if (s.size() - i <= 18) { // in 64 bits
        std::uint64_t v = 0;
        for (; i < s.size(); ++i) v = v * 10 + std::uint64_t(s[i] - '0');
        out = negative ? -int128(v) : int128(v);
        return parse_status::ok;
    }
    uint128 v = 0;
    for (; i < s.size(); ++i) {
        const uint128 next = v * 10 + uint128(s[i] - '0');
        if (v > uint128(int128_max) / 10 || next > uint128(int128_max)) return parse_status::out_of_range;
        v = next;
    }
    out = negative ? -int128(v) : int128(v);
    return parse_status::ok;
}

parse_status parse_decimal(std::string_view s, decimal& out) {
    s = trim_xml_space(s);
    std::size_t i = 0;
    bool negative = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
    const std::size_t int0 = i;
    while (i < s.size() && is_digit(s[i])) ++i;
    const std::size_t int1 = i;
    std::size_t frac0 = i, frac1 = i;
    if (i < s.size() && s[i] == '.') {
        frac0 = ++i;
        while (i < s.size() && is_digit(s[i])) ++i;
        frac1 = i;
    }
    if (i != s.size() || (int1 == int0 && frac1 == frac0)) return parse_status::invalid;
    while (frac1 > frac0 && s[frac1 - 1] == '0') --frac1;
    if (int(frac1 - frac0) > max_scale) return parse_status::out_of_range;
    uint128 v = 0;
    for (std::size_t k = int0; k < frac1; ++k) {
        if (k == int1) k = frac0;
        if (k == frac1) break;
        const uint128 next = v * 10 + uint128(s[k] - '0');
        if (v > uint128(int128_max) / 10 || next > uint128(int128_max)) return parse_status::out_of_range;
        v = next;
    }
    out = decimal{negative ? -int128(v) : int128(v), int(frac1 - frac0)};
    return parse_status::ok;
}

parse_status parse_double(std::string_view s, double& out) {
    bool negative = false, inf = false, nan = false;
    const auto text = double_lexical(trim_xml_space(s), negative, inf, nan);
    if (!text) return parse_status::invalid;
    if (nan) out = std::nan("");
    else if (inf) out = negative ? -HUGE_VAL : HUGE_VAL;
    else out = read_floating<double>(*text, negative);
    return parse_status::ok;
}

parse_status parse_float(std::string_view s, double& out) {
    bool negative = false, inf = false, nan = false;
    const auto text = double_lexical(trim_xml_space(s), negative, inf, nan);
    if (!text) return parse_status::invalid;
    if (nan) out = std::nan("");
    else if (inf) out = negative ? -HUGE_VAL : HUGE_VAL;
    else out = read_floating<float>(*text, negative);
    return parse_status::ok;
}

parse_status parse_numeric(type_info t, std::string_view lexical, numeric& out) {
    switch (t.type) {
    case value_type::integer: {
        out.kind = numeric_kind::integer;
        out.dec.scale = 0;
        const parse_status st = parse_integer(lexical, out.dec.m);
        if (st == parse_status::ok && !in_range(t.sub, out.dec.m)) return parse_status::invalid;
        return st;
    }
    case value_type::decimal: out.kind = numeric_kind::decimal; return parse_decimal(lexical, out.dec);
    case value_type::float_: out.kind = numeric_kind::float_; return parse_float(lexical, out.dbl);
    case value_type::double_: out.kind = numeric_kind::double_; return parse_double(lexical, out.dbl);
    default: return parse_status::invalid;
    }
}

std::optional<numeric> numeric_value(const term& t) {
    const type_info info = type_of(t);
    if (!is_numeric_type(info.type)) return std::nullopt;
    numeric n;
    if (parse_numeric(info, t.value, n) != parse_status::ok) return std::nullopt;
    return n;
}

std::optional<bool> boolean_value(const term& t) {
    if (type_of(t).type != value_type::boolean) return std::nullopt;
    const std::string_view s = trim_xml_space(t.value);
    if (s == "true" || s == "1") return true;
    if (s == "false" || s == "0") return false;
    return std::nullopt;
}

// ---- decimal arithmetic

decimal normalised(decimal d) {
    if (d.m == 0) return decimal{};
    while (d.scale > 0 && d.m % 10 == 0) {
        d.m /= 10;
        --d.scale;
    }
    return d;
}

namespace {

// |d| with its fraction cut to `scale` digits, rounded half away from zero.
decimal round_to_scale(decimal d, int scale) {
    if (d.scale <= scale) return d;
    u256 mag{0, magnitude(d.m)};
    int top = 0;
    for (int s = d.scale; s > scale; --s) top = int(divmod_small(mag, 10));
    if (top >= 5) mag = add(mag, u256{0, 1});
    const int128 m = int128(mag.lo); // no larger than before: it fits
    return decimal{d.m < 0 ? -m : m, scale};
}

std::optional<decimal> add_signed(decimal a, decimal b) {
    if (a.m == 0) return normalised(b);
    if (b.m == 0) return normalised(a);
    // Aligning scales multiplies by at most 10^38, so the sum fits 256 bits;
    // a fraction finer than that is rounded first (it falls below the 38
    // digits the result keeps anyway).
    if (a.scale > b.scale + 38) a = round_to_scale(a, b.scale + 38);
    if (b.scale > a.scale + 38) b = round_to_scale(b, a.scale + 38);
    const int scale = std::max(a.scale, b.scale);
    const u256 ma = mul_wide(magnitude(a.m), pow10[std::size_t(scale - a.scale)]);
    const u256 mb = mul_wide(magnitude(b.m), pow10[std::size_t(scale - b.scale)]);
    const bool na = a.m < 0, nb = b.m < 0;
    if (na == nb) return fit(add(ma, mb), na, scale);
    if (less(ma, mb)) return fit(sub(mb, ma), nb, scale);
    return fit(sub(ma, mb), na, scale);
}

} // namespace

std::optional<decimal> decimal_add(decimal a, decimal b) { return add_signed(a, b); }
std::optional<decimal> decimal_sub(decimal a, decimal b) { return add_signed(a, decimal{-b.m, b.scale}); }

std::optional<decimal> decimal_mul(decimal a, decimal b) {
    return fit(mul_wide(magnitude(a.m), magnitude(b.m)), (a.m < 0) != (b.m < 0), a.scale + b.scale);
}

std::optional<decimal> decimal_div(decimal a, decimal b) {
    if (b.m == 0) return std::nullopt;
    // N * 10^k / D, with k for 24 fractional digits in the quotient, or as
    // many as 256 bits allow (then the quotient exceeds 127 bits, and fit()
    // rounds it to 38 digits or reports the overflow); rounded half up on
    // the remainder.
    const int want = 24 - (a.scale - b.scale);
    u256 n{0, magnitude(a.m)};
    int k = 0;
    if (want > 0 && want < int(pow10.size())) { // a 127-bit N times 10^38 fits 256 bits
        n = mul_wide(n.lo, pow10[std::size_t(want)]);
        k = want;
    }
    for (; k < want; ++k) {
        const u256 low = mul_wide(n.lo, 10);
        if (n.hi > (~uint128(0) - low.hi) / 10) break;
        n = u256{n.hi * 10 + low.hi, low.lo};
    }
    const uint128 d = magnitude(b.m);
    uint128 rem = 0;
    u256 q = divmod(n, d, rem);
    if (rem >= d - rem) q = add(q, u256{0, 1});
    int scale = a.scale - b.scale + k;
    if (scale < 0) {
        if (q.hi != 0 || -scale >= int(pow10.size())) return std::nullopt;
        q = mul_wide(q.lo, pow10[std::size_t(-scale)]);
        scale = 0;
    }
    return fit(q, (a.m < 0) != (b.m < 0), scale);
}

int decimal_compare(decimal a, decimal b) {
    if (a.scale == b.scale) return a.m < b.m ? -1 : a.m > b.m ? 1 : 0;
    const int sa = a.m < 0 ? -1 : a.m > 0 ? 1 : 0, sb = b.m < 0 ? -1 : b.m > 0 ? 1 : 0;
    if (sa != sb) return sa < sb ? -1 : 1;
    if (sa == 0) return 0;
    // The usual case: the one with fewer fractional digits scales up to the
    // other's within 127 bits.
    decimal& lo = a.scale < b.scale ? a : b;
    const int diff = std::abs(a.scale - b.scale);
    int128 scaled = 0;
    if (diff < int(pow10.size()) && !__builtin_mul_overflow(lo.m, int128(pow10[std::size_t(diff)]), &scaled)) {
        lo.m = scaled;
        return a.m < b.m ? -1 : a.m > b.m ? 1 : 0;
    }
    // Magnitudes by their decimal exponents first (the value lies in
    // [10^(e-1), 10^e)), then digit by digit at the same length.
    const uint128 ma = magnitude(a.m), mb = magnitude(b.m);
    const int da = int(digit_count(ma)), db = int(digit_count(mb));
    const long ea = long(da) - a.scale, eb = long(db) - b.scale;
    int mag;
    if (ea != eb) {
        mag = ea < eb ? -1 : 1;
    } else {
        const u256 xa = mul_wide(ma, pow10[std::size_t(std::max(0, db - da))]);
        const u256 xb = mul_wide(mb, pow10[std::size_t(std::max(0, da - db))]);
        mag = less(xa, xb) ? -1 : less(xb, xa) ? 1 : 0;
    }
    return sa * mag;
}

double decimal_to_double(decimal d) {
    const uint128 mag = magnitude(d.m);
    static constexpr double exact_pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                             1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    // Both operands exact: one correctly rounded division.
    if (mag < (uint128(1) << 53) && d.scale <= 22) return double(d.m) / exact_pow10[d.scale];
    std::string text;
    append_int128(text, d.m);
    text += "e-";
    text += std::to_string(d.scale);
    double out = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    if (ec == std::errc::result_out_of_range) return d.m < 0 ? -0.0 : 0.0; // below the smallest double
    return out;
}

std::optional<decimal> double_to_decimal(double d, bool as_float) { return shortest_to_decimal(d, as_float); }

int decimal_compare_double(decimal a, double d) {
    if (d == 0) return a.m < 0 ? -1 : a.m > 0 ? 1 : 0;
    const int sa = a.m < 0 ? -1 : a.m > 0 ? 1 : 0, sd = d < 0 ? -1 : 1;
    if (sa != sd) return sa < sd ? -1 : 1;
    // Same sign: compare |a| = M / 10^S with |d| = F * 2^E (F a 53-bit
    // integer) exactly, as M * 2^-E against F * 10^S (or M against
    // F * 2^E * 10^S), in arbitrary precision.
    int e2 = 0;
    const double f = std::frexp(std::fabs(d), &e2);
    const auto fm = std::uint64_t(std::ldexp(f, 53));
    const int e = e2 - 53;
    big lhs(magnitude(a.m)), rhs(fm);
    rhs.mul_pow10(a.scale);
    if (e < 0) lhs.shl(-e);
    else rhs.shl(e);
    return sa * cmp(lhs, rhs);
}

decimal decimal_truncate(decimal d) {
    int128 q, r;
    split(d, q, r);
    return decimal{q, 0};
}

decimal decimal_floor(decimal d) {
    int128 q, r;
    split(d, q, r);
    return decimal{q - (r < 0 ? 1 : 0), 0};
}

decimal decimal_ceil(decimal d) {
    int128 q, r;
    split(d, q, r);
    return decimal{q + (r > 0 ? 1 : 0), 0};
}

decimal decimal_round(decimal d) {
    int128 q, r;
    split(d, q, r);
    if (r == 0) return decimal{q, 0};
    // fn:round: the nearest integer, a half toward positive infinity.
    if (d.scale >= int(pow10.size())) return decimal{0, 0}; // |d| < 0.17
    const uint128 twice = magnitude(r) * 2, unit = pow10[std::size_t(d.scale)];
    if (r > 0) return decimal{q + (twice >= unit ? 1 : 0), 0};
    return decimal{q - (twice > unit ? 1 : 0), 0};
}

double to_double(const numeric& n) {
    switch (n.kind) {
    case numeric_kind::integer: return double(n.dec.m);
    case numeric_kind::decimal: return decimal_to_double(n.dec);
    default: return n.dbl;
    }
}

// ---- lexical forms

namespace {
// By chunks of 19 digits: 128-bit divisions are library calls, 64-bit
// ones are not.
void append_uint128(std::string& out, uint128 v) {
    char buf[24];
    if (v <= ~std::uint64_t(0)) {
        const auto r = std::to_chars(buf, buf + sizeof buf, std::uint64_t(v));
        out.append(buf, r.ptr);
        return;
    }
    constexpr std::uint64_t p19 = 10000000000000000000ULL;
    append_uint128(out, v / p19);
    const auto r = std::to_chars(buf, buf + sizeof buf, std::uint64_t(v % p19));
    out.append(std::size_t(19 - (r.ptr - buf)), '0');
    out.append(buf, r.ptr);
}
} // namespace

void append_int128(std::string& out, int128 v) {
    if (v < 0) out += '-';
    append_uint128(out, magnitude(v));
}

std::string format_decimal(decimal d) {
    d = normalised(d);
    std::string digits;
    append_int128(digits, d.m < 0 ? -d.m : d.m);
    std::string out;
    if (d.m < 0) out += '-';
    if (d.scale == 0) return out + digits + ".0";
    if (int(digits.size()) <= d.scale) digits.insert(0, std::size_t(d.scale) - digits.size() + 1, '0');
    out.append(digits, 0, digits.size() - std::size_t(d.scale));
    out += '.';
    out.append(digits, digits.size() - std::size_t(d.scale));
    return out;
}

std::string format_double(double d, bool as_float) {
    if (std::isnan(d)) return "NaN";
    if (std::isinf(d)) return d < 0 ? "-INF" : "INF";
    if (d == 0) return std::signbit(d) ? "-0.0E0" : "0.0E0";
    const shortest s = shortest_digits(d, as_float);
    std::string out;
    if (s.negative) out += '-';
    out += s.digits[0];
    out += '.';
    if (s.count == 1) out += '0';
    else out.append(s.digits + 1, std::size_t(s.count - 1));
    out += 'E';
    out += std::to_string(s.exponent);
    return out;
}

namespace {
std::string xpath_decimal_string(decimal d) {
    d = normalised(d);
    std::string out = format_decimal(d);
    if (d.scale == 0) out.resize(out.size() - 2); // "1.0" -> "1"
    return out;
}
} // namespace

std::string xpath_string(const numeric& n) {
    switch (n.kind) {
    case numeric_kind::integer: {
        std::string out;
        append_int128(out, n.dec.m);
        return out;
    }
    case numeric_kind::decimal: return xpath_decimal_string(n.dec);
    default: break;
    }
    const bool as_float = n.kind == numeric_kind::float_;
    const double v = n.dbl;
    if (v == 0) return std::signbit(v) ? "-0" : "0";
    const double a = std::fabs(v);
    if (std::isfinite(v) && a >= 1e-6 && a < 1e6)
        if (const auto d = shortest_to_decimal(v, as_float)) return xpath_decimal_string(*d);
    return format_double(v, as_float);
}

term make_typed(std::string value, std::string_view local) {
    term t;
    t.kind = term_kind::literal;
    t.value = std::move(value);
    t.datatype.reserve(xsd_ns.size() + local.size());
    t.datatype = xsd_ns;
    t.datatype += local;
    return t;
}

term make_string(std::string value, std::string lang) {
    term t;
    t.kind = term_kind::literal;
    t.value = std::move(value);
    t.lang = std::move(lang);
    return t;
}

term make_integer(int128 v) {
    std::string s;
    append_int128(s, v);
    return make_typed(std::move(s), "integer");
}
term make_decimal(decimal d) { return make_typed(format_decimal(d), "decimal"); }
term make_double(double d) { return make_typed(format_double(d, false), "double"); }
term make_float(double d) { return make_typed(format_double(d, true), "float"); }

term numeric_term(const numeric& n) {
    switch (n.kind) {
    case numeric_kind::integer: return make_integer(n.dec.m);
    case numeric_kind::decimal: return make_decimal(n.dec);
    case numeric_kind::float_: return make_float(n.dbl);
    case numeric_kind::double_: return make_double(n.dbl);
    }
    return make_double(n.dbl);
}

// ---- dates and times

parse_status parse_date_time(std::string_view s, date_time& out) {
    s = trim_xml_space(s);
    std::size_t i = 0;
    if (const parse_status st = parse_ymd(s, i, out); st != parse_status::ok) return st;
    if (i >= s.size() || s[i] != 'T' || !parse_2(s, i + 1, out.hour) || i + 3 >= s.size() || s[i + 3] != ':' ||
        !parse_2(s, i + 4, out.minute) || i + 6 >= s.size() || s[i + 6] != ':')
        return parse_status::invalid;
    i += 7;
    const std::size_t sec0 = i;
    if (i + 2 > s.size() || !is_digit(s[i]) || !is_digit(s[i + 1])) return parse_status::invalid;
    i += 2;
    if (i < s.size() && s[i] == '.') {
        const std::size_t f0 = ++i;
        while (i < s.size() && is_digit(s[i])) ++i;
        if (i == f0) return parse_status::invalid;
    }
    if (parse_decimal(s.substr(sec0, i - sec0), out.second) != parse_status::ok) return parse_status::invalid;
    if (!parse_tz(s, i, out)) return parse_status::invalid;
    if (out.minute > 59 || decimal_compare(out.second, decimal{60, 0}) >= 0) return parse_status::invalid;
    if (out.hour == 24) {
        // 24:00:00 is the first instant of the next day (XSD 3.3.8).
        if (out.minute != 0 || out.second.m != 0) return parse_status::invalid;
        out.hour = 0;
        add_one_day(out);
    } else if (out.hour > 23) {
        return parse_status::invalid;
    }
    return parse_status::ok;
}

parse_status parse_date(std::string_view s, date_time& out) {
    s = trim_xml_space(s);
    std::size_t i = 0;
    if (const parse_status st = parse_ymd(s, i, out); st != parse_status::ok) return st;
    out.hour = out.minute = 0;
    out.second = decimal{};
    return parse_tz(s, i, out) ? parse_status::ok : parse_status::invalid;
}

std::optional<date_time> date_time_value(const term& t) {
    if (type_of(t).type != value_type::date_time) return std::nullopt;
    date_time d;
    if (parse_date_time(t.value, d) != parse_status::ok) return std::nullopt;
    return d;
}

std::optional<int> date_time_compare(const date_time& a, const date_time& b) {
    if (a.has_tz == b.has_tz) return compare_instants(instant_of(a, a.tz_minutes), instant_of(b, b.tz_minutes));
    // One without a timezone stands for any of -14:00..+14:00: the order is
    // known only if it is the same at both ends.
    const date_time& local = a.has_tz ? b : a;
    const date_time& zoned = a.has_tz ? a : b;
    const instant z = instant_of(zoned, zoned.tz_minutes);
    const int earliest = compare_instants(z, instant_of(local, 14 * 60));
    const int latest = compare_instants(z, instant_of(local, -14 * 60));
    if (earliest < 0 && latest < 0) return a.has_tz ? -1 : 1;
    if (earliest > 0 && latest > 0) return a.has_tz ? 1 : -1;
    return std::nullopt;
}

int date_time_order(const date_time& a, const date_time& b) {
    return compare_instants(instant_of(a, a.tz_minutes), instant_of(b, b.tz_minutes));
}

std::string format_date_time(const date_time& d) {
    std::string out;
    if (d.year < 0) out += '-';
    const std::string year = std::to_string(d.year < 0 ? -d.year : d.year);
    if (year.size() < 4) out.append(4 - year.size(), '0');
    out += year;
    out += '-';
    append_2(out, d.month);
    out += '-';
    append_2(out, d.day);
    out += 'T';
    append_2(out, d.hour);
    out += ':';
    append_2(out, d.minute);
    out += ':';
    const decimal sec = normalised(d.second);
    std::string digits = format_decimal(sec); // "5.25" or "5.0"
    if (sec.scale == 0) digits.resize(digits.size() - 2);
    if (digits.find('.') == 1 || digits.size() == 1) out += '0';
    out += digits;
    if (d.has_tz) {
        if (d.tz_minutes == 0) {
            out += 'Z';
        } else {
            const int m = d.tz_minutes < 0 ? -d.tz_minutes : d.tz_minutes;
            out += d.tz_minutes < 0 ? '-' : '+';
            append_2(out, m / 60);
            out += ':';
            append_2(out, m % 60);
        }
    }
    return out;
}

date_time date_time_from_unix_ms(std::int64_t ms) {
    date_time d;
    const std::int64_t days = floor_div(ms, 86400000);
    std::int64_t rest = ms - days * 86400000;
    civil_from_days(days, d.year, d.month, d.day);
    d.hour = int(rest / 3600000);
    rest %= 3600000;
    d.minute = int(rest / 60000);
    rest %= 60000;
    d.second = normalised(decimal{rest, 3});
    d.has_tz = true;
    d.tz_minutes = 0;
    return d;
}

} // namespace rdf::sparql::detail
