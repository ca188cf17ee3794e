// The SPARQL 1.1 algebra over a store (rdf/sparql_engine.hpp says what is
// where). Solutions are rows of a `table`; no_term marks an unbound
// variable, which only OPTIONAL, UNION, VALUES' UNDEF and failed BINDs make.
#include <rdf/sparql_engine.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <rdf/execute.hpp>
#include <rdf/plan.hpp>
#include <rdf/sparql_functions.hpp>
#include <rdf/term.hpp>

namespace rdf::sparql {

term_id term_pool::intern(const dictionary_view& dict, std::string_view k) {
    if (const term_id id = dict.find(k); id != no_term) return id;
    const auto it = ids_.find(k);
    if (it != ids_.end()) return it->second;
    if (std::uint64_t(base_) + keys_.size() >= std::uint64_t(no_term))
        throw std::runtime_error("the query made more terms than 32-bit ids can number");
    const term_id id = term_id(base_ + keys_.size());
    ids_.emplace(std::string_view(keys_.emplace_back(k)), id);
    return id;
}

namespace {

using gp_kind = graph_pattern::kind;
using expr_op = expression::op;

/// Bindings from outside a pattern: EXISTS evaluates its pattern with the
/// current solution's values substituted (section 18.6, substitute).
struct outer_bindings {
    const std::vector<var_id>* vars = nullptr;
    std::span<const term_id> values;
    term_id find(var_id v) const noexcept {
        if (!vars) return no_term;
        for (std::size_t i = 0; i < vars->size(); ++i)
            if ((*vars)[i] == v) return values[i];
        return no_term;
    }
};

/// One solution as expressions see it.
struct row_ref {
    const table* t;
    std::size_t r;
    const outer_bindings* outer;
};

class evaluator {
public:
    evaluator(const store_view& v, const evaluate_options& o, term_pool& pool, const std::string& base)
        : v_(v), o_(o), pool_(pool), terms_(v.dict, pool), ctx_(function_options{base, seed_of(o), std::nullopt, "q.b"}) {}

    /// RAND's seed unless the caller fixed one: the clock's nanoseconds,
    /// mixed. std::random_device opens the kernel's source on each query,
    /// which cost more than a whole ASK over a BGP (55 us, a sixth of it).
    static std::uint64_t seed_of(const evaluate_options& o) {
        if (o.seed) return *o.seed;
        std::uint64_t x = std::uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
        x ^= x >> 33;
        x *= 0xff51afd7ed558ccdull;
        return x ^ (x >> 33);
    }

    result run(const query_tree& q) {
        result r;
        r.what = q.what;
        // ASK over a BGP alone needs one solution.
        const bool first_only = q.what == query_tree::form::ask && q.where.what == gp_kind::bgp && !q.grouped &&
                                q.having.empty() && !q.values && q.offset == 0;
        table t = first_only ? bgp(q.where.triples, nullptr, 1) : solve(q, nullptr);
        switch (q.what) {
        case query_tree::form::select:
            for (const projection_item& i : q.projection) r.names.push_back(i.var);
            r.rows = std::move(t);
            break;
        case query_tree::form::ask: r.boolean = t.rows() > 0; break;
        case query_tree::form::construct: r.triples = construct(q, t); break;
        case query_tree::form::describe: r.triples = describe(q, t); break;
        }
        return r;
    }

private:
    const store_view& v_;
    const evaluate_options& o_;
    term_pool& pool_;
    result_terms terms_;
    function_context ctx_;
    std::vector<std::string> var_names_;
    std::unordered_map<std::string, var_id> var_ids_;
    std::unordered_map<term_id, term> decoded_;

    // ---- variables and terms -------------------------------------------

    var_id var(const std::string& name) {
        const auto [it, fresh] = var_ids_.emplace(name, var_id(var_names_.size()));
        if (fresh) var_names_.push_back(name);
        return it->second;
    }

    const term& decode(term_id id) {
        auto it = decoded_.find(id);
        if (it == decoded_.end()) it = decoded_.emplace(id, parse_key(terms_.key(id))).first;
        return it->second;
    }

    term_id intern(const term& t) { return pool_.intern(v_.dict, key(t)); }

    void check_rows(std::size_t rows, std::size_t width, const char* what) const {
        if (rows > o_.limits.rows_for_width(width))
            throw result_too_large(std::string("the query's ") + what + " holds more than " + o_.limits.describe(width) +
                                   ": narrow the query, or raise the budget");
    }

    // ---- the query's steps (section 18.2.4, 18.2.5) --------------------

    /// The query's solutions after its modifiers: a column per projected
    /// variable for SELECT; every variable for the other forms.
    table solve(const query_tree& q, const outer_bindings* outer) {
        table t = eval(q.where, outer);
        std::vector<expression> having = q.having;
        std::vector<projection_item> items = q.projection;
        std::vector<order_key> order = q.order_by;
        if (q.grouped) t = group(q, t, items, having, order);
        for (const expression& h : having) t = filter(t, h, outer);
        if (q.values) t = join(t, eval(*q.values, outer));
        t = select_expressions(t, items, outer);
        if (!order.empty()) sort_rows(t, order, outer);
        if (q.what == query_tree::form::select) {
            std::vector<var_id> cols;
            for (const projection_item& i : items) cols.push_back(var(i.var));
            t = project(t, cols);
            if (q.distinct || q.reduced) t = distinct(t);
        }
        slice(t, q.offset, q.limit);
        return t;
    }

    // ---- graph patterns --------------------------------------------------

