#pragma once
// Running a plan (plan.hpp) over a store_view. Intermediate results are
// row-major tables of ids (one column per bound variable); ids are decoded
// to strings only for output (results.hpp).
//
// Operators, each appending one pattern:
//   scan   the pattern's index range, rows sorted on its first variable;
//   merge  rows sorted on x against the pattern's range read in an order
//          sorted on x: one pass over both, the output still sorted on x;
//   bind   a lookup per row with the row's values as constants (an index
//          nested-loop join), the output in the rows' order;
//   hash   a table of the pattern's matches keyed on the shared variables,
//          probed by each row, the output in the rows' order.
// Variables a pattern shares with the rows beyond the join key, and a
// variable repeated inside one pattern, are checked per candidate.
//
// The data-parallel model (parallel.hpp) keeps only its bucket of the
// first step's rows (execute()'s `keep`); the rest is the same code.
#include <algorithm>
#include <array>
#include <concepts>
#include <cstdint>
#include <numeric>
#include <cstdio>
#include <functional>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <rdf/plan.hpp>
#include <rdf/store.hpp>

namespace rdf {

/// Rows of ids; column c holds variable vars[c].
struct table {
    std::vector<var_id> vars;
    std::vector<term_id> cells;
    std::size_t count = 0; ///< rows (kept apart from cells: a table without variables has rows too)
    std::size_t width() const noexcept { return vars.size(); }
    std::size_t rows() const noexcept { return count; }
    int column_of(var_id v) const noexcept {
        const auto it = std::find(vars.begin(), vars.end(), v);
        return it == vars.end() ? -1 : int(it - vars.begin());
    }
    std::span<const term_id> row(std::size_t r) const noexcept { return {cells.data() + r * width(), width()}; }
};

namespace detail {

/// How a pattern's positions relate to the rows: constant, a column of the
/// rows (join), or a new column (the first position of a new variable),
/// or a repeat of a new variable inside the pattern.
struct position_role {
    enum kind : std::uint8_t { constant, joined, fresh, repeat } what = constant;
    term_id id = no_term; ///< constant
    int column = -1;      ///< joined: the rows' column; fresh / repeat: the output column
};

struct pattern_roles {
    std::array<position_role, 3> at;
    std::vector<var_id> fresh_vars;
};

inline pattern_roles roles(const encoded_pattern& p, const table& t) {
    pattern_roles r;
    for (int i = 0; i < 3; ++i) {
        const slot& s = p.at[i];
        position_role& role = r.at[i];
        if (!s.is_var()) {
            role = {position_role::constant, s.id, -1};
        } else if (const int c = t.column_of(s.var); c >= 0) {
            role = {position_role::joined, no_term, c};
        } else {
            const auto it = std::find(r.fresh_vars.begin(), r.fresh_vars.end(), s.var);
            if (it != r.fresh_vars.end()) {
                role = {position_role::repeat, no_term, int(t.width() + std::size_t(it - r.fresh_vars.begin()))};
            } else {
                role = {position_role::fresh, no_term, int(t.width() + r.fresh_vars.size())};
                r.fresh_vars.push_back(s.var);
            }
        }
    }
    return r;
}

/// The positions set in `fixed`, three bits added by hand: without
/// -mpopcnt, std::popcount is a library call, and a bind join asks once per row.
constexpr unsigned bound_count(unsigned fixed) noexcept { return (fixed & 1u) + (fixed >> 1 & 1u) + (fixed >> 2 & 1u); }

/// Visit the matches of a pattern whose positions `fixed` (bits) have the
/// values c, read in order o: visit(full triple as s, p, o).
template <class Visit>
void for_each_match(const store_view& v, order o, const std::array<term_id, 3>& c, unsigned fixed, Visit&& visit) {
    const auto& pos = order_positions[std::size_t(o)];
    const permutation_view& perm = v[o];
    const unsigned k = bound_count(fixed);
    std::array<term_id, 3> t = c;
    if (k == 0) {
        for (std::size_t a = 0; a + 1 < perm.offsets.size(); ++a)
            for (std::uint32_t i = perm.offsets[a]; i < perm.offsets[a + 1]; ++i) {
                t[pos[0]] = term_id(a);
                t[pos[1]] = perm.second[i];
                t[pos[2]] = perm.third[i];
                visit(t);
            }
        return;
    }
    const index_range r = prefix_range(v, o, c, k);
    if (k == 3) {
        if (!r.empty()) visit(t);
        return;
    }
    for (std::uint32_t i = r.begin; i < r.end; ++i) {
        if (k == 1) t[pos[1]] = perm.second[i];
        t[pos[2]] = perm.third[i];
        visit(t);
    }
}

/// A data-parallel share that knows its regions as runs of ids
/// (parallel.hpp's region_filter): keep(t), and runs(), the sorted ids at
/// which the answer of keep may change.
template <class K>
concept run_filter = requires(const K& k, term_id t) {
    { k(t) } -> std::convertible_to<bool>;
    { k.runs() } -> std::convertible_to<std::span<const term_id>>;
};

/// The first position in [at, end) of sorted `col` whose value is not below
/// `x`: galloping from `at`, since the next run is usually close.
inline std::uint32_t gallop(std::span<const term_id> col, std::uint32_t at, std::uint32_t end, term_id x) {
    std::uint32_t step = 1, lo = at;
    while (at < end && col[at] < x) {
        lo = at + 1;
        at = std::min<std::uint32_t>(end, at + step);
        step *= 2;
    }
    return std::uint32_t(std::lower_bound(col.begin() + lo, col.begin() + at, x) - col.begin());
}

/// for_each_match on the matches whose value at position `key` `keep`
/// keeps. Where the range is sorted on `key` (the first position o reads
/// after the constants) and keep knows its runs, the other shares' runs are
/// stepped over by galloping instead of read, one by one: a core reads its
/// share of a class's members, not all of them.
template <class Keep, class Visit>
void for_each_kept_match(const store_view& v, order o, const std::array<term_id, 3>& c, unsigned fixed, int key,
                         const Keep& keep, Visit&& visit) {
    const auto& pos = order_positions[std::size_t(o)];
    const unsigned k = bound_count(fixed);
    if constexpr (run_filter<Keep>) {
        if ((k == 1 || k == 2) && pos[k] == key) {
            const permutation_view& perm = v[o];
            const index_range r = prefix_range(v, o, c, k);
            const std::span<const term_id> col = k == 1 ? perm.second : perm.third;
            const std::span<const term_id> runs = keep.runs();
            std::array<term_id, 3> t = c;
            std::uint32_t next = 0; // runs[next]: the first run start past col[i]
            for (std::uint32_t i = r.begin; i < r.end;) {
                next = gallop(runs, next, std::uint32_t(runs.size()), col[i] + 1);
                const term_id end = next < runs.size() ? runs[next] : no_term;
                if (!keep(col[i])) {
                    i = gallop(col, i, r.end, end);
                    continue;
                }
                for (; i < r.end && col[i] < end; ++i) {
                    if (k == 1) t[pos[1]] = perm.second[i];
                    t[pos[2]] = perm.third[i];
                    visit(t);
                }
            }
            return;
        }
    }
    for_each_match(v, o, c, fixed, [&](const std::array<term_id, 3>& t) {
        if (keep(t[key])) visit(t);
    });
}

/// Append a row: `base` (the rows' row, may be empty) and the fresh values
/// of triple t, if t agrees with the repeats and the joined columns.
/// Inlined into each join's loop (once per candidate; as a call, LUBM
/// Q8's bind joins spent a fifth of their instructions entering it).
[[gnu::always_inline]] inline bool extend_row(table& out, std::span<const term_id> base, const pattern_roles& r,
                       const std::array<term_id, 3>& t, std::size_t width) {
    std::array<term_id, 3> fresh{};
    for (int i = 0; i < 3; ++i) {
        const position_role& role = r.at[i];
        if (role.what == position_role::fresh) fresh[std::size_t(role.column) - width] = t[i];
    }
    for (int i = 0; i < 3; ++i) {
        const position_role& role = r.at[i];
        if (role.what == position_role::repeat && fresh[std::size_t(role.column) - width] != t[i]) return false;
        if (role.what == position_role::joined && base[std::size_t(role.column)] != t[i]) return false;
    }
    // push_back per cell: its fast path is inline, where vector::insert of
    // a range and resize are out-of-line calls, per row (a third of a
    // join's time).
    for (const term_id x : base) out.cells.push_back(x);
    for (std::size_t i = 0; i < r.fresh_vars.size(); ++i) out.cells.push_back(fresh[i]);
    ++out.count;
    return true;
}

inline table next_table(const table& in, const pattern_roles& r) {
    table out;
    out.vars = in.vars;
    out.vars.insert(out.vars.end(), r.fresh_vars.begin(), r.fresh_vars.end());
    return out;
}

inline unsigned constant_bits(const pattern_roles& r, std::array<term_id, 3>& c) {
    unsigned bits = 0;
    for (int i = 0; i < 3; ++i) {
        c[i] = r.at[i].what == position_role::constant ? r.at[i].id : no_term;
        bits |= unsigned(r.at[i].what == position_role::constant) << i;
    }
    return bits;
}

/// Which position of a scanned pattern splits it: its first variable (the
/// table's column 0), or the subject of a pattern without variables, so
/// that even a ground pattern's one row goes to exactly one share.
inline int split_position(const encoded_pattern& p) {
    for (int i = 0; i < 3; ++i)
        if (p.at[i].is_var()) return i;
    return 0;
}

/// The pattern's matches; with `keep`, only those whose split_position
/// value it keeps: a data-parallel worker's share, taken before any row is
/// copied.
template <class Keep = std::nullptr_t>
table scan(const store_view& v, const encoded_pattern& p, order o, const Keep& keep = nullptr) {
    const table none;
    const pattern_roles r = roles(p, none);
    table out = next_table(none, r);
    std::array<term_id, 3> c;
    const unsigned bits = constant_bits(r, c);
    const auto add = [&](const std::array<term_id, 3>& t) { extend_row(out, {}, r, t, 0); };
    if constexpr (std::is_same_v<Keep, std::nullptr_t>) for_each_match(v, o, c, bits, add);
    else for_each_kept_match(v, o, c, bits, split_position(p), keep, add);
    return out;
}

/// A bind join's lookup: the positions it fixes (constants and joined
/// columns; `base` gets the constants) ...
inline unsigned lookup_bits(const pattern_roles& r, std::array<term_id, 3>& base) {
    unsigned bits = constant_bits(r, base);
    for (int i = 0; i < 3; ++i) bits |= unsigned(r.at[i].what == position_role::joined) << i;
    return bits;
}
/// ... and their values for one row.
inline std::array<term_id, 3> lookup_key(const pattern_roles& r, std::array<term_id, 3> base, std::span<const term_id> row) {
    for (int i = 0; i < 3; ++i)
        if (r.at[i].what == position_role::joined) base[i] = row[std::size_t(r.at[i].column)];
    return base;
}

/// The joins, made once per step and then run over its input rows from
/// `from`, appending to `out`, until the rows run out or `out` has
/// `stop_at` rows (at a row's end: a row's matches are never split); they
/// return the next row to run. Their output keeps the input rows' order,
/// so running a step over its input in pieces, in order, gives the rows
/// of one run over all of it, in the same order (execute_limited).
struct bind_op {
    pattern_roles r;
    order o;
    std::array<term_id, 3> base;
    unsigned bits;

