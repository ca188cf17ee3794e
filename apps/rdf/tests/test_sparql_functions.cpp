// SPARQL 1.1's expression values (sparql_functions.hpp): the operator
// mapping and type promotion (17.3), the effective boolean value (17.2.2),
// ORDER BY's order (15.1), every builtin of 17.4 and the XSD casts (17.5).
// Expected values come from the W3C test suites (shared/data/w3c-sparql10
// and -11: expr-ops, type-promotion, expr-equals, open-world, functions,
// cast, regex, boolean-effective-value), from XPath F&O's examples, and
// from known digests; lexical forms are the XSD 1.0 canonical ones the
// header documents.
#include <catch2/catch.hpp>

#include <algorithm>
#include <climits>
#include <initializer_list>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <rdf/sparql_functions.hpp>

#include "test_support.hpp" // this directory's (rdf_test::xsd), not tests/support's

namespace {

namespace sp = rdf::sparql;
using rdf::term;
using rdf::term_kind;

using rdf_test::xsd;

term lit(std::string value, std::string datatype = {}) {
    term t;
    t.kind = term_kind::literal;
    t.value = std::move(value);
    t.datatype = std::move(datatype);
    return t;
}
term typed(std::string value, const std::string& local) { return lit(std::move(value), xsd + local); }
term tagged(std::string value, std::string lang) {
    term t = lit(std::move(value));
    t.lang = std::move(lang);
    return t;
}
term iri(std::string value) {
    term t;
    t.kind = term_kind::iri;
    t.value = std::move(value);
    return t;
}
term blank(std::string label) {
    term t;
    t.kind = term_kind::blank;
    t.value = std::move(label);
    return t;
}
term integer(std::string v) { return typed(std::move(v), "integer"); }
term dec(std::string v) { return typed(std::move(v), "decimal"); }
term dbl(std::string v) { return typed(std::move(v), "double"); }
term flt(std::string v) { return typed(std::move(v), "float"); }
term boolean(std::string v) { return typed(std::move(v), "boolean"); }
term date_time(std::string v) { return typed(std::move(v), "dateTime"); }
term date(std::string v) { return typed(std::move(v), "date"); }

// N-Triples with xsd: abbreviated; "error" for an error.
std::string show(const term& t) {
    std::string k = rdf::key(t);
    const std::string full = "^^<" + xsd;
    if (const auto at = k.find(full); at != std::string::npos) {
        k.replace(at, full.size(), "^^xsd:");
        k.pop_back(); // '>'
    }
    return k;
}
std::string show(const sp::value& v) { return v ? show(*v) : "error"; }
std::string show(const std::optional<bool>& b) { return b ? (*b ? "true" : "false") : "error"; }

struct fixture {
    sp::function_context ctx{sp::function_options{"http://example.org/", 42, 1700000000123, ".b"}};

    std::string call(std::string_view name, std::initializer_list<term> args) {
        const std::vector<term> v(args);
        return show(sp::call(name, v, ctx));
    }
};

std::string arith(char op, const term& a, const term& b) { return show(sp::arithmetic(op, a, b)); }
std::string cmp(sp::compare_op op, const term& a, const term& b) { return show(sp::compare(op, a, b)); }
std::string ebv(const term& t) { return show(sp::effective_boolean_value(t)); }
term unary(const term& t) { return *sp::unary_minus(t); }

using op = sp::compare_op;

} // namespace

TEST_CASE("sparql functions: arithmetic promotes integer < decimal < float < double", "[sparql_functions]") {
    // expr-ops' *-numbers-cast tests: "3" of each type combined with "3" of
    // each type; the result's type is the higher one (17.3, XPath B.1),
    // integer division gives a decimal.
    const std::vector<term> threes = {integer("3"), dec("3"), flt("3"), dbl("3")};
    const char* const types[] = {"integer", "decimal", "float", "double"};
    for (std::size_t i = 0; i < 4; ++i) {
        for (std::size_t j = 0; j < 4; ++j) {
            const std::string type = types[std::max(i, j)];
            INFO(types[i] << " and " << types[j]);
            const auto expect = [&](const std::string& int_form, const std::string& dec_form,
                                    const std::string& floating_form, const std::string& as_type) {
                if (as_type == "integer") return "\"" + int_form + "\"^^xsd:integer";
                if (as_type == "decimal") return "\"" + dec_form + "\"^^xsd:decimal";
                return "\"" + floating_form + "\"^^xsd:" + as_type;
            };
            CHECK(arith('+', threes[i], threes[j]) == expect("6", "6.0", "6.0E0", type));
            CHECK(arith('-', threes[i], threes[j]) == expect("0", "0.0", "0.0E0", type));
            CHECK(arith('*', threes[i], threes[j]) == expect("9", "9.0", "9.0E0", type));
            CHECK(arith('/', threes[i], threes[j]) == expect("", "1.0", "1.0E0", type == "integer" ? "decimal" : type));
        }
    }
}

TEST_CASE("sparql functions: the integer-derived types add as xsd:integer", "[sparql_functions]") {
    // type-promotion tests: byte + short is an xsd:integer, not a short.
    CHECK(arith('+', typed("1", "byte"), typed("1", "short")) == "\"2\"^^xsd:integer");
    CHECK(arith('*', typed("7", "unsignedInt"), typed("-1", "negativeInteger")) == "\"-7\"^^xsd:integer");
    CHECK(arith('+', typed("1", "long"), dec("1")) == "\"2.0\"^^xsd:decimal");
    CHECK(arith('+', typed("1", "positiveInteger"), dbl("1")) == "\"2.0E0\"^^xsd:double");
    // Out of a derived type's range: ill-typed, so no value.
    CHECK(arith('+', typed("300", "byte"), integer("1")) == "error");
    CHECK(arith('+', typed("-1", "nonNegativeInteger"), integer("1")) == "error");
    CHECK(arith('+', typed("0", "positiveInteger"), integer("1")) == "error");
    CHECK(arith('+', typed("18446744073709551615", "unsignedLong"), integer("1")) ==
          "\"18446744073709551616\"^^xsd:integer");
    CHECK(arith('+', typed("18446744073709551616", "unsignedLong"), integer("1")) == "error");
}

TEST_CASE("sparql functions: decimal arithmetic is exact", "[sparql_functions]") {
    // xs:decimal is exact (no binary floating point): 0.1 + 0.2 is 0.3.
    CHECK(arith('+', dec("0.1"), dec("0.2")) == "\"0.3\"^^xsd:decimal");
    CHECK(arith('-', dec("2.5"), dec("2.5")) == "\"0.0\"^^xsd:decimal");
    CHECK(arith('*', dec("1.5"), dec("-1.5")) == "\"-2.25\"^^xsd:decimal");
    CHECK(arith('/', dec("11.1"), integer("5")) == "\"2.22\"^^xsd:decimal"); // agg-avg-01
    CHECK(arith('/', integer("1"), integer("4")) == "\"0.25\"^^xsd:decimal");
    CHECK(arith('/', integer("4"), integer("2")) == "\"2.0\"^^xsd:decimal"); // coalesce01
    // 24 fractional digits, rounded half up.
    CHECK(arith('/', integer("1"), integer("3")) == "\"0.333333333333333333333333\"^^xsd:decimal");
    CHECK(arith('/', integer("2"), integer("3")) == "\"0.666666666666666666666667\"^^xsd:decimal");
    CHECK(arith('/', integer("-2"), integer("3")) == "\"-0.666666666666666666666667\"^^xsd:decimal");
    CHECK(arith('/', dec("1"), dec("0.000000000000000000000000000001")) ==
          "\"1000000000000000000000000000000.0\"^^xsd:decimal");
    CHECK(arith('/', integer("636"), dec("0.00000000000000000000006290909177661783475595")) ==
          "\"10109826450179171600228964.2828080775071\"^^xsd:decimal"); // rounded to 39 digits
    // A divisor of more than 32 bits, and a remainder that decides the
    // rounding (Python's decimal module agrees).
    CHECK(arith('/', dec("91.20"), dec("19.01042282212365707")) == "\"4.79736830965509450314304\"^^xsd:decimal");
    // Sums of very different scales keep 38 digits.
    CHECK(arith('+', dec("100000000000000000000"), dec("0.000000000000000001")) ==
          "\"100000000000000000000.000000000000000001\"^^xsd:decimal");
    // A product beyond 127 bits (38-39 digits) is rounded to fit, not an error.
    CHECK(arith('*', dec("0.333333333333333333333333"), dec("0.333333333333333333333333")) ==
          "\"0.111111111111111111111110888888888888889\"^^xsd:decimal");
    // Whole numbers beyond 128 bits cannot be rounded: XPath's overflow error.
    const term big = integer("80000000000000000000000000000000000000"); // 8e37; 2^127 is 1.7e38
    CHECK(arith('+', big, big) == "\"160000000000000000000000000000000000000\"^^xsd:integer");
    CHECK(arith('*', big, integer("-2")) == "\"-160000000000000000000000000000000000000\"^^xsd:integer");
    CHECK(arith('*', big, integer("3")) == "error");
    CHECK(arith('-', integer("-100000000000000000000000000000000000000"), big) == "error");
    CHECK(arith('*', dec("100000000000000000000000000000000000000"), dec("10")) == "error");
}

TEST_CASE("sparql functions: division by zero", "[sparql_functions]") {
    // Integers and decimals: err:FOAR0001; floats and doubles: IEEE 754.
    CHECK(arith('/', integer("1"), integer("0")) == "error");
    CHECK(arith('/', dec("1.5"), dec("0.0")) == "error");
    CHECK(arith('/', dbl("1"), integer("0")) == "\"INF\"^^xsd:double");
    CHECK(arith('/', dbl("-1"), integer("0")) == "\"-INF\"^^xsd:double");
    CHECK(arith('/', dbl("0"), dbl("0")) == "\"NaN\"^^xsd:double");
    CHECK(arith('/', flt("1"), dec("0")) == "\"INF\"^^xsd:float");
}

TEST_CASE("sparql functions: floating-point results in canonical form", "[sparql_functions]") {
    // XSD 1.0's canonical double: one digit before the point, at least one
    // after, an exponent without '+' or leading zeros (agg-sum-02: 3.21E4).
    CHECK(arith('+', dbl("32000"), dbl("100")) == "\"3.21E4\"^^xsd:double");
    CHECK(arith('+', dbl("0.1"), dbl("0.1")) == "\"2.0E-1\"^^xsd:double");
    CHECK(arith('+', dbl("0.1"), dbl("0.2")) == "\"3.0000000000000004E-1\"^^xsd:double");
    // A float result is a float: its own shortest digits.
    CHECK(arith('+', flt("0.1"), flt("0.2")) == "\"3.0E-1\"^^xsd:float");
    CHECK(arith('*', dbl("1e300"), dbl("1e300")) == "\"INF\"^^xsd:double");
    CHECK(arith('*', dbl("-1"), dbl("0")) == "\"-0.0E0\"^^xsd:double");
    CHECK(arith('+', dbl("INF"), dbl("-INF")) == "\"NaN\"^^xsd:double");
}