    table eval(const graph_pattern& g, const outer_bindings* outer) {
        switch (g.what) {
        case gp_kind::bgp: return bgp(g.triples, outer);
        case gp_kind::path: return path_pattern(g, outer);
        case gp_kind::join: {
            table a = eval(g.children[0], outer);
            if (a.rows() == 0) return with_vars(std::move(a), g.children[1]);
            if (a.rows() <= bind_join_rows && g.children[1].what == gp_kind::bgp) return bind_join(a, g.children[1], outer);
            return join(a, eval(g.children[1], outer));
        }
        case gp_kind::left_join: return left_join(eval(g.children[0], outer), eval(g.children[1], outer), g.filter, outer);
        case gp_kind::minus: {
            table a = eval(g.children[0], outer);
            if (a.rows() == 0) return a;
            return minus(a, eval(g.children[1], outer));
        }
        case gp_kind::union_: return union_of(eval(g.children[0], outer), eval(g.children[1], outer));
        case gp_kind::filter: {
            table t = eval(g.children[0], outer);
            for (const expression& f : g.filter) t = filter(t, f, outer);
            return t;
        }
        case gp_kind::extend: return extend(eval(g.children[0], outer), var(g.var), g.expr, outer);
        case gp_kind::values: return values(g);
        case gp_kind::subquery: return solve(*g.sub, nullptr);
        case gp_kind::graph: { // the store has only the default graph: no named graph matches
            table t;
            for (const std::string& name : in_scope_variables(g)) t.vars.push_back(var(name));
            return t;
        }
        }
        throw std::logic_error("sparql::evaluate: unknown graph pattern");
    }

    /// An empty table that still names the variables `g` would have bound.
    table with_vars(table t, const graph_pattern& g) {
        for (const std::string& name : in_scope_variables(g))
            if (t.column_of(var(name)) < 0) t.vars.push_back(var(name));
        return t;
    }

    static table unit() {
        table t;
        t.count = 1;
        return t;
    }

    /// A slot of a pattern: a constant's id (no_term: not in the store), a
    /// variable bound outside (its value), or a variable.
    slot to_slot(const pattern_term& p, const outer_bindings* outer, bool& unsatisfiable) {
        slot s;
        if (p.is_variable) {
            const var_id x = var(p.variable);
            const term_id bound = outer ? outer->find(x) : no_term;
            if (bound == no_term) {
                s.var = x;
                return s;
            }
            s.id = bound;
        } else {
            s.id = v_.dict.find(key(p.constant));
        }
        if (s.id == no_term || s.id >= pool_.base()) unsatisfiable = true; // a term the store lacks matches nothing
        return s;
    }

    /// `limit`: the rows wanted (ASK and EXISTS want one): the BGP engine
    /// stops there (execute.hpp's execute_limited).
    table bgp(const std::vector<triple_pattern>& triples, const outer_bindings* outer,
              std::optional<std::uint64_t> limit = std::nullopt) {
        if (triples.empty()) return unit();
        encoded_query e;
        e.limits = o_.limits;
        e.limit = limit;
        for (const triple_pattern& t : triples) {
            encoded_pattern p;
            p.at = {to_slot(t.s, outer, e.unsatisfiable), to_slot(t.p, outer, e.unsatisfiable),
                    to_slot(t.o, outer, e.unsatisfiable)};
            e.patterns.push_back(p);
        }
        e.variables = var_names_;
        table t;
        if (!e.unsatisfiable) t = execute(v_, e, make_plan(e, v_));
        // Every variable of the patterns has its column, even with no rows.
        for (const encoded_pattern& p : e.patterns)
            for (const slot& s : p.at)
                if (s.is_var() && t.column_of(s.var) < 0) t.vars.push_back(s.var);
        if (e.unsatisfiable) t.count = 0;
        return t;
    }

    // ---- joins -----------------------------------------------------------

    /// Few rows on the left of a join with a BGP (VALUES, a sub-query's top
    /// rows): the BGP is answered once per row, the row's values as its
    /// constants, rather than in full and joined after: a VALUES of two
    /// departments made the BGP of all members and then kept a sixth of them.
    static constexpr std::size_t bind_join_rows = 32;

    table bind_join(const table& a, const graph_pattern& b, const outer_bindings* outer) {
        table out;
        out.vars = a.vars;
        // Every variable of the BGP, its blank nodes' too: a path's fresh
        // node joins through them to the path pattern after it (in-scope
        // variables leave them out, and the differential test found the
        // path's steps unchained).
        for (const triple_pattern& t : b.triples)
            for (const pattern_term* x : {&t.s, &t.p, &t.o})
                if (x->is_variable && out.column_of(var(x->variable)) < 0) out.vars.push_back(var(x->variable));
        std::vector<var_id> vars;
        std::vector<term_id> vals;
        for (std::size_t r = 0; r < a.rows(); ++r) {
            const auto row = a.row(r);
            vars.clear();
            vals.clear();
            for (std::size_t c = 0; c < a.width(); ++c)
                if (row[c] != no_term) {
                    vars.push_back(a.vars[c]);
                    vals.push_back(row[c]);
                }
            if (outer && outer->vars)
                for (std::size_t i = 0; i < outer->vars->size(); ++i)
                    if (std::find(vars.begin(), vars.end(), (*outer->vars)[i]) == vars.end()) {
                        vars.push_back((*outer->vars)[i]);
                        vals.push_back(outer->values[i]);
                    }
            const outer_bindings bound{&vars, vals};
            const table t = bgp(b.triples, &bound);
            // The row, then what the BGP bound that the row did not (its
            // substituted variables are not among the BGP's columns).
            std::vector<int> from(out.width(), -1);
            for (std::size_t c = a.width(); c < out.width(); ++c) from[c] = t.column_of(out.vars[c]);
            for (std::size_t k = 0; k < t.rows(); ++k) {
                const auto got = t.row(k);
                for (std::size_t c = 0; c < out.width(); ++c) {
                    term_id x = c < a.width() ? row[c] : no_term;
                    if (from[c] >= 0) x = got[std::size_t(from[c])];
                    if (c < a.width() && x == no_term) {
                        const int tc = t.column_of(out.vars[c]); // an UNDEF of the row the BGP bound
                        if (tc >= 0) x = got[std::size_t(tc)];
                    }
                    out.cells.push_back(x);
                }
                ++out.count;
            }
            check_rows(out.rows(), out.width(), "join");
        }
        return out;
    }

