// The SPARQL 1.1 query grammar (SPARQL 1.1 Query, section 19.8) over the
// lexer's tokens: a recursive-descent parser that builds the algebra of
// rdf/sparql_algebra.hpp directly, translating each group graph pattern as
// section 18.2.2 does, and checks the rules the grammar alone does not say
// (18.2.1's variable scope for BIND and SELECT expressions, 18.2.4.1's
// grouping rules, aggregates only where they may be).
#include <rdf/sparql_algebra.hpp>
#include <rdf/sparql_parser.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <rdf/query.hpp>
#include <rdf/term.hpp>

#include "iri.hpp"
#include "lexer.hpp"

namespace rdf {

namespace sparql {

namespace {

/// Variables in order of first appearance, each once (a set beside the
/// list: SELECT * over thousands of patterns must not go quadratic).
struct variable_list {
    std::vector<std::string> out;
    std::unordered_set<std::string> seen;
    void add(const std::string& v) {
        if (v.rfind("_:", 0) != 0 && seen.insert(v).second) out.push_back(v);
    }
    void add(const pattern_term& t) {
        if (t.is_variable) add(t.variable);
    }
};

void collect_in_scope(const graph_pattern& p, variable_list& out);

} // namespace

std::vector<std::string> in_scope_variables(const graph_pattern& p) {
    variable_list out;
    collect_in_scope(p, out);
    return std::move(out.out);
}

namespace {

void collect_in_scope(const graph_pattern& p, variable_list& out) {
    auto merge = [&](const graph_pattern& c) { collect_in_scope(c, out); };
    using k = graph_pattern::kind;
    switch (p.what) {
    case k::bgp:
        for (const triple_pattern& t : p.triples) {
            out.add(t.s);
            out.add(t.p);
            out.add(t.o);
        }
        break;
    case k::path:
        out.add(p.subject);
        out.add(p.object);
        break;
    case k::minus:
    case k::filter: merge(p.children[0]); break;
    case k::extend:
        merge(p.children[0]);
        out.add(p.var);
        break;
    case k::values:
        for (const std::string& v : p.vars) out.add(v);
        break;
    case k::subquery:
        for (const projection_item& i : p.sub->projection) out.add(i.var);
        break;
    case k::graph:
        out.add(p.subject);
        merge(p.children[0]);
        break;
    default:
        for (const graph_pattern& c : p.children) merge(c);
    }
}

} // namespace

void refuse_dataset_clauses(const query_tree& q) {
    if (!q.dataset_at) return;
    const auto [line, column] = *q.dataset_at;
    // Which keyword came first is not kept; FROM NAMED alone is the only case where it is NAMED.
    throw query_error("line " + std::to_string(line) + ", column " + std::to_string(column) + ": " +
                          (q.from.empty() ? "FROM NAMED" : "FROM") +
                          " is not supported (queries run over the loaded data (--data) as the default graph; no dataset clause)",
                      line, column);
}

std::optional<query> as_bgp_query(const query_tree& t) {
    if (t.dataset_at || t.what != query_tree::form::select || t.grouped || !t.having.empty() || !t.order_by.empty() || t.offset != 0 ||
        t.values || t.where.what != graph_pattern::kind::bgp)
        return std::nullopt;
    query q;
    for (const projection_item& i : t.projection) {
        if (i.expr) return std::nullopt;
        q.projection.push_back(i.var);
    }
    q.select_all = t.select_all;
    q.distinct = t.distinct || t.reduced; // REDUCED permits removing duplicates, so removing all of them is correct
    q.limit = t.limit;
    q.patterns = t.where.triples;
    return q;
}

} // namespace sparql

namespace detail {
namespace {

using sparql::expression;
using sparql::graph_pattern;
using sparql::query_tree;
using expr_op = expression::op;
using gp_kind = graph_pattern::kind;

// '[ p [ p [ ... ] ] ]', nested groups and parenthesised expressions
// recurse once per level; the bound keeps a hostile query from exhausting
// the stack.
constexpr int sparql_max_nesting = 64;

// A chain ('?a + ?b + ...', '{...} UNION {...} UNION ...', a group of many
// OPTIONALs) builds a left-deep tree, which evaluating and destroying walk
// by recursion: the operators of a query are bounded so that a generated
// or hostile one cannot overflow the stack (4096 nested operators take well
// under a megabyte of it).
constexpr std::size_t sparql_max_operators = 4096;

constexpr std::string_view xsd_prefix = "http://www.w3.org/2001/XMLSchema#";
constexpr std::string_view rdf_prefix = "http://www.w3.org/1999/02/22-rdf-syntax-ns#";

struct builtin_info {
    std::string_view name;
    unsigned min_args, max_args;
};

// The built-in calls (19.8's BuiltInCall) and their arities; the
// aggregates, EXISTS and NOT EXISTS are parsed apart.
constexpr std::array<builtin_info, 52> builtins{{
    {"STR", 1, 1},       {"LANG", 1, 1},      {"LANGMATCHES", 2, 2}, {"DATATYPE", 1, 1},  {"BOUND", 1, 1},
    {"IRI", 1, 1},       {"URI", 1, 1},       {"BNODE", 0, 1},       {"RAND", 0, 0},      {"ABS", 1, 1},
    {"CEIL", 1, 1},      {"FLOOR", 1, 1},     {"ROUND", 1, 1},       {"CONCAT", 0, ~0u},  {"SUBSTR", 2, 3},
    {"STRLEN", 1, 1},    {"REPLACE", 3, 4},   {"UCASE", 1, 1},       {"LCASE", 1, 1},     {"ENCODE_FOR_URI", 1, 1},
    {"CONTAINS", 2, 2},  {"STRSTARTS", 2, 2}, {"STRENDS", 2, 2},     {"STRBEFORE", 2, 2}, {"STRAFTER", 2, 2},
    {"YEAR", 1, 1},      {"MONTH", 1, 1},     {"DAY", 1, 1},         {"HOURS", 1, 1},     {"MINUTES", 1, 1},
    {"SECONDS", 1, 1},   {"TIMEZONE", 1, 1},  {"TZ", 1, 1},          {"NOW", 0, 0},       {"UUID", 0, 0},
    {"STRUUID", 0, 0},   {"MD5", 1, 1},       {"SHA1", 1, 1},        {"SHA256", 1, 1},    {"SHA384", 1, 1},
    {"SHA512", 1, 1},    {"COALESCE", 0, ~0u}, {"IF", 3, 3},         {"STRLANG", 2, 2},   {"STRDT", 2, 2},
    {"SAMETERM", 2, 2},  {"ISIRI", 1, 1},     {"ISURI", 1, 1},       {"ISBLANK", 1, 1},   {"ISLITERAL", 1, 1},
    {"ISNUMERIC", 1, 1}, {"REGEX", 2, 3},
}};

const builtin_info* find_builtin(std::string_view upper) {
    for (const builtin_info& b : builtins)
        if (b.name == upper) return &b;
    return nullptr;
}

bool is_aggregate_name(std::string_view upper) {
    return upper == "COUNT" || upper == "SUM" || upper == "MIN" || upper == "MAX" || upper == "AVG" ||
           upper == "SAMPLE" || upper == "GROUP_CONCAT";
}

graph_pattern make_node(gp_kind k, std::vector<graph_pattern> children = {}) { // counted by the parser where it nests
    graph_pattern g;
    g.what = k;
    g.children = std::move(children);
    return g;
}

bool is_unit(const graph_pattern& g) { return g.what == gp_kind::bgp && g.triples.empty(); }

/// Join(G, X) with the spec's simplification Join(Z, X) = X for the empty
/// pattern Z, and two BGPs merged into one, which the BGP planner orders
/// as a whole.
graph_pattern join(graph_pattern g, graph_pattern x) {
    if (is_unit(g)) return x;
    if (is_unit(x) && g.what != gp_kind::values) return g;
    if (g.what == gp_kind::bgp && x.what == gp_kind::bgp) {
        g.triples.insert(g.triples.end(), x.triples.begin(), x.triples.end());
        return g;
    }
    return make_node(gp_kind::join, {std::move(g), std::move(x)});
}

/// The variables an expression reads outside aggregates (for the grouping rules).
void free_variables(const expression& e, std::vector<std::string>& out) {
    if (e.what == expr_op::aggregate) return;
    if (e.what == expr_op::variable || e.what == expr_op::bound) out.push_back(e.name);
    for (const expression& a : e.args) free_variables(a, out);
}

class sparql_parser {
public:
    sparql_parser(std::string_view text, std::string_view base) : lex_(text), base_(base) {}