    bind_op(const table& in, const encoded_pattern& p, order o) : r(roles(p, in)), o(o) { bits = lookup_bits(r, base); }
    std::size_t run(const store_view& v, const table& in, std::size_t from, table& out, std::size_t stop_at) const {
        std::size_t row = from;
        while (row < in.rows()) {
            const auto values = in.row(row++);
            for_each_match(v, o, lookup_key(r, base, values), bits,
                           [&](const std::array<term_id, 3>& t) { extend_row(out, values, r, t, in.width()); });
            if (out.count >= stop_at) break;
        }
        return row;
    }
};

/// Rows sorted on x, the pattern read in order o sorted on x after its
/// constants: its matches collected once, then walked beside the rows
/// (their range for the current key kept from one piece of rows to the next).
struct merge_op {
    pattern_roles r;
    std::vector<std::array<term_id, 3>> matches;
    int xc = -1, xpos = -1;
    std::size_t m = 0, m_end = 0; ///< matches[m, m_end): those of `key`
    term_id key = no_term;
    bool started = false;

    merge_op(const store_view& v, const table& in, const encoded_pattern& p, order o, var_id x) : r(roles(p, in)) {
        std::array<term_id, 3> c;
        const unsigned bits = constant_bits(r, c);
        xc = in.column_of(x);
        for (int i = 0; i < 3; ++i)
            if (p.at[i].var == x) xpos = i;
        for_each_match(v, o, c, bits, [&](const std::array<term_id, 3>& t) { matches.push_back(t); });
    }
    std::size_t run(const store_view&, const table& in, std::size_t from, table& out, std::size_t stop_at) {
        const std::size_t rows = in.rows(), w = in.width();
        for (std::size_t row = from; row < rows;) {
            const term_id k = in.cells[row * w + std::size_t(xc)];
            if (!started || k != key) {
                started = true;
                key = k;
                m = m_end;
                while (m < matches.size() && matches[m][std::size_t(xpos)] < key) ++m;
                if (m == matches.size()) return rows; // the rows' keys only grow: none of the rest can match
                m_end = m;
                while (m_end < matches.size() && matches[m_end][std::size_t(xpos)] == key) ++m_end;
            }
            for (std::size_t b = m; b < m_end; ++b) extend_row(out, in.row(row), r, matches[b], w);
            ++row;
            if (out.count >= stop_at) return row;
        }
        return rows;
    }
};

/// A table of the pattern's matches keyed on the shared variables, built
/// once, probed by each row.
struct hash_op {
    pattern_roles r;
    std::vector<int> key_pos; ///< pattern positions holding joined variables
    std::vector<std::array<term_id, 3>> matches;
    std::size_t buckets = 16;
    std::vector<std::uint32_t> head, next;