    struct join_shape {
        std::vector<var_id> vars;              ///< the output's: a's, then b's new ones
        std::vector<std::pair<int, int>> shared; ///< columns in a and b of the shared variables
        std::vector<int> b_new;                  ///< b's columns that a lacks
        std::vector<std::size_t> keyed;          ///< indices into shared that every row of both binds
    };

    static join_shape shape(const table& a, const table& b) {
        join_shape s;
        s.vars = a.vars;
        for (std::size_t c = 0; c < b.width(); ++c) {
            const int ca = a.column_of(b.vars[c]);
            if (ca >= 0) s.shared.emplace_back(ca, int(c));
            else {
                s.b_new.push_back(int(c));
                s.vars.push_back(b.vars[c]);
            }
        }
        for (std::size_t k = 0; k < s.shared.size(); ++k) {
            bool all = true;
            for (std::size_t r = 0; r < a.rows() && all; ++r) all = a.row(r)[std::size_t(s.shared[k].first)] != no_term;
            for (std::size_t r = 0; r < b.rows() && all; ++r) all = b.row(r)[std::size_t(s.shared[k].second)] != no_term;
            if (all) s.keyed.push_back(k);
        }
        return s;
    }

    static bool compatible(const join_shape& s, std::span<const term_id> ra, std::span<const term_id> rb) {
        for (const auto& [ca, cb] : s.shared) {
            const term_id x = ra[std::size_t(ca)], y = rb[std::size_t(cb)];
            if (x != no_term && y != no_term && x != y) return false;
        }
        return true;
    }

    static void append_merged(table& out, const join_shape& s, std::span<const term_id> ra, std::span<const term_id> rb) {
        const std::size_t at = out.cells.size();
        out.cells.insert(out.cells.end(), ra.begin(), ra.end());
        for (const auto& [ca, cb] : s.shared)
            if (out.cells[at + std::size_t(ca)] == no_term) out.cells[at + std::size_t(ca)] = rb[std::size_t(cb)];
        for (const int c : s.b_new) out.cells.push_back(rb[std::size_t(c)]);
        ++out.count;
    }

    /// For each row of a, f(row of b) for the rows of b compatible with it:
    /// a hash on the shared variables that every row binds, the rest checked.
    template <class F>
    void for_compatible(const table& a, const table& b, const join_shape& s, std::size_t ra, F&& f,
                        const std::unordered_multimap<std::uint64_t, std::size_t>& index) {
        const auto row_a = a.row(ra);
        if (s.keyed.empty()) {
            for (std::size_t rb = 0; rb < b.rows(); ++rb)
                if (compatible(s, row_a, b.row(rb))) f(rb);
            return;
        }
        auto [lo, hi] = index.equal_range(hash_key(s, row_a, true));
        for (auto it = lo; it != hi; ++it)
            if (compatible(s, row_a, b.row(it->second))) f(it->second);
    }

    static std::uint64_t hash_key(const join_shape& s, std::span<const term_id> row, bool side_a) {
        std::uint64_t h = 0x9e3779b97f4a7c15ull;
        for (const std::size_t k : s.keyed) {
            const term_id x = row[std::size_t(side_a ? s.shared[k].first : s.shared[k].second)];
            h = (h ^ x) * 0xbf58476d1ce4e5b9ull;
            h ^= h >> 31;
        }
        return h;
    }

    static std::unordered_multimap<std::uint64_t, std::size_t> build_index(const table& b, const join_shape& s) {
        std::unordered_multimap<std::uint64_t, std::size_t> index;
        if (s.keyed.empty()) return index;
        index.reserve(b.rows());
        for (std::size_t r = 0; r < b.rows(); ++r) index.emplace(hash_key(s, b.row(r), false), r);
        return index;
    }

    table join(const table& a, const table& b) {
        const join_shape s = shape(a, b);
        table out;
        out.vars = s.vars;
        const auto index = build_index(b, s);
        for (std::size_t ra = 0; ra < a.rows(); ++ra) {
            for_compatible(a, b, s, ra, [&](std::size_t rb) { append_merged(out, s, a.row(ra), b.row(rb)); }, index);
            check_rows(out.rows(), out.width(), "join");
        }
        return out;
    }

    table left_join(const table& a, const table& b, const std::vector<expression>& cond, const outer_bindings* outer) {
        const join_shape s = shape(a, b);
        table out;
        out.vars = s.vars;
        const auto index = build_index(b, s);
        table one; // the merged row, for the filter
        one.vars = s.vars;
        for (std::size_t ra = 0; ra < a.rows(); ++ra) {
            bool matched = false;
            for_compatible(
                a, b, s, ra,
                [&](std::size_t rb) {
                    if (!cond.empty()) {
                        one.cells.clear();
                        one.count = 0;
                        append_merged(one, s, a.row(ra), b.row(rb));
                        for (const expression& c : cond)
                            if (!truth(c, row_ref{&one, 0, outer})) return;
                    }
                    append_merged(out, s, a.row(ra), b.row(rb));
                    matched = true;
                },
                index);
            if (!matched) {
                const auto row = a.row(ra);
                out.cells.insert(out.cells.end(), row.begin(), row.end());
                out.cells.insert(out.cells.end(), s.b_new.size(), no_term);
                ++out.count;
            }
            check_rows(out.rows(), out.width(), "OPTIONAL");
        }
        return out;
    }

    /// Section 18.5's Minus: a row goes if a row of b is compatible with it
    /// and shares a bound variable with it.
    table minus(const table& a, const table& b) {
        const join_shape s = shape(a, b);
        table out;
        out.vars = a.vars;
        if (s.shared.empty()) return a;
        const auto index = build_index(b, s);
        for (std::size_t ra = 0; ra < a.rows(); ++ra) {
            bool removed = false;
            const auto row_a = a.row(ra);
            for_compatible(
                a, b, s, ra,
                [&](std::size_t rb) {
                    const auto row_b = b.row(rb);
                    for (const auto& [ca, cb] : s.shared)
                        if (row_a[std::size_t(ca)] != no_term && row_b[std::size_t(cb)] != no_term) removed = true;
                },
                index);
            if (!removed) {
                out.cells.insert(out.cells.end(), row_a.begin(), row_a.end());
                ++out.count;
            }
        }
        return out;
    }

