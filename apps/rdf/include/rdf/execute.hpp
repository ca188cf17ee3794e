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
#include <optional>
#include <span>
#include <type_traits>
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

inline table bind_join(const store_view& v, const table& in, const encoded_pattern& p, order o) {
    const pattern_roles r = roles(p, in);
    table out = next_table(in, r);
    std::array<term_id, 3> base;
    const unsigned bits = lookup_bits(r, base);
    for (std::size_t row = 0; row < in.rows(); ++row) {
        const auto values = in.row(row);
        for_each_match(v, o, lookup_key(r, base, values), bits,
                       [&](const std::array<term_id, 3>& t) { extend_row(out, values, r, t, in.width()); });
    }
    return out;
}

/// Rows sorted on x, the pattern read in order o sorted on x after its constants.
inline table merge_join(const store_view& v, const table& in, const encoded_pattern& p, order o, var_id x) {
    const pattern_roles r = roles(p, in);
    table out = next_table(in, r);
    std::array<term_id, 3> c;
    const unsigned bits = constant_bits(r, c);
    const int xc = in.column_of(x);
    int xpos = -1;
    for (int i = 0; i < 3; ++i)
        if (p.at[i].var == x) xpos = i;
    // The pattern's matches as (x value, triple) runs; collected once, then
    // walked beside the rows.
    std::vector<std::array<term_id, 3>> matches;
    for_each_match(v, o, c, bits, [&](const std::array<term_id, 3>& t) { matches.push_back(t); });
    std::size_t m = 0;
    const std::size_t rows = in.rows();
    for (std::size_t row = 0; row < rows && m < matches.size();) {
        const term_id key = in.cells[row * in.width() + std::size_t(xc)];
        while (m < matches.size() && matches[m][std::size_t(xpos)] < key) ++m;
        std::size_t m_end = m;
        while (m_end < matches.size() && matches[m_end][std::size_t(xpos)] == key) ++m_end;
        std::size_t row_end = row;
        while (row_end < rows && in.cells[row_end * in.width() + std::size_t(xc)] == key) ++row_end;
        for (std::size_t a = row; a < row_end; ++a)
            for (std::size_t b = m; b < m_end; ++b) extend_row(out, in.row(a), r, matches[b], in.width());
        row = row_end;
        m = m_end;
    }
    return out;
}

inline table hash_join(const store_view& v, const table& in, const encoded_pattern& p, order o) {
    const pattern_roles r = roles(p, in);
    table out = next_table(in, r);
    std::array<term_id, 3> c;
    const unsigned bits = constant_bits(r, c);
    std::vector<int> key_pos; // pattern positions holding joined variables
    for (int i = 0; i < 3; ++i)
        if (r.at[i].what == position_role::joined) key_pos.push_back(i);
    std::vector<std::array<term_id, 3>> matches;
    for_each_match(v, o, c, bits, [&](const std::array<term_id, 3>& t) { matches.push_back(t); });
    auto hash = [](std::uint64_t h) { return (h * 0x9e3779b97f4a7c15ull) >> 20; };
    auto key_of_match = [&](const std::array<term_id, 3>& t) {
        std::uint64_t h = 0;
        for (int pos : key_pos) h = h * 0x100000001b3ull + t[pos];
        return hash(h);
    };
    std::size_t buckets = std::bit_ceil(std::max<std::size_t>(16, matches.size() * 2));
    std::vector<std::uint32_t> head(buckets, ~0u), next(matches.size());
    for (std::uint32_t i = 0; i < matches.size(); ++i) {
        const std::size_t b = key_of_match(matches[i]) & (buckets - 1);
        next[i] = head[b];
        head[b] = i;
    }
    for (std::size_t row = 0; row < in.rows(); ++row) {
        const auto values = in.row(row);
        std::uint64_t h = 0;
        for (int pos : key_pos) h = h * 0x100000001b3ull + values[std::size_t(r.at[pos].column)];
        for (std::uint32_t i = head[hash(h) & (buckets - 1)]; i != ~0u; i = next[i])
            extend_row(out, values, r, matches[i], in.width()); // checks every joined column
    }
    return out;
}

} // namespace detail

/// Run the plan; the result has a column per variable bound by the
/// patterns. `keep` (a predicate on term ids; nullptr: all) takes the
/// data-parallel split of the first step's rows, by their value at the
/// pattern's split_position: it runs once per match, so it is a template
/// parameter, inlined, not a std::function.
template <class Keep = std::nullptr_t>
table execute(const store_view& v, const encoded_query& q, const plan& pl, const Keep& keep = nullptr) {
    table t;
    if (q.unsatisfiable || pl.steps.empty()) return t;
    for (std::size_t k = 0; k < pl.steps.size(); ++k) {
        const plan_step& st = pl.steps[k];
        const encoded_pattern& p = q.patterns[st.pattern];
        switch (st.kind) {
        case join_kind::scan: t = detail::scan(v, p, st.index, keep); break;
        case join_kind::merge: t = detail::merge_join(v, t, p, st.index, st.merge_var); break;
        case join_kind::bind: t = detail::bind_join(v, t, p, st.index); break;
        case join_kind::hash: t = detail::hash_join(v, t, p, st.index); break;
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
