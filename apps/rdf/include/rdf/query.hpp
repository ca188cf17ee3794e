#pragma once
// A parsed SPARQL SELECT query over one basic graph pattern: what the
// parser (sparql_parser.hpp) produces and the planner (plan.hpp) consumes.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <rdf/term.hpp>

namespace rdf {

/// A position in a triple pattern: a variable or a constant term.
struct pattern_term {
    bool is_variable = false;
    /// Variables: the name without '?' or '$'. Blank nodes of the query
    /// ("_:b", "[]") are variables that SELECT * does not project; their
    /// names start with "_:" so they cannot clash with a SPARQL variable.
    std::string variable;
    term constant; ///< constants only
};

struct triple_pattern {
    pattern_term s, p, o;
};

struct query {
    /// Projected variables in SELECT order; for SELECT *, every named
    /// (non-blank) variable of the pattern in order of first appearance.
    std::vector<std::string> projection;
    bool select_all = false;
    bool distinct = false; ///< DISTINCT (REDUCED is parsed as DISTINCT: it permits it)
    std::optional<std::uint64_t> limit;
    std::vector<triple_pattern> patterns;
};

/// A query text the parser cannot take: malformed, or using SPARQL the
/// engine does not support. line and column are 1-based and point at the
/// offending token; what() says what was found there and what to do.
struct query_error : std::runtime_error {
    query_error(const std::string& what, std::size_t line, std::size_t column)
        : std::runtime_error(what), line(line), column(column) {}
    std::size_t line, column;
};

} // namespace rdf