    static table union_of(const table& a, const table& b) {
        table out;
        out.vars = a.vars;
        for (const var_id x : b.vars)
            if (out.column_of(x) < 0) out.vars.push_back(x);
        auto add = [&](const table& t) {
            std::vector<int> from(out.width(), -1);
            for (std::size_t c = 0; c < out.width(); ++c) from[c] = t.column_of(out.vars[c]);
            for (std::size_t r = 0; r < t.rows(); ++r) {
                const auto row = t.row(r);
                for (const int c : from) out.cells.push_back(c < 0 ? no_term : row[std::size_t(c)]);
                ++out.count;
            }
        };
        add(a);
        add(b);
        return out;
    }

    table values(const graph_pattern& g) {
        table t;
        for (const std::string& name : g.vars) t.vars.push_back(var(name));
        for (const values_row& row : g.rows) {
            for (const std::optional<term>& x : row) t.cells.push_back(x ? intern(*x) : no_term);
            ++t.count;
        }
        return t;
    }

    // ---- filters, BIND, modifiers ----------------------------------------

    table filter(const table& t, const expression& e, const outer_bindings* outer) {
        table out;
        out.vars = t.vars;
        for (std::size_t r = 0; r < t.rows(); ++r)
            if (truth(e, row_ref{&t, r, outer})) {
                const auto row = t.row(r);
                out.cells.insert(out.cells.end(), row.begin(), row.end());
                ++out.count;
            }
        return out;
    }

    table extend(const table& t, var_id x, const expression& e, const outer_bindings* outer) {
        table out;
        out.vars = t.vars;
        const int existing = t.column_of(x);
        if (existing < 0) out.vars.push_back(x);
        for (std::size_t r = 0; r < t.rows(); ++r) {
            ctx_.next_solution();
            const term_id id = eval_id(e, row_ref{&t, r, outer});
            const auto row = t.row(r);
            out.cells.insert(out.cells.end(), row.begin(), row.end());
            // A SELECT expression's variable may be one GROUP BY named already (the same value).
            if (existing >= 0) {
                if (out.cells[out.cells.size() - row.size() + std::size_t(existing)] == no_term)
                    out.cells[out.cells.size() - row.size() + std::size_t(existing)] = id;
            } else {
                out.cells.push_back(id);
            }
            ++out.count;
        }
        return out;
    }

    /// SELECT's (expr AS ?v), in order, each seeing the ones before, all of
    /// a solution's in one pass: BNODE(str) names one node per string within
    /// a solution (17.4.2.9), so the solution must not change between them.
    table select_expressions(const table& t, const std::vector<projection_item>& items, const outer_bindings* outer) {
        std::vector<std::pair<int, const expression*>> todo;
        table out;
        out.vars = t.vars;
        for (const projection_item& i : items) {
            if (!i.expr) continue;
            const var_id x = var(i.var);
            int c = out.column_of(x);
            if (c < 0) {
                out.vars.push_back(x);
                c = int(out.vars.size() - 1);
            }
            todo.emplace_back(c, &*i.expr);
        }
        if (todo.empty()) return t;
        const std::size_t w = out.width();
        for (std::size_t r = 0; r < t.rows(); ++r) {
            const auto row = t.row(r);
            out.cells.insert(out.cells.end(), row.begin(), row.end());
            out.cells.resize(out.cells.size() + (w - row.size()), no_term);
            ++out.count;
            ctx_.next_solution();
            for (const auto& [c, e] : todo) {
                term_id& cell = out.cells[r * w + std::size_t(c)];
                if (cell != no_term) continue; // a GROUP BY key of the same name: the same value
                cell = eval_id(*e, row_ref{&out, r, outer});
            }
        }
        return out;
    }

    static table project(const table& t, const std::vector<var_id>& cols) {
        table out;
        out.vars = cols;
        std::vector<int> from;
        for (const var_id x : cols) from.push_back(t.column_of(x));
        out.cells.reserve(t.rows() * cols.size());
        for (std::size_t r = 0; r < t.rows(); ++r) {
            const auto row = t.row(r);
            for (const int c : from) out.cells.push_back(c < 0 ? no_term : row[std::size_t(c)]);
        }
        out.count = t.rows();
        return out;
    }

    /// DISTINCT, the first of equal rows kept in place (ORDER BY survives it).
    static table distinct(const table& t) {
        table out;
        out.vars = t.vars;
        std::set<std::vector<term_id>> seen;
        for (std::size_t r = 0; r < t.rows(); ++r) {
            const auto row = t.row(r);
            if (!seen.emplace(row.begin(), row.end()).second) continue;
            out.cells.insert(out.cells.end(), row.begin(), row.end());
            ++out.count;
        }
        return out;
    }

    static void slice(table& t, std::uint64_t offset, std::optional<std::uint64_t> limit) {
        if (offset == 0 && !limit) return;
        const std::size_t w = t.width();
        const std::size_t first = std::size_t(std::min<std::uint64_t>(offset, t.rows()));
        std::size_t n = t.rows() - first;
        if (limit) n = std::size_t(std::min<std::uint64_t>(*limit, n));
        t.cells.erase(t.cells.begin(), t.cells.begin() + std::ptrdiff_t(first * w));
        t.cells.resize(n * w);
        t.count = n;
    }

