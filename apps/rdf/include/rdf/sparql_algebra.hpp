#pragma once
// A SPARQL 1.1 query as the spec's algebra (SPARQL 1.1 Query, section 18):
// what parse_sparql produces and the evaluator (sparql_engine.hpp) runs.
// The parser translates the group graph patterns as section 18.2.2 does
// (triples into BGPs, OPTIONAL into LeftJoin with its filter, MINUS, BIND as
// Extend, a group's FILTERs over the whole group), so the evaluator is a
// plain recursion over these nodes; a BGP node stays a list of triple
// patterns, which the BGP engine (plan.hpp, execute.hpp) answers as before.
//
// A query that is only a basic graph pattern under SELECT (with DISTINCT,
// LIMIT) is also an rdf::query (as_bgp_query): the parallel models and the
// planner take that form.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <rdf/query.hpp>
#include <rdf/term.hpp>

namespace rdf::sparql {

struct graph_pattern;

/// An expression (section 17): a tree of operators, calls and leaves.
struct expression {
    enum class op : std::uint8_t {
        constant,   ///< `value`
        variable,   ///< `name`
        logical_or, logical_and, logical_not,
        eq, ne, lt, gt, le, ge,
        add, subtract, multiply, divide, negate, plus,
        in, not_in,     ///< args[0] IN (args[1..])
        builtin,        ///< `name`: the upper-case keyword (STR, REGEX, ...), args evaluated first
        function,       ///< `name`: an IRI (the XSD casts), args evaluated first
        bound,          ///< BOUND(?name)
        if_,            ///< IF(c, a, b): only the branch taken is evaluated
        coalesce,       ///< the first argument without an error
        exists, not_exists, ///< `pattern`
        aggregate,      ///< `name`: COUNT, SUM, MIN, MAX, AVG, SAMPLE, GROUP_CONCAT; no args: COUNT(*)
    };
    op what = op::constant;
    term value;
    std::string name;
    std::vector<expression> args;
    std::shared_ptr<const graph_pattern> pattern; ///< EXISTS / NOT EXISTS
    bool distinct = false;                        ///< aggregates
    std::string separator = " ";                  ///< GROUP_CONCAT
};

/// A property path (section 9) other than a plain IRI or a variable.
struct path {
    enum class op : std::uint8_t {
        link,          ///< `iri`
        inverse,       ///< ^args[0]
        sequence,      ///< args[0] / args[1] / ...
        alternative,   ///< args[0] | args[1] | ...
        zero_or_more, one_or_more, zero_or_one, ///< args[0] * + ?
        negated,       ///< !(iris | ^inverse_iris)
    };
    op what = op::link;
    std::string iri;
    std::vector<path> args;
    std::vector<std::string> iris, inverse_iris; ///< negated
};

/// One row of VALUES: a term per variable, nullopt for UNDEF.
using values_row = std::vector<std::optional<term>>;

struct query_tree;

/// A graph pattern of the algebra.
struct graph_pattern {
    enum class kind : std::uint8_t {
        bgp,        ///< `triples` (none: the one empty solution)
        path,       ///< `subject` `property` `object`
        join,       ///< children[0] and children[1]
        left_join,  ///< OPTIONAL: children[0], children[1], `filter` (empty: true)
        minus,      ///< children[0] MINUS children[1]
        union_,     ///< children[0] UNION children[1]
        filter,     ///< `filter` (a conjunction) over children[0]
        extend,     ///< BIND(`expr` AS ?`var`) over children[0]
        values,     ///< `vars` x `rows`
        subquery,   ///< `sub`
        graph,      ///< GRAPH `subject` { children[0] }: no named graphs in the store, so no solutions
    };
    kind what = kind::bgp;
    std::vector<triple_pattern> triples;
    pattern_term subject, object;
    path property;
    std::vector<graph_pattern> children;
    std::vector<expression> filter;
    expression expr;
    std::string var;
    std::vector<std::string> vars;
    std::vector<values_row> rows;
    std::shared_ptr<const query_tree> sub;
};

struct projection_item {
    std::string var;
    std::optional<expression> expr; ///< (expr AS ?var)
};

struct order_key {
    expression expr;
    bool descending = false;
};

struct group_key {
    expression expr;
    std::string var; ///< GROUP BY (expr AS ?var), or the variable itself; empty: an unnamed expression
};

struct query_tree {
    enum class form : std::uint8_t { select, ask, construct, describe };
    form what = form::select;
    graph_pattern where;
    /// SELECT: the items in order; for SELECT * the in-scope variables of
    /// WHERE (section 18.2.1), as plain variables.
    std::vector<projection_item> projection;
    bool select_all = false;
    bool distinct = false, reduced = false;
    std::vector<group_key> group_by;
    bool grouped = false; ///< GROUP BY, or an aggregate anywhere: one group of all solutions at least
    std::vector<expression> having;
    std::vector<order_key> order_by;
    std::optional<std::uint64_t> limit;
    std::uint64_t offset = 0;
    std::optional<graph_pattern> values; ///< VALUES after the query: joined with the result
    std::vector<triple_pattern> construct_template;
    std::vector<pattern_term> describe; ///< DESCRIBE's terms (variables or IRIs)
    bool describe_all = false;          ///< DESCRIBE *
    std::string base;                   ///< BASE in effect at the end of the prologue (IRI(), for relative IRIs)
    /// FROM and FROM NAMED (the evaluator refuses them: the store is one
    /// graph), and the line and column of the first.
    std::vector<std::string> from, from_named;
    std::optional<std::pair<std::size_t, std::size_t>> dataset_at;
};

/// Parse a SPARQL 1.1 query (any form). `base`: the IRI relative IRIs
/// resolve against when the query has no BASE of its own (the query
/// document's location, SPARQL 1.1 section 4.1.1.1); empty: none.
/// Throws query_error ("line L, column C: ...").
query_tree parse_sparql(std::string_view text, std::string_view base = {});

/// Throws query_error at the first FROM or FROM NAMED, if the query has
/// one: queries run over the loaded data, the store's one graph.
void refuse_dataset_clauses(const query_tree& q);

/// The query as a basic graph pattern SELECT (rdf::query), if it is one:
/// SELECT (DISTINCT|REDUCED)? over triples only, LIMIT at most. nullopt otherwise.
std::optional<query> as_bgp_query(const query_tree& q);

/// The variables a pattern binds where it is used (section 18.2.1's in-scope
/// variables), blank nodes' variables left out, in order of first appearance.
std::vector<std::string> in_scope_variables(const graph_pattern& p);

} // namespace rdf::sparql
