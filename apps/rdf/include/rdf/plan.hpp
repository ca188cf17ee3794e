#pragma once
// From a parsed query to a plan: constants encoded to ids, then a join
// order chosen by dynamic programming over subsets of the triple patterns
// (left-deep, connected subsets first) with cardinalities from the indexes.
//
// A single pattern's cardinality is exact: its constants are a prefix of
// one of the four orders, so its matches are one index range. Joins are
// estimated the textbook way (|R join S| = |R| |S| / max(V(R,x), V(S,x))
// over the shared variables x), where V, the distinct values of a
// variable, comes exactly from the range for one-variable patterns and from
// the per-predicate statistics for (?s p ?o). That is what keeps the cyclic
// LUBM queries (Q2, Q9) from starting at the large class scans: the plan
// starts from the small end of the cycle and closes it with a lookup.
//
// Each step then gets an operator (execute.hpp): merge join when the rows
// so far are sorted on the one join variable and the pattern has an order
// that yields its matches sorted on it, a bind (index nested-loop) join
// when the rows are few against the pattern's matches, a hash join
// otherwise; the cheapest by the same estimates.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <boost/container/small_vector.hpp>

#include <taco/platform/host_memory.hpp>

#include <rdf/query.hpp>
#include <rdf/store.hpp>

namespace rdf {

using var_id = std::uint32_t;
inline constexpr var_id no_var = std::numeric_limits<var_id>::max();

/// A pattern position: a variable (index into encoded_query::variables) or a constant id.
struct slot {
    var_id var = no_var;
    term_id id = no_term;
    bool is_var() const noexcept { return var != no_var; }
};

struct encoded_pattern {
    std::array<slot, 3> at; ///< s, p, o
};

/// The budget for any one table a query's joins build (execute.hpp): the
/// rows, and the bytes of their ids. Joins multiply: a few patterns that
/// share no variable make a product of rows that no machine holds, and
/// without a bound the query ran until the kernel killed it. Past the
/// budget the query is refused with result_too_large instead.
struct query_limits {
    /// The default memory budget: an eighth of what the host can back
    /// (RAM and swap, or the address-space limit): a join holds its input
    /// and its output, whose vector may have twice its rows' room.
    static std::uint64_t default_bytes() noexcept {
        static const std::uint64_t bytes = taco::detail::host_memory_bytes() / 8; // once: a query may take microseconds
        return bytes;
    }
    std::uint64_t max_rows = std::numeric_limits<std::uint64_t>::max(); ///< --max-intermediate-rows
    std::uint64_t max_bytes = default_bytes();                          ///< --memory-limit