    void sort_rows(table& t, const std::vector<order_key>& keys, const outer_bindings* outer) {
        const std::size_t n = t.rows(), w = t.width(), nk = keys.size();
        // Each key's term, decoded once per distinct id (the decode cache
        // holds it, and its nodes do not move): no copies while sorting.
        std::vector<const term*> k(n * nk, nullptr);
        for (std::size_t r = 0; r < n; ++r)
            for (std::size_t i = 0; i < nk; ++i)
                if (const term_id id = eval_id(keys[i].expr, row_ref{&t, r, outer}); id != no_term) k[r * nk + i] = &decode(id);
        std::vector<std::size_t> idx(n);
        std::iota(idx.begin(), idx.end(), std::size_t(0));
        std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
            for (std::size_t i = 0; i < nk; ++i) {
                const term* x = k[a * nk + i];
                const term* y = k[b * nk + i];
                int c = order_compare(x, y);
                // Equal values are a tie for the next key to break (15.1
                // orders by '<'), though order_compare, a total order, tells
                // 1.5 as a double from 1.5 as a decimal. Only typed literals
                // can be equal as values and differ as terms.
                if (c != 0 && x && y && x->kind == term_kind::literal && y->kind == term_kind::literal &&
                    !x->datatype.empty() && !y->datatype.empty() && compare(compare_op::eq, *x, *y) == true)
                    c = 0;
                if (keys[i].descending) c = -c;
                if (c != 0) return c < 0;
            }
            return false;
        });
        std::vector<term_id> cells;
        cells.reserve(t.cells.size());
        for (const std::size_t r : idx) cells.insert(cells.end(), t.cells.begin() + std::ptrdiff_t(r * w), t.cells.begin() + std::ptrdiff_t((r + 1) * w));
        t.cells = std::move(cells);
    }

    // ---- grouping and aggregates (section 18.2.4.1, 18.5) ----------------

    /// The aggregates of an expression replaced by variables named after
    /// their place (names no query can write), the aggregates collected.
    void lift_aggregates(expression& e, std::vector<expression>& aggregates) {
        if (e.what == expr_op::aggregate) {
            const std::string name = "\x01" "agg" + std::to_string(aggregates.size());
            aggregates.push_back(std::move(e));
            e = expression{};
            e.what = expr_op::variable;
            e.name = name;
            return;
        }
        for (expression& a : e.args) lift_aggregates(a, aggregates);
    }

    table group(const query_tree& q, const table& t, std::vector<projection_item>& items, std::vector<expression>& having,
                std::vector<order_key>& order) {
        std::vector<expression> aggregates;
        for (projection_item& i : items)
            if (i.expr) lift_aggregates(*i.expr, aggregates);
        for (expression& h : having) lift_aggregates(h, aggregates);
        for (order_key& k : order) lift_aggregates(k.expr, aggregates);
        // Group rows by their keys' values (errors as unbound, 18.5's Group).
        // Each group's key (a row of ids) and rows, in order of first
        // appearance; a hash of the key finds the group (a key of one id,
        // the usual GROUP BY ?x, without a vector per row).
        std::vector<std::vector<term_id>> order_seen;
        std::vector<std::vector<std::size_t>> members;
        std::unordered_multimap<std::uint64_t, std::size_t> index;
        std::vector<term_id> k;
        for (std::size_t r = 0; r < t.rows(); ++r) {
            k.clear();
            std::uint64_t h = 0x9e3779b97f4a7c15ull;
            for (const group_key& g : q.group_by) {
                k.push_back(eval_id(g.expr, row_ref{&t, r, nullptr}));
                h = (h ^ k.back()) * 0xbf58476d1ce4e5b9ull;
                h ^= h >> 31;
            }
            std::size_t found = order_seen.size();
            for (auto [it, end] = index.equal_range(h); it != end; ++it)
                if (order_seen[it->second] == k) found = it->second;
            if (found == order_seen.size()) {
                index.emplace(h, found);
                order_seen.push_back(k);
                members.emplace_back();
            }
            members[found].push_back(r);
        }
        // Without GROUP BY, the aggregates make one group, even of no rows.
        if (q.group_by.empty() && order_seen.empty()) {
            order_seen.emplace_back();
            members.emplace_back();
        }
        table out;
        for (const group_key& g : q.group_by) out.vars.push_back(g.var.empty() ? var("\x01" "key" + std::to_string(out.vars.size())) : var(g.var));
        for (std::size_t i = 0; i < aggregates.size(); ++i) out.vars.push_back(var("\x01" "agg" + std::to_string(i)));
        for (std::size_t i = 0; i < order_seen.size(); ++i) {
            const std::vector<std::size_t>& rows = members[i];
            out.cells.insert(out.cells.end(), order_seen[i].begin(), order_seen[i].end());
            for (const expression& a : aggregates) {
                const value val = aggregate(a, t, rows);
                out.cells.push_back(val ? intern(*val) : no_term);
            }
            ++out.count;
        }
        return out;
    }

    value aggregate(const expression& a, const table& t, const std::vector<std::size_t>& rows) {
        const std::string& n = a.name;
        if (a.args.empty()) { // COUNT(*): solutions (distinct ones with DISTINCT)
            if (!a.distinct) return integer(rows.size());
            std::set<std::vector<term_id>> seen_rows;
            for (const std::size_t r : rows) seen_rows.emplace(t.row(r).begin(), t.row(r).end());
            return integer(seen_rows.size());
        }
        // The values as ids (terms equal as RDF terms share one), an error as no_term.
        std::vector<term_id> ids;
        ids.reserve(rows.size());
        bool error = false;
        std::unordered_set<term_id> seen;
        for (const std::size_t r : rows) {
            const term_id id = eval_id(a.args[0], row_ref{&t, r, nullptr});
            if (id == no_term) {
                error = true;
                continue;
            }
            if (a.distinct && !seen.insert(id).second) continue;
            ids.push_back(id);
        }
        if (n == "COUNT") return integer(ids.size());
        if (n == "SAMPLE") return ids.empty() ? value{} : value{decode(ids.front())};
        std::vector<term> vals;
        vals.reserve(ids.size());
        for (const term_id id : ids) vals.push_back(decode(id));
        if (n == "SUM" || n == "AVG") {
            if (error) return std::nullopt;
            value sum = integer(0);
            for (const term& x : vals) {
                sum = arithmetic('+', *sum, x);
                if (!sum) return std::nullopt;
            }
            if (n == "SUM") return sum;
            if (vals.empty()) return integer(0);
            return arithmetic('/', *sum, *integer(vals.size()));
        }
        if (n == "MIN" || n == "MAX") {
            if (vals.empty()) return std::nullopt;
            const term* best = &vals.front();
            for (const term& x : vals) {
                const int c = order_compare(&x, best);
                if (n == "MIN" ? c < 0 : c > 0) best = &x;
            }
            return *best;
        }
        if (n == "GROUP_CONCAT") {
            if (error) return std::nullopt;
            std::string s;
            for (std::size_t i = 0; i < vals.size(); ++i) {
                if (vals[i].kind != term_kind::literal) return std::nullopt;
                if (i) s += a.separator;
                s += vals[i].value;
            }
            return term{term_kind::literal, std::move(s), {}, {}};
        }
        return std::nullopt;
    }