TEST_CASE("sparql functions: arithmetic on non-numbers is an error", "[sparql_functions]") {
    // plus-1 / plus-2: strings, IRIs, blank nodes and ill-typed literals.
    CHECK(arith('+', lit("1"), lit("2")) == "error");
    CHECK(arith('+', lit("1"), integer("2")) == "error");
    CHECK(arith('+', iri("http://example/a"), integer("1")) == "error");
    CHECK(arith('+', blank("b"), integer("1")) == "error");
    CHECK(arith('+', integer("abc"), integer("1")) == "error");
    CHECK(arith('+', boolean("true"), integer("1")) == "error");
    CHECK(arith('%', integer("1"), integer("1")) == "error");
}

TEST_CASE("sparql functions: unary minus and plus", "[sparql_functions]") {
    // expr-ops unminus-2 / unplus-2: the operand's type (the base type for a
    // derived one), canonical.
    CHECK(show(sp::unary_minus(dec("3"))) == "\"-3.0\"^^xsd:decimal");
    CHECK(show(sp::unary_minus(integer("3"))) == "\"-3\"^^xsd:integer");
    CHECK(show(sp::unary_minus(flt("3"))) == "\"-3.0E0\"^^xsd:float");
    CHECK(show(sp::unary_minus(dbl("3"))) == "\"-3.0E0\"^^xsd:double");
    CHECK(show(sp::unary_minus(integer("0"))) == "\"0\"^^xsd:integer");
    CHECK(show(sp::unary_minus(dbl("0"))) == "\"-0.0E0\"^^xsd:double");
    CHECK(show(sp::unary_minus(typed("5", "byte"))) == "\"-5\"^^xsd:integer");
    CHECK(show(sp::unary_plus(integer("+01"))) == "\"1\"^^xsd:integer");
    CHECK(show(sp::unary_plus(dbl("1e0"))) == "\"1.0E0\"^^xsd:double");
    CHECK(show(sp::unary_minus(lit("3"))) == "error");
    CHECK(show(sp::unary_plus(integer("x"))) == "error");
}

TEST_CASE("sparql functions: numeric lexical forms", "[sparql_functions]") {
    // XSD's whiteSpace collapse for numerics, signs, "1." and ".5", the
    // double specials; invalid forms are ill-typed: no value, though
    // sameTerm and = on the identical term still hold (RDFterm-equal).
    CHECK(cmp(op::eq, integer(" 01 "), integer("1")) == "true");
    CHECK(cmp(op::eq, integer("+1"), integer("1")) == "true");
    CHECK(cmp(op::eq, integer("-0"), integer("0")) == "true");
    CHECK(cmp(op::eq, dec("1."), dec("1.000")) == "true");
    CHECK(cmp(op::eq, dec(".5"), dec("0.5")) == "true");
    CHECK(cmp(op::eq, dbl("1.0e0"), dbl("1")) == "true");
    CHECK(cmp(op::eq, dbl(".5E+1"), integer("5")) == "true");
    CHECK(cmp(op::gt, dbl("INF"), dbl("1.7976931348623157E308")) == "true");
    CHECK(cmp(op::lt, dbl("-INF"), dbl("-1.7976931348623157E308")) == "true");
    CHECK(cmp(op::gt, dbl("1e400"), dbl("1e308")) == "true"); // beyond the range: INF (XSD 1.1)
    CHECK(cmp(op::eq, dbl("1e-400"), dbl("0")) == "true");
    CHECK(cmp(op::eq, flt("1e39"), flt("INF")) == "true"); // beyond float's range
    for (const char* bad : {"abc", "1 2", "", "+", "1.5", "0x10", "١"}) {
        INFO(bad);
        CHECK(cmp(op::eq, integer(bad), integer("1")) == "error");
        CHECK(cmp(op::lt, integer(bad), integer("1")) == "error");
        CHECK(cmp(op::eq, integer(bad), integer(bad)) == "true");
        CHECK(cmp(op::ne, integer(bad), integer(bad)) == "false");
    }
    for (const char* bad : {"1e0", "INF", ".", "1.2.3", "- 1"}) {
        INFO(bad);
        CHECK(cmp(op::eq, dec(bad), dec("1")) == "error");
    }
    for (const char* bad : {"inf", "nan", "+NaN", "1e", "e1", "1.0E+", "1,5"}) {
        INFO(bad);
        CHECK(cmp(op::eq, dbl(bad), dbl("1")) == "error");
    }
}

TEST_CASE("sparql functions: numeric comparisons", "[sparql_functions]") {
    CHECK(cmp(op::eq, integer("1"), dec("1.0")) == "true");
    CHECK(cmp(op::eq, integer("1"), dbl("1")) == "true");
    CHECK(cmp(op::eq, flt("1"), dbl("1.0")) == "true"); // expr-equals eq-float
    CHECK(cmp(op::lt, integer("2"), dec("2.5")) == "true");
    CHECK(cmp(op::ge, dec("2.5"), integer("2")) == "true");
    CHECK(cmp(op::le, integer("3"), integer("3")) == "true");
    CHECK(cmp(op::ne, integer("3"), integer("4")) == "true");
    // Promotion decides: a decimal meets a double as a double, a float as
    // a float (0.1 is not exactly either, but rounds to it).
    CHECK(cmp(op::eq, dec("0.1"), dbl("0.1")) == "true");
    CHECK(cmp(op::eq, dec("0.1"), flt("0.1")) == "true");
    CHECK(cmp(op::eq, flt("0.1"), dbl("0.1")) == "false");
    // Decimals of very different scales, exactly.
    CHECK(cmp(op::lt, dec("0.000000000000000000000000000000000000000000001"), integer("1")) == "true");
    CHECK(cmp(op::gt, dec("0.000000000000000000000000000000000000000000002"),
              dec("0.0000000000000000000000000000000000000000000019999999999999999999999")) == "true");
    const term d38 = dec("12345678901234567890123456789012345678");
    CHECK(cmp(op::eq, d38, dec("12345678901234567890123456789012345678.000")) == "true");
    CHECK(cmp(op::lt, unary(d38), dec("-1234567890123456789012345678901234567.8")) == "true");
    // Integers beyond a double's 53 bits compare exactly.
    CHECK(cmp(op::lt, integer("9007199254740992"), integer("9007199254740993")) == "true");
    // NaN: unequal to everything, itself included, ordered with nothing.
    CHECK(cmp(op::eq, dbl("NaN"), dbl("NaN")) == "false");
    CHECK(cmp(op::ne, dbl("NaN"), dbl("NaN")) == "true");
    CHECK(cmp(op::lt, dbl("NaN"), integer("1")) == "false");
    CHECK(cmp(op::ge, dbl("NaN"), integer("1")) == "false");
    CHECK(cmp(op::eq, dbl("0"), dbl("-0")) == "true");
}

TEST_CASE("sparql functions: string, boolean and mixed comparisons", "[sparql_functions]") {
    // Strings by code point (the default collation): upper case first,
    // non-ASCII after ASCII; xsd:string and simple literals are one type.
    CHECK(cmp(op::lt, lit("a"), lit("b")) == "true");
    CHECK(cmp(op::lt, lit("B"), lit("a")) == "true");
    CHECK(cmp(op::gt, lit("é"), lit("z")) == "true");
    CHECK(cmp(op::lt, lit("\xF0\x9F\x91\xAA"), lit("\xEF\xBF\xBD")) == "false"); // U+1F46A > U+FFFD
    CHECK(cmp(op::eq, lit("abc"), lit("abc", xsd + "string")) == "true");
    CHECK(cmp(op::lt, lit(""), lit("a")) == "true");
    // Booleans: false < true; "1" and "true" are one value (expr-equals eq-bool).
    CHECK(cmp(op::lt, boolean("false"), boolean("true")) == "true");
    CHECK(cmp(op::eq, boolean("1"), boolean("true")) == "true");
    CHECK(cmp(op::eq, boolean("0"), boolean("false")) == "true");
    CHECK(cmp(op::eq, boolean("true"), boolean("yes")) == "error");
    // No operator between different types: < is an error.
    CHECK(cmp(op::lt, integer("1"), lit("1")) == "error");
    CHECK(cmp(op::lt, iri("http://a"), iri("http://b")) == "error");
    CHECK(cmp(op::lt, tagged("a", "en"), tagged("b", "en")) == "error");
    CHECK(cmp(op::lt, boolean("true"), integer("1")) == "error");
}

TEST_CASE("sparql functions: = and != on terms (RDFterm-equal and the open world)", "[sparql_functions]") {
    // Tags without case (lang-case-insensitive-eq).
    CHECK(cmp(op::eq, tagged("xyz", "en"), tagged("xyz", "EN")) == "true");
    CHECK(cmp(op::ne, tagged("xyz", "en"), tagged("abc", "en")) == "true");
    CHECK(cmp(op::eq, tagged("xyz", "en"), tagged("xyz", "fr")) == "false");
    // open-eq-08/-10/-12: what is known to differ is unequal; a literal of
    // an unknown datatype or an ill-typed one against another literal
    // (not a tagged one) is an error, for = and for !=.
    const term simple = lit("xyz"), en = tagged("xyz", "en"), bad_int = integer("xyz"),
               unknown = lit("xyz", "http://example/unknown"), other_unknown = lit("abc", "http://example/unknown"),
               b = blank("xyz"), i = iri("http://example/xyz");
    CHECK(cmp(op::ne, simple, en) == "true");
    CHECK(cmp(op::ne, simple, b) == "true");
    CHECK(cmp(op::ne, simple, i) == "true");
    CHECK(cmp(op::ne, simple, bad_int) == "error");
    CHECK(cmp(op::eq, simple, bad_int) == "error");
    CHECK(cmp(op::ne, simple, unknown) == "error");
    CHECK(cmp(op::ne, en, bad_int) == "true");
    CHECK(cmp(op::ne, en, unknown) == "true");
    CHECK(cmp(op::ne, bad_int, unknown) == "error");
    CHECK(cmp(op::ne, unknown, other_unknown) == "error");
    CHECK(cmp(op::eq, unknown, unknown) == "true");
    CHECK(cmp(op::eq, bad_int, bad_int) == "true");
    CHECK(cmp(op::eq, b, b) == "true");
    CHECK(cmp(op::ne, b, blank("abc")) == "true");
    CHECK(cmp(op::eq, i, i) == "true");
    CHECK(cmp(op::ne, i, iri("http://example/abc")) == "true");
    // Two known value spaces that differ: unequal, not an error.
    CHECK(cmp(op::eq, integer("1"), lit("1")) == "false");
    CHECK(cmp(op::ne, integer("1"), lit("1")) == "true");
    CHECK(cmp(op::eq, integer("1"), boolean("true")) == "false");
    CHECK(cmp(op::ne, date_time("2006-08-23T09:00:00+01:00"), date("2006-08-23")) == "true"); // open-world date-2
}

