#pragma once
// SPARQL 1.1 expression values (section 17): the operator mapping (17.3),
// the effective boolean value (17.2.2), ORDER BY's order (15.1), and the
// builtin function library (17.4) with the XSD constructor casts (17.5).
// Compiled in src/rdf/sparql/functions*.cpp; the regular expressions run on
// PCRE2 and the hashes on OpenSSL's libcrypto, which only those files name.
//
// Every function here is strict: it takes evaluated arguments, and an
// argument that is an error or unbound makes any of them an error, so the
// evaluator returns the error without calling. The forms that are not
// strict (&&, ||, !, IF, COALESCE, BOUND, EXISTS, IN) are the evaluator's;
// IN uses compare(eq), and NOT IN its negation.
//
// Lexical forms of the results: the XSD 1.0 canonical ones, which the
// SPARQL 1.1 test suite's computed results use (aggregates, functions/
// coalesce01, plus-1): integer "3", decimal "2.0" / "0.5" (always a point
// with a digit on each side), double and float "1.0E0" / "3.21E4" /
// "2.0E-1", "INF", "-INF", "NaN"; boolean "true" / "false". (Other tests
// write "3"^^xsd:decimal for CEIL, "6"^^xsd:double for 3 + 3e0, and
// cast/cast-double even both "0E0" and "0" for one value: no canonical
// form passes them all when numeric literals are compared by lexical form
// rather than by datatype and value.)
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include <rdf/term.hpp>

namespace rdf::sparql {

/// An expression's value: a term, or an error (SPARQL's type errors,
/// unbound arguments).
using value = std::optional<term>;

enum class compare_op : std::uint8_t { eq, ne, lt, gt, le, ge };

/// The operator mapping of 17.3 for = != < > <= >=: numerics with type
/// promotion (integer and its derived types < decimal < float < double;
/// NaN is != everything and ordered with nothing), strings (simple
/// literals and xsd:string, by code point), booleans (false < true),
/// xsd:dateTime and xsd:date (XSD's order, 3.2.7.4: a value with a
/// timezone and one without compare only when 14 hours either way cannot
/// change the answer, else error, for = too: the open-world tests want
/// "2006-08-23Z"^^xsd:date != "2006-08-23"^^xsd:date to be an error).
/// = and != on anything else are RDFterm-equal: true for the same term;
/// false for terms known to differ (an IRI or blank node and anything
/// else, a language-tagged literal and any other literal, literals of two
/// different datatypes this file knows); an error for two literals it
/// cannot tell apart by value (an unknown datatype, or an ill-typed literal
/// such as "abc"^^xsd:integer, against another literal). nullopt = error.
std::optional<bool> compare(compare_op op, const term& a, const term& b);

/// The effective boolean value (17.2.2): booleans, numerics (false for 0
/// and NaN, and for an ill-typed lexical form), string literals with or
/// without a language tag (false when empty); anything else is an error.
std::optional<bool> effective_boolean_value(const term& t);

/// + - * / (op is '+', '-', '*' or '/') with numeric type promotion; the
/// result is of the promoted type (integer for two integer-derived types)
/// and in canonical form. Integer division gives xsd:decimal; division by
/// zero of integers and decimals is an error; of floats and doubles gives
/// INF or NaN; a float result is rounded to float. Integers and decimals
/// are exact in 127 bits (38 digits and more, no binary floating point): a
/// decimal sum, product or quotient beyond that is rounded half away from
/// zero to fit, an integer result beyond +-1.7e38 is an error (XPath's
/// overflow error), and so is a numeric literal beyond it (no value here).
/// Decimal division gives 24 fractional digits (more when the dividend has
/// more), rounded half up, trailing zeros trimmed.
value arithmetic(char op, const term& a, const term& b);
value unary_minus(const term& t);
value unary_plus(const term& t);

/// ORDER BY's order (15.1): unbound (nullptr) < blank nodes < IRIs <
/// literals; blank labels and IRIs by code point. Among literals, by '<'
/// where 17.3 defines it, and otherwise by a fixed order, so that a sort is
/// deterministic: numerics (NaN first; by exact value, which refines '<':
/// the decimal 0.1 sorts below the double 0.1), booleans, dateTimes (one
/// without a timezone placed as if in UTC), dates, simple literals,
/// language-tagged literals (by lexical form, then tag), then the rest
/// (unknown datatypes, ill-typed literals) by datatype IRI and lexical
/// form. Only the same term compares 0 (equal values: by datatype IRI,
/// then lexical form), so this is a strict total order on terms, safe for
/// std::sort. Returns <0, 0, >0.
int order_compare(const term* a, const term* b);

/// sameTerm (17.4.1.8): the same RDF term (a language tag compares without
/// case).
bool same_term(const term& a, const term& b);

/// xsd:boolean and xsd:integer terms in canonical form (for COUNT, EXISTS
/// and the like).
term boolean_term(bool b);
term integer_term(std::int64_t i);

namespace detail {
struct function_state; // the RNG, BNODE's labels, the compiled regexes
} // namespace detail

struct function_options {
    /// IRI()/URI() resolve a relative IRI against it; empty: no base, and a
    /// relative IRI is an error.
    std::string base_iri;
    /// RAND, UUID and STRUUID draw from a generator seeded with it; unset:
    /// a seed from std::random_device.
    std::optional<std::uint64_t> seed;
    /// NOW's value, in milliseconds since 1970-01-01T00:00:00Z; unset: the
    /// clock's when the context is made. Contexts of one query on several
    /// threads take the same value.
    std::optional<std::int64_t> now_unix_ms;
    /// BNODE's labels are this prefix and a counter. No label of N-Triples,
    /// Turtle, RDF/XML or SPARQL starts with '.', so the default cannot meet
    /// a label of the data; an evaluator that must print labels N-Triples
    /// can read chooses a valid prefix no label of its store starts with.
    /// Contexts of one query on several threads take different prefixes.
    std::string bnode_prefix = ".b";
};

/// Per-query state of the functions: NOW's value (fixed for the query), the
/// RNG, the base IRI, BNODE's labels and the compiled regular expressions
/// (a query applies the same pattern to every row). One per thread: it is
/// not synchronised.
class function_context {
public:
    explicit function_context(function_options options = {});
    ~function_context();
    function_context(function_context&&) noexcept;
    function_context& operator=(function_context&&) noexcept;
    function_context(const function_context&) = delete;
    function_context& operator=(const function_context&) = delete;