    query_tree parse() {
        if (lex_.text().size() > sparql_max_query_bytes)
            fail(sparql_max_query_bytes, "query too long (" + std::to_string(lex_.text().size()) + " bytes; at most " +
                                             std::to_string(sparql_max_query_bytes) + " are accepted)");
        if (!base_.empty() && !has_iri_scheme(base_))
            fail(0, "the base IRI <" + base_ + "> given for the query is not absolute (scheme:...)");
        advance();
        if (tok_.k == kind::end) fail(tok_.begin, "empty query: expected SELECT, CONSTRUCT, ASK or DESCRIBE");
        parse_prologue();
        query_tree q;
        q.base = base_;
        reject_update();
        if (is_keyword("SELECT")) parse_select_query(q, false);
        else if (is_keyword("CONSTRUCT")) parse_construct_query(q);
        else if (is_keyword("ASK")) parse_ask_query(q);
        else if (is_keyword("DESCRIBE")) parse_describe_query(q);
        else expected("SELECT, CONSTRUCT, ASK or DESCRIBE (or PREFIX/BASE)");
        if (is_keyword("VALUES")) {
            advance();
            q.values = parse_data_block();
        }
        if (tok_.k != kind::end) expected("end of query");
        name_anonymous_nodes(q);
        return q;
    }

private:
    using kind = sparql_token::kind;

    sparql_lexer lex_;
    sparql_token& tok_ = lex_.token(); ///< the lexer's current token
    std::string base_;
    std::unordered_map<std::string, std::string> prefixes_;
    std::unordered_set<std::string> labels_; ///< "_:label" names written in the query
    /// The basic graph pattern each blank node label was first used in:
    /// SPARQL forbids sharing a label across two (section 4.1.4).
    std::unordered_map<std::string, std::size_t> label_block_;
    std::size_t block_ = 0;    ///< the basic graph pattern being parsed
    bool in_template_ = false; ///< a CONSTRUCT template: labels there are fresh nodes, not variables
    std::size_t anon_count_ = 0;
    int depth_ = 0;
    bool aggregates_allowed_ = false;
    std::size_t operators_ = 0;
    /// Each named variable's place of first appearance in the text: SELECT *
    /// lists the in-scope variables in that order.
    std::unordered_map<std::string, std::size_t> first_seen_;
    bool saw_aggregate_ = false;

    // ---- errors ------------------------------------------------------------

    [[noreturn]] void fail(std::size_t offset, const std::string& message) const { lex_.fail(offset, message); }

    std::string describe(const sparql_token& t) const { return lex_.describe(t); }

    [[noreturn]] void expected(const std::string& what) const {
        fail(tok_.begin, "expected " + what + ", found " + describe(tok_));
    }

    [[noreturn]] void unsupported(std::size_t offset, const std::string& construct, std::string_view hint) const {
        fail(offset, construct + " is not supported (" + std::string(hint) + ")");
    }

    void advance() { lex_.advance(); }

    void count_operator() {
        if (++operators_ > sparql_max_operators)
            fail(tok_.begin, "the query has more than " + std::to_string(sparql_max_operators) +
                                 " operators and graph pattern elements: split it, or use VALUES or IN lists for long alternatives");
    }

    struct nesting {
        sparql_parser& p;
        nesting(sparql_parser& parser, std::size_t at, const char* what) : p(parser) {
            if (++p.depth_ > sparql_max_nesting)
                p.fail(at, std::string(what) + " nested more than " + std::to_string(sparql_max_nesting) + " deep");
        }
        ~nesting() { --p.depth_; }
        nesting(const nesting&) = delete;
        nesting& operator=(const nesting&) = delete;
    };

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

    void expect_punct(std::string_view p, const std::string& what) {
        if (!is_punct(p)) expected(what);
        advance();
    }

    void expect_keyword(std::string_view kw, const std::string& what) {
        if (!is_keyword(kw)) expected(what);
        advance();
    }

    std::string expand(const sparql_token& t) const {
        const auto it = prefixes_.find(t.prefix);
        if (it == prefixes_.end())
            fail(t.begin, "undefined prefix '" + t.prefix + ":' (declare it with PREFIX " + t.prefix +
                              ": <http://...> before the query)");
        return it->second + t.value;
    }

    /// An IRI token resolved against `base` (BASE's so far by default).
    /// Without a base only an absolute IRI is taken: the data holds absolute
    /// IRIs only, so a relative one kept as written would match nothing,
    /// silently (and a PREFIX's relative IRI is relative when declared,
    /// whatever BASE comes later).
    std::string resolved(const sparql_token& t) const { return resolved(t, base_); }
    std::string resolved(const sparql_token& t, const std::string& base) const {
        if (base.empty()) {
            if (!has_iri_scheme(t.value))
                fail(t.begin, "<" + t.value + "> is a relative IRI and no BASE is in effect, so it would match nothing "
                              "(the data's IRIs are absolute): add BASE <http://...> before it, or write an absolute IRI (scheme:...)");
            return t.value;
        }
        std::optional<std::string> r = resolve_iri(base, t.value);
        if (!r)
            fail(t.begin, "<" + t.value + "> is not an IRI reference by RFC 3986's grammar, so it cannot be resolved against BASE <" +
                              base + ">");
        return std::move(*r);
    }

    /// Where a term must stand, '<' lexed as an operator is a broken IRI:
    /// lexed again as one, it fails with the IRI's own message (a space in
    /// it, no closing '>').
    void reread_if_iri() {
        if (is_punct("<") || is_punct("<=")) lex_.reread_as_iri();
    }

    /// The current token as an IRI (IRI or prefixed name), advanced past; nullopt otherwise.
    std::optional<std::string> take_iri() {
        std::string iri;
        if (tok_.k == kind::iri) iri = resolved(tok_);
        else if (tok_.k == kind::pname) iri = expand(tok_);
        else return std::nullopt;
        advance();
        return iri;
    }

    void note_var(const std::string& name) {
        if (name.rfind("_:", 0) != 0) first_seen_.try_emplace(name, first_seen_.size());
    }