TEST_CASE("sparql functions: dateTime and date comparisons", "[sparql_functions]") {
    // expr-equals eq-dateTime: one instant across timezones, 24:00:00 as
    // the next day, fractional zeros.
    CHECK(cmp(op::eq, date_time("2002-04-02T23:00:00-04:00"), date_time("2002-04-03T02:00:00-01:00")) == "true");
    CHECK(cmp(op::eq, date_time("1999-12-31T24:00:00"), date_time("2000-01-01T00:00:00")) == "true");
    CHECK(cmp(op::eq, date_time("2005-04-04T24:00:00"), date_time("2005-04-04T00:00:00")) == "false");
    CHECK(cmp(op::eq, date_time("2008-04-01T00:00:00.00Z"), date_time("2008-04-01T00:00:00Z")) == "true");
    CHECK(cmp(op::lt, date_time("2008-04-01T00:00:00.5Z"), date_time("2008-04-01T00:00:00.51Z")) == "true");
    // With and without a timezone (XSD 3.2.7.4): decided when 14 hours
    // either way cannot change it (expr-ops dateTime tests), else an error.
    CHECK(cmp(op::lt, date_time("2008-10-01T00:00:00Z"), date_time("2008-10-03T00:00:00")) == "true");
    CHECK(cmp(op::gt, date_time("2008-10-03T00:00:00"), date_time("2008-10-01T00:00:00Z")) == "true");
    CHECK(cmp(op::ne, date_time("2008-10-03T00:00:00"), date_time("2008-10-01T00:00:00Z")) == "true");
    CHECK(cmp(op::eq, date_time("2002-04-02T23:00:00"), date_time("2002-04-02T23:00:00+06:00")) == "error");
    CHECK(cmp(op::lt, date_time("2002-04-02T23:00:00"), date_time("2002-04-03T12:00:00Z")) == "error");
    // xsd:date the same way (open-world date-2, date-3).
    CHECK(cmp(op::ne, date("2001-01-01"), date("2006-08-23")) == "true");
    CHECK(cmp(op::ne, date("2006-08-23Z"), date("2006-08-23")) == "error");
    CHECK(cmp(op::gt, date("2006-08-23Z"), date("2006-08-22")) == "true");
    CHECK(cmp(op::eq, date("2006-08-23+00:00"), date("2006-08-23Z")) == "true");
    CHECK(cmp(op::gt, date_time("2006-08-23T09:00:00+01:00"), date("2006-08-22")) == "error");
    // Invalid dates are ill-typed.
    CHECK(cmp(op::eq, date_time("2011-02-29T00:00:00"), date_time("2011-03-01T00:00:00")) == "error");
    CHECK(cmp(op::eq, date_time("2012-02-29T00:00:00"), date_time("2012-02-28T24:00:00")) == "true");
    CHECK(cmp(op::eq, date("1900-02-29"), date("1900-03-01")) == "error");
    CHECK(cmp(op::eq, date_time("2000-01-01T00:00:00+15:00"), date_time("2000-01-01T00:00:00Z")) == "error");
    CHECK(cmp(op::eq, date_time("2000-01-01T24:00:01"), date_time("2000-01-02T00:00:01")) == "error");
}

TEST_CASE("sparql functions: effective boolean value", "[sparql_functions]") {
    // 17.2.2, and boolean-effective-value's data.
    CHECK(ebv(integer("1")) == "true");
    CHECK(ebv(lit("foo")) == "true");
    CHECK(ebv(dbl("0.01")) == "true");
    CHECK(ebv(boolean("true")) == "true");
    CHECK(ebv(boolean("1")) == "true");
    CHECK(ebv(integer("0")) == "false");
    CHECK(ebv(dbl("0.0")) == "false");
    CHECK(ebv(dbl("-0")) == "false");
    CHECK(ebv(dbl("NaN")) == "false");
    CHECK(ebv(lit("")) == "false");
    CHECK(ebv(boolean("false")) == "false");
    CHECK(ebv(tagged("x", "en")) == "true");
    CHECK(ebv(tagged("", "en")) == "false");
    CHECK(ebv(typed("0", "short")) == "false");
    // Ill-typed booleans and numerics are false, not errors.
    CHECK(ebv(boolean("yes")) == "false");
    CHECK(ebv(integer("abc")) == "false");
    CHECK(ebv(typed("300", "byte")) == "false");
    // A value too large for 128 bits is still not zero.
    CHECK(ebv(integer("1000000000000000000000000000000000000000000")) == "true");
    // Everything else: an error.
    CHECK(ebv(iri("http://example/")) == "error");
    CHECK(ebv(blank("b")) == "error");
    CHECK(ebv(date_time("2010-06-21T11:28:01Z")) == "error");
    CHECK(ebv(lit("foo", "http://example.org/ns#unknown")) == "error"); // query-bev-5's :x3
}

TEST_CASE("sparql functions: ORDER BY's order is total and extends <", "[sparql_functions]") {
    // 15.1: unbound < blank nodes < IRIs < literals; among literals the
    // fixed order of the header, equal values by datatype then lexical form.
    const std::vector<term> expected = {
        blank("a"),
        blank("b"),
        iri("http://example.org/eve"),
        iri("mailto:bob@work.example"), // sort-6: by code point
        dbl("NaN"),
        dbl("-INF"),
        integer("-5"),
        dec("-0.5"),
        typed("0", "byte"), // one value: by datatype IRI
        dbl("0"),
        integer("0"),
        dec("0.1"),
        dbl("0.1"), // 0.1000000000000000055...: above the decimal, exactly
        flt("0.1"), // 0.100000001490116...
        dec("1.0"),
        dbl("1"),
        integer("01"),
        integer("1"),
        dbl("9007199254740993"), // reads as 2^53: equal to the next, first by datatype IRI
        integer("9007199254740992"),
        integer("9007199254740993"),
        dbl("INF"),
        boolean("0"),
        boolean("false"),
        boolean("true"),
        date_time("2008-06-20T23:59:00Z"),
        date_time("2010-06-21T11:28:01"),
        date_time("2010-06-21T11:28:01Z"),
        date_time("2010-06-21T12:28:01+01:00"),
        date_time("2010-12-21T15:38:02-08:00"),
        date("2006-08-22"),
        date("2006-08-23"),
        lit(""),
        lit("Alice"),
        lit("Bob"),
        lit("alice"),
        lit("é"),
        tagged("abc", "de"),
        tagged("abc", "en"),
        tagged("abd", "aa"),
        lit("a", "http://example/t#type1"), // no value here: by datatype IRI, then lexical form
        lit("b", "http://example/t#type1"),
        lit("a", "http://example/t#type2"),
        lit("2006", xsd + "gYear"),
        typed("1.5", "integer"), // ill-typed: with the unknown datatypes
        typed("abc", "integer"),
    };
    std::vector<const term*> sorted;
    for (const term& t : expected) sorted.push_back(&t);
    sorted.push_back(nullptr);
    std::reverse(sorted.begin(), sorted.end());
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const term* a, const term* b) { return sp::order_compare(a, b) < 0; });
    REQUIRE(sorted.size() == expected.size() + 1);
    CHECK(sorted[0] == nullptr);
    for (std::size_t i = 0; i < expected.size(); ++i) {
        INFO("position " << i);
        CHECK(show(*sorted[i + 1]) == show(expected[i]));
    }
    // A total order: antisymmetric, 0 only for the same term, transitive,
    // and never against '<' where 17.3 defines it.
    std::vector<const term*> all = sorted;
    for (const term* a : all) {
        for (const term* b : all) {
            const int ab = sp::order_compare(a, b), ba = sp::order_compare(b, a);
            INFO((a ? show(*a) : "unbound") << " vs " << (b ? show(*b) : "unbound"));
            CHECK((ab > 0) - (ab < 0) == -((ba > 0) - (ba < 0)));
            CHECK((ab == 0) == (a == b || (a && b && sp::same_term(*a, *b))));
            if (a && b && sp::compare(op::lt, *a, *b) == true) CHECK(ab < 0);
            for (const term* c : all)
                if (ab < 0 && sp::order_compare(b, c) < 0) CHECK(sp::order_compare(a, c) < 0);
        }
    }
}

TEST_CASE("sparql functions: sameTerm and the type tests", "[sparql_functions]") {
    fixture f;
    CHECK(f.call("SAMETERM", {integer("1"), integer("1")}) == "\"true\"^^xsd:boolean");
    CHECK(f.call("SAMETERM", {integer("1"), integer("01")}) == "\"false\"^^xsd:boolean");
    CHECK(f.call("SAMETERM", {dbl("1"), integer("1")}) == "\"false\"^^xsd:boolean");
    CHECK(f.call("SAMETERM", {tagged("a", "en"), tagged("a", "EN")}) == "\"true\"^^xsd:boolean");
    CHECK(f.call("SAMETERM", {lit("a"), lit("a", xsd + "string")}) == "\"true\"^^xsd:boolean");
    CHECK(f.call("SAMETERM", {blank("a"), lit("a")}) == "\"false\"^^xsd:boolean");
    CHECK(f.call("ISIRI", {iri("http://a")}) == "\"true\"^^xsd:boolean");
    CHECK(f.call("ISURI", {lit("http://a")}) == "\"false\"^^xsd:boolean");
    CHECK(f.call("ISBLANK", {blank("a")}) == "\"true\"^^xsd:boolean");
    CHECK(f.call("ISBLANK", {iri("a")}) == "\"false\"^^xsd:boolean");
    CHECK(f.call("ISLITERAL", {integer("1")}) == "\"true\"^^xsd:boolean");
    CHECK(f.call("ISLITERAL", {blank("a")}) == "\"false\"^^xsd:boolean");
    // isNumeric: a numeric datatype and a valid form (17.4.2.4).
    CHECK(f.call("ISNUMERIC", {integer("-1")}) == "\"true\"^^xsd:boolean");
    CHECK(f.call("ISNUMERIC", {dec("1.1")}) == "\"true\"^^xsd:boolean");
    CHECK(f.call("ISNUMERIC", {typed("1", "unsignedShort")}) == "\"true\"^^xsd:boolean");
    CHECK(f.call("ISNUMERIC", {dbl("NaN")}) == "\"true\"^^xsd:boolean");
    CHECK(f.call("ISNUMERIC", {integer("1000000000000000000000000000000000000000000")}) == "\"true\"^^xsd:boolean");
    CHECK(f.call("ISNUMERIC", {lit("1")}) == "\"false\"^^xsd:boolean");
    CHECK(f.call("ISNUMERIC", {integer("abc")}) == "\"false\"^^xsd:boolean");
    CHECK(f.call("ISNUMERIC", {typed("256", "unsignedByte")}) == "\"false\"^^xsd:boolean");
    CHECK(f.call("ISNUMERIC", {boolean("true")}) == "\"false\"^^xsd:boolean");
    CHECK(f.call("ISNUMERIC", {iri("http://a")}) == "\"false\"^^xsd:boolean");
}

