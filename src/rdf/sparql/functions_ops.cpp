// The operators of SPARQL 1.1 section 17.3 (comparisons and arithmetic on
// the XPath operators they map to), the effective boolean value (17.2.2),
// sameTerm, and ORDER BY's total order (15.1).
#include <cmath>
#include <optional>
#include <string_view>

#include <rdf/sparql_functions.hpp>

#include "functions_xsd.hpp"

namespace rdf::sparql {

using namespace detail;

namespace {

// xsd:string spelt out is the simple literal's datatype (RDF 1.1).
std::string_view datatype_key(const term& t) {
    return t.datatype == xsd_string ? std::string_view() : std::string_view(t.datatype);
}

bool lang_equal(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (rdf::detail::ascii_lower(a[i]) != rdf::detail::ascii_lower(b[i])) return false;
    return true;
}

int three_way(std::string_view a, std::string_view b) {
    const int c = a.compare(b);
    return c < 0 ? -1 : c > 0 ? 1 : 0;
}

bool holds(compare_op op, int c) {
    switch (op) {
    case compare_op::eq: return c == 0;
    case compare_op::ne: return c != 0;
    case compare_op::lt: return c < 0;
    case compare_op::gt: return c > 0;
    case compare_op::le: return c <= 0;
    case compare_op::ge: return c >= 0;
    }
    return false;
}

numeric_kind promoted(numeric_kind a, numeric_kind b) { return a > b ? a : b; }

// op:numeric-equal / -less-than after promotion (XPath F&O 6.3, and the
// promotion of B.1): integer and decimal exactly, decimal to float when
// the other is a float, everything to double when one is a double.
// nullopt when a NaN makes the operands unordered.
std::optional<int> numeric_compare(const numeric& a, const numeric& b) {
    const numeric_kind k = promoted(a.kind, b.kind);
    if (k <= numeric_kind::decimal) return decimal_compare(a.dec, b.dec);
    double x = to_double(a), y = to_double(b);
    if (k == numeric_kind::float_) {
        x = double(float(x));
        y = double(float(y));
    }
    if (std::isnan(x) || std::isnan(y)) return std::nullopt;
    return x < y ? -1 : x > y ? 1 : 0;
}

// A literal whose value this file knows: in a value space that a literal
// of another of these types, or of a language tag, never shares.
bool known_value(const term& t, type_info info) {
    switch (info.type) {
    case value_type::string:
    case value_type::lang_string: return true;
    case value_type::boolean: return boolean_value(t).has_value();
    case value_type::integer:
    case value_type::decimal:
    case value_type::float_:
    case value_type::double_: return numeric_value(t).has_value();
    case value_type::date_time: return date_time_value(t).has_value();
    case value_type::date: {
        date_time d;
        return parse_date(t.value, d) == parse_status::ok;
    }
    default: return false;
    }
}

// RDFterm-equal (17.4.1.7) where no operator of 17.3 applies: the same
// term is equal; an IRI or blank node differs from any other term; a
// literal with a language tag from any other literal (rdf:langString's
// values are no other type's); two literals of known, different value
// spaces differ (the open-world tests: a date is != a dateTime). Any other
// two literals may denote the same value under a datatype this file does
// not know, or are ill-typed: an error.
std::optional<bool> term_equal(const term& a, const term& b, type_info ta, type_info tb) {
    if (same_term(a, b)) return true;
    if (a.kind != term_kind::literal || b.kind != term_kind::literal) return false;
    if (ta.type == value_type::lang_string || tb.type == value_type::lang_string) return false;
    if (known_value(a, ta) && known_value(b, tb)) return false;
    return std::nullopt;
}

std::optional<bool> equality_fallback(compare_op op, const term& a, const term& b, type_info ta, type_info tb) {
    if (op != compare_op::eq && op != compare_op::ne) return std::nullopt;
    const std::optional<bool> eq = term_equal(a, b, ta, tb);
    if (!eq) return std::nullopt;
    return op == compare_op::eq ? *eq : !*eq;
}

bool is_date_type(value_type t) { return t == value_type::date_time || t == value_type::date; }

std::optional<date_time> date_value(const term& t, value_type type) {
    date_time d;
    const parse_status st = type == value_type::date ? parse_date(t.value, d) : parse_date_time(t.value, d);
    if (st != parse_status::ok) return std::nullopt;
    return d;
}

} // namespace

bool same_term(const term& a, const term& b) {
    return a.kind == b.kind && a.value == b.value && datatype_key(a) == datatype_key(b) && lang_equal(a.lang, b.lang);
}

term boolean_term(bool b) { return make_typed(b ? "true" : "false", "boolean"); }
term integer_term(std::int64_t i) { return make_integer(i); }

std::optional<bool> compare(compare_op op, const term& a, const term& b) {
    const type_info ta = type_of(a), tb = type_of(b);
    if (is_numeric_type(ta.type) && is_numeric_type(tb.type)) {
        numeric na, nb;
        if (parse_numeric(ta, a.value, na) != parse_status::ok || parse_numeric(tb, b.value, nb) != parse_status::ok)
            return equality_fallback(op, a, b, ta, tb);
        const std::optional<int> c = numeric_compare(na, nb);
        if (!c) return op == compare_op::ne; // NaN: unequal to everything, ordered with nothing
        return holds(op, *c);
    }
    if (ta.type == value_type::string && tb.type == value_type::string) return holds(op, three_way(a.value, b.value));
    if (ta.type == value_type::boolean && tb.type == value_type::boolean) {
        const std::optional<bool> x = boolean_value(a), y = boolean_value(b);
        if (!x || !y) return equality_fallback(op, a, b, ta, tb);
        return holds(op, int(*x) - int(*y));
    }
    if (is_date_type(ta.type) && ta.type == tb.type) {
        const std::optional<date_time> x = date_value(a, ta.type), y = date_value(b, tb.type);
        if (!x || !y) return equality_fallback(op, a, b, ta, tb);
        const std::optional<int> c = date_time_compare(*x, *y);
        if (!c) return std::nullopt; // indeterminate (XSD 3.2.7.4): an error, for = too
        return holds(op, *c);
    }
    if (ta.type == value_type::lang_string && tb.type == value_type::lang_string &&
        (op == compare_op::eq || op == compare_op::ne)) {
        const bool eq = a.value == b.value && lang_equal(a.lang, b.lang);
        return op == compare_op::eq ? eq : !eq;
    }
    return equality_fallback(op, a, b, ta, tb);
}

std::optional<bool> effective_boolean_value(const term& t) {
    const type_info info = type_of(t);
    switch (info.type) {
    case value_type::boolean: return boolean_value(t).value_or(false); // ill-typed: false (17.2.2)
    case value_type::string:
    case value_type::lang_string: return !t.value.empty();
    case value_type::integer:
    case value_type::decimal:
    case value_type::float_:
    case value_type::double_: {
        numeric n;
        switch (parse_numeric(info, t.value, n)) {
        case parse_status::invalid: return false;
        case parse_status::out_of_range: return true; // too large, or digits 400 places down: not zero
        case parse_status::ok: break;
        }
        if (n.kind <= numeric_kind::decimal) return n.dec.m != 0;
        return n.dbl != 0 && !std::isnan(n.dbl);
    }
    default: return std::nullopt;
    }
}

value arithmetic(char op, const term& a, const term& b) {
    const std::optional<numeric> x = numeric_value(a), y = numeric_value(b);
    if (!x || !y) return std::nullopt;
    const numeric_kind k = promoted(x->kind, y->kind);
    numeric r;
    r.kind = k;
    if (k == numeric_kind::integer && op != '/') {
        // op:numeric-add etc. on xs:integer: exact; beyond 128 bits XPath's
        // overflow error (err:FOAR0002).
        int128 v = 0;
        bool overflow = false;
        switch (op) {
        case '+': overflow = __builtin_add_overflow(x->dec.m, y->dec.m, &v); break;
        case '-': overflow = __builtin_sub_overflow(x->dec.m, y->dec.m, &v); break;
        case '*': overflow = __builtin_mul_overflow(x->dec.m, y->dec.m, &v); break;
        default: return std::nullopt;
        }
        if (overflow || v < -int128_max) return std::nullopt;
        r.dec = decimal{v, 0};
        return numeric_term(r);
    }
    if (k <= numeric_kind::decimal) {
        // Integer division is decimal division (op:numeric-divide).
        r.kind = numeric_kind::decimal;
        std::optional<decimal> v;
        switch (op) {
        case '+': v = decimal_add(x->dec, y->dec); break;
        case '-': v = decimal_sub(x->dec, y->dec); break;
        case '*': v = decimal_mul(x->dec, y->dec); break;
        case '/': v = decimal_div(x->dec, y->dec); break; // by zero: err:FOAR0001
        default: return std::nullopt;
        }
        if (!v) return std::nullopt;
        r.dec = *v;
        return numeric_term(r);
    }
    const double p = to_double(*x), q = to_double(*y);
    double v = 0;
    switch (op) {
    case '+': v = p + q; break;
    case '-': v = p - q; break;
    case '*': v = p * q; break;
    case '/': v = p / q; break; // IEEE 754: INF, -INF or NaN for a zero divisor
    default: return std::nullopt;
    }
    // A float result is the double result rounded once to float: exact
    // for + - * / (a double holds more than twice a float's precision).
    r.dbl = k == numeric_kind::float_ ? double(float(v)) : v;
    return numeric_term(r);
}

value unary_minus(const term& t) {
    std::optional<numeric> n = numeric_value(t);
    if (!n) return std::nullopt;
    if (n->kind <= numeric_kind::decimal) n->dec.m = -n->dec.m;
    else n->dbl = -n->dbl;
    return numeric_term(*n);
}

value unary_plus(const term& t) {
    const std::optional<numeric> n = numeric_value(t);
    if (!n) return std::nullopt;
    return numeric_term(*n);
}

namespace {

enum class order_rank : int { numeric, boolean, date_time, date, string, lang_string, other };

struct order_key {
    order_rank rank = order_rank::other;
    numeric num;
    bool flag = false;
    date_time dt;
};

order_key key_of(const term& t) {
    order_key k;
    const type_info info = type_of(t);
    switch (info.type) {
    case value_type::integer:
    case value_type::decimal:
    case value_type::float_:
    case value_type::double_:
        if (parse_numeric(info, t.value, k.num) == parse_status::ok) k.rank = order_rank::numeric;
        break;
    case value_type::boolean:
        if (const auto b = boolean_value(t)) k.rank = order_rank::boolean, k.flag = *b;
        break;
    case value_type::date_time:
        if (parse_date_time(t.value, k.dt) == parse_status::ok) k.rank = order_rank::date_time;
        break;
    case value_type::date:
        if (parse_date(t.value, k.dt) == parse_status::ok) k.rank = order_rank::date;
        break;
    case value_type::string: k.rank = order_rank::string; break;
    case value_type::lang_string: k.rank = order_rank::lang_string; break;
    default: break;
    }
    return k;
}

// The exact order of the numeric values (a refinement of XPath's, which
// rounds a decimal to the double it is compared with), NaN below all.
int numeric_order(const numeric& a, const numeric& b) {
    const bool fa = a.kind >= numeric_kind::float_, fb = b.kind >= numeric_kind::float_;
    if (!fa && !fb) return decimal_compare(a.dec, b.dec);
    if (fa && fb) {
        const bool na = std::isnan(a.dbl), nb = std::isnan(b.dbl);
        if (na || nb) return na == nb ? 0 : na ? -1 : 1;
        return a.dbl < b.dbl ? -1 : a.dbl > b.dbl ? 1 : 0;
    }
    const decimal& d = fa ? b.dec : a.dec;
    const double f = fa ? a.dbl : b.dbl;
    int c; // decimal against double
    if (std::isnan(f)) c = 1;
    else if (std::isinf(f)) c = f > 0 ? -1 : 1;
    else c = decimal_compare_double(d, f);
    return fa ? -c : c;
}

} // namespace

int order_compare(const term* a, const term* b) {
    if (a == nullptr || b == nullptr) return a == b ? 0 : a == nullptr ? -1 : 1;
    auto kind_rank = [](term_kind k) { return k == term_kind::blank ? 0 : k == term_kind::iri ? 1 : 2; };
    if (a->kind != b->kind) return kind_rank(a->kind) < kind_rank(b->kind) ? -1 : 1;
    if (a->kind != term_kind::literal) return three_way(a->value, b->value);
    const order_key ka = key_of(*a), kb = key_of(*b);
    if (ka.rank != kb.rank) return ka.rank < kb.rank ? -1 : 1;
    int c = 0;
    switch (ka.rank) {
    case order_rank::numeric: c = numeric_order(ka.num, kb.num); break;
    case order_rank::boolean: c = int(ka.flag) - int(kb.flag); break;
    case order_rank::date_time:
    case order_rank::date:
        c = date_time_order(ka.dt, kb.dt);
        if (c == 0 && ka.dt.has_tz != kb.dt.has_tz) c = ka.dt.has_tz ? 1 : -1;
        break;
    case order_rank::other: c = three_way(datatype_key(*a), datatype_key(*b)); break;
    default: break;
    }
    if (c != 0) return c;
    // Equal values, or no value order: the datatype, the lexical form and
    // the tag decide, so that only the same term compares 0.
    if ((c = three_way(datatype_key(*a), datatype_key(*b))) != 0) return c;
    if ((c = three_way(a->value, b->value)) != 0) return c;
    for (std::size_t i = 0; i < a->lang.size() && i < b->lang.size(); ++i) {
        const char x = rdf::detail::ascii_lower(a->lang[i]), y = rdf::detail::ascii_lower(b->lang[i]);
        if (x != y) return x < y ? -1 : 1;
    }
    return a->lang.size() == b->lang.size() ? 0 : a->lang.size() < b->lang.size() ? -1 : 1;
}

} // namespace rdf::sparql