    static std::uint64_t hash(std::uint64_t h) noexcept { return (h * 0x9e3779b97f4a7c15ull) >> 20; }

    hash_op(const store_view& v, const table& in, const encoded_pattern& p, order o) : r(roles(p, in)) {
        std::array<term_id, 3> c;
        const unsigned bits = constant_bits(r, c);
        for (int i = 0; i < 3; ++i)
            if (r.at[i].what == position_role::joined) key_pos.push_back(i);
        for_each_match(v, o, c, bits, [&](const std::array<term_id, 3>& t) { matches.push_back(t); });
        buckets = std::bit_ceil(std::max<std::size_t>(16, matches.size() * 2));
        head.assign(buckets, ~0u);
        next.resize(matches.size());
        for (std::uint32_t i = 0; i < matches.size(); ++i) {
            std::uint64_t h = 0;
            for (int pos : key_pos) h = h * 0x100000001b3ull + matches[i][std::size_t(pos)];
            const std::size_t b = hash(h) & (buckets - 1);
            next[i] = head[b];
            head[b] = i;
        }
    }
    std::size_t run(const store_view&, const table& in, std::size_t from, table& out, std::size_t stop_at) const {
        std::size_t row = from;
        while (row < in.rows()) {
            const auto values = in.row(row++);
            std::uint64_t h = 0;
            for (int pos : key_pos) h = h * 0x100000001b3ull + values[std::size_t(r.at[pos].column)];
            for (std::uint32_t i = head[hash(h) & (buckets - 1)]; i != ~0u; i = next[i])
                extend_row(out, values, r, matches[i], in.width()); // checks every joined column
            if (out.count >= stop_at) break;
        }
        return row;
    }
};

/// A plan step's join, made for rows with the variables of `in`.
class join_op {
public:
    join_op(const store_view& v, const table& in, const encoded_pattern& p, const plan_step& st)
        : op_(make(v, in, p, st)) {}
    std::size_t run(const store_view& v, const table& in, std::size_t from, table& out, std::size_t stop_at) {
        return std::visit([&](auto& op) { return op.run(v, in, from, out, stop_at); }, op_);
    }
    const pattern_roles& roles() const {
        return std::visit([](const auto& op) -> const pattern_roles& { return op.r; }, op_);
    }

private:
    using any_op = std::variant<bind_op, merge_op, hash_op>;
    static any_op make(const store_view& v, const table& in, const encoded_pattern& p, const plan_step& st) {
        switch (st.kind) {
        case join_kind::merge: return merge_op(v, in, p, st.index, st.merge_var);
        case join_kind::hash: return hash_op(v, in, p, st.index);
        default: return bind_op(in, p, st.index);
        }
    }
    any_op op_;
};

/// The matches of a pattern alone (a variable repeated in it must repeat
/// its value): a cross product's other factor.
inline std::uint64_t count_matches(const store_view& v, const encoded_pattern& p, order o) {
    const pattern_roles r = roles(p, table{});
    std::array<term_id, 3> c;
    const unsigned bits = constant_bits(r, c);
    table none;
    std::uint64_t n = 0;
    for_each_match(v, o, c, bits, [&](const std::array<term_id, 3>& t) {
        for (int i = 0; i < 3; ++i)
            if (r.at[i].what == position_role::repeat && t[std::size_t(r.at[i].column)] != t[i]) return;
        ++n;
    });
    return n;
}

inline bool shares_a_variable(const pattern_roles& r) {
    return std::any_of(r.at.begin(), r.at.end(), [](const position_role& x) { return x.what == position_role::joined; });
}

/// "1", "1 and 3", "1-11", "1, 3 and 5-7": query pattern numbers (0-based in, 1-based out).
inline std::string pattern_numbers(std::vector<std::uint32_t> ps) {
    std::sort(ps.begin(), ps.end());
    std::vector<std::string> parts;
    for (std::size_t i = 0; i < ps.size();) {
        std::size_t j = i;
        while (j + 1 < ps.size() && ps[j + 1] == ps[j] + 1) ++j;
        parts.push_back(std::to_string(ps[i] + 1) + (j > i ? "-" + std::to_string(ps[j] + 1) : ""));
        i = j + 1;
    }
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i) out += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
    return out;
}

/// A pattern as the query wrote it, near enough: its variables by name and
/// its constants as N-Triples keys.
inline std::string pattern_text(const encoded_query& q, std::uint32_t i, const dictionary_view& dict) {
    std::string out = "{";
    for (const slot& s : q.patterns[i].at) {
        out += ' ';
        if (!s.is_var()) {
            const std::string_view k = s.id < dict.size() ? dict.key(s.id) : std::string_view("?");
            out += k.size() > 40 ? std::string(k.substr(0, 37)) + "..." : std::string(k);
        } else if (s.var < q.variables.size()) {
            out += q.variables[s.var].starts_with("_:") ? q.variables[s.var] : "?" + q.variables[s.var];
        } else {
            out += "?v" + std::to_string(s.var);
        }
    }
    return out + " }";
}

/// The query refused: step k's table would pass the budget. `product`:
/// the step shares no variable with the rows, whose count times the
/// pattern's matches is that product.
[[noreturn]] inline void refuse(const store_view& v, const encoded_query& q, const plan& pl, std::size_t k,
                                std::size_t width, std::optional<std::pair<std::uint64_t, std::uint64_t>> product) {
    std::vector<std::uint32_t> before;
    for (std::size_t j = 0; j < k; ++j) before.push_back(pl.steps[j].pattern);
    const std::uint32_t pi = pl.steps[k].pattern;
    const std::string pattern = "pattern " + std::to_string(pi + 1) + " " + pattern_text(q, pi, v.dict);
    const std::string earlier = (before.size() == 1 ? "pattern " : "patterns ") + pattern_numbers(before);
    std::string what;
    if (product) {
        const auto [rows, matches] = *product;
        const long double all = static_cast<long double>(rows) * static_cast<long double>(matches);
        char n[32];
        std::snprintf(n, sizeof n, "%.0Lf", all);
        what = pattern + " shares no variable with " + earlier + " before it: their product has " + std::to_string(rows) +
               " x " + std::to_string(matches) + " = " + n + " rows";
    } else {
        what = "joining " + pattern + " to the rows of " + earlier + " gives more than " +
               std::to_string(q.limits.rows_for_width(width)) + " rows";
    }
    throw result_too_large("query refused: " + what + ", past the budget for one table of " + q.limits.describe(width) +
                           ". Join the patterns through a shared variable, add LIMIT, or raise the budget with "
                           "--memory-limit or --max-intermediate-rows");
}

/// LIMIT n: the steps after the first run over their input a piece at a
/// time, depth first, so that the rows come out in the order one run over
/// all of them gives, and stop once n rows are found (with DISTINCT: n
/// different projected rows). No table then holds more than a piece's
/// rows and one row's matches: a cross product with LIMIT 2 builds a few
/// thousand rows, not the product.
/// (`piece`: the rows a step makes before the next step takes them; the
/// tests make it small, to run every join in many pieces.)
template <class Keep>
table execute_limited(const store_view& v, const encoded_query& q, const plan& pl, const Keep& keep,
                      std::size_t piece = 1024) {
    const std::uint64_t limit = *q.limit;
    const encoded_pattern& first = q.patterns[pl.steps[0].pattern];
    table t = scan(v, first, pl.steps[0].index, keep);
    std::vector<join_op> ops;
    std::vector<table> empty{t}; // the variables of each step's output
    empty[0].cells.clear();
    empty[0].count = 0;
    for (std::size_t k = 1; k < pl.steps.size(); ++k) {
        ops.emplace_back(v, empty.back(), q.patterns[pl.steps[k].pattern], pl.steps[k]);
        empty.push_back(next_table(empty.back(), ops.back().roles()));
    }
    table result = empty.back();
    if (limit == 0) return result;
    // DISTINCT: the projected rows seen, so that n different ones stop it.
    std::vector<int> cols;
    for (var_id x : q.projection) cols.push_back(x == no_var ? -1 : result.column_of(x));
    std::set<std::vector<term_id>> seen;
    bool done = false;
    // The pieces stay small by themselves (a piece, and one row's matches:
    // no more than the store holds); the rows kept must fit the budget.
    const std::size_t kept_cap = q.limits.rows_for_width(result.width());
    auto take = [&](const table& rows) {
        for (std::size_t r = 0; r < rows.rows() && !done; ++r) {
            const auto row = rows.row(r);
            if (q.distinct) {
                std::vector<term_id> projected;
                for (int c : cols) projected.push_back(c < 0 ? no_term : row[std::size_t(c)]);
                if (!seen.insert(std::move(projected)).second) continue;
            }
            result.cells.insert(result.cells.end(), row.begin(), row.end());
            ++result.count;
            if (result.count > kept_cap && pl.steps.size() > 1)
                refuse(v, q, pl, pl.steps.size() - 1, result.width(), std::nullopt);
            done = result.count == limit;
        }
    };
    std::function<void(std::size_t, const table&)> level = [&](std::size_t k, const table& in) {
        // ops[k - 1] runs step k over `in`, the rows of steps 0..k-1.
        if (k == pl.steps.size()) return take(in);
        for (std::size_t from = 0; from < in.rows() && !done;) {
            table out = empty[k];
            from = ops[k - 1].run(v, in, from, out, std::max<std::size_t>(1, piece));
            if (out.rows() != 0) level(k + 1, out);
        }
    };
    level(1, t);
    return result;
}

} // namespace detail