TEST_CASE("sparql functions: STR, LANG, DATATYPE, LANGMATCHES", "[sparql_functions]") {
    fixture f;
    CHECK(f.call("STR", {iri("http://example/a")}) == "\"http://example/a\"");
    CHECK(f.call("STR", {dec("1.10")}) == "\"1.10\""); // the lexical form as it is
    CHECK(f.call("STR", {tagged("chat", "fr")}) == "\"chat\"");
    CHECK(f.call("STR", {blank("b")}) == "error");
    CHECK(f.call("LANG", {tagged("chat", "fr")}) == "\"fr\"");
    CHECK(f.call("LANG", {lit("chat")}) == "\"\"");
    CHECK(f.call("LANG", {iri("http://a")}) == "error");
    // DATATYPE: xsd:string for a simple literal, rdf:langString for a
    // tagged one (RDF 1.1; expr-builtin datatype-2).
    CHECK(f.call("DATATYPE", {lit("a")}) == "<http://www.w3.org/2001/XMLSchema#string>");
    CHECK(f.call("DATATYPE", {tagged("a", "en")}) == "<http://www.w3.org/1999/02/22-rdf-syntax-ns#langString>");
    CHECK(f.call("DATATYPE", {typed("1", "byte")}) == "<http://www.w3.org/2001/XMLSchema#byte>");
    CHECK(f.call("DATATYPE", {lit("x", "http://example/t")}) == "<http://example/t>");
    CHECK(f.call("DATATYPE", {iri("http://a")}) == "error");
    // LANGMATCHES: RFC 4647 basic filtering, without case.
    CHECK(f.call("LANGMATCHES", {lit("en-gb"), lit("en")}) == "\"true\"^^xsd:boolean");
    CHECK(f.call("LANGMATCHES", {lit("en"), lit("en-GB")}) == "\"false\"^^xsd:boolean");
    CHECK(f.call("LANGMATCHES", {lit("EN"), lit("en")}) == "\"true\"^^xsd:boolean");
    CHECK(f.call("LANGMATCHES", {lit("english"), lit("en")}) == "\"false\"^^xsd:boolean");
    CHECK(f.call("LANGMATCHES", {lit("de-latn-de"), lit("de-de")}) == "\"false\"^^xsd:boolean");
    CHECK(f.call("LANGMATCHES", {lit("fr"), lit("*")}) == "\"true\"^^xsd:boolean");
    CHECK(f.call("LANGMATCHES", {lit(""), lit("*")}) == "\"false\"^^xsd:boolean");
    CHECK(f.call("LANGMATCHES", {tagged("en", "en"), lit("en")}) == "error");
}

TEST_CASE("sparql functions: IRI, URI and BNODE", "[sparql_functions]") {
    fixture f; // BASE <http://example.org/>
    CHECK(f.call("IRI", {lit("iri")}) == "<http://example.org/iri>"); // functions/iri01
    CHECK(f.call("URI", {lit("uri")}) == "<http://example.org/uri>");
    CHECK(f.call("IRI", {iri("http://example.org/x")}) == "<http://example.org/x>");
    CHECK(f.call("IRI", {lit("../a/./b")}) == "<http://example.org/a/b>");
    CHECK(f.call("IRI", {lit("mailto:x@example.org")}) == "<mailto:x@example.org>");
    CHECK(f.call("IRI", {lit("a b")}) == "error");
    CHECK(f.call("IRI", {lit("a>")}) == "error");
    CHECK(f.call("IRI", {tagged("a", "en")}) == "error");
    CHECK(f.call("IRI", {blank("a")}) == "error");
    CHECK(f.call("IRI", {integer("1")}) == "error");
    sp::function_context no_base(sp::function_options{{}, 1, 0, ".b"});
    const std::vector<term> relative = {lit("rel")}, absolute = {lit("http://x/y")};
    CHECK(show(sp::call("IRI", relative, no_base)) == "error");
    CHECK(show(sp::call("IRI", absolute, no_base)) == "<http://x/y>");

    // BNODE(str): one label for one string within a solution, a new one in
    // the next (bnode01); BNODE(): a new one each call (bnode02).
    const std::string a1 = f.call("BNODE", {lit("foo")}), b1 = f.call("BNODE", {lit("BAZ")});
    CHECK(a1.starts_with("_:.b"));
    CHECK(f.call("BNODE", {lit("foo")}) == a1);
    CHECK(f.call("BNODE", {lit("foo", xsd + "string")}) == a1);
    CHECK(b1 != a1);
    const std::string fresh1 = f.call("BNODE", {}), fresh2 = f.call("BNODE", {});
    CHECK(fresh1 != fresh2);
    CHECK(fresh1 != a1);
    f.ctx.next_solution();
    const std::string a2 = f.call("BNODE", {lit("foo")});
    CHECK(a2 != a1);
    CHECK(a2 != fresh1);
    CHECK(f.call("BNODE", {lit("foo")}) == a2);
    CHECK(f.call("BNODE", {tagged("foo", "en")}) == "error");
    CHECK(f.call("BNODE", {integer("1")}) == "error");
}

TEST_CASE("sparql functions: RAND, UUID, STRUUID and NOW", "[sparql_functions]") {
    fixture f;
    // RAND: an xsd:double in [0, 1); one seed, one sequence.
    sp::function_context same_seed(sp::function_options{{}, 42, 0, ".b"});
    for (int i = 0; i < 100; ++i) {
        const sp::value r = sp::call("RAND", {}, f.ctx);
        REQUIRE(r);
        CHECK(r->datatype == xsd + "double");
        CHECK(sp::compare(op::ge, *r, dbl("0")) == true);
        CHECK(sp::compare(op::lt, *r, dbl("1")) == true);
        CHECK(show(sp::call("RAND", {}, same_seed)) == show(r));
    }
    // UUID: a urn:uuid: IRI, version 4 (RFC 4122), each one new (uuid01, uuid02).
    std::set<std::string> seen;
    for (int i = 0; i < 50; ++i) {
        const sp::value u = sp::call("UUID", {}, f.ctx);
        REQUIRE(u);
        CHECK(u->kind == term_kind::iri);
        REQUIRE(u->value.size() == 45);
        CHECK(u->value.starts_with("urn:uuid:"));
        const std::string_view id = std::string_view(u->value).substr(9);
        CHECK(id[8] == '-');
        CHECK(id[13] == '-');
        CHECK(id[14] == '4');
        CHECK(std::string_view("89ab").find(id[19]) != std::string_view::npos);
        CHECK(id.find_first_not_of("0123456789abcdef-") == std::string_view::npos);
        CHECK(seen.insert(u->value).second);
        const sp::value s = sp::call("STRUUID", {}, f.ctx);
        REQUIRE(s);
        CHECK(s->kind == term_kind::literal);
        CHECK(s->datatype.empty());
        CHECK(s->value.size() == 36);
        CHECK(seen.insert(s->value).second);
    }
    // NOW: fixed for the query, with a timezone.
    CHECK(f.call("NOW", {}) == "\"2023-11-14T22:13:20.123Z\"^^xsd:dateTime");
    CHECK(f.call("NOW", {}) == "\"2023-11-14T22:13:20.123Z\"^^xsd:dateTime");
    CHECK(show(sp::call("NOW", {}, same_seed)) == "\"1970-01-01T00:00:00Z\"^^xsd:dateTime");
    sp::function_context before_1970(sp::function_options{{}, 1, -1, ".b"});
    CHECK(show(sp::call("NOW", {}, before_1970)) == "\"1969-12-31T23:59:59.999Z\"^^xsd:dateTime");
    sp::function_context clock; // the clock's time: a valid dateTime with a timezone
    const sp::value now = sp::call("TZ", std::vector<term>{clock.now()}, clock);
    CHECK(show(now) == "\"Z\"");
}