    static value integer(std::uint64_t n) { return integer_term(std::int64_t(n)); }
    static value boolean(bool b) { return boolean_term(b); }

    // ---- expressions (section 17) ----------------------------------------

    /// An expression's value as an id: a variable's without decoding it
    /// (grouping, sorting and BIND read variables far more often than they compute).
    term_id eval_id(const expression& e, const row_ref& at) {
        if (e.what == expr_op::variable) return lookup(at, e.name);
        const value val = eval_expr(e, at);
        return val ? intern(*val) : no_term;
    }

    term_id lookup(const row_ref& at, const std::string& name) {
        const auto it = var_ids_.find(name);
        if (it == var_ids_.end()) return no_term;
        const int c = at.t->column_of(it->second);
        if (c >= 0) {
            const term_id id = at.t->row(at.r)[std::size_t(c)];
            if (id != no_term) return id;
        }
        return at.outer ? at.outer->find(it->second) : no_term;
    }

    bool truth(const expression& e, const row_ref& at) {
        const value val = eval_expr(e, at);
        if (!val) return false;
        const std::optional<bool> b = effective_boolean_value(*val);
        return b && *b;
    }

    value eval_expr(const expression& e, const row_ref& at) {
        switch (e.what) {
        case expr_op::constant: return e.value;
        case expr_op::variable: {
            const term_id id = lookup(at, e.name);
            if (id == no_term) return std::nullopt;
            return decode(id);
        }
        case expr_op::bound: return boolean(lookup(at, e.name) != no_term);
        case expr_op::logical_or:
        case expr_op::logical_and: {
            // Section 17.2's three-valued logic: an error and a deciding
            // value give the deciding value.
            const bool is_or = e.what == expr_op::logical_or;
            std::optional<bool> a, b;
            if (const value x = eval_expr(e.args[0], at)) a = effective_boolean_value(*x);
            if (a && *a == is_or) return boolean(is_or);
            if (const value y = eval_expr(e.args[1], at)) b = effective_boolean_value(*y);
            if (b && *b == is_or) return boolean(is_or);
            if (a && b) return boolean(!is_or);
            return std::nullopt;
        }
        case expr_op::logical_not: {
            const value x = eval_expr(e.args[0], at);
            if (!x) return std::nullopt;
            const std::optional<bool> b = effective_boolean_value(*x);
            if (!b) return std::nullopt;
            return boolean(!*b);
        }
        case expr_op::eq:
        case expr_op::ne:
        case expr_op::lt:
        case expr_op::gt:
        case expr_op::le:
        case expr_op::ge: {
            const value x = eval_expr(e.args[0], at);
            if (!x) return std::nullopt;
            const value y = eval_expr(e.args[1], at);
            if (!y) return std::nullopt;
            static constexpr compare_op ops[] = {compare_op::eq, compare_op::ne, compare_op::lt,
                                                 compare_op::gt, compare_op::le, compare_op::ge};
            const std::optional<bool> b = compare(ops[int(e.what) - int(expr_op::eq)], *x, *y);
            if (!b) return std::nullopt;
            return boolean(*b);
        }
        case expr_op::add:
        case expr_op::subtract:
        case expr_op::multiply:
        case expr_op::divide: {
            const value x = eval_expr(e.args[0], at);
            if (!x) return std::nullopt;
            const value y = eval_expr(e.args[1], at);
            if (!y) return std::nullopt;
            static constexpr char ops[] = {'+', '-', '*', '/'};
            return arithmetic(ops[int(e.what) - int(expr_op::add)], *x, *y);
        }
        case expr_op::negate:
        case expr_op::plus: {
            const value x = eval_expr(e.args[0], at);
            if (!x) return std::nullopt;
            return e.what == expr_op::negate ? unary_minus(*x) : unary_plus(*x);
        }
        case expr_op::in:
        case expr_op::not_in: {
            // 17.4.1.9: true on a match; false if none matched and none
            // erred; an error otherwise (NOT IN the negation).
            const bool negated = e.what == expr_op::not_in;
            const value x = eval_expr(e.args[0], at);
            if (!x) return std::nullopt;
            bool erred = false;
            for (std::size_t i = 1; i < e.args.size(); ++i) {
                const value y = eval_expr(e.args[i], at);
                const std::optional<bool> b = y ? compare(compare_op::eq, *x, *y) : std::nullopt;
                if (!b) erred = true;
                else if (*b) return boolean(!negated);
            }
            if (erred) return std::nullopt;
            return boolean(negated);
        }
        case expr_op::if_: {
            const value c = eval_expr(e.args[0], at);
            if (!c) return std::nullopt;
            const std::optional<bool> b = effective_boolean_value(*c);
            if (!b) return std::nullopt;
            return eval_expr(e.args[*b ? 1 : 2], at);
        }
        case expr_op::coalesce:
            for (const expression& a : e.args)
                if (value x = eval_expr(a, at)) return x;
            return std::nullopt;
        case expr_op::exists:
        case expr_op::not_exists: return boolean(exists(*e.pattern, at) == (e.what == expr_op::exists));
        case expr_op::builtin:
        case expr_op::function: {
            std::vector<term> args;
            args.reserve(e.args.size());
            for (const expression& a : e.args) {
                value x = eval_expr(a, at);
                if (!x) return std::nullopt;
                args.push_back(std::move(*x));
            }
            return call(e.name, args, ctx_);
        }
        case expr_op::aggregate: return std::nullopt; // lifted out by group(); one elsewhere is a parse error
        }
        return std::nullopt;
    }

