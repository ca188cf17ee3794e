#pragma once
// The XSD datatypes behind SPARQL's operators and functions: which type a
// literal has, its value (numerics, booleans, dateTimes, dates), and the
// canonical lexical forms of results. Parsing reads string_views and
// allocates nothing: the operators call it for every row.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <rdf/term.hpp>

namespace rdf::sparql::detail {

// xsd:integer and xsd:decimal values in 128 bits (38 significant digits):
// __int128 is a GCC and clang extension, which -Wpedantic would report
// without __extension__.
__extension__ typedef __int128 int128;
__extension__ typedef unsigned __int128 uint128;

inline constexpr int128 int128_max = int128((uint128(1) << 127) - 1);

inline constexpr std::string_view xsd_ns = "http://www.w3.org/2001/XMLSchema#";

/// What a term is, for the operators: the XSD types this file gives values
/// to, or other (an IRI, a blank node, a literal of any other datatype).
enum class value_type : std::uint8_t {
    not_literal, ///< IRI or blank node
    string,      ///< simple literal or xsd:string
    lang_string,
    boolean,
    integer, ///< xsd:integer and the types derived from it
    decimal,
    float_,
    double_,
    date_time,
    date,
    other, ///< any other datatype
};

/// The integer-derived types' ranges (XSD part 2, 3.3.13-3.3.25).
enum class integer_subtype : std::uint8_t {
    integer, non_positive, negative, long_, int_, short_, byte_, non_negative, unsigned_long, unsigned_int,
    unsigned_short, unsigned_byte, positive,
};

struct type_info {
    value_type type = value_type::other;
    integer_subtype sub = integer_subtype::integer;
};

/// The datatype IRI's type (an empty IRI: a simple literal).
type_info type_of_datatype(std::string_view iri);
type_info type_of(const term& t);

inline bool is_numeric_type(value_type t) {
    return t == value_type::integer || t == value_type::decimal || t == value_type::float_ || t == value_type::double_;
}
/// A simple literal or xsd:string (RDF 1.1: one term; term.hpp stores
/// both with an empty datatype, and xsd:string spelt out is read the same).
inline bool is_simple_literal(const term& t) {
    return t.kind == term_kind::literal && t.lang.empty() && (t.datatype.empty() || t.datatype == xsd_string);
}
/// A string literal (17.4.3.1.1's argument): simple, xsd:string or tagged.
inline bool is_string_literal(const term& t) {
    return t.kind == term_kind::literal && (!t.lang.empty() || t.datatype.empty() || t.datatype == xsd_string);
}

enum class parse_status : std::uint8_t { ok, invalid, out_of_range };

/// XSD's whiteSpace collapse for the types here: leading and trailing
/// spaces, tabs, CRs and LFs do not count (inner ones make the form
/// invalid).
std::string_view trim_xml_space(std::string_view s);

/// An xsd:decimal (and integer) value: m / 10^scale, scale >= 0, trailing
/// zeros of the fraction removed when normalised.
struct decimal {
    int128 m = 0;
    int scale = 0;
};

enum class numeric_kind : std::uint8_t { integer, decimal, float_, double_ };

/// A numeric value of the promotion ladder: integer and decimal in `dec`
/// (integer: scale 0), float and double in `dbl` (a float's value exactly).
struct numeric {
    numeric_kind kind = numeric_kind::integer;
    decimal dec;
    double dbl = 0;
};

parse_status parse_integer(std::string_view lexical, int128& out);
parse_status parse_decimal(std::string_view lexical, decimal& out);
parse_status parse_double(std::string_view lexical, double& out);
parse_status parse_float(std::string_view lexical, double& out);
/// The lexical form read as the numeric type `t` (integer-derived types
/// with their range).
parse_status parse_numeric(type_info t, std::string_view lexical, numeric& out);
/// A term's numeric value: nullopt for anything but a valid numeric literal
/// (out of this file's range included).
std::optional<numeric> numeric_value(const term& t);
std::optional<bool> boolean_value(const term& t);
bool in_range(integer_subtype sub, int128 v);

decimal normalised(decimal d);
std::optional<decimal> decimal_add(decimal a, decimal b);
std::optional<decimal> decimal_sub(decimal a, decimal b);
std::optional<decimal> decimal_mul(decimal a, decimal b);
/// nullopt for b == 0 too.
std::optional<decimal> decimal_div(decimal a, decimal b);
int decimal_compare(decimal a, decimal b);
/// Rounded to the nearest double.
double decimal_to_double(decimal d);
/// The shortest digits that read back as the double (as the float, when
/// as_float) as a decimal; nullopt for NaN, infinities and values beyond
/// 38 digits.
std::optional<decimal> double_to_decimal(double d, bool as_float = false);
/// Exact comparison of a decimal and a finite double.
int decimal_compare_double(decimal a, double d);
decimal decimal_floor(decimal d);
decimal decimal_ceil(decimal d);
decimal decimal_round(decimal d); ///< half toward positive infinity (fn:round)
decimal decimal_truncate(decimal d);
double to_double(const numeric& n);

void append_int128(std::string& out, int128 v);
/// XSD 1.0 canonical decimal: "2.0", "-0.5", "0.0".
std::string format_decimal(decimal d);
/// XSD 1.0 canonical double / float: "1.0E0", "-3.21E4", "INF", "NaN".
std::string format_double(double d, bool as_float);
/// XPath's cast to xs:string (F&O 17.1.2): decimals without ".0" when
/// whole, doubles in [1e-6, 1e6) as decimals, else canonical.
std::string xpath_string(const numeric& n);

term numeric_term(const numeric& n);
term make_integer(int128 v);
term make_decimal(decimal d);
term make_double(double d);
term make_float(double d);
term make_typed(std::string value, std::string_view datatype_local_name);
term make_string(std::string value, std::string lang = {});

/// xsd:dateTime (and xsd:date, at 00:00:00), normalised: 24:00:00 is the
/// next day's 00:00:00 (XSD 3.3.8). `tz_text` is the timezone as written
/// ("Z", "-08:00"), empty without one.
struct date_time {
    std::int64_t year = 0;
    int month = 1, day = 1, hour = 0, minute = 0;
    decimal second; ///< 0 <= second < 60
    bool has_tz = false;
    int tz_minutes = 0;
    std::string_view tz_text;
};

parse_status parse_date_time(std::string_view lexical, date_time& out);
parse_status parse_date(std::string_view lexical, date_time& out);
std::optional<date_time> date_time_value(const term& t); ///< xsd:dateTime only
/// The XSD order (3.2.7.4): <0, 0, >0, or nullopt when one value has a
/// timezone and the other has not and 14 hours either way could change the
/// answer.
std::optional<int> date_time_compare(const date_time& a, const date_time& b);
/// A total order for ORDER BY: a value without a timezone taken as UTC.
int date_time_order(const date_time& a, const date_time& b);
std::string format_date_time(const date_time& d);
date_time date_time_from_unix_ms(std::int64_t ms);

} // namespace rdf::sparql::detail