TEST_CASE("sparql functions: ABS, CEIL, FLOOR, ROUND", "[sparql_functions]") {
    fixture f;
    // functions/abs01, ceil01, floor01, round01: the operand's type kept
    // (the decimals written canonically: "3.0" where the tests have "3").
    CHECK(f.call("ABS", {integer("-2")}) == "\"2\"^^xsd:integer");
    CHECK(f.call("ABS", {dec("-1.6")}) == "\"1.6\"^^xsd:decimal");
    CHECK(f.call("ABS", {dbl("-0")}) == "\"0.0E0\"^^xsd:double");
    CHECK(f.call("ABS", {flt("-2.5")}) == "\"2.5E0\"^^xsd:float");
    CHECK(f.call("ABS", {typed("-3", "short")}) == "\"3\"^^xsd:integer");
    CHECK(f.call("CEIL", {dec("2.5")}) == "\"3.0\"^^xsd:decimal");
    CHECK(f.call("CEIL", {dec("1.1")}) == "\"2.0\"^^xsd:decimal");
    CHECK(f.call("CEIL", {dec("-1.6")}) == "\"-1.0\"^^xsd:decimal");
    CHECK(f.call("CEIL", {integer("-2")}) == "\"-2\"^^xsd:integer");
    CHECK(f.call("CEIL", {dbl("-0.5")}) == "\"-0.0E0\"^^xsd:double");
    CHECK(f.call("FLOOR", {dec("2.5")}) == "\"2.0\"^^xsd:decimal");
    CHECK(f.call("FLOOR", {dec("-1.6")}) == "\"-2.0\"^^xsd:decimal");
    CHECK(f.call("FLOOR", {dbl("-1.5")}) == "\"-2.0E0\"^^xsd:double");
    // fn:round: a half toward positive infinity.
    CHECK(f.call("ROUND", {dec("2.5")}) == "\"3.0\"^^xsd:decimal");
    CHECK(f.call("ROUND", {dec("-2.5")}) == "\"-2.0\"^^xsd:decimal");
    CHECK(f.call("ROUND", {dec("-1.6")}) == "\"-2.0\"^^xsd:decimal");
    CHECK(f.call("ROUND", {dec("1.1")}) == "\"1.0\"^^xsd:decimal");
    CHECK(f.call("ROUND", {dec("-0.5")}) == "\"0.0\"^^xsd:decimal");
    CHECK(f.call("ROUND", {dbl("2.5")}) == "\"3.0E0\"^^xsd:double");
    CHECK(f.call("ROUND", {dbl("-2.5")}) == "\"-2.0E0\"^^xsd:double");
    CHECK(f.call("ROUND", {dbl("-0.4")}) == "\"-0.0E0\"^^xsd:double");
    CHECK(f.call("ROUND", {dbl("0.49999999999999994")}) == "\"0.0E0\"^^xsd:double");
    CHECK(f.call("ROUND", {dbl("NaN")}) == "\"NaN\"^^xsd:double");
    CHECK(f.call("ROUND", {dbl("-INF")}) == "\"-INF\"^^xsd:double");
    CHECK(f.call("ROUND", {dec("0.0000000000000000000000000000000000000000001")}) == "\"0.0\"^^xsd:decimal");
    CHECK(f.call("ABS", {lit("-1")}) == "error");
    CHECK(f.call("CEIL", {integer("x")}) == "error");
}

TEST_CASE("sparql functions: STRLEN, SUBSTR, UCASE, LCASE over code points", "[sparql_functions]") {
    fixture f;
    const std::string family = "\xF0\x9F\x91\xAA"; // U+1F46A
    const std::string zwj = "\xE2\x80\x8D";
    const std::string man = "\xF0\x9F\x91\xA8", woman = "\xF0\x9F\x91\xA9", girl = "\xF0\x9F\x91\xA7",
                      boy = "\xF0\x9F\x91\xA6";
    const std::string emoji = man + zwj + woman + zwj + girl + zwj + boy; // one grapheme, 7 code points
    // functions/length01(-non-bmp).
    CHECK(f.call("STRLEN", {lit("食べ物")}) == "\"3\"^^xsd:integer");
    CHECK(f.call("STRLEN", {tagged("bar", "en")}) == "\"3\"^^xsd:integer");
    CHECK(f.call("STRLEN", {lit(family)}) == "\"1\"^^xsd:integer");
    CHECK(f.call("STRLEN", {lit(emoji)}) == "\"7\"^^xsd:integer");
    CHECK(f.call("STRLEN", {lit("")}) == "\"0\"^^xsd:integer");
    CHECK(f.call("STRLEN", {integer("123")}) == "error");
    CHECK(f.call("STRLEN", {iri("http://a")}) == "error");
    // substring01/02(-non-bmp): the tag kept.
    CHECK(f.call("SUBSTR", {tagged("bar", "en"), integer("1"), integer("1")}) == "\"b\"@en");
    CHECK(f.call("SUBSTR", {lit("食べ物"), integer("2")}) == "\"べ物\"");
    CHECK(f.call("SUBSTR", {lit(family), integer("2")}) == "\"\"");
    CHECK(f.call("SUBSTR", {lit(emoji), integer("1"), integer("1")}) == "\"" + man + "\"");
    CHECK(f.call("SUBSTR", {lit(emoji), integer("2")}) == "\"" + zwj + woman + zwj + girl + zwj + boy + "\"");
    // F&O 5.4.3's examples with integer positions, and positions outside the string.
    CHECK(f.call("SUBSTR", {lit("motor car"), integer("6")}) == "\" car\"");
    CHECK(f.call("SUBSTR", {lit("metadata"), integer("4"), integer("3")}) == "\"ada\"");
    CHECK(f.call("SUBSTR", {lit("12345"), integer("0"), integer("3")}) == "\"12\"");
    CHECK(f.call("SUBSTR", {lit("12345"), integer("5"), integer("-3")}) == "\"\"");
    CHECK(f.call("SUBSTR", {lit("12345"), integer("-3"), integer("5")}) == "\"1\"");
    // SPARQL's positions are xsd:integer (17.4.3.3): a decimal, float or double is a type error.
    CHECK(f.call("SUBSTR", {lit("12345"), dec("1.5"), dec("2.6")}) == "error");
    CHECK(f.call("SUBSTR", {lit("b"), dec("1.5")}) == "error");
    CHECK(f.call("SUBSTR", {lit("abc"), integer("1"), dec("2.5")}) == "error");
    CHECK(f.call("SUBSTR", {lit("12345"), dbl("NaN"), integer("3")}) == "error");
    CHECK(f.call("SUBSTR", {lit("12345"), integer("-42"), dbl("INF")}) == "error");
    CHECK(f.call("SUBSTR", {lit("abc"), lit("1")}) == "error");
    CHECK(f.call("SUBSTR", {iri("http://a"), integer("1")}) == "error");
    // UCASE / LCASE: the tag kept (ucase01, lcase01); full mappings where
    // SpecialCasing has them; what has no case stays.
    CHECK(f.call("UCASE", {tagged("bar", "en")}) == "\"BAR\"@en");
    CHECK(f.call("UCASE", {lit("foo")}) == "\"FOO\"");
    CHECK(f.call("UCASE", {lit("食べ物")}) == "\"食べ物\"");
    CHECK(f.call("UCASE", {lit(emoji)}) == "\"" + emoji + "\"");
    CHECK(f.call("UCASE", {lit("straße")}) == "\"STRASSE\"");
    CHECK(f.call("UCASE", {lit("àéîõüÿ")}) == "\"ÀÉÎÕÜŸ\"");
    CHECK(f.call("UCASE", {lit("ąčęłńőšžĳ")}) == "\"ĄČĘŁŃŐŠŽĲ\"");
    CHECK(f.call("UCASE", {lit("αβγάς")}) == "\"ΑΒΓΆΣ\"");
    CHECK(f.call("UCASE", {lit("привет ёж")}) == "\"ПРИВЕТ ЁЖ\"");
    CHECK(f.call("UCASE", {lit("ẞ ạ")}) == "\"ẞ Ạ\"");
    CHECK(f.call("LCASE", {lit("DEF")}) == "\"def\"");
    CHECK(f.call("LCASE", {lit("ÀÉÎÕÜŸ")}) == "\"àéîõüÿ\"");
    CHECK(f.call("LCASE", {lit("ĄČĘŁŃŐŠŽĲ")}) == "\"ąčęłńőšžĳ\"");
    CHECK(f.call("LCASE", {lit("ΑΒΓΆΣ")}) == "\"αβγάσ\"");
    CHECK(f.call("LCASE", {lit("ПРИВЕТ ЁЖ")}) == "\"привет ёж\"");
    CHECK(f.call("LCASE", {lit("İ")}) == "\"i\xCC\x87\""); // i + U+0307
    CHECK(f.call("LCASE", {lit("100%")}) == "\"100%\"");
    CHECK(f.call("LCASE", {integer("1")}) == "error");
    // Bytes that are not UTF-8: one character each, carried through.
    CHECK(f.call("STRLEN", {lit("a\xFF\xC3")}) == "\"3\"^^xsd:integer");
    CHECK(f.call("UCASE", {lit("a\xFF\xC3")}) == "\"A\xFF\xC3\"");
    CHECK(f.call("SUBSTR", {lit("a\xFF\xC3z"), integer("3")}) == "\"\xC3z\"");
}

TEST_CASE("sparql functions: string functions' argument compatibility", "[sparql_functions]") {
    fixture f;
    const std::string t = "\"true\"^^xsd:boolean", no = "\"false\"^^xsd:boolean";
    // 17.4.3.1.1: both simple (or xsd:string), both the same tag, or a tag
    // and a simple literal second; anything else an error.
    CHECK(f.call("CONTAINS", {lit("abc"), lit("b")}) == t);
    CHECK(f.call("CONTAINS", {tagged("abc", "en"), lit("b")}) == t);
    CHECK(f.call("CONTAINS", {tagged("abc", "en"), tagged("b", "EN")}) == t);
    CHECK(f.call("CONTAINS", {tagged("abc", "en"), tagged("b", "fr")}) == "error");
    CHECK(f.call("CONTAINS", {lit("abc"), tagged("b", "en")}) == "error");
    CHECK(f.call("CONTAINS", {lit("abc"), lit("b", xsd + "string")}) == t);
    CHECK(f.call("CONTAINS", {lit("abc"), lit("")}) == t);
    CHECK(f.call("CONTAINS", {lit("abc"), lit("d")}) == no);
    CHECK(f.call("CONTAINS", {integer("1"), lit("1")}) == "error");
    CHECK(f.call("CONTAINS", {iri("http://a"), lit("a")}) == "error");
    CHECK(f.call("STRSTARTS", {lit("100%"), lit("1")}) == t);
    CHECK(f.call("STRSTARTS", {dec("1.1"), lit("1")}) == "error"); // starts01 applies STR first
    CHECK(f.call("STRSTARTS", {lit("abc"), lit("abcd")}) == no);
    CHECK(f.call("STRENDS", {lit("abc"), lit("bc")}) == t);
    CHECK(f.call("STRENDS", {tagged("abc", "en"), lit("ab")}) == no);
    // strbefore02 / strafter02: the first argument's tag on a match ("" too),
    // the empty simple literal when there is none.
    const term s = lit("abc"), en = tagged("abc", "en");
    CHECK(f.call("STRBEFORE", {s, lit("b")}) == "\"a\"");
    CHECK(f.call("STRBEFORE", {en, lit("bc")}) == "\"a\"@en");
    CHECK(f.call("STRBEFORE", {en, tagged("b", "cy")}) == "error");
    CHECK(f.call("STRBEFORE", {en, lit("")}) == "\"\"@en");
    CHECK(f.call("STRBEFORE", {en, tagged("", "en")}) == "\"\"@en");
    CHECK(f.call("STRBEFORE", {en, lit("xyz", xsd + "string")}) == "\"\"");
    CHECK(f.call("STRBEFORE", {s, tagged("b", "en")}) == "error");
    CHECK(f.call("STRAFTER", {s, lit("b")}) == "\"c\"");
    CHECK(f.call("STRAFTER", {en, lit("ab")}) == "\"c\"@en");
    CHECK(f.call("STRAFTER", {en, lit("")}) == "\"abc\"@en");
    CHECK(f.call("STRAFTER", {en, lit("xyz")}) == "\"\"");
    CHECK(f.call("STRAFTER", {tagged("english", "en"), lit("e")}) == "\"nglish\"@en");
    CHECK(f.call("STRAFTER", {integer("7"), lit("e")}) == "error");
}