/// Run the plan; the result has a column per variable bound by the
/// patterns. With LIMIT, rows stop coming once there are enough
/// (execute_limited); every table a join builds is held to q.limits, and
/// past it the query is refused with result_too_large, naming the patterns. `keep` (a predicate on term ids; nullptr: all) takes the
/// data-parallel split of the first step's rows, by their value at the
/// pattern's split_position: it runs once per match, so it is a template
/// parameter, inlined, not a std::function.
template <class Keep = std::nullptr_t>
table execute(const store_view& v, const encoded_query& q, const plan& pl, const Keep& keep = nullptr) {
    table t;
    if (q.unsatisfiable || pl.steps.empty()) return t;
    // A few rows wanted (ASK and EXISTS want one) take small pieces: a piece
    // of 1024 rows cost an ASK 1024 lookups where one found its answer.
    if (q.limit && pl.steps.size() == q.patterns.size())
        return detail::execute_limited(v, q, pl, keep, std::size_t(std::clamp<std::uint64_t>(*q.limit, 16, 1024)));
    for (std::size_t k = 0; k < pl.steps.size(); ++k) {
        const plan_step& st = pl.steps[k];
        const encoded_pattern& p = q.patterns[st.pattern];
        if (st.kind == join_kind::scan) {
            t = detail::scan(v, p, st.index, keep); // no larger than the store
        } else {
            detail::join_op op(v, t, p, st);
            table out = detail::next_table(t, op.roles());
            const std::size_t cap = q.limits.rows_for_width(out.width());
            // A cross product's size is known before it is made: refused
            // then, not after filling the budget's memory.
            if (!detail::shares_a_variable(op.roles()))
                if (const std::uint64_t m = detail::count_matches(v, p, st.index);
                    static_cast<long double>(t.rows()) * static_cast<long double>(m) > static_cast<long double>(cap))
                    detail::refuse(v, q, pl, k, out.width(), std::pair<std::uint64_t, std::uint64_t>(t.rows(), m));
            op.run(v, t, 0, out, cap + 1);
            if (out.rows() > cap) detail::refuse(v, q, pl, k, out.width(), std::nullopt);
            t = std::move(out);
        }
        if (t.rows() == 0) { // nothing can join any more; the result keeps every variable's column
            for (std::size_t j = k + 1; j < pl.steps.size(); ++j)
                for (const slot& s : q.patterns[pl.steps[j].pattern].at)
                    if (s.is_var() && t.column_of(s.var) < 0) t.vars.push_back(s.var);
            break;
        }
    }
    return t;
}

