// The SPARQL grammar over the lexer's tokens (the language is described in
// rdf/sparql_parser.hpp): a recursive-descent parser into rdf::query.
#include <rdf/sparql_parser.hpp>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
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

namespace detail {
namespace {

// '[ p [ p [ ... ] ] ]' recurses once per bracket; the bound keeps a
// hostile query from exhausting the stack.
constexpr int sparql_max_nesting = 64;

constexpr std::string_view xsd_prefix = "http://www.w3.org/2001/XMLSchema#";

class sparql_parser {
public:
    explicit sparql_parser(std::string_view text) : lex_(text) {}

    query parse() {
        if (lex_.text().size() > sparql_max_query_bytes)
            fail(sparql_max_query_bytes, "query too long (" + std::to_string(lex_.text().size()) + " bytes; at most " +
                                             std::to_string(sparql_max_query_bytes) + " are accepted)");
        advance();
        if (tok_.k == kind::end) fail(tok_.begin, "empty query: expected a SELECT query");
        parse_prologue();
        parse_select();
        parse_where();
        parse_modifiers();
        if (tok_.k != kind::end) expected("end of query");
        finish();
        return std::move(q_);
    }

private:
    using kind = sparql_token::kind;

    sparql_lexer lex_;
    sparql_token& tok_ = lex_.token(); ///< the lexer's current token
    query q_;
    std::string base_;
    std::unordered_map<std::string, std::string> prefixes_;
    std::vector<std::string> var_order_; ///< named variables by first appearance, for SELECT *
    std::unordered_set<std::string> vars_seen_;
    std::unordered_set<std::string> labels_; ///< "_:label" names written in the query
    std::size_t anon_count_ = 0;
    int depth_ = 0;

    // ---- errors ------------------------------------------------------------

    [[noreturn]] void fail(std::size_t offset, const std::string& message) const { lex_.fail(offset, message); }

    std::string describe(const sparql_token& t) const { return lex_.describe(t); }

    [[noreturn]] void expected(const std::string& what) const {
        fail(tok_.begin, "expected " + what + ", found " + describe(tok_));
    }

    [[noreturn]] void unsupported(std::size_t offset, const std::string& construct, std::string_view hint) const {
        fail(offset, construct + " is not supported (" + std::string(hint) + ")");
    }

    static constexpr std::string_view bgp_hint =
        "the WHERE clause takes only a basic graph pattern: triple patterns joined by '.', ';' and ','";
    static constexpr std::string_view modifier_hint = "only LIMIT may follow the WHERE clause";
    static constexpr std::string_view form_hint = "only SELECT queries are";
    static constexpr std::string_view projection_hint = "SELECT takes only variables or '*'";
    static constexpr std::string_view path_hint = "a predicate must be an IRI, a prefixed name, 'a' or a variable";

    void advance() { lex_.advance(); }

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

    std::string expand(const sparql_token& t) const {
        const auto it = prefixes_.find(t.prefix);
        if (it == prefixes_.end())
            fail(t.begin, "undefined prefix '" + t.prefix + ":' (declare it with PREFIX " + t.prefix +
                              ": <http://...> before SELECT)");
        return it->second + t.value;
    }

    /// An IRI token resolved against `base` (BASE's so far by default).
    /// Without a BASE only an absolute IRI is taken: the data holds absolute
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