TEST_CASE("sparql functions: CONCAT, ENCODE_FOR_URI, STRLANG, STRDT", "[sparql_functions]") {
    fixture f;
    // concat01/02, concat-empty, concat-single: one common tag is kept,
    // anything else gives a simple literal.
    CHECK(f.call("CONCAT", {lit("abc", xsd + "string"), lit("DEF", xsd + "string")}) == "\"abcDEF\"");
    CHECK(f.call("CONCAT", {tagged("english", "en"), tagged("english", "en")}) == "\"englishenglish\"@en");
    CHECK(f.call("CONCAT", {tagged("english", "en"), tagged("français", "fr")}) == "\"englishfrançais\"");
    CHECK(f.call("CONCAT", {lit("123"), tagged("日本語", "ja")}) == "\"123日本語\"");
    CHECK(f.call("CONCAT", {tagged("日本語", "ja"), lit("abc")}) == "\"日本語abc\"");
    CHECK(f.call("CONCAT", {}) == "\"\"");
    CHECK(f.call("CONCAT", {tagged("a", "en")}) == "\"a\"@en");
    CHECK(f.call("CONCAT", {lit("a"), integer("7")}) == "error");
    CHECK(f.call("CONCAT", {lit("a"), iri("http://a")}) == "error");
    // encode01(-non-bmp): all but the unreserved characters, UTF-8 bytes
    // in upper-case hex.
    CHECK(f.call("ENCODE_FOR_URI", {lit("Los Angeles")}) == "\"Los%20Angeles\"");
    CHECK(f.call("ENCODE_FOR_URI", {lit("食べ物")}) == "\"%E9%A3%9F%E3%81%B9%E7%89%A9\"");
    CHECK(f.call("ENCODE_FOR_URI", {lit("100%")}) == "\"100%25\"");
    CHECK(f.call("ENCODE_FOR_URI", {tagged("bar", "en")}) == "\"bar\"");
    CHECK(f.call("ENCODE_FOR_URI", {lit("aZ09-_.~/?#:@")}) == "\"aZ09-_.~%2F%3F%23%3A%40\"");
    CHECK(f.call("ENCODE_FOR_URI", {lit("\xF0\x9F\x91\xAA")}) == "\"%F0%9F%91%AA\"");
    CHECK(f.call("ENCODE_FOR_URI", {integer("1")}) == "error");
    // STRLANG / STRDT take a simple literal (strlang01-03, strdt01-03 rdf11).
    CHECK(f.call("STRLANG", {lit("bar"), lit("en-US")}) == "\"bar\"@en-us");
    CHECK(f.call("STRLANG", {lit("abc", xsd + "string"), lit("en-US")}) == "\"abc\"@en-us");
    CHECK(f.call("STRLANG", {tagged("bar", "en"), lit("en-US")}) == "error");
    CHECK(f.call("STRLANG", {integer("1"), lit("en")}) == "error");
    CHECK(f.call("STRLANG", {lit("bar"), lit("")}) == "error");
    CHECK(f.call("STRLANG", {lit("bar"), lit("en-")}) == "error");
    CHECK(f.call("STRLANG", {lit("bar"), lit("en US")}) == "error");
    CHECK(f.call("STRDT", {lit("123"), iri(xsd + "integer")}) == "\"123\"^^xsd:integer");
    CHECK(f.call("STRDT", {lit("abc"), iri(xsd + "string")}) == "\"abc\"");
    CHECK(f.call("STRDT", {lit("x"), iri("http://example/t")}) == "\"x\"^^<http://example/t>");
    CHECK(f.call("STRDT", {tagged("bar", "en"), iri(xsd + "string")}) == "error");
    CHECK(f.call("STRDT", {integer("1"), iri(xsd + "string")}) == "error");
    CHECK(f.call("STRDT", {lit("x"), lit(xsd + "string")}) == "error");
    CHECK(f.call("STRDT", {lit("x"), iri("http://www.w3.org/1999/02/22-rdf-syntax-ns#langString")}) == "error");
}

TEST_CASE("sparql functions: date and time accessors", "[sparql_functions]") {
    fixture f;
    // functions/year-01 ... tz-01 on their four dates.
    const term d1 = date_time("2010-06-21T11:28:01Z"), d2 = date_time("2010-12-21T15:38:02-08:00"),
               d3 = date_time("2008-06-20T23:59:00Z"), d4 = date_time("2011-02-01T01:02:03");
    auto each = [&](const char* fn) {
        return f.call(fn, {d1}) + " " + f.call(fn, {d2}) + " " + f.call(fn, {d3}) + " " + f.call(fn, {d4});
    };
    const std::string i = "^^xsd:integer";
    CHECK(each("YEAR") == "\"2010\"" + i + " \"2010\"" + i + " \"2008\"" + i + " \"2011\"" + i);
    CHECK(each("MONTH") == "\"6\"" + i + " \"12\"" + i + " \"6\"" + i + " \"2\"" + i);
    CHECK(each("DAY") == "\"21\"" + i + " \"21\"" + i + " \"20\"" + i + " \"1\"" + i);
    CHECK(each("HOURS") == "\"11\"" + i + " \"15\"" + i + " \"23\"" + i + " \"1\"" + i);
    CHECK(each("MINUTES") == "\"28\"" + i + " \"38\"" + i + " \"59\"" + i + " \"2\"" + i);
    CHECK(each("SECONDS") == "\"1.0\"^^xsd:decimal \"2.0\"^^xsd:decimal \"0.0\"^^xsd:decimal \"3.0\"^^xsd:decimal");
    CHECK(each("TIMEZONE") ==
          "\"PT0S\"^^xsd:dayTimeDuration \"-PT8H\"^^xsd:dayTimeDuration \"PT0S\"^^xsd:dayTimeDuration error");
    CHECK(each("TZ") == "\"Z\" \"-08:00\" \"Z\" \"\"");
    CHECK(f.call("SECONDS", {date_time("2011-02-01T01:02:03.250")}) == "\"3.25\"^^xsd:decimal");
    CHECK(f.call("TIMEZONE", {date_time("2011-02-01T01:02:03+05:30")}) == "\"PT5H30M\"^^xsd:dayTimeDuration");
    CHECK(f.call("TIMEZONE", {date_time("2011-02-01T01:02:03-00:45")}) == "\"-PT45M\"^^xsd:dayTimeDuration");
    CHECK(f.call("TIMEZONE", {date_time("2011-02-01T01:02:03+00:00")}) == "\"PT0S\"^^xsd:dayTimeDuration");
    CHECK(f.call("TZ", {date_time("2011-02-01T01:02:03+00:00")}) == "\"+00:00\"");
    // 24:00:00 is the next day's midnight; years beyond 9999 and BCE.
    CHECK(f.call("YEAR", {date_time("1999-12-31T24:00:00")}) == "\"2000\"" + i);
    CHECK(f.call("HOURS", {date_time("1999-12-31T24:00:00")}) == "\"0\"" + i);
    CHECK(f.call("YEAR", {date_time("12345-01-01T00:00:00")}) == "\"12345\"" + i);
    CHECK(f.call("YEAR", {date_time("-0044-03-15T12:00:00")}) == "\"-44\"" + i);
    CHECK(f.call("YEAR", {date_time(" 2010-06-21T11:28:01Z\n")}) == "\"2010\"" + i);
    // Not an xsd:dateTime, or not a valid one: an error.
    CHECK(f.call("YEAR", {lit("2010-06-21T11:28:01Z")}) == "error");
    CHECK(f.call("YEAR", {date("2010-06-21")}) == "error");
    for (const char* bad : {"2010-06-21", "2010-13-01T00:00:00", "2010-06-31T00:00:00", "2010-06-21T25:00:00",
                            "2010-06-21T11:60:00", "2010-06-21T11:28:60", "2010-06-21T11:28:01.Z", "10-06-21T11:28:01",
                            "02010-06-21T11:28:01", "2010-06-21T11:28:01+14:30", "2010-06-21T11:28:01 Z",
                            "2010-06-21T11:28"}) {
        INFO(bad);
        CHECK(f.call("YEAR", {date_time(bad)}) == "error");
    }
}

TEST_CASE("sparql functions: hashes", "[sparql_functions]") {
    fixture f;
    // functions/md5-01 ... sha512-02 ("foo", "食べ物", "食"), and the empty string.
    CHECK(f.call("MD5", {lit("foo")}) == "\"acbd18db4cc2f85cedef654fccc4a4d8\"");
    CHECK(f.call("MD5", {lit("食べ物")}) == "\"e7ada485d13b1decf628c9211bc3a97b\"");
    CHECK(f.call("MD5", {lit("")}) == "\"d41d8cd98f00b204e9800998ecf8427e\"");
    CHECK(f.call("MD5", {lit("abc", xsd + "string")}) == "\"900150983cd24fb0d6963f7d28e17f72\"");
    CHECK(f.call("SHA1", {lit("foo")}) == "\"0beec7b5ea3f0fdbc95d0dd47f3c5bc275da8a33\"");
    CHECK(f.call("SHA1", {lit("食")}) == "\"d46696735b6a09ff407bfc1a9407e008840db9c9\"");
    CHECK(f.call("SHA256", {lit("foo")}) == "\"2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae\"");
    CHECK(f.call("SHA256", {lit("食")}) == "\"0fbe868d1df356ca9df7ebff346da3a56280e059a7ea81186ef885b140d254ee\"");
    CHECK(f.call("SHA384", {lit("foo")}) ==
          "\"98c11ffdfdd540676b1a137cb1a22b2a70350c9a44171d6b1180c6be5cbb2ee3f79d532c8a1dd9ef2e8e08e752a3babb\"");
    CHECK(f.call("SHA384", {lit("食")}) ==
          "\"adfda7e9ad8789b391855038d0d74dce3efe3af1eefcea35d50b91d6c244a0c546375445b518c9fb61e03e6a060bc95d\"");
    CHECK(f.call("SHA512", {lit("foo")}) ==
          "\"f7fbba6e0636f890e56fbbf3283e524c6fa3204ae298382d624741d0dc663832"
          "6e282c41be5e4254d8820772c5518a2c5a8c0c7f7eda19594a7eb539453e1ed7\"");
    CHECK(f.call("SHA512", {lit("食")}) ==
          "\"b433ed0e60c818bea72d3aa1a43db89b3ed2b624597407b7912bbb7685f2e45a"
          "e5500e092da5f938391d282b26bc43e4035b12460c93ab5e2e1a05d582331d85\"");
    // A simple literal or xsd:string only (17.4.6).
    CHECK(f.call("MD5", {tagged("foo", "en")}) == "error");
    CHECK(f.call("SHA1", {integer("1")}) == "error");
    CHECK(f.call("SHA256", {iri("http://a")}) == "error");
}