    /// The rows a table of `width` ids a row may have (at least 1).
    std::size_t rows_for_width(std::size_t width) const noexcept {
        const std::uint64_t by_bytes = max_bytes / (sizeof(term_id) * std::max<std::size_t>(1, width));
        return std::size_t(std::clamp<std::uint64_t>(std::min(max_rows, by_bytes), 1, std::numeric_limits<std::size_t>::max() / 2));
    }
    /// The budget for a message: which bound binds, and how it was set.
    std::string describe(std::size_t width) const {
        const std::uint64_t by_bytes = max_bytes / (sizeof(term_id) * std::max<std::size_t>(1, width));
        if (max_rows <= by_bytes) return std::to_string(max_rows) + " rows (--max-intermediate-rows " + std::to_string(max_rows) + ")";
        char size[32];
        if (max_bytes % (1 << 20) == 0 || max_bytes >= std::uint64_t(1) << 30)
            std::snprintf(size, sizeof size, "%.0fM", double(max_bytes) / double(1 << 20));
        else std::snprintf(size, sizeof size, "%llu", static_cast<unsigned long long>(max_bytes));
        return std::to_string(by_bytes) + " rows of " + std::to_string(width) + " ids (--memory-limit " + size +
               (max_bytes == default_bytes() ? ", by default an eighth of this machine's memory)" : ")");
    }
};

/// A query refused before it could exhaust memory (query_limits); what()
/// names the patterns that multiplied out and how to raise the budget.
struct result_too_large : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct encoded_query {
    std::vector<std::string> variables;
    std::vector<encoded_pattern> patterns;
    std::vector<var_id> projection; ///< no_var: projected but never bound (prints empty)
    std::vector<std::string> projection_names;
    bool distinct = false;
    std::optional<std::uint64_t> limit;
    query_limits limits;
    /// A constant is not in the dictionary: no pattern can match it.
    bool unsatisfiable = false;
};

/// The query's constants as ids: find(key) gives a key's id, or no_term
/// (a dictionary's find, or a sharded store's answers, sharded.hpp).
template <class Find>
    requires std::is_invocable_r_v<term_id, const Find&, std::string_view>
encoded_query encode(const query& q, const Find& find, const query_limits& limits = {}) {
    encoded_query e;
    e.limits = limits;
    auto var_of = [&](const std::string& name) {
        const auto it = std::find(e.variables.begin(), e.variables.end(), name);
        if (it != e.variables.end()) return var_id(it - e.variables.begin());
        e.variables.push_back(name);
        return var_id(e.variables.size() - 1);
    };
    for (const triple_pattern& t : q.patterns) {
        encoded_pattern p;
        const pattern_term* terms[] = {&t.s, &t.p, &t.o};
        for (int i = 0; i < 3; ++i) {
            if (terms[i]->is_variable) p.at[i].var = var_of(terms[i]->variable);
            else if ((p.at[i].id = find(key(terms[i]->constant))) == no_term) e.unsatisfiable = true;
        }
        e.patterns.push_back(p);
    }
    for (const std::string& v : q.projection) {
        const auto it = std::find(e.variables.begin(), e.variables.end(), v);
        e.projection.push_back(it == e.variables.end() ? no_var : var_id(it - e.variables.begin()));
        e.projection_names.push_back(v);
    }
    e.distinct = q.distinct;
    e.limit = q.limit;
    return e;
}

inline encoded_query encode(const query& q, const dictionary_view& dict, const query_limits& limits = {}) {
    return encode(q, [&dict](std::string_view k) { return dict.find(k); }, limits);
}

enum class join_kind : std::uint8_t { scan, merge, bind, hash };
inline const char* name(join_kind k) {
    constexpr const char* names[] = {"scan", "merge", "bind", "hash"};
    return names[std::size_t(k)];
}

struct plan_step {
    std::uint32_t pattern = 0;
    join_kind kind = join_kind::scan;
    order index = order::spo; ///< scan / merge: the order read; bind: the order looked up
    var_id merge_var = no_var;
    double estimate = 0; ///< rows after this step
};

struct plan {
    std::vector<plan_step> steps;
    double estimated_rows = 0;
};

namespace detail {

/// Which order reads a pattern with constants at `bound` (bit i: position
/// i), its matches sorted on position `then` next (-1: any).
inline std::optional<order> order_for(unsigned bound, int then) {
    for (std::size_t o = 0; o < order_count; ++o) {
        const auto& pos = order_positions[o];
        const unsigned k = unsigned(std::popcount(bound));
        bool prefix = true;
        for (unsigned i = 0; i < k; ++i) prefix = prefix && (bound >> pos[i] & 1);
        if (!prefix) continue;
        if (then < 0 || k == 3 || pos[k] == then) return order(o);
    }
    return std::nullopt;
}

/// The positions in order o's columns of the triples whose first k
/// components (in o's order) are c's values at those positions.
inline index_range prefix_range(const store_view& v, order o, const std::array<term_id, 3>& c, unsigned k) {
    const auto& pos = order_positions[std::size_t(o)];
    const permutation_view& perm = v[o];
    if (k == 0) return {0, std::uint32_t(perm.second.size())};
    index_range r = perm.of(c[pos[0]]);
    if (k >= 2) r = perm.of(r, c[pos[1]]);
    if (k == 3) r = perm.third_of(r, c[pos[2]]);
    return r;
}

struct pattern_estimate {
    double rows = 0;
    std::array<double, 3> distinct{}; ///< per position, for variables
    /// A pattern with two constants: its one variable's values, sorted (the
    /// last column of its range), for single_variable_join.
    std::optional<std::span<const term_id>> values;
};

/// The distinct values per position, from e.rows and the per-predicate statistics.
inline void estimate_distinct(const store_view& v, const encoded_pattern& p, pattern_estimate& e) {
    const unsigned vars = unsigned(p.at[0].is_var()) + p.at[1].is_var() + p.at[2].is_var();
    for (int i = 0; i < 3; ++i) e.distinct[i] = e.rows;
    if (vars >= 2 && !p.at[1].is_var()) {
        if (const predicate_stat* s = v.stat(p.at[1].id)) {
            e.distinct[0] = s->subjects;
            e.distinct[2] = s->objects;
        }
    } else if (vars >= 2) {
        e.distinct[1] = std::min<double>(e.rows, double(v.predicates.size()));
    }
    for (double& d : e.distinct) d = std::max(1.0, d);
}

inline pattern_estimate estimate(const store_view& v, const encoded_pattern& p) {
    std::array<term_id, 3> c;
    for (int i = 0; i < 3; ++i) c[i] = p.at[i].is_var() ? no_term : p.at[i].id;
    pattern_estimate e;
    unsigned bound = 0;
    for (int i = 0; i < 3; ++i) bound |= unsigned(c[i] != no_term) << i;
    const order o = *order_for(bound, -1);
    const index_range r = prefix_range(v, o, c, unsigned(std::popcount(bound)));
    e.rows = r.size();
    if (std::popcount(bound) == 2) e.values = v[o].third.subspan(r.begin, r.size());
    estimate_distinct(v, p, e);
    return e;
}

/// A bind join's index lookup per row, in the units the model counts a
/// hash table's probe (1) and insert (2) in. Lookups land anywhere in the
/// index, where a hash join reads a range in order: timed, LUBM Q8's split
/// ran 8% faster with hash joins than with the lookups a cost of 4 chose,
/// one-core plans on LUBM(1) stayed as they were, and on LUBM(5) the two
/// that changed (Q8, Q11: a merge for a lookup) ran as fast.
inline constexpr double lookup_cost = 6;

/// |a join b| for two patterns whose one variable is the same: the smaller
/// one's values looked up in the larger, all of them up to 64, else 64
/// evenly spaced (a systematic sample: at most 64 binary searches, a few
/// microseconds at most, even against a class of 50,000). The textbook
/// estimate takes the smaller's values to be among the larger's, which LUBM
/// breaks: on LUBM(5), of the 75 departments only University0's 15 are among
/// its sub-organisations, and Q8, estimated at 75 there, got hash joins over
/// every student of the five universities.
inline std::optional<double> single_variable_join(const pattern_estimate& a, const pattern_estimate& b) {
    constexpr std::size_t samples = 64;
    auto x = a.values, y = b.values;
    if (!x || !y) return std::nullopt;
    if (x->size() > y->size()) std::swap(x, y);
    if (x->empty()) return 0.0;
    const std::size_t looked = std::min(samples, x->size());
    std::size_t found = 0;
    for (std::size_t k = 0; k < looked; ++k)
        found += std::binary_search(y->begin(), y->end(), (*x)[k * x->size() / looked]);
    return double(found) * double(x->size()) / double(looked);
}

inline bool uses(const encoded_pattern& p, var_id x) {
    return p.at[0].var == x || p.at[1].var == x || p.at[2].var == x;
}

} // namespace detail

/// Choose the join order and operators for `q` over `v`. `force` makes
/// every join that operator where it applies (the tests check each
/// operator against the others this way). `ways`: the plan runs split over
/// that many cores by its first step's rows (data-parallel), so work driven
/// by the rows is shared while a pass over a pattern's matches (a hash
/// table's build, a merge's other side, the first scan itself) is made by
/// every core in full: past one way, lookups win over builds sooner.
///
/// `counted`: each pattern's matches, counted elsewhere (a sharded store,
/// sharded.hpp: `v` then holds one core's part, whose ranges are not the
/// whole's); the matched values that single_variable_join samples are not
/// known then, and the textbook estimate stands.
inline plan make_plan(const encoded_query& q, const store_view& v, std::optional<join_kind> force = std::nullopt,
                      unsigned ways = 1, std::span<const std::uint64_t> counted = {}) {
    const double share = 1.0 / std::max(1u, ways);
    const std::size_t n = q.patterns.size();
    plan out;
    if (n == 0) return out;
    std::vector<detail::pattern_estimate> est;
    for (const auto& p : q.patterns) est.push_back(detail::estimate(v, p));
    if (!counted.empty()) {
        if (counted.size() != n) throw std::logic_error("rdf: make_plan: a count for every pattern, or none");
        for (std::size_t i = 0; i < n; ++i) {
            est[i].rows = double(counted[i]);
            est[i].values.reset();
            detail::estimate_distinct(v, q.patterns[i], est[i]);
        }
    }
    const std::size_t nv = q.variables.size();

    // Distinct values of each variable in a pattern (min over its positions).
    auto distinct_in = [&](std::size_t i, var_id x) {
        double d = std::numeric_limits<double>::infinity();
        for (int k = 0; k < 3; ++k)
            if (q.patterns[i].at[k].var == x) d = std::min(d, est[i].distinct[k]);
        return d;
    };

    // Left-deep DP over subsets (exact below 14 patterns, greedy above).
    // A state's vectors hold a query's variables and patterns inline: the
    // DP makes a state per extension (390 for LUBM Q2's six patterns), and
    // with heap vectors their allocations were half of its planning.
    struct state {
        double rows = 0, cost = std::numeric_limits<double>::infinity();
        boost::container::small_vector<double, 16> distinct;
        boost::container::small_vector<std::uint32_t, 14> order;
    };
    // Two one-variable patterns joined, counted once per pair (the DP and
    // the operator choice ask again); -1: not such a pair.
    std::vector<double> pair_counts(n * n, -2);
    auto pair_rows = [&](std::size_t a, std::size_t b) {
        double& c = pair_counts[std::min(a, b) * n + std::max(a, b)];
        if (c == -2) c = detail::single_variable_join(est[a], est[b]).value_or(-1);
        return c;
    };
    auto extend = [&](const state& s, std::size_t i) {
        state t;
        double rows = s.rows * est[i].rows;
        t.distinct = s.distinct;
        bool connected = false;
        for (var_id x = 0; x < nv; ++x) {
            if (!detail::uses(q.patterns[i], x)) continue;
            const double dp = distinct_in(i, x);
            if (s.distinct[x] > 0) {
                connected = true;
                rows /= std::max(s.distinct[x], dp);
                t.distinct[x] = std::min(s.distinct[x], dp);
            } else {
                t.distinct[x] = dp;
            }
        }
        t.rows = std::max(rows, est[i].rows == 0 || s.rows == 0 ? 0.0 : 1e-3);
        if (s.order.size() == 1 && connected)
            if (const double counted = pair_rows(s.order[0], i); counted >= 0) {
                t.rows = counted;
                for (var_id x = 0; x < nv; ++x)
                    if (detail::uses(q.patterns[i], x)) t.distinct[x] = counted;
            }
        for (double& d : t.distinct)
            if (d > 0) d = std::min(d, std::max(1.0, t.rows));
        // Reading cost: the cheaper of a lookup per row and a pass over the
        // pattern's matches; a cross product pays the product.
        const double read = connected ? std::min(s.rows * detail::lookup_cost * share, est[i].rows + s.rows * share) : s.rows * est[i].rows * share;
        t.cost = s.cost + read + t.rows * share;
        t.order = s.order;
        t.order.push_back(std::uint32_t(i));
        return t;
    };
    auto start = [&](std::size_t i) {
        state s;
        s.rows = 0;
        s.cost = 0;
        s.distinct.assign(nv, 0);
        state t = extend(s, i);
        t.rows = est[i].rows;
        t.cost = est[i].rows;
        for (var_id x = 0; x < nv; ++x)
            if (detail::uses(q.patterns[i], x)) t.distinct[x] = distinct_in(i, x);
        return t;
    };
    auto connects = [&](const state& s, std::size_t i) {
        for (var_id x = 0; x < nv; ++x)
            if (detail::uses(q.patterns[i], x) && s.distinct[x] > 0) return true;
        return false;
    };

    state best;
    if (n < 14) {
        std::vector<state> dp(std::size_t(1) << n);
        for (std::size_t i = 0; i < n; ++i) dp[std::size_t(1) << i] = start(i);
        for (std::size_t set = 1; set < dp.size(); ++set) {
            if (!std::isfinite(dp[set].cost)) continue;
            bool any_connected = false;
            for (std::size_t i = 0; i < n; ++i)
                if (!(set >> i & 1) && connects(dp[set], i)) any_connected = true;
            for (std::size_t i = 0; i < n; ++i) {
                if (set >> i & 1) continue;
                if (any_connected && !connects(dp[set], i)) continue; // cross products last
                state t = extend(dp[set], i);
                auto& slot = dp[set | std::size_t(1) << i];
                if (t.cost < slot.cost) slot = std::move(t);
            }
        }
        best = std::move(dp.back());
    } else {
        std::size_t first = 0;
        for (std::size_t i = 1; i < n; ++i)
            if (est[i].rows < est[first].rows) first = i;
        best = start(first);
        std::vector<bool> used(n);
        used[first] = true;
        for (std::size_t k = 1; k < n; ++k) {
            std::size_t pi = n;
            double pick_cost = 0;
            bool pick_connected = false;
            for (std::size_t i = 0; i < n; ++i) {
                if (used[i]) continue;
                const bool c = connects(best, i);
                const double cost = extend(best, i).cost;
                if (pi == n || (c && !pick_connected) || (c == pick_connected && cost < pick_cost)) {
                    pi = i;
                    pick_cost = cost;
                    pick_connected = c;
                }
            }
            used[pi] = true;
            best = extend(best, pi);
        }
    }

    // Operators, in order, with the sortedness the rows will really have.
    std::vector<bool> bound(nv, false);
    var_id sorted_on = no_var;
    state cur;
    for (std::size_t k = 0; k < n; ++k) {
        const std::uint32_t i = best.order[k];
        const double r_in = cur.rows;
        cur = k == 0 ? start(i) : extend(cur, i);
        const encoded_pattern& p = q.patterns[i];
        plan_step st;
        st.pattern = i;
        unsigned consts = 0, joined = 0;
        std::vector<var_id> shared;
        for (int pos = 0; pos < 3; ++pos) {
            if (!p.at[pos].is_var()) consts |= 1u << pos;
            else if (bound[p.at[pos].var]) {
                joined |= 1u << pos;
                if (std::find(shared.begin(), shared.end(), p.at[pos].var) == shared.end()) shared.push_back(p.at[pos].var);
            }
        }
        // Output sort: the next variable of the order read (scan), kept otherwise.
        auto first_var_of = [&](order o) {
            for (int pos : order_positions[std::size_t(o)])
                if (p.at[pos].is_var()) return p.at[pos].var;
            return no_var;
        };
        if (k == 0) {
            st.kind = join_kind::scan;
            // Read sorted on the variable the next step joins on, if it can.
            int then = -1;
            if (n > 1) {
                const encoded_pattern& next = q.patterns[best.order[1]];
                for (int pos = 0; pos < 3 && then < 0; ++pos)
                    if (p.at[pos].is_var() && detail::uses(next, p.at[pos].var)) then = pos;
            }
            st.index = *detail::order_for(consts, detail::order_for(consts, then) ? then : -1);
            sorted_on = first_var_of(st.index);
        } else {
            const double matches = est[i].rows;
            double bind_cost = r_in * detail::lookup_cost * share, hash_cost = shared.empty() ? r_in * matches * share : 2 * matches + r_in * share;
            double merge_cost = std::numeric_limits<double>::infinity();
            std::optional<order> merge_order;
            if (sorted_on != no_var && std::find(shared.begin(), shared.end(), sorted_on) != shared.end()) {
                int then = -1;
                for (int pos = 0; pos < 3; ++pos)
                    if (p.at[pos].var == sorted_on) then = pos;
                merge_order = detail::order_for(consts, then);
                if (merge_order) merge_cost = matches + r_in * share;
            }
            if (force == join_kind::merge && merge_order) merge_cost = 0, bind_cost = hash_cost = 1;
            if (force == join_kind::bind) bind_cost = 0, merge_cost = hash_cost = 1;
            if (force == join_kind::hash) hash_cost = 0, merge_cost = bind_cost = 1;
            if (merge_cost <= bind_cost && merge_cost <= hash_cost) {
                st.kind = join_kind::merge;
                st.index = *merge_order;
                st.merge_var = sorted_on;
            } else if (bind_cost <= hash_cost) {
                st.kind = join_kind::bind;
                st.index = *detail::order_for(consts | joined, -1);
            } else {
                st.kind = join_kind::hash;
                st.index = *detail::order_for(consts, -1);
            }
        }
        st.estimate = cur.rows;
        for (int pos = 0; pos < 3; ++pos)
            if (p.at[pos].is_var()) bound[p.at[pos].var] = true;
        out.steps.push_back(st);
    }
    out.estimated_rows = best.rows;
    return out;
}

} // namespace rdf