    pattern_term make_var(std::string name) {
        note_var(name);
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
    // until name_anonymous_nodes renames them, because a label "_:anon1" may
    // still come later in the text.
    pattern_term fresh_blank() { return make_var("_:#" + std::to_string(++anon_count_)); }

    // ---- prologue and query forms ------------------------------------------

    void parse_prologue() {
        while (true) {
            if (is_keyword("BASE")) {
                advance();
                if (tok_.k != kind::iri) expected("an IRI in angle brackets after BASE");
                if (base_.empty() && !has_iri_scheme(tok_.value))
                    fail(tok_.begin, "BASE <" + tok_.value + "> is a relative IRI, and no earlier BASE resolves it "
                                     "(the base IRI must be absolute: scheme:...)");
                // The first BASE against itself: checked, its dot segments removed.
                base_ = resolved(tok_, base_.empty() ? tok_.value : base_);
                advance();
            } else if (is_keyword("PREFIX")) {
                advance();
                if (tok_.k != kind::pname || tok_.has_local) expected("a prefix name ending in ':' after PREFIX");
                std::string name = tok_.prefix;
                advance();
                if (tok_.k != kind::iri) expected("an IRI in angle brackets after PREFIX " + name + ":");
                prefixes_[std::move(name)] = resolved(tok_);
                advance();
            } else {
                return;
            }
        }
    }

    void reject_update() const {
        if (is_one_of({"INSERT", "DELETE", "LOAD", "CLEAR", "DROP", "CREATE", "ADD", "MOVE", "COPY", "WITH"}))
            unsupported(tok_.begin, "SPARQL Update (" + upper_word() + ")",
                        "the store is read-only: load data with --data, and query it with SELECT, CONSTRUCT, ASK or DESCRIBE");
    }

    /// FROM and FROM NAMED are SPARQL and parse; the store has one graph,
    /// the loaded data, so the evaluator refuses a query with them (the
    /// tree keeps where the first one was, for its message).
    void parse_dataset_clauses(query_tree& q) {
        while (is_keyword("FROM")) {
            if (!q.dataset_at) q.dataset_at = position(tok_.begin);
            advance();
            const bool named = is_keyword("NAMED");
            if (named) advance();
            auto iri = take_iri();
            if (!iri) expected(std::string("an IRI after FROM") + (named ? " NAMED" : ""));
            (named ? q.from_named : q.from).push_back(std::move(*iri));
        }
    }

    std::pair<std::size_t, std::size_t> position(std::size_t offset) const {
        std::size_t line = 1, line_start = 0;
        const std::string_view text = lex_.text();
        for (std::size_t i = 0; i < offset && i < text.size(); ++i)
            if (text[i] == '\n') ++line, line_start = i + 1;
        return {line, offset - line_start + 1};
    }

    void parse_select_query(query_tree& q, bool sub) {
        parse_select_clause(q);
        if (!sub) parse_dataset_clauses(q);
        if (is_keyword("WHERE")) advance();
        q.where = parse_group_graph_pattern("'{' to start the WHERE clause");
        parse_solution_modifier(q);
        if (sub && is_keyword("VALUES")) {
            advance();
            q.values = parse_data_block();
        }
        finish_select(q);
    }

    void parse_select_clause(query_tree& q) {
        advance(); // SELECT
        if (is_keyword("DISTINCT")) {
            q.distinct = true;
            advance();
        } else if (is_keyword("REDUCED")) {
            q.reduced = true;
            advance();
        }
        if (is_punct("*")) {
            q.select_all = true;
            advance();
            return;
        }
        while (true) {
            if (tok_.k == kind::var) {
                const std::size_t at = tok_.begin;
                check_new_projection(q, tok_.value, at, false);
                q.projection.push_back({tok_.value, std::nullopt});
                advance();
            } else if (is_punct("(")) {
                advance();
                aggregates_allowed_ = true;
                expression e = parse_expression();
                aggregates_allowed_ = false;
                expect_keyword("AS", "AS ?var after a SELECT expression ('(expr AS ?var)')");
                if (tok_.k != kind::var) expected("a variable after AS");
                check_new_projection(q, tok_.value, tok_.begin, true);
                q.projection.push_back({tok_.value, std::move(e)});
                advance();
                expect_punct(")", "')' to close '(expr AS ?var)'");
            } else {
                break;
            }
        }
        if (q.projection.empty()) expected("a variable, '(expr AS ?var)' or '*' after SELECT");
    }

    // SELECT ?x ?x is a harmless repeat; an AS naming a variable the
    // SELECT already has is two values for one name (section 18.2.4.4).
    void check_new_projection(const query_tree& q, const std::string& var, std::size_t at, bool as) const {
        for (const sparql::projection_item& i : q.projection)
            if (i.var == var && (as || i.expr))
                fail(at, "?" + var + " is projected twice (section 18.2.4.4: (expr AS ?" + var + ") must name a new variable)");
    }

    /// Checks that need the whole SELECT (section 18.2.1, 18.2.4.1), and SELECT *'s variables.
    void finish_select(query_tree& q) {
        if (saw_aggregate_) q.grouped = true;
        saw_aggregate_ = false;
        const std::vector<std::string> where_vars = sparql::in_scope_variables(q.where);
        if (q.select_all) {
            if (q.grouped) fail(0, "SELECT * cannot be used with GROUP BY or aggregates (section 18.2.4.1): name the variables");
            std::vector<std::string> vars = where_vars;
            std::stable_sort(vars.begin(), vars.end(), [&](const std::string& a, const std::string& b) {
                const auto x = first_seen_.find(a), y = first_seen_.find(b);
                return (x == first_seen_.end() ? first_seen_.size() : x->second) <
                       (y == first_seen_.end() ? first_seen_.size() : y->second);
            });
            for (const std::string& v : vars) q.projection.push_back({v, std::nullopt});
        }
        std::vector<std::string> group_vars;
        for (const sparql::group_key& k : q.group_by)
            if (!k.var.empty()) group_vars.push_back(k.var);
        std::vector<std::string> earlier;
        for (const sparql::projection_item& i : q.projection) {
            if (i.expr && std::find(where_vars.begin(), where_vars.end(), i.var) != where_vars.end())
                fail(0, "(... AS ?" + i.var + "): ?" + i.var +
                            " is already bound by the WHERE clause (section 18.2.1: the variable of an AS must be new)");
            if (q.grouped) {
                std::vector<std::string> used;
                if (i.expr) free_variables(*i.expr, used);
                else used.push_back(i.var);
                for (const std::string& v : used)
                    if (std::find(group_vars.begin(), group_vars.end(), v) == group_vars.end() &&
                        std::find(earlier.begin(), earlier.end(), v) == earlier.end())
                        fail(0, "?" + v + " is selected in a grouped query but is not a GROUP BY key: use it inside an "
                                "aggregate (SAMPLE(?" + v + ")) or group by it (section 18.2.4.1)");
            }
            earlier.push_back(i.var);
        }
    }

    void parse_construct_query(query_tree& q) {
        q.what = query_tree::form::construct;
        advance();
        if (is_punct("{")) {
            advance();
            in_template_ = true;
            ++block_;
            std::vector<graph_pattern> paths;
            q.construct_template = parse_triples_until("}", paths, false);
            in_template_ = false;
            advance();
            parse_dataset_clauses(q);
            if (is_keyword("WHERE")) advance();
            q.where = parse_group_graph_pattern("'{' to start the WHERE clause");
        } else {
            parse_dataset_clauses(q);
            expect_keyword("WHERE", "'{' (the template) or WHERE after CONSTRUCT");
            if (!is_punct("{")) expected("'{' after CONSTRUCT WHERE");
            advance();
            ++block_;
            std::vector<graph_pattern> paths;
            q.construct_template = parse_triples_until("}", paths, false);
            advance();
            q.where.triples = q.construct_template;
        }
        parse_solution_modifier(q);
        if (saw_aggregate_) q.grouped = true;
    }

    void parse_ask_query(query_tree& q) {
        q.what = query_tree::form::ask;
        advance();
        parse_dataset_clauses(q);
        if (is_keyword("WHERE")) advance();
        q.where = parse_group_graph_pattern("'{' to start the WHERE clause");
        parse_solution_modifier(q);
        if (saw_aggregate_) q.grouped = true;
    }

    void parse_describe_query(query_tree& q) {
        q.what = query_tree::form::describe;
        advance();
        if (is_punct("*")) {
            q.describe_all = true;
            advance();
        } else {
            while (true) {
                if (tok_.k == kind::var) {
                    q.describe.push_back(make_var(tok_.value));
                    advance();
                } else if (auto iri = take_iri()) {
                    q.describe.push_back(make_iri(std::move(*iri)));
                } else {
                    break;
                }
            }
            if (q.describe.empty()) expected("a variable, an IRI or '*' after DESCRIBE");
        }
        parse_dataset_clauses(q);
        if (is_keyword("WHERE")) advance();
        if (is_punct("{")) q.where = parse_group_graph_pattern();
        parse_solution_modifier(q);
        if (saw_aggregate_) q.grouped = true;
        if (q.describe_all)
            for (const std::string& v : sparql::in_scope_variables(q.where)) q.describe.push_back(make_var(v));
    }

    // ---- solution modifiers ------------------------------------------------

    void parse_solution_modifier(query_tree& q) {
        if (is_keyword("GROUP")) {
            advance();
            expect_keyword("BY", "BY after GROUP");
            q.grouped = true;
            do q.group_by.push_back(parse_group_condition());
            while (tok_.k == kind::var || is_punct("(") || starts_call());
        }
        if (is_keyword("HAVING")) {
            advance();
            q.grouped = true;
            aggregates_allowed_ = true;
            do q.having.push_back(parse_constraint());
            while (is_punct("(") || starts_call());
            aggregates_allowed_ = false;
        }
        if (is_keyword("ORDER")) {
            advance();
            expect_keyword("BY", "BY after ORDER");
            aggregates_allowed_ = true;
            do q.order_by.push_back(parse_order_condition());
            while (tok_.k == kind::var || is_punct("(") || is_one_of({"ASC", "DESC"}) || starts_call());
            aggregates_allowed_ = false;
        }
        bool have_limit = false, have_offset = false;
        while (true) {
            if (is_keyword("LIMIT") && !have_limit) {
                have_limit = true;
                advance();
                q.limit = parse_count("LIMIT");
            } else if (is_keyword("OFFSET") && !have_offset) {
                have_offset = true;
                advance();
                q.offset = parse_count("OFFSET");
            } else {
                break;
            }
        }
    }

    bool starts_call() const {
        if (tok_.k == kind::iri || tok_.k == kind::pname) return true;
        if (tok_.k != kind::word) return false;
        const std::string u = upper_word();
        return find_builtin(u) || is_aggregate_name(u) || u == "EXISTS" || u == "NOT";
    }

    sparql::group_key parse_group_condition() {
        sparql::group_key k;
        if (tok_.k == kind::var) {
            k.var = tok_.value;
            k.expr.what = expr_op::variable;
            k.expr.name = tok_.value;
            advance();
        } else if (is_punct("(")) {
            advance();
            k.expr = parse_expression();
            if (is_keyword("AS")) {
                advance();
                if (tok_.k != kind::var) expected("a variable after AS");
                k.var = tok_.value;
                advance();
            }
            expect_punct(")", "')' to close the GROUP BY expression");
        } else {
            k.expr = parse_call_or_iri();
        }
        return k;
    }

    sparql::order_key parse_order_condition() {
        sparql::order_key k;
        if (is_one_of({"ASC", "DESC"})) {
            k.descending = is_keyword("DESC");
            advance();
            if (!is_punct("(")) expected("'(' after ASC or DESC");
            k.expr = parse_bracketted();
        } else if (tok_.k == kind::var) {
            k.expr = parse_primary();
        } else {
            k.expr = parse_constraint();
        }
        return k;
    }

    std::uint64_t parse_count(const char* what) {
        if (tok_.k != kind::integer || tok_.value[0] == '+' || tok_.value[0] == '-')
            expected(std::string("a non-negative integer after ") + what);
        std::uint64_t n = 0;
        constexpr std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
        for (const char c : tok_.value) {
            const auto d = std::uint64_t(c - '0');
            if (n > (max - d) / 10)
                fail(tok_.begin, std::string(what) + " " + describe(tok_) + " is too large (at most " + std::to_string(max) + ")");
            n = n * 10 + d;
        }
        advance();
        return n;
    }

    // ---- graph patterns ----------------------------------------------------

    /// '{' ( SubSelect | GroupGraphPatternSub ) '}', translated (18.2.2.6).
    /// `own_filter`: set when the result is a Filter of this group's own
    /// FILTERs (an OPTIONAL lifts those into its LeftJoin; a Filter of a
    /// nested group, '{ { ... FILTER(...) } }', stays inside: 18.2.2.8
    /// simplifies the Join only after the LeftJoin is made).
    graph_pattern parse_group_graph_pattern(const char* opening = "'{' to start a group graph pattern",
                                            bool* own_filter = nullptr) {
        if (own_filter) *own_filter = false;
        if (!is_punct("{")) expected(opening);
        nesting guard(*this, tok_.begin, "group graph patterns");
        advance();
        if (is_keyword("SELECT")) {
            auto sub = std::make_shared<query_tree>();
            const bool saved = saw_aggregate_;
            saw_aggregate_ = false;
            parse_select_query(*sub, true);
            saw_aggregate_ = saved;
            expect_punct("}", "'}' after the subquery");
            graph_pattern g = make_node(gp_kind::subquery);
            g.sub = std::move(sub);
            return g;
        }
        graph_pattern g;     // the group so far (the empty pattern at first)
        graph_pattern block; // the triples not yet joined into g: one BGP, whatever FILTERs lie between them
        std::vector<graph_pattern> paths;
        std::vector<expression> filters;
        ++block_;
        auto flush = [&] {
            if (!block.triples.empty()) g = join(std::move(g), std::move(block));
            block = graph_pattern{};
            for (graph_pattern& p : paths) g = join(std::move(g), std::move(p));
            paths.clear();
            ++block_; // a blank node label may not be shared with the next basic graph pattern
        };
        bool after_triples = false; // a triples block not closed by '.': only '}' or a keyword may follow
        while (!is_punct("}")) {
            if (after_triples && (tok_.k == kind::end || starts_triples())) expected("'.' or '}' after a triple pattern");
            if (tok_.k == kind::end) expected("'}' to close the group graph pattern");
            after_triples = false;
            count_operator();
            if (is_keyword("FILTER")) {
                advance();
                filters.push_back(parse_constraint());
            } else if (is_keyword("OPTIONAL")) {
                advance();
                flush();
                bool own_filter = false;
                graph_pattern p = parse_group_graph_pattern("'{' after OPTIONAL", &own_filter);
                graph_pattern lj = make_node(gp_kind::left_join);
                if (own_filter) { // LeftJoin(G, A, F): the filter sees the left side's bindings
                    lj.filter = std::move(p.filter);
                    lj.children = {std::move(g), std::move(p.children[0])};
                } else {
                    lj.children = {std::move(g), std::move(p)};
                }
                g = std::move(lj);
            } else if (is_keyword("MINUS")) {
                advance();
                flush();
                g = make_node(gp_kind::minus, {std::move(g), parse_group_graph_pattern()});
            } else if (is_keyword("BIND")) {
                const std::size_t at = tok_.begin;
                advance();
                flush();
                expect_punct("(", "'(' after BIND");
                expression e = parse_expression();
                expect_keyword("AS", "AS ?var in BIND(expr AS ?var)");
                if (tok_.k != kind::var) expected("a variable after AS");
                const std::string var = tok_.value;
                note_var(var);
                const std::vector<std::string> scope = sparql::in_scope_variables(g);
                if (std::find(scope.begin(), scope.end(), var) != scope.end())
                    fail(at, "BIND(... AS ?" + var + "): ?" + var +
                                 " is already bound by the patterns before it in this group (section 18.2.1: BIND must introduce a new variable)");
                advance();
                expect_punct(")", "')' to close BIND");
                graph_pattern x = make_node(gp_kind::extend, {std::move(g)});
                x.var = var;
                x.expr = std::move(e);
                g = std::move(x);
            } else if (is_keyword("VALUES")) {
                advance();
                flush();
                g = join(std::move(g), parse_data_block());
            } else if (is_keyword("GRAPH")) {
                advance();
                flush();
                graph_pattern x = make_node(gp_kind::graph);
                if (tok_.k == kind::var) {
                    x.subject = make_var(tok_.value);
                    advance();
                } else if (auto iri = take_iri()) {
                    x.subject = make_iri(std::move(*iri));
                } else {
                    expected("a variable or an IRI after GRAPH");
                }
                x.children.push_back(parse_group_graph_pattern());
                g = join(std::move(g), std::move(x));
            } else if (is_keyword("SERVICE")) {
                unsupported(tok_.begin, "SERVICE (federated query)", "queries run over the loaded data only");
            } else if (is_punct("{")) {
                flush();
                graph_pattern u = parse_group_graph_pattern();
                while (is_keyword("UNION")) {
                    advance();
                    count_operator();
                    u = make_node(gp_kind::union_, {std::move(u), parse_group_graph_pattern()});
                }
                g = join(std::move(g), std::move(u));
            } else {
                after_triples = !parse_triples_block(block.triples, paths);
                continue; // parse_triples_block took the '.' after it
            }
            if (is_punct(".")) advance();
        }
        advance();
        flush();
        if (!filters.empty()) {
            graph_pattern f = make_node(gp_kind::filter, {std::move(g)});
            f.filter = std::move(filters);
            g = std::move(f);
            if (own_filter) *own_filter = true;
        }
        return g;
    }

    /// TriplesSameSubjectPath ('.' TriplesSameSubjectPath?)*, up to a token
    /// that starts something else; plain triples into `out`, path patterns
    /// into `paths`. Returns whether a '.' ended it.
    bool parse_triples_block(std::vector<triple_pattern>& out, std::vector<graph_pattern>& paths) {
        while (true) {
            parse_triples_same_subject(out, paths, true);
            if (!is_punct(".")) return false;
            advance();
            if (!starts_triples()) return true;
        }
    }

    /// Triples up to `close` (a CONSTRUCT template), without paths.
    std::vector<triple_pattern> parse_triples_until(std::string_view close, std::vector<graph_pattern>& paths, bool allow_paths) {
        std::vector<triple_pattern> out;
        while (!is_punct(close)) {
            if (!starts_triples()) expected("a triple pattern or '" + std::string(close) + "'");
            parse_triples_same_subject(out, paths, allow_paths);
            if (!is_punct(".")) break;
            advance();
        }
        if (!is_punct(close)) expected("'.' or '" + std::string(close) + "' after a triple");
        return out;
    }

    bool starts_triples() const {
        switch (tok_.k) {
        case kind::var:
        case kind::iri:
        case kind::pname:
        case kind::blank:
        case kind::string:
        case kind::integer:
        case kind::decimal:
        case kind::dbl: return true;
        default: break;
        }
        return is_punct("[") || is_punct("(") || is_one_of({"true", "false"});
    }

    void parse_triples_same_subject(std::vector<triple_pattern>& out, std::vector<graph_pattern>& paths, bool allow_paths) {
        if (!starts_triples()) {
            if (is_keyword("a")) fail(tok_.begin, "'a' (rdf:type) can only be used as a predicate");
            reread_if_iri();
            expected("a subject (variable, IRI, prefixed name, blank node or literal)");
        }
        if (is_punct("[")) {
            const std::size_t open = tok_.begin;
            advance();
            if (!is_punct("]")) {
                const pattern_term node = parse_blank_property_list(open, out, paths, allow_paths);
                if (!is_punct(".") && !is_punct("}")) parse_property_list(node, out, paths, allow_paths);
                return;
            }
            advance();
            parse_property_list(fresh_blank(), out, paths, allow_paths);
            return;
        }
        if (is_punct("(")) { // a collection as the subject: its triples alone may stand, but '()' is a term (rdf:nil)
            const std::size_t before = out.size();
            const pattern_term head = parse_graph_term("a subject", out, paths, allow_paths);
            if (out.size() == before || (!is_punct(".") && !is_punct("}"))) parse_property_list(head, out, paths, allow_paths);
            return;
        }
        // A literal subject is grammatical (VarOrTerm); no RDF triple has
        // one, so such a pattern matches nothing.
        parse_property_list(parse_graph_term("a subject", out, paths, allow_paths), out, paths, allow_paths);
    }

    // After '[' (at open) when the next token is not ']': '[ props ]' as a node.
    pattern_term parse_blank_property_list(std::size_t open, std::vector<triple_pattern>& out,
                                           std::vector<graph_pattern>& paths, bool allow_paths) {
        nesting guard(*this, open, "blank node property lists");
        pattern_term node = fresh_blank();
        parse_property_list(node, out, paths, allow_paths);
        expect_punct("]", "']' to close the blank node property list");
        return node;
    }

    void parse_property_list(const pattern_term& subject, std::vector<triple_pattern>& out, std::vector<graph_pattern>& paths,
                             bool allow_paths) {
        while (true) {
            const std::size_t verb_at = tok_.begin;
            std::optional<sparql::path> complex;
            pattern_term verb;
            if (tok_.k == kind::var) {
                verb = make_var(tok_.value);
                advance();
            } else {
                sparql::path p = parse_path();
                if (p.what == sparql::path::op::link) {
                    verb = make_iri(std::move(p.iri));
                } else {
                    if (!allow_paths) fail(verb_at, "a property path cannot be used in a CONSTRUCT template");
                    complex = std::move(p);
                }
            }
            while (true) {
                pattern_term object = parse_graph_term("an object", out, paths, allow_paths);
                if (complex) add_path(subject, *complex, std::move(object), out, paths);
                else out.push_back(triple_pattern{subject, verb, std::move(object)});
                if (!is_punct(",")) break;
                advance();
            }
            if (!is_punct(";")) return;
            while (is_punct(";")) advance();
            if (is_punct(".") || is_punct("}") || is_punct("]") || tok_.k == kind::end || is_keyword("FILTER") ||
                is_keyword("OPTIONAL") || is_keyword("BIND") || is_keyword("MINUS") || is_keyword("VALUES") ||
                is_punct("{"))
                return;
        }
    }

    /// A path pattern, translated as 18.2.2.4 does: inverse links swap the
    /// ends, sequences of them become triples through fresh nodes; what is
    /// left stays a path node.
    void add_path(const pattern_term& s, const sparql::path& p, pattern_term o, std::vector<triple_pattern>& out,
                  std::vector<graph_pattern>& paths) {
        using op = sparql::path::op;
        if (p.what == op::link) {
            out.push_back({s, make_iri(p.iri), std::move(o)});
        } else if (p.what == op::inverse && p.args[0].what == op::link) {
            out.push_back({std::move(o), make_iri(p.args[0].iri), s});
        } else if (p.what == op::sequence) {
            pattern_term from = s;
            for (std::size_t i = 0; i < p.args.size(); ++i) {
                pattern_term to = i + 1 == p.args.size() ? o : fresh_blank();
                add_path(from, p.args[i], to, out, paths);
                from = std::move(to);
            }
        } else {
            count_operator(); // joined to the group: a node of its tree
            graph_pattern g = make_node(gp_kind::path);
            g.subject = s;
            g.property = p;
            g.object = std::move(o);
            paths.push_back(std::move(g));
        }
    }

    sparql::path parse_path() {
        nesting guard(*this, tok_.begin, "property paths");
        sparql::path first = parse_path_sequence();
        if (!is_punct("|")) return first;
        sparql::path alt;
        alt.what = sparql::path::op::alternative;
        alt.args.push_back(std::move(first));
        while (is_punct("|")) {
            advance();
            alt.args.push_back(parse_path_sequence());
        }
        return alt;
    }

    sparql::path parse_path_sequence() {
        sparql::path first = parse_path_elt_or_inverse();
        if (!is_punct("/")) return first;
        sparql::path seq;
        seq.what = sparql::path::op::sequence;
        seq.args.push_back(std::move(first));
        while (is_punct("/")) {
            advance();
            seq.args.push_back(parse_path_elt_or_inverse());
        }
        return seq;
    }

    sparql::path parse_path_elt_or_inverse() {
        if (is_punct("^")) {
            advance();
            sparql::path inv;
            inv.what = sparql::path::op::inverse;
            inv.args.push_back(parse_path_elt());
            return inv;
        }
        return parse_path_elt();
    }

    sparql::path parse_path_elt() {
        sparql::path primary = parse_path_primary();
        using op = sparql::path::op;
        op mod;
        if (is_punct("*")) mod = op::zero_or_more;
        else if (is_punct("+")) mod = op::one_or_more;
        else if (is_punct("?")) mod = op::zero_or_one;
        else return primary;
        advance();
        sparql::path p;
        p.what = mod;
        p.args.push_back(std::move(primary));
        return p;
    }

    std::optional<std::string> take_path_iri() {
        if (tok_.k == kind::word && tok_.value == "a") {
            advance();
            return std::string(rdf_type);
        }
        return take_iri();
    }

    sparql::path parse_path_primary() {
        sparql::path p;
        if (auto iri = take_path_iri()) {
            p.iri = std::move(*iri);
            return p;
        }
        if (is_punct("(")) {
            advance();
            p = parse_path();
            expect_punct(")", "')' to close the path group");
            return p;
        }
        if (is_punct("!")) {
            advance();
            p.what = sparql::path::op::negated;
            auto one = [&] {
                const bool inverse = is_punct("^");
                if (inverse) advance();
                auto iri = take_path_iri();
                if (!iri) expected("an IRI, 'a' or '^' in the negated property set");
                (inverse ? p.inverse_iris : p.iris).push_back(std::move(*iri));
            };
            if (is_punct("(")) {
                advance();
                if (!is_punct(")")) {
                    one();
                    while (is_punct("|")) {
                        advance();
                        one();
                    }
                }
                expect_punct(")", "')' to close the negated property set");
            } else {
                one();
            }
            return p;
        }
        if (tok_.k == kind::string || tok_.k == kind::integer || tok_.k == kind::decimal || tok_.k == kind::dbl ||
            is_one_of({"true", "false"}))
            fail(tok_.begin, "a literal (" + describe(tok_) + ") cannot be a predicate");
        if (tok_.k == kind::blank || is_punct("["))
            fail(tok_.begin, "a blank node (" + describe(tok_) + ") cannot be a predicate");
        reread_if_iri();
        expected("a predicate (IRI, prefixed name, 'a', variable or property path)");
    }

    /// A node of a triple: variable, IRI, blank node, literal, '[...]' or a collection.
    pattern_term parse_graph_term(const char* role, std::vector<triple_pattern>& out, std::vector<graph_pattern>& paths,
                                  bool allow_paths) {
        switch (tok_.k) {
        case kind::var: {
            pattern_term t = make_var(tok_.value);
            advance();
            return t;
        }
        case kind::iri:
        case kind::pname: return make_iri(*take_iri());
        case kind::blank: {
            std::string name = "_:" + tok_.value;
            if (!in_template_) {
                const auto [it, first] = label_block_.emplace(name, block_);
                if (!first && it->second != block_)
                    fail(tok_.begin, "blank node " + name + " is used in two basic graph patterns (section 4.1.4: a label belongs to one)");
            }
            labels_.insert(name);
            advance();
            return make_var(std::move(name));
        }
        case kind::string: return make_constant(parse_rdf_literal());
        case kind::integer:
        case kind::decimal:
        case kind::dbl: return make_constant(numeric_literal());
        default: break;
        }
        if (is_one_of({"true", "false"})) return make_constant(boolean_literal());
        if (is_punct("[")) {
            const std::size_t open = tok_.begin;
            advance();
            if (!is_punct("]")) return parse_blank_property_list(open, out, paths, allow_paths);
            advance();
            return fresh_blank();
        }
        if (is_punct("(")) {
            // '()' is rdf:nil; '( ... )' a collection.
            advance();
            if (is_punct(")")) {
                advance();
                return make_iri(std::string(rdf_prefix) + "nil");
            }
            return parse_collection_rest(out, paths, allow_paths);
        }
        if (tok_.k == kind::word && tok_.value == "a") fail(tok_.begin, "'a' (rdf:type) can only be used as a predicate");
        reread_if_iri();
        expected(std::string(role) + " (variable, IRI, prefixed name, blank node or literal)");
    }

    /// A collection whose '(' the caller took: an RDF list of blank nodes
    /// (rdf:first, rdf:rest), its head returned.
    pattern_term parse_collection_rest(std::vector<triple_pattern>& out, std::vector<graph_pattern>& paths, bool allow_paths) {
        nesting guard(*this, tok_.begin, "collections");
        const pattern_term head = fresh_blank();
        pattern_term cell = head;
        while (true) {
            pattern_term item = parse_graph_term("a collection member", out, paths, allow_paths);
            out.push_back({cell, make_iri(std::string(rdf_prefix) + "first"), std::move(item)});
            if (is_punct(")")) {
                out.push_back({cell, make_iri(std::string(rdf_prefix) + "rest"), make_iri(std::string(rdf_prefix) + "nil")});
                advance();
                return head;
            }
            pattern_term next = fresh_blank();
            out.push_back({cell, make_iri(std::string(rdf_prefix) + "rest"), next});
            cell = std::move(next);
        }
    }

    term numeric_literal() {
        const char* type = tok_.k == kind::integer ? "integer" : tok_.k == kind::decimal ? "decimal" : "double";
        term t{term_kind::literal, tok_.value, std::string(xsd_prefix) + type, {}};
        advance();
        return t;
    }

    term boolean_literal() {
        std::string lexical = tok_.value;
        for (char& c : lexical) c = ascii_lower(c); // the keyword is case-insensitive, the lexical form is not
        advance();
        return term{term_kind::literal, std::move(lexical), std::string(xsd_prefix) + "boolean", {}};
    }

    term parse_rdf_literal() {
        term lit{term_kind::literal, std::move(tok_.value), {}, {}};
        advance();
        if (tok_.k == kind::langtag) {
            // Tags compare case-insensitively; storing them lower-cased
            // makes term equality agree with key() equality.
            for (const char c : tok_.value) lit.lang += ascii_lower(c);
            advance();
        } else if (is_punct("^^")) {
            advance();
            auto dt = take_iri();
            if (!dt) expected("a datatype IRI or prefixed name after '^^'");
            lit.datatype = std::move(*dt);
            if (lit.datatype == xsd_string) lit.datatype.clear(); // term.hpp: plain and xsd:string are one term
        }
        return lit;
    }

    // ---- VALUES ------------------------------------------------------------

    graph_pattern parse_data_block() {
        graph_pattern g = make_node(gp_kind::values);
        if (tok_.k == kind::var) { // one variable: VALUES ?x { a b c }
            note_var(tok_.value);
            g.vars.push_back(tok_.value);
            advance();
            expect_punct("{", "'{' after VALUES ?var");
            while (!is_punct("}")) g.rows.push_back({parse_data_value()});
            advance();
            return g;
        }
        expect_punct("(", "a variable or '(' after VALUES");
        while (tok_.k == kind::var) {
            note_var(tok_.value);
            g.vars.push_back(tok_.value);
            advance();
        }
        expect_punct(")", "')' to close the VALUES variables");
        expect_punct("{", "'{' to start the VALUES rows");
        while (!is_punct("}")) {
            const std::size_t open = tok_.begin;
            expect_punct("(", "'(' to start a VALUES row, or '}'");
            sparql::values_row row;
            while (!is_punct(")")) row.push_back(parse_data_value());
            advance();
            if (row.size() != g.vars.size())
                fail(open, "a VALUES row has " + std::to_string(row.size()) + " values for " + std::to_string(g.vars.size()) +
                               " variables");
            g.rows.push_back(std::move(row));
        }
        advance();
        return g;
    }

    std::optional<term> parse_data_value() {
        if (is_keyword("UNDEF")) {
            advance();
            return std::nullopt;
        }
        if (auto iri = take_iri()) return term{term_kind::iri, std::move(*iri), {}, {}};
        if (tok_.k == kind::string) return parse_rdf_literal();
        if (tok_.k == kind::integer || tok_.k == kind::decimal || tok_.k == kind::dbl) return numeric_literal();
        if (is_one_of({"true", "false"})) return boolean_literal();
        reread_if_iri();
        expected("an IRI, a literal or UNDEF in VALUES");
    }

    // ---- expressions -------------------------------------------------------

    expression make_expr(expr_op o, std::vector<expression> args = {}) {
        if (!args.empty()) count_operator();
        expression e;
        e.what = o;
        e.args = std::move(args);
        return e;
    }

    /// FILTER's and HAVING's Constraint: a bracketted expression or a call.
    expression parse_constraint() {
        if (is_punct("(")) return parse_bracketted();
        if (starts_call()) return parse_call_or_iri();
        expected("'(' or a function call");
    }

    expression parse_bracketted() {
        nesting guard(*this, tok_.begin, "parentheses");
        expect_punct("(", "'('");
        expression e = parse_expression();
        expect_punct(")", "')' to close the expression");
        return e;
    }

    expression parse_expression() {
        nesting guard(*this, tok_.begin, "expressions");
        expression e = parse_and();
        while (is_punct("||")) {
            advance();
            e = make_expr(expr_op::logical_or, {std::move(e), parse_and()});
        }
        return e;
    }

    expression parse_and() {
        expression e = parse_relational();
        while (is_punct("&&")) {
            advance();
            e = make_expr(expr_op::logical_and, {std::move(e), parse_relational()});
        }
        return e;
    }

    expression parse_relational() {
        expression e = parse_additive();
        static constexpr std::pair<std::string_view, expr_op> ops[] = {
            {"=", expr_op::eq}, {"!=", expr_op::ne}, {"<", expr_op::lt}, {">", expr_op::gt}, {"<=", expr_op::le}, {">=", expr_op::ge}};
        for (const auto& [text, o] : ops)
            if (is_punct(text)) {
                advance();
                return make_expr(o, {std::move(e), parse_additive()});
            }
        bool negated = false;
        if (is_keyword("NOT")) {
            advance();
            if (!is_keyword("IN")) expected("IN after NOT");
            negated = true;
        }
        if (is_keyword("IN")) {
            advance();
            expression in = make_expr(negated ? expr_op::not_in : expr_op::in, {std::move(e)});
            for (expression& a : parse_expression_list()) in.args.push_back(std::move(a));
            return in;
        }
        return e;
    }

    std::vector<expression> parse_expression_list() {
        expect_punct("(", "'(' to start the list");
        std::vector<expression> out;
        if (is_punct(")")) {
            advance();
            return out;
        }
        out.push_back(parse_expression());
        while (is_punct(",")) {
            advance();
            out.push_back(parse_expression());
        }
        expect_punct(")", "',' or ')' in the list");
        return out;
    }

    bool signed_number() const {
        return (tok_.k == kind::integer || tok_.k == kind::decimal || tok_.k == kind::dbl) &&
               (tok_.value[0] == '+' || tok_.value[0] == '-');
    }

    expression parse_additive() {
        expression e = parse_multiplicative();
        while (true) {
            if (is_punct("+") || is_punct("-")) {
                const expr_op o = is_punct("+") ? expr_op::add : expr_op::subtract;
                advance();
                e = make_expr(o, {std::move(e), parse_multiplicative()});
            } else if (signed_number()) {
                // '?x -1' is ?x minus 1: the lexer took the sign into the
                // number (19.8's AdditiveExpression has this case).
                const expr_op o = tok_.value[0] == '+' ? expr_op::add : expr_op::subtract;
                tok_.value.erase(0, 1);
                expression rhs = make_expr(expr_op::constant);
                rhs.value = numeric_literal();
                while (is_punct("*") || is_punct("/")) {
                    const expr_op m = is_punct("*") ? expr_op::multiply : expr_op::divide;
                    advance();
                    rhs = make_expr(m, {std::move(rhs), parse_unary()});
                }
                e = make_expr(o, {std::move(e), std::move(rhs)});
            } else {
                return e;
            }
        }
    }

    expression parse_multiplicative() {
        expression e = parse_unary();
        while (is_punct("*") || is_punct("/")) {
            const expr_op o = is_punct("*") ? expr_op::multiply : expr_op::divide;
            advance();
            e = make_expr(o, {std::move(e), parse_unary()});
        }
        return e;
    }

    expression parse_unary() {
        if (is_punct("!")) {
            advance();
            return make_expr(expr_op::logical_not, {parse_primary()});
        }
        if (is_punct("+")) {
            advance();
            return make_expr(expr_op::plus, {parse_primary()});
        }
        if (is_punct("-")) {
            advance();
            return make_expr(expr_op::negate, {parse_primary()});
        }
        return parse_primary();
    }

    expression parse_primary() {
        if (is_punct("(")) return parse_bracketted();
        if (tok_.k == kind::var) {
            expression e = make_expr(expr_op::variable);
            e.name = tok_.value;
            note_var(e.name);
            advance();
            return e;
        }
        if (tok_.k == kind::string) {
            expression e = make_expr(expr_op::constant);
            e.value = parse_rdf_literal();
            return e;
        }
        if (tok_.k == kind::integer || tok_.k == kind::decimal || tok_.k == kind::dbl) {
            expression e = make_expr(expr_op::constant);
            e.value = numeric_literal();
            return e;
        }
        if (is_one_of({"true", "false"})) {
            expression e = make_expr(expr_op::constant);
            e.value = boolean_literal();
            return e;
        }
        if (starts_call()) return parse_call_or_iri();
        if (tok_.k == kind::blank || is_punct("["))
            fail(tok_.begin, "a blank node (" + describe(tok_) + ") cannot be used in an expression");
        expected("an expression (variable, literal, IRI, function call or '(')");
    }

    /// A built-in call, an aggregate, EXISTS, or an IRI (a function call
    /// with an argument list, else a constant).
    expression parse_call_or_iri() {
        const std::size_t at = tok_.begin;
        if (tok_.k == kind::iri || tok_.k == kind::pname) {
            std::string iri = *take_iri();
            if (!is_punct("(")) {
                expression e = make_expr(expr_op::constant);
                e.value = term{term_kind::iri, std::move(iri), {}, {}};
                return e;
            }
            expression e = make_expr(expr_op::function);
            e.name = std::move(iri);
            advance();
            if (is_keyword("DISTINCT")) fail(tok_.begin, "DISTINCT in a call of <" + e.name + ">: only aggregates take it");
            if (!is_punct(")")) {
                e.args.push_back(parse_expression());
                while (is_punct(",")) {
                    advance();
                    e.args.push_back(parse_expression());
                }
            }
            expect_punct(")", "',' or ')' in the argument list");
            return e;
        }
        const std::string name = upper_word();
        if (name == "NOT" || name == "EXISTS") {
            const bool negated = name == "NOT";
            advance();
            if (negated) expect_keyword("EXISTS", "EXISTS after NOT");
            expression e = make_expr(negated ? expr_op::not_exists : expr_op::exists);
            const bool saved = aggregates_allowed_;
            aggregates_allowed_ = false;
            e.pattern = std::make_shared<graph_pattern>(parse_group_graph_pattern());
            aggregates_allowed_ = saved;
            return e;
        }
        if (is_aggregate_name(name)) return parse_aggregate(at, name);
        const builtin_info* b = find_builtin(name);
        if (!b) expected("a function call");
        advance();
        expression e;
        if (name == "BOUND") {
            expect_punct("(", "'(' after BOUND");
            if (tok_.k != kind::var) expected("a variable in BOUND(...)");
            e = make_expr(expr_op::bound);
            e.name = tok_.value;
            advance();
            expect_punct(")", "')' to close BOUND");
            return e;
        }
        e = make_expr(name == "IF" ? expr_op::if_ : name == "COALESCE" ? expr_op::coalesce : expr_op::builtin);
        e.name = name == "URI" ? "IRI" : name;
        // NIL: RAND(), NOW(), BNODE() and the like may be written with '()'.
        e.args = parse_expression_list();
        if (e.args.size() < b->min_args || e.args.size() > b->max_args)
            fail(at, name + " takes " +
                         (b->min_args == b->max_args ? std::to_string(b->min_args)
                                                     : std::to_string(b->min_args) + " to " + std::to_string(b->max_args)) +
                         " argument" + (b->max_args == 1 ? "" : "s") + ", not " + std::to_string(e.args.size()));
        return e;
    }

    expression parse_aggregate(std::size_t at, const std::string& name) {
        if (!aggregates_allowed_)
            fail(at, "aggregate " + name + " outside SELECT, HAVING and ORDER BY (section 18.2.4.1: aggregates apply to groups)");
        advance();
        expression e = make_expr(expr_op::aggregate);
        e.name = name;
        expect_punct("(", "'(' after " + name);
        if (is_keyword("DISTINCT")) {
            e.distinct = true;
            advance();
        }
        const bool saved = aggregates_allowed_;
        aggregates_allowed_ = false; // no aggregate inside an aggregate
        if (name == "COUNT" && is_punct("*")) {
            advance();
        } else {
            e.args.push_back(parse_expression());
        }
        if (name == "GROUP_CONCAT" && is_punct(";")) {
            advance();
            expect_keyword("SEPARATOR", "SEPARATOR after ';' in GROUP_CONCAT");
            expect_punct("=", "'=' after SEPARATOR");
            if (tok_.k != kind::string) expected("a string after SEPARATOR =");
            e.separator = tok_.value;
            advance();
        }
        aggregates_allowed_ = saved;
        expect_punct(")", "')' to close " + name);
        saw_aggregate_ = true;
        return e;
    }

    // ---- '[]' names ------------------------------------------------------

    void name_anonymous_nodes(query_tree& q) {
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
        rename(q, names);
    }

    using name_map = std::unordered_map<std::string, std::string>;

    static void rename(pattern_term& t, const name_map& names) {
        if (!t.is_variable) return;
        const auto it = names.find(t.variable);
        if (it != names.end()) t.variable = it->second;
    }

    static void rename(std::vector<triple_pattern>& ts, const name_map& names) {
        for (triple_pattern& p : ts)
            for (pattern_term* t : {&p.s, &p.p, &p.o}) rename(*t, names);
    }

    static void rename(expression& e, const name_map& names) {
        if (e.pattern) {
            auto copy = std::make_shared<graph_pattern>(*e.pattern);
            rename(*copy, names);
            e.pattern = std::move(copy);
        }
        for (expression& a : e.args) rename(a, names);
    }

    static void rename(graph_pattern& g, const name_map& names) {
        rename(g.triples, names);
        rename(g.subject, names);
        rename(g.object, names);
        for (graph_pattern& c : g.children) rename(c, names);
        for (expression& f : g.filter) rename(f, names);
        rename(g.expr, names);
        if (g.sub) {
            auto copy = std::make_shared<query_tree>(*g.sub);
            rename(*copy, names);
            g.sub = std::move(copy);
        }
    }

    static void rename(query_tree& q, const name_map& names) {
        rename(q.where, names);
        rename(q.construct_template, names);
        for (pattern_term& t : q.describe) rename(t, names);
        for (sparql::projection_item& i : q.projection)
            if (i.expr) rename(*i.expr, names);
        for (sparql::order_key& k : q.order_by) rename(k.expr, names);
        for (expression& h : q.having) rename(h, names);
    }
};

} // namespace
} // namespace detail

namespace sparql {

query_tree parse_sparql(std::string_view text, std::string_view base) { return detail::sparql_parser(text, base).parse(); }

} // namespace sparql

query parse_query(std::string_view text) {
    const sparql::query_tree t = sparql::parse_sparql(text);
    sparql::refuse_dataset_clauses(t);
    std::optional<query> q = sparql::as_bgp_query(t);
    if (!q)
        throw query_error("line 1, column 1: the query is more than a basic graph pattern under SELECT; "
                          "answer it with rdf::sparql::evaluate (sparql_engine.hpp)",
                          1, 1);
    return std::move(*q);
}

} // namespace rdf