TEST_CASE("sparql functions: REGEX and its flags", "[sparql_functions]") {
    fixture f;
    auto matches = [&](std::string text, std::string pattern, std::string flags = "") {
        return flags.empty() ? f.call("REGEX", {lit(std::move(text)), lit(std::move(pattern))})
                             : f.call("REGEX", {lit(std::move(text)), lit(std::move(pattern)), lit(std::move(flags))});
    };
    const std::string t = "\"true\"^^xsd:boolean", no = "\"false\"^^xsd:boolean";
    // The regex/ tests of the SPARQL 1.0 suite.
    CHECK(matches("ABCdefGHIjkl", "GHI") == t);
    CHECK(matches("abcDEFghiJKL", "DeFghI", "i") == t);
    CHECK(matches("abcDEFghiJKL", "DeFghI") == no);
    CHECK(matches("a\nc", "a.c") == no);
    CHECK(matches("a\nc", "a.c", "s") == t);
    CHECK(matches("a\rc", "a.c") == no); // '.' excludes CR too
    CHECK(matches("a\nb\nc", "^b$") == no);
    CHECK(matches("a\nb\nc", "^b$", "m") == t);
    CHECK(matches("b\n", "^b$") == no); // $ at the very end only
    CHECK(matches("a\nc", " a\n\r\t[\\n]c ", "x") == t); // whitespace kept inside the class
    CHECK(matches("ac", " a\n\tc ", "x") == t);
    CHECK(matches("a#c", "a#c", "x") == t); // '#' is no comment in XPath
    CHECK(matches("a?+*.{}()[]c", "a?+*.{}()[]c", "q") == t);
    CHECK(matches("A?+*.{}()[]C", "a?+*.{}()[]c", "iq") == t);
    CHECK(matches("abc", "a?+*.{}()[]c", "q") == no);
    CHECK(matches("abbc", "ab{2}c") == t);
    CHECK(matches("abbbc", "ab{1,2}c") == no);
    CHECK(matches("a\nc", "a[^b]c") == t);
    // Unicode: code points, case folding, properties.
    CHECK(matches("食べ物", "^.べ.$") == t);
    CHECK(matches("ÉCOLE", "école", "i") == t);
    CHECK(matches("Ωmega", "^\\p{Lu}") == t);
    CHECK(matches("\xF0\x9F\x91\xAA", "^.$") == t);
    // XPath's own syntax: class subtraction, \i and \c, back-references.
    CHECK(matches("bcd", "^[a-z-[aeiou]]+$") == t);
    CHECK(matches("bad", "^[a-z-[aeiou]]+$") == no);
    CHECK(matches("foo-bar.1", "^\\i\\c*$") == t);
    CHECK(matches("1foo", "^\\i\\c*$") == no);
    CHECK(matches("a b", "^\\C+$") == no);
    CHECK(matches("aa", "^(a)\\1$") == t);
    CHECK(matches("ab", "(?:a)b") == t);
    // Errors: bad patterns, unknown flags, non-strings, what XPath lacks.
    CHECK(matches("a", "(") == "error");
    CHECK(matches("a", "[a") == "error");
    CHECK(matches("a", "a", "z") == "error");
    CHECK(matches("a", "(?=a)") == "error");
    CHECK(matches("a", "(?i)a") == "error");
    CHECK(matches("a", "[\\I]") == "error");
    CHECK(matches("a", "a\\") == "error");
    CHECK(f.call("REGEX", {iri("http://example.com/uri"), lit("example")}) == "error"); // regex-query-003
    CHECK(f.call("REGEX", {tagged("chat", "fr"), lit("^ch")}) == t);
    CHECK(f.call("REGEX", {lit("chat"), tagged("^ch", "fr")}) == "error");
    CHECK(f.call("REGEX", {lit("chat"), lit("^ch"), integer("1")}) == "error");
    CHECK(f.call("REGEX", {integer("1"), lit("1")}) == "error");
    // Not UTF-8: an error, not a crash (twice: the compiled pattern is cached).
    CHECK(matches("a\xFF", "a") == "error");
    CHECK(matches("a\xFF", "a") == "error");
    CHECK(matches("a", "\xFF") == "error");
    CHECK(matches("a", "(") == "error");
    // Catastrophic backtracking ends at PCRE2's match limit: false or an
    // error, soon.
    const std::string r = matches(std::string(28, 'a'), "^(a|aa|a*)*b$");
    CHECK((r == no || r == "error"));
}

TEST_CASE("sparql functions: REPLACE", "[sparql_functions]") {
    fixture f;
    auto replace = [&](term text, std::string pattern, std::string with, std::string flags = "") {
        return flags.empty() ? f.call("REPLACE", {std::move(text), lit(std::move(pattern)), lit(std::move(with))})
                             : f.call("REPLACE", {std::move(text), lit(std::move(pattern)), lit(std::move(with)),
                                                  lit(std::move(flags))});
    };
    // functions/replace01-03, replace-case-insensitive.
    CHECK(replace(tagged("English", "en"), "[^a-z0-9]", "-") == "\"-nglish\"@en");
    CHECK(replace(tagged("日本語", "ja"), "[^a-z0-9]", "-") == "\"---\"@ja");
    CHECK(replace(tagged("Français", "fr"), "[^a-z0-9]", "-") == "\"-ran-ais\"@fr");
    CHECK(replace(lit("abc", xsd + "string"), "[^a-z0-9]", "-") == "\"abc\"");
    CHECK(replace(integer("7"), "[^a-z0-9]", "-") == "error");
    CHECK(replace(lit("banana"), "ana", "*") == "\"b*na\"");
    CHECK(replace(lit("abcd"), "(ab)|(a)", "[1=$1][2=$2]") == "\"[1=ab][2=]cd\"");
    CHECK(replace(lit("aAbBaC"), "a", "~/", "i") == "\"~/~/bB~/C\"");
    // F&O 5.6.3: $0, escapes, digits past the group count.
    CHECK(replace(lit("abracadabra"), "a(.)", "a$1$1") == "\"abbraccaddabbra\"");
    CHECK(replace(lit("darted"), "^(.*?)d(.*)$", "$1c$2") == "\"carted\"");
    CHECK(replace(lit("abc"), "b", "[$0]") == "\"a[b]c\"");
    CHECK(replace(lit("abc"), "(b)", "$10") == "\"ab0c\"");
    CHECK(replace(lit("abc"), "(b)", "$2") == "\"ac\"");
    CHECK(replace(lit("abc"), "b", "\\$\\\\") == "\"a$\\\\c\""); // "$\" (the key escapes the backslash)
    CHECK(replace(lit("abc"), "b", "$1", "q") == "\"a$1c\"");
    CHECK(replace(lit("a.c"), ".", "!", "q") == "\"a!c\"");
    CHECK(replace(lit("食べ物"), "べ", "-") == "\"食-物\"");
    // Errors: a lone $ or \, a pattern matching "", a bad pattern or flag.
    CHECK(replace(lit("abc"), "b", "$") == "error");
    CHECK(replace(lit("abc"), "b", "x$y") == "error");
    CHECK(replace(lit("abc"), "b", "\\n") == "error");
    CHECK(replace(lit("abc"), "x*", "-") == "error");
    CHECK(replace(lit("abc"), "\\b", "-") == "error");
    CHECK(replace(lit("abc"), "(", "-") == "error");
    CHECK(replace(lit("abc"), "b", "-", "k") == "error");
    CHECK(f.call("REPLACE", {lit("abc"), lit("b"), tagged("x", "en")}) == "error");
}