    /// Between solutions: BNODE(str) gives the same label for the same
    /// string within one solution, and a new one in the next (17.4.2.9).
    void next_solution();

    const std::string& base_iri() const noexcept;
    /// NOW's value: an xsd:dateTime in UTC, to the millisecond ("Z").
    const term& now() const noexcept;

    /// What call() works on (src/rdf/sparql/functions_state.hpp).
    detail::function_state& state() noexcept { return *state_; }

private:
    std::unique_ptr<detail::function_state> state_;
};

/// A builtin call with evaluated arguments (17.4). `name` is the upper-case
/// keyword (STR, LANG, LANGMATCHES, DATATYPE, IRI, URI, BNODE, RAND, ABS,
/// CEIL, FLOOR, ROUND, CONCAT, STRLEN, UCASE, LCASE, ENCODE_FOR_URI,
/// CONTAINS, STRSTARTS, STRENDS, STRBEFORE, STRAFTER, YEAR, MONTH, DAY,
/// HOURS, MINUTES, SECONDS, TIMEZONE, TZ, NOW, UUID, STRUUID, MD5, SHA1,
/// SHA256, SHA384, SHA512, STRLANG, STRDT, SAMETERM, ISIRI, ISURI, ISBLANK,
/// ISLITERAL, ISNUMERIC, REGEX, SUBSTR, REPLACE), or the full IRI of an XSD
/// constructor cast (17.5: xsd:integer, decimal, float, double, string,
/// boolean, dateTime, and the integer-derived types such as xsd:int with
/// their range checks). An unknown name, a wrong argument count, or any
/// failure is an error (nullopt); nothing throws.
///
/// Where the spec leaves a choice: strings count code points over UTF-8
/// (a byte that is not UTF-8 counts as one and passes through); SUBSTR
/// takes any numeric start and length, with fn:substring's rounding;
/// UCASE/LCASE map Latin, Greek, Cyrillic and Armenian letters
/// (functions.cpp lists what is not covered); SECONDS is an xsd:decimal,
/// TIMEZONE an xsd:dayTimeDuration ("PT0S", "-PT8H", "PT5H30M"), TZ the
/// timezone as written ("Z", "-08:00", "" without one); IRI() resolves
/// against the base; REGEX/REPLACE are XPath's (functions_regex.cpp says
/// how PCRE2 runs them); the cast to xsd:string follows XPath (1.0 decimal
/// -> "1", 1.0E6 double -> "1.0E6", 0.5 double -> "0.5") and refuses a
/// language-tagged literal, as 17.5's table has no row for one.
value call(std::string_view name, std::span<const term> args, function_context& ctx);

/// For the parser: the arity range of a builtin keyword (`upper_name` in
/// upper case; CONCAT's maximum is unbounded: UINT_MAX), or nullopt if it is
/// not one of call()'s keywords (BOUND, IF, COALESCE, EXISTS are the
/// evaluator's).
std::optional<std::pair<unsigned, unsigned>> builtin_arity(std::string_view upper_name);

/// For the parser: the arity range of a function IRI call() knows (the XSD
/// casts: 1, 1), or nullopt. A call of another IRI is an error when
/// evaluated, not when parsed (17.6: extension functions).
std::optional<std::pair<unsigned, unsigned>> function_arity(std::string_view iri);

} // namespace rdf::sparql