    pattern_term make_var(std::string name) {
        if (name.rfind("_:", 0) != 0 && vars_seen_.insert(name).second) var_order_.push_back(name);
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
    // until finish() renames them, because a label "_:anon1" may still
    // come later in the text.
    pattern_term fresh_blank() { return make_var("_:#" + std::to_string(++anon_count_)); }

    // ---- grammar -----------------------------------------------------------

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

    void reject_query_form() const {
        if (is_one_of({"CONSTRUCT", "ASK", "DESCRIBE"})) unsupported(tok_.begin, upper_word(), form_hint);
        if (is_one_of({"INSERT", "DELETE", "LOAD", "CLEAR", "DROP", "CREATE", "ADD", "MOVE", "COPY", "WITH"}))
            unsupported(tok_.begin, "SPARQL Update (" + upper_word() + ")", form_hint);
    }

    bool is_aggregate() const {
        return is_one_of({"COUNT", "SUM", "MIN", "MAX", "AVG", "SAMPLE", "GROUP_CONCAT"});
    }

    void parse_select() {
        reject_query_form();
        if (!is_keyword("SELECT")) expected("SELECT (or PREFIX/BASE)");
        advance();
        if (is_one_of({"DISTINCT", "REDUCED"})) {
            q_.distinct = true; // REDUCED permits removing duplicates, so removing all of them is correct
            advance();
        }
        if (is_punct("*")) {
            q_.select_all = true;
            advance();
            return;
        }
        while (true) {
            if (tok_.k == kind::var) {
                q_.projection.push_back(tok_.value);
                advance();
            } else if (is_punct("(")) {
                const std::size_t open = tok_.begin;
                advance();
                if (is_aggregate()) unsupported(tok_.begin, "aggregate " + upper_word(), projection_hint);
                unsupported(open, "expression in SELECT '(expr AS ?var)'", projection_hint);
            } else if (is_aggregate()) {
                unsupported(tok_.begin, "aggregate " + upper_word(), projection_hint);
            } else {
                break;
            }
        }
        if (q_.projection.empty()) expected("a variable or '*' after SELECT");
    }

    void parse_where() {
        if (is_keyword("FROM")) {
            const std::size_t from = tok_.begin;
            advance();
            unsupported(from, is_keyword("NAMED") ? "FROM NAMED" : "FROM",
                        "queries run over the loaded data; no dataset clause");
        }
        if (is_keyword("WHERE")) advance();
        if (!is_punct("{")) expected("'{' to start the WHERE clause");
        advance();
        parse_group_body();
    }

    // Constructs that may start where a triple pattern could.
    void reject_group_construct() const {
        if (is_one_of({"OPTIONAL", "FILTER", "UNION", "MINUS", "GRAPH", "SERVICE", "BIND", "VALUES"}))
            unsupported(tok_.begin, upper_word(), bgp_hint);
        if (is_keyword("SELECT")) unsupported(tok_.begin, "subquery (SELECT inside WHERE)", bgp_hint);
        if (is_punct("{")) unsupported(tok_.begin, "nested group '{ ... }'", bgp_hint);
    }

    void parse_group_body() {
        while (!is_punct("}")) {
            reject_group_construct();
            parse_triples();
            if (is_punct(".")) {
                advance();
                continue;
            }
            if (is_punct("}")) break;
            reject_group_construct();
            expected("'.' or '}' after a triple pattern");
        }
        advance();
    }

    void parse_triples() {
        const sparql_token subject_tok = tok_;
        if (is_punct("[")) {
            const std::size_t open = tok_.begin;
            advance();
            if (!is_punct("]")) {
                const pattern_term node = parse_blank_property_list(open);
                if (!is_punct(".") && !is_punct("}")) parse_property_list(node);
                return;
            }
            advance();
            parse_property_list(fresh_blank());
            return;
        }
        if (is_keyword("a")) fail(tok_.begin, "'a' (rdf:type) can only be used as a predicate");
        if (tok_.k == kind::string || tok_.k == kind::integer || tok_.k == kind::decimal || tok_.k == kind::dbl ||
            is_one_of({"true", "false"}))
            fail(subject_tok.begin, "a literal (" + describe(subject_tok) + ") cannot be the subject of a triple pattern");
        parse_property_list(parse_object_or_subject("a subject"));
    }

    // After '[' (at open) when the next token is not ']': '[ props ]' as a node.
    pattern_term parse_blank_property_list(std::size_t open) {
        if (++depth_ > sparql_max_nesting)
            fail(open, "blank node property lists nested more than " + std::to_string(sparql_max_nesting) +
                                 " deep");
        pattern_term node = fresh_blank();
        parse_property_list(node);
        if (!is_punct("]")) expected("']' to close the blank node property list");
        advance();
        --depth_;
        return node;
    }

    void parse_property_list(const pattern_term& subject) {
        while (true) {
            const pattern_term verb = parse_verb();
            while (true) {
                pattern_term object = parse_object_or_subject("an object");
                q_.patterns.push_back(triple_pattern{subject, verb, std::move(object)});
                if (!is_punct(",")) break;
                advance();
            }
            if (!is_punct(";")) return;
            while (is_punct(";")) advance();
            if (is_punct(".") || is_punct("}") || is_punct("]") || tok_.k == kind::end) return;
        }
    }

    pattern_term parse_verb() {
        pattern_term verb;
        if (tok_.k == kind::var) {
            verb = make_var(tok_.value);
        } else if (tok_.k == kind::iri) {
            verb = make_iri(resolved(tok_));
        } else if (tok_.k == kind::pname) {
            verb = make_iri(expand(tok_));
        } else if (tok_.k == kind::word && tok_.value == "a") {
            verb = make_iri(std::string(rdf_type));
        } else if (is_punct("^")) {
            unsupported(tok_.begin, "property path '^' (inverse)", path_hint);
        } else if (is_punct("!")) {
            unsupported(tok_.begin, "property path '!' (negated property set)", path_hint);
        } else if (is_punct("(")) {
            unsupported(tok_.begin, "property path group '( ... )'", path_hint);
        } else if (tok_.k == kind::string || tok_.k == kind::integer || tok_.k == kind::decimal ||
                   tok_.k == kind::dbl || is_one_of({"true", "false"})) {
            fail(tok_.begin, "a literal (" + describe(tok_) + ") cannot be a predicate");
        } else if (tok_.k == kind::blank || is_punct("[")) {
            fail(tok_.begin, "a blank node (" + describe(tok_) + ") cannot be a predicate");
        } else {
            expected("a predicate (IRI, prefixed name, 'a' or variable)");
        }
        advance();
        if (tok_.k == kind::punct && (tok_.value == "/" || tok_.value == "|" || tok_.value == "*" ||
                                      tok_.value == "+" || tok_.value == "?"))
            unsupported(tok_.begin, "property path '" + tok_.value + "'", path_hint);
        return verb;
    }

    pattern_term parse_object_or_subject(const char* role) {
        switch (tok_.k) {
        case kind::var: {
            pattern_term t = make_var(tok_.value);
            advance();
            return t;
        }
        case kind::iri: {
            pattern_term t = make_iri(resolved(tok_));
            advance();
            return t;
        }
        case kind::pname: {
            pattern_term t = make_iri(expand(tok_));
            advance();
            return t;
        }
        case kind::blank: {
            std::string name = "_:" + tok_.value;
            labels_.insert(name);
            advance();
            return make_var(std::move(name));
        }
        case kind::string: return parse_rdf_literal();
        case kind::integer: return numeric_literal("integer");
        case kind::decimal: return numeric_literal("decimal");
        case kind::dbl: return numeric_literal("double");
        default: break;
        }
        if (is_one_of({"true", "false"})) {
            std::string lexical = tok_.value;
            for (char& c : lexical) c = ascii_lower(c); // the keyword is case-insensitive, the lexical form is not
            advance();
            return make_constant(term{term_kind::literal, std::move(lexical), std::string(xsd_prefix) + "boolean", {}});
        }
        if (is_punct("[")) {
            const std::size_t open = tok_.begin;
            advance();
            if (!is_punct("]")) return parse_blank_property_list(open);
            advance();
            return fresh_blank();
        }
        if (is_punct("(")) unsupported(tok_.begin, "collection '( ... )'", "terms are variables, IRIs, prefixed names, blank nodes or literals");
        if (tok_.k == kind::word && tok_.value == "a") fail(tok_.begin, "'a' (rdf:type) can only be used as a predicate");
        expected(std::string(role) + " (variable, IRI, prefixed name, blank node or literal)");
    }

    pattern_term numeric_literal(const char* type) {
        pattern_term t = make_constant(term{term_kind::literal, tok_.value, std::string(xsd_prefix) + type, {}});
        advance();
        return t;
    }

    pattern_term parse_rdf_literal() {
        term lit{term_kind::literal, std::move(tok_.value), {}, {}};
        advance();
        if (tok_.k == kind::langtag) {
            // Tags compare case-insensitively; storing them lower-cased
            // makes term equality agree with key() equality.
            for (const char c : tok_.value) lit.lang += ascii_lower(c);
            advance();
        } else if (is_punct("^^")) {
            advance();
            if (tok_.k == kind::iri) lit.datatype = resolved(tok_);
            else if (tok_.k == kind::pname) lit.datatype = expand(tok_);
            else expected("a datatype IRI or prefixed name after '^^'");
            advance();
            if (lit.datatype == xsd_string) lit.datatype.clear(); // term.hpp: plain and xsd:string are one term
        }
        return make_constant(std::move(lit));
    }

    void parse_modifiers() {
        bool have_limit = false;
        while (tok_.k == kind::word) {
            if (is_keyword("GROUP")) unsupported(tok_.begin, "GROUP BY", modifier_hint);
            if (is_keyword("HAVING")) unsupported(tok_.begin, "HAVING", modifier_hint);
            if (is_keyword("ORDER")) unsupported(tok_.begin, "ORDER BY", modifier_hint);
            if (is_keyword("OFFSET")) unsupported(tok_.begin, "OFFSET", modifier_hint);
            if (is_keyword("VALUES")) unsupported(tok_.begin, "VALUES", modifier_hint);
            reject_group_construct(); // '{ ... } UNION { ... }' and the like
            if (!is_keyword("LIMIT") || have_limit) return;
            have_limit = true;
            advance();
            q_.limit = parse_limit_value();
        }
    }

    std::uint64_t parse_limit_value() {
        if (tok_.k != kind::integer || tok_.value[0] == '+' || tok_.value[0] == '-')
            expected("a non-negative integer after LIMIT");
        std::uint64_t n = 0;
        constexpr std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
        for (const char c : tok_.value) {
            const auto d = std::uint64_t(c - '0');
            if (n > (max - d) / 10) fail(tok_.begin, "LIMIT " + describe(tok_) + " is too large (at most " + std::to_string(max) + ")");
            n = n * 10 + d;
        }
        advance();
        return n;
    }

    void finish() {
        if (q_.select_all) q_.projection = var_order_;
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
        for (triple_pattern& p : q_.patterns)
            for (pattern_term* t : {&p.s, &p.p, &p.o})
                if (t->is_variable) {
                    const auto it = names.find(t->variable);
                    if (it != names.end()) t->variable = it->second;
                }
    }
};

} // namespace
} // namespace detail

query parse_query(std::string_view text) { return detail::sparql_parser(text).parse(); }

} // namespace rdf