TEST_CASE("sparql functions: XSD casts", "[sparql_functions]") {
    fixture f;
    auto cast = [&](const std::string& type, const term& v) { return f.call(xsd + type, {v}); };
    // sparql11 cast/: from strings, the lexical space of the target with
    // whitespace collapsed; the results in canonical form.
    CHECK(cast("integer", lit("13")) == "\"13\"^^xsd:integer");
    CHECK(cast("integer", lit(" -0 ")) == "\"0\"^^xsd:integer");
    for (const char* bad : {"+33.3300", "0.0", "0E1", "1.5", "1E0", "string", "true", ""}) {
        INFO(bad);
        CHECK(cast("integer", lit(bad)) == "error");
    }
    CHECK(cast("decimal", lit("+33.3300")) == "\"33.33\"^^xsd:decimal");
    CHECK(cast("decimal", lit("0")) == "\"0.0\"^^xsd:decimal");
    CHECK(cast("decimal", lit("13")) == "\"13.0\"^^xsd:decimal");
    CHECK(cast("decimal", lit("-10.2E3")) == "error");
    CHECK(cast("decimal", lit("0E1")) == "error");
    CHECK(cast("double", lit("-10.2E3")) == "\"-1.02E4\"^^xsd:double");
    CHECK(cast("double", lit("+33.3300")) == "\"3.333E1\"^^xsd:double");
    CHECK(cast("double", lit("0.0")) == "\"0.0E0\"^^xsd:double");
    CHECK(cast("double", lit("1")) == "\"1.0E0\"^^xsd:double");
    CHECK(cast("double", lit("INF")) == "\"INF\"^^xsd:double");
    CHECK(cast("double", lit("2002-10-10T17:00:00Z")) == "error");
    CHECK(cast("float", lit("1.5")) == "\"1.5E0\"^^xsd:float");
    CHECK(cast("float", lit("0.1")) == "\"1.0E-1\"^^xsd:float");
    CHECK(cast("boolean", lit("0")) == "\"false\"^^xsd:boolean");
    CHECK(cast("boolean", lit("true")) == "\"true\"^^xsd:boolean");
    CHECK(cast("boolean", lit("1.5")) == "error");
    CHECK(cast("boolean", lit("TRUE")) == "error");
    CHECK(cast("dateTime", lit("2002-10-10T17:00:00Z")) == "\"2002-10-10T17:00:00Z\"^^xsd:dateTime");
    CHECK(cast("dateTime", lit("2002-10-10T17:00:00.500+00:00")) == "\"2002-10-10T17:00:00.5Z\"^^xsd:dateTime");
    CHECK(cast("dateTime", lit("2002-10-10T24:00:00")) == "\"2002-10-11T00:00:00\"^^xsd:dateTime");
    CHECK(cast("dateTime", lit("2002-10-10")) == "error");
    CHECK(cast("dateTime", date("2002-10-10-05:00")) == "\"2002-10-10T00:00:00-05:00\"^^xsd:dateTime");
    CHECK(cast("dateTime", integer("1")) == "error");
    // Between the numerics and booleans.
    CHECK(cast("integer", boolean("true")) == "\"1\"^^xsd:integer");
    CHECK(cast("integer", boolean("0")) == "\"0\"^^xsd:integer");
    CHECK(cast("integer", dec("-2.5")) == "\"-2\"^^xsd:integer");
    CHECK(cast("integer", flt("-7.875")) == "\"-7\"^^xsd:integer");
    CHECK(cast("integer", dbl("1E0")) == "\"1\"^^xsd:integer");
    CHECK(cast("integer", dbl("NaN")) == "error");
    CHECK(cast("integer", dbl("INF")) == "error");
    CHECK(cast("integer", dbl("1e40")) == "error");
    CHECK(cast("decimal", integer("0")) == "\"0.0\"^^xsd:decimal");
    CHECK(cast("decimal", flt("1.25")) == "\"1.25\"^^xsd:decimal");
    CHECK(cast("decimal", flt("0.1")) == "\"0.1\"^^xsd:decimal"); // the float's shortest digits
    CHECK(cast("decimal", dbl("1e30")) == "\"1000000000000000000000000000000.0\"^^xsd:decimal");
    CHECK(cast("decimal", dbl("NaN")) == "error");
    CHECK(cast("decimal", boolean("true")) == "\"1.0\"^^xsd:decimal");
    CHECK(cast("double", integer("1")) == "\"1.0E0\"^^xsd:double");
    CHECK(cast("double", flt("1.1")) == "\"1.100000023841858E0\"^^xsd:double"); // the float's exact value
    CHECK(cast("double", boolean("false")) == "\"0.0E0\"^^xsd:double");
    CHECK(cast("float", dbl("1e300")) == "\"INF\"^^xsd:float");
    CHECK(cast("float", dec("-2.5")) == "\"-2.5E0\"^^xsd:float");
    CHECK(cast("boolean", dbl("NaN")) == "\"false\"^^xsd:boolean");
    CHECK(cast("boolean", flt("-7.875")) == "\"true\"^^xsd:boolean");
    CHECK(cast("boolean", dec("0.0")) == "\"false\"^^xsd:boolean");
    // To xsd:string: XPath's string forms (cast-string).
    CHECK(cast("string", iri("http://example.org/z")) == "\"http://example.org/z\"");
    CHECK(cast("string", lit("+33.3300")) == "\"+33.3300\"");
    CHECK(cast("string", boolean("0")) == "\"false\"");
    CHECK(cast("string", integer("-1")) == "\"-1\"");
    CHECK(cast("string", dec("1.0")) == "\"1\"");
    CHECK(cast("string", dec("-2.50")) == "\"-2.5\"");
    CHECK(cast("string", dbl("0E1")) == "\"0\"");
    CHECK(cast("string", dbl("-0")) == "\"-0\"");
    CHECK(cast("string", dbl("1E0")) == "\"1\"");
    CHECK(cast("string", flt("-7.875")) == "\"-7.875\"");
    CHECK(cast("string", flt("1.1")) == "\"1.1\"");
    CHECK(cast("string", dbl("123456.5")) == "\"123456.5\"");
    CHECK(cast("string", dbl("1e6")) == "\"1.0E6\"");
    CHECK(cast("string", dbl("0.000001")) == "\"0.000001\"");
    CHECK(cast("string", dbl("1e-7")) == "\"1.0E-7\"");
    CHECK(cast("string", dbl("INF")) == "\"INF\"");
    CHECK(cast("string", date_time("2002-10-10T17:00:00Z")) == "\"2002-10-10T17:00:00Z\"");
    CHECK(cast("string", blank("b")) == "error");
    CHECK(cast("string", tagged("chat", "fr")) == "error");
    CHECK(cast("string", lit("x", "http://example/t")) == "error");
    CHECK(cast("string", integer("abc")) == "error");
    // The derived integer types, with their ranges.
    CHECK(cast("byte", lit("127")) == "\"127\"^^xsd:byte");
    CHECK(cast("byte", lit("128")) == "error");
    CHECK(cast("unsignedInt", dbl("4294967295")) == "\"4294967295\"^^xsd:unsignedInt");
    CHECK(cast("nonNegativeInteger", integer("-1")) == "error");
    // Not a cast, or the wrong number of arguments.
    CHECK(cast("date", lit("2002-10-10")) == "error");
    CHECK(f.call("http://example/f", {lit("1")}) == "error");
    CHECK(f.call(xsd + "integer", {}) == "error");
    CHECK(f.call(xsd + "integer", {lit("1"), lit("2")}) == "error");
}

TEST_CASE("sparql functions: arities and unknown names", "[sparql_functions]") {
    using arity = std::pair<unsigned, unsigned>;
    CHECK(sp::builtin_arity("STRLEN") == arity{1, 1});
    CHECK(sp::builtin_arity("SUBSTR") == arity{2, 3});
    CHECK(sp::builtin_arity("REPLACE") == arity{3, 4});
    CHECK(sp::builtin_arity("REGEX") == arity{2, 3});
    CHECK(sp::builtin_arity("BNODE") == arity{0, 1});
    CHECK(sp::builtin_arity("CONCAT") == arity{0, UINT_MAX});
    CHECK(sp::builtin_arity("NOW") == arity{0, 0});
    CHECK(sp::builtin_arity("URI") == arity{1, 1});
    CHECK(!sp::builtin_arity("strlen")); // the parser passes upper case
    CHECK(!sp::builtin_arity("BOUND"));
    CHECK(!sp::builtin_arity("COALESCE"));
    CHECK(!sp::builtin_arity(""));
    CHECK(sp::function_arity(xsd + "dateTime") == arity{1, 1});
    CHECK(sp::function_arity(xsd + "int") == arity{1, 1});
    CHECK(!sp::function_arity(xsd + "date"));
    CHECK(!sp::function_arity("http://example/f"));
    // Every keyword of the header: known, and an error outside its arity.
    fixture f;
    for (const char* name :
         {"STR", "LANG", "LANGMATCHES", "DATATYPE", "IRI", "URI", "BNODE", "RAND", "ABS", "CEIL", "FLOOR", "ROUND",
          "CONCAT", "STRLEN", "UCASE", "LCASE", "ENCODE_FOR_URI", "CONTAINS", "STRSTARTS", "STRENDS", "STRBEFORE",
          "STRAFTER", "YEAR", "MONTH", "DAY", "HOURS", "MINUTES", "SECONDS", "TIMEZONE", "TZ", "NOW", "UUID",
          "STRUUID", "MD5", "SHA1", "SHA256", "SHA384", "SHA512", "STRLANG", "STRDT", "SAMETERM", "ISIRI", "ISURI",
          "ISBLANK", "ISLITERAL", "ISNUMERIC", "REGEX", "SUBSTR", "REPLACE"}) {
        INFO(name);
        const auto a = sp::builtin_arity(name);
        REQUIRE(a);
        if (a->second != UINT_MAX) {
            const std::vector<term> too_many(a->second + 1, lit("a"));
            CHECK(!sp::call(name, too_many, f.ctx));
        }
        if (a->first > 0) {
            const std::vector<term> too_few(a->first - 1, lit("a"));
            CHECK(!sp::call(name, too_few, f.ctx));
        }
    }
    CHECK(f.call("NOSUCH", {}) == "error");
    CHECK(f.call("IF", {lit("a"), lit("b"), lit("c")}) == "error");
}

TEST_CASE("sparql functions: no argument makes a builtin throw or crash", "[sparql_functions]") {
    // Every builtin and cast over every combination of awkward arguments,
    // up to three of them: each answers a value or an error.
    const std::vector<term> odd = {lit(""),
                                   lit("a\xFF\xFE"),
                                   lit("\xF0\x9F"),
                                   tagged("\xC3", "x"),
                                   iri(""),
                                   iri("rel"),
                                   blank(""),
                                   integer(""),
                                   integer("99999999999999999999999999999999999999999999"),
                                   dec("-0.0000000000000000000000000000000000000000000000000001"),
                                   dbl("NaN"),
                                   dbl("-INF"),
                                   date_time("2010-06-21T11:28:01.123456789012345678901234567890Z"),
                                   date_time("-999999999999999-12-31T23:59:59-14:00"),
                                   lit("(", xsd + "string"),
                                   lit("x*"),
                                   lit("$9")};
    fixture f;
    std::vector<std::string> names;
    for (const char* n : {"STR", "LANG", "LANGMATCHES", "DATATYPE", "IRI", "BNODE", "ABS", "CEIL", "FLOOR", "ROUND",
                          "CONCAT", "STRLEN", "UCASE", "LCASE", "ENCODE_FOR_URI", "CONTAINS", "STRSTARTS", "STRENDS",
                          "STRBEFORE", "STRAFTER", "YEAR", "MONTH", "DAY", "HOURS", "MINUTES", "SECONDS", "TIMEZONE",
                          "TZ", "MD5", "SHA512", "STRLANG", "STRDT", "SAMETERM", "ISNUMERIC", "REGEX", "SUBSTR",
                          "REPLACE"})
        names.push_back(n);
    for (const char* c : {"string", "boolean", "integer", "decimal", "float", "double", "dateTime", "byte"})
        names.push_back(xsd + c);
    std::size_t calls = 0;
    for (const std::string& name : names) {
        for (const term& a : odd) {
            std::vector<term> args = {a};
            CHECK_NOTHROW(sp::call(name, args, f.ctx));
            for (const term& b : odd) {
                args = {a, b};
                CHECK_NOTHROW(sp::call(name, args, f.ctx));
                args.push_back(lit("$0"));
                CHECK_NOTHROW(sp::call(name, args, f.ctx));
                calls += 2;
            }
            CHECK_NOTHROW(sp::effective_boolean_value(a));
            CHECK_NOTHROW(sp::unary_minus(a));
            for (const term& b : odd) {
                CHECK_NOTHROW(sp::compare(op::lt, a, b));
                CHECK_NOTHROW(sp::arithmetic('/', a, b));
                CHECK_NOTHROW(sp::order_compare(&a, &b));
            }
        }
    }
    CHECK(calls > 0);
}