    /// EXISTS: the pattern with the row's (and the outer rows') values
    /// substituted has a solution.
    bool exists(const graph_pattern& p, const row_ref& at) {
        std::vector<var_id> vars;
        std::vector<term_id> vals;
        for (std::size_t c = 0; c < at.t->width(); ++c) {
            const term_id id = at.t->row(at.r)[c];
            if (id == no_term) continue;
            vars.push_back(at.t->vars[c]);
            vals.push_back(id);
        }
        if (at.outer && at.outer->vars)
            for (std::size_t i = 0; i < at.outer->vars->size(); ++i)
                if (std::find(vars.begin(), vars.end(), (*at.outer->vars)[i]) == vars.end()) {
                    vars.push_back((*at.outer->vars)[i]);
                    vals.push_back(at.outer->values[i]);
                }
        const outer_bindings inner{&vars, vals};
        // A BGP needs one solution to answer: any it finds agrees with the
        // substituted values, which are constants there.
        if (p.what == gp_kind::bgp) return bgp(p.triples, &inner, 1).rows() > 0;
        table t = eval(p, &inner);
        // A variable the pattern binds again must agree with the substituted value.
        for (std::size_t r = 0; r < t.rows(); ++r) {
            bool ok = true;
            for (std::size_t c = 0; c < t.width() && ok; ++c) {
                const term_id bound = inner.find(t.vars[c]);
                const term_id got = t.row(r)[c];
                if (bound != no_term && got != no_term && got != bound) ok = false;
            }
            if (ok) return true;
        }
        return false;
    }

    // ---- property paths (section 9, 18.4) --------------------------------

    using pairs = std::vector<std::pair<term_id, term_id>>;

    /// The matches of `p` from `from` to `to` (no_term: any), as pairs.
    pairs eval_path(const path& p, term_id from, term_id to) {
        using op = path::op;
        pairs out;
        switch (p.what) {
        case op::link: {
            const term_id pred = v_.dict.find(key(term{term_kind::iri, p.iri, {}, {}}));
            if (pred == no_term) return out;
            scan(from, pred, to, [&](term_id s, term_id, term_id o) { out.emplace_back(s, o); });
            return out;
        }
        case op::inverse: {
            for (const auto& [a, b] : eval_path(p.args[0], to, from)) out.emplace_back(b, a);
            return out;
        }
        case op::sequence: {
            pairs left = eval_path(p.args[0], from, no_term);
            for (std::size_t i = 1; i < p.args.size(); ++i) {
                const bool last = i + 1 == p.args.size();
                pairs next;
                std::unordered_map<term_id, pairs> memo;
                for (const auto& [a, mid] : left) {
                    auto it = memo.find(mid);
                    if (it == memo.end()) it = memo.emplace(mid, eval_path(p.args[i], mid, last ? to : no_term)).first;
                    for (const auto& [m, b] : it->second) next.emplace_back(a, b);
                }
                left = std::move(next);
            }
            return left;
        }
        case op::alternative:
            for (const path& a : p.args) {
                pairs x = eval_path(a, from, to);
                out.insert(out.end(), x.begin(), x.end());
            }
            return out;
        case op::zero_or_one:
        case op::zero_or_more:
        case op::one_or_more: return closure(p, from, to);
        case op::negated: {
            std::vector<term_id> forward, backward;
            for (const std::string& iri : p.iris) forward.push_back(v_.dict.find(key(term{term_kind::iri, iri, {}, {}})));
            for (const std::string& iri : p.inverse_iris)
                backward.push_back(v_.dict.find(key(term{term_kind::iri, iri, {}, {}})));
            const bool any_forward = !p.iris.empty() || p.inverse_iris.empty();
            if (any_forward)
                scan(from, no_term, to, [&](term_id s, term_id pr, term_id o) {
                    if (std::find(forward.begin(), forward.end(), pr) == forward.end()) out.emplace_back(s, o);
                });
            if (!p.inverse_iris.empty())
                scan(to, no_term, from, [&](term_id s, term_id pr, term_id o) {
                    if (std::find(backward.begin(), backward.end(), pr) == backward.end()) out.emplace_back(o, s);
                });
            return out;
        }
        }
        return out;
    }

    template <class F>
    void scan(term_id s, term_id p, term_id o, F&& f) {
        if ((s != no_term && s >= pool_.base()) || (o != no_term && o >= pool_.base())) return; // made by the query: not in the store
        const std::array<term_id, 3> c{s, p, o};
        unsigned fixed = 0;
        for (int i = 0; i < 3; ++i) fixed |= unsigned(c[std::size_t(i)] != no_term) << i;
        const std::optional<order> ord = rdf::detail::order_for(fixed, -1);
        rdf::detail::for_each_match(v_, *ord, c, fixed, [&](const std::array<term_id, 3>& t) { f(t[0], t[1], t[2]); });
    }

    /// Every subject and object of the store: the nodes a zero-length path
    /// with two free ends matches (18.4's ALP over all nodes).
    std::vector<term_id> all_nodes() {
        std::unordered_set<term_id> seen;
        std::vector<term_id> out;
        scan(no_term, no_term, no_term, [&](term_id s, term_id, term_id o) {
            if (seen.insert(s).second) out.push_back(s);
            if (seen.insert(o).second) out.push_back(o);
        });
        return out;
    }