/// DISTINCT and LIMIT on projected rows (the data-parallel master applies
/// them to the gathered buckets: a bucket alone cannot know the others' rows).
inline void finish(table& out, bool distinct, std::optional<std::uint64_t> limit) {
    const std::size_t w = out.width();
    std::size_t n = out.rows();
    if (distinct && w > 0) {
        std::vector<std::uint32_t> idx(n);
        std::iota(idx.begin(), idx.end(), 0u);
        auto row = [&](std::uint32_t a) { return out.cells.begin() + std::ptrdiff_t(std::size_t(a) * w); };
        auto less = [&](std::uint32_t a, std::uint32_t b) { return std::lexicographical_compare(row(a), row(a) + std::ptrdiff_t(w), row(b), row(b) + std::ptrdiff_t(w)); };
        std::stable_sort(idx.begin(), idx.end(), less);
        std::vector<term_id> kept;
        for (std::size_t i = 0; i < idx.size(); ++i)
            if (i == 0 || less(idx[i - 1], idx[i])) kept.insert(kept.end(), row(idx[i]), row(idx[i]) + std::ptrdiff_t(w));
        out.cells = std::move(kept);
        n = out.cells.size() / w;
    } else if (distinct && n > 0) {
        n = 1; // no columns: every solution is the same empty row
    }
    if (limit && n > *limit) n = std::size_t(*limit);
    out.cells.resize(n * w);
    out.count = n;
}

/// The solution rows as the projection asks (no_term where a projected
/// variable is unbound), DISTINCT and LIMIT applied unless `finish_rows` is false.
inline table project(const table& t, const encoded_query& q, bool finish_rows = true) {
    table out;
    out.vars = q.projection;
    std::vector<int> cols;
    for (var_id v : q.projection) cols.push_back(v == no_var ? -1 : t.column_of(v));
    // The empty pattern has one solution, the empty one.
    const std::size_t rows = q.unsatisfiable ? 0 : q.patterns.empty() ? 1 : t.rows();
    out.cells.reserve(rows * cols.size());
    for (std::size_t r = 0; r < rows; ++r)
        for (int c : cols) out.cells.push_back(c < 0 ? no_term : t.cells[r * t.width() + std::size_t(c)]);
    out.count = rows;
    if (finish_rows) finish(out, q.distinct, q.limit);
    return out;
}

} // namespace rdf