    /// p?, p*, p+: distinct pairs (18.4's ALP keeps each node once).
    pairs closure(const path& p, term_id from, term_id to) {
        const bool zero = p.what != path::op::one_or_more;
        const bool once = p.what == path::op::zero_or_one;
        std::set<std::pair<term_id, term_id>> seen;
        pairs out;
        auto add = [&](term_id a, term_id b) {
            if ((to == no_term || b == to) && seen.emplace(a, b).second) out.emplace_back(a, b);
        };
        // From each start, the nodes reachable in one step, then onwards.
        auto walk = [&](term_id start, bool backwards) {
            std::unordered_set<term_id> visited;
            std::vector<term_id> frontier{start};
            if (zero) {
                backwards ? add(start, start) : add(start, start);
                visited.insert(start);
            }
            while (!frontier.empty()) {
                std::vector<term_id> next;
                for (const term_id x : frontier) {
                    const pairs step = backwards ? eval_path(p.args[0], no_term, x) : eval_path(p.args[0], x, no_term);
                    for (const auto& [a, b] : step) {
                        const term_id y = backwards ? a : b;
                        if (!visited.insert(y).second) continue;
                        backwards ? add(y, start) : add(start, y);
                        next.push_back(y);
                    }
                }
                if (once) break;
                frontier = std::move(next);
            }
        };
        if (from != no_term) {
            walk(from, false);
        } else if (to != no_term) {
            const term_id saved = to;
            to = no_term; // add() filters on `to`; walking backwards every pair ends there
            walk(saved, true);
        } else {
            std::vector<term_id> starts;
            if (zero) starts = all_nodes();
            else {
                std::unordered_set<term_id> s;
                for (const auto& [a, b] : eval_path(p.args[0], no_term, no_term))
                    if (s.insert(a).second) starts.push_back(a);
            }
            for (const term_id s : starts) walk(s, false);
        }
        return out;
    }

    /// A path pattern's ends: a constant's id (made in the pool if the
    /// store lacks it: a zero-length path still matches it), or a variable.
    table path_pattern(const graph_pattern& g, const outer_bindings* outer) {
        auto end = [&](const pattern_term& t, var_id& x) -> term_id {
            if (!t.is_variable) return intern(t.constant);
            x = var(t.variable);
            const term_id bound = outer ? outer->find(x) : no_term;
            if (bound != no_term) x = no_var;
            return bound;
        };
        var_id sv = no_var, ov = no_var;
        const term_id s = end(g.subject, sv), o = end(g.object, ov);
        const pairs found = eval_path(g.property, s, o);
        table t;
        if (sv != no_var) t.vars.push_back(sv);
        if (ov != no_var && ov != sv) t.vars.push_back(ov);
        for (const auto& [a, b] : found) {
            if (s != no_term && a != s) continue;
            if (o != no_term && b != o) continue;
            if (sv != no_var && sv == ov && a != b) continue;
            if (sv != no_var) t.cells.push_back(a);
            if (ov != no_var && ov != sv) t.cells.push_back(b);
            ++t.count;
        }
        return t;
    }

    // ---- CONSTRUCT and DESCRIBE (section 16.2, 16.4) ---------------------

    std::vector<std::array<term_id, 3>> construct(const query_tree& q, const table& t) {
        std::set<std::array<term_id, 3>> seen;
        std::vector<std::array<term_id, 3>> out;
        std::uint64_t label = 0;
        for (std::size_t r = 0; r < t.rows(); ++r) {
            std::unordered_map<std::string, term_id> fresh; // the template's blank nodes, new for each solution
            const row_ref at{&t, r, nullptr};
            for (const triple_pattern& tp : q.construct_template) {
                std::array<term_id, 3> x{};
                bool ok = true;
                const pattern_term* parts[] = {&tp.s, &tp.p, &tp.o};
                for (int i = 0; i < 3 && ok; ++i) {
                    const pattern_term& p = *parts[i];
                    if (!p.is_variable) x[std::size_t(i)] = intern(p.constant);
                    else if (p.variable.rfind("_:", 0) == 0) {
                        auto it = fresh.find(p.variable);
                        if (it == fresh.end()) it = fresh.emplace(p.variable, fresh_blank(label)).first;
                        x[std::size_t(i)] = it->second;
                    } else {
                        x[std::size_t(i)] = lookup(at, p.variable);
                        ok = x[std::size_t(i)] != no_term;
                    }
                }
                if (!ok) continue;
                // 16.2.1: a triple with a literal subject or a non-IRI predicate is left out.
                if (decode(x[0]).kind == term_kind::literal || decode(x[1]).kind != term_kind::iri) continue;
                if (seen.insert(x).second) out.push_back(x);
            }
        }
        return out;
    }

    term_id fresh_blank(std::uint64_t& label) {
        while (true) {
            // Labels no N-Triples label of the data is likely to have; one
            // it has is skipped (the pool knows the ones made so far).
            const std::string k = "_:q.c" + std::to_string(label++);
            if (v_.dict.find(k) == no_term && !pool_.contains(k)) return pool_.intern(v_.dict, k);
        }
    }

    /// DESCRIBE: each resource's triples as subject, and those of the
    /// blank nodes they lead to (its concise bounded description).
    std::vector<std::array<term_id, 3>> describe(const query_tree& q, const table& t) {
        std::vector<term_id> resources;
        for (const pattern_term& p : q.describe) {
            if (!p.is_variable) resources.push_back(intern(p.constant));
            else
                for (std::size_t r = 0; r < t.rows(); ++r)
                    if (const term_id id = lookup(row_ref{&t, r, nullptr}, p.variable); id != no_term) resources.push_back(id);
        }
        std::set<std::array<term_id, 3>> seen;
        std::vector<std::array<term_id, 3>> out;
        std::unordered_set<term_id> done;
        while (!resources.empty()) {
            const term_id x = resources.back();
            resources.pop_back();
            if (!done.insert(x).second) continue;
            scan(x, no_term, no_term, [&](term_id s, term_id p, term_id o) {
                if (seen.insert({s, p, o}).second) out.push_back({s, p, o});
                if (decode(o).kind == term_kind::blank) resources.push_back(o);
            });
        }
        return out;
    }
};

} // namespace

result evaluate(const query_tree& q, const store_view& v, const evaluate_options& o) {
    refuse_dataset_clauses(q);
    result r;
    r.pool = term_pool(v.dict.size());
    evaluator e(v, o, r.pool, q.base);
    result out = e.run(q);
    out.pool = std::move(r.pool);
    return out;
}

} // namespace rdf::sparql
