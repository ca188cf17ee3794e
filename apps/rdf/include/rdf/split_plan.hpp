#pragma once
// The data-parallel split's planning (parallel.hpp runs the split): whether
// a query is worth splitting (estimated_work), and what each METIS region
// (partition.hpp) weighs in it, which the deal of regions to cores balances
// (split_weights). Beside the planner: it reads the plan's estimates and the
// index ranges a plan's steps look up.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <rdf/execute.hpp>
#include <rdf/plan.hpp>
#include <rdf/query_engine.hpp>
#include <rdf/store.hpp>
#include <rdf/term.hpp>

namespace rdf {

/// The rows a query's plan estimates over its steps: below some number of
/// them, a split costs more than it shares (rdf_cluster::min_split_rows).
inline double estimated_work(const prepared_query& p) {
    double rows = 0;
    for (const plan_step& st : p.chosen.steps) rows += st.estimate;
    return rows;
}

/// Per-region match counts of the first steps that large queries start
/// with, (?s rdf:type C) per class and (?s p ?o) per predicate: they spare
/// the master a pass over the first step's matches before every split.
/// Classes and predicates with few matches are left out: counting those in
/// the index costs next to nothing.
class region_counts {
public:
    /// Made once with the partition (one pass over PSO).
    void count(const store_view& v, const std::vector<std::uint16_t>& part_of, std::uint32_t parts) {
        constexpr std::uint32_t worth_keeping = 256;
        class_counts_.clear();
        predicate_counts_.clear();
        type_ = v.dict.find(std::string("<") + std::string(rdf_type) + ">");
        const permutation_view& pso = v[order::pso];
        for (term_id pred = 0; std::size_t(pred) + 1 < pso.offsets.size(); ++pred) {
            const index_range r = pso.of(pred);
            if (r.size() < worth_keeping) continue;
            auto& by_subject = predicate_counts_[pred];
            by_subject.assign(parts, 0);
            for (std::uint32_t i = r.begin; i < r.end; ++i) ++by_subject[part_of[pso.second[i]]];
            if (pred != type_) continue;
            for (std::uint32_t i = r.begin; i < r.end; ++i) {
                auto& by_class = class_counts_[pso.third[i]];
                if (by_class.empty()) by_class.assign(parts, 0);
                ++by_class[part_of[pso.second[i]]];
            }
        }
        std::erase_if(class_counts_, [&](const auto& kv) {
            return std::accumulate(kv.second.begin(), kv.second.end(), std::uint64_t(0)) < worth_keeping;
        });
    }

    /// The first pattern's per-region counts made by count(), if it has them.
    const std::vector<std::uint32_t>* counted(const encoded_pattern& p) const {
        const slot &s = p.at[0], &pr = p.at[1], &o = p.at[2];
        if (!s.is_var() || pr.is_var() || o.var == s.var) return nullptr; // split by its subject, under one predicate
        const auto* table = &predicate_counts_;
        term_id key = pr.id;
        if (!o.is_var()) {
            if (pr.id != type_) return nullptr;
            table = &class_counts_;
            key = o.id;
        }
        const auto it = table->find(key);
        return it == table->end() ? nullptr : &it->second;
    }

private:
    term_id type_ = no_term;
    std::unordered_map<term_id, std::vector<std::uint32_t>> class_counts_, predicate_counts_;
};

/// The matches a bind join's lookup finds for row r (one index range).
inline std::uint64_t lookup_size(const store_view& v, const table& t, std::size_t r, const encoded_pattern& p, order o) {
    const detail::pattern_roles roles = detail::roles(p, t);
    std::array<term_id, 3> base;
    const unsigned bits = detail::lookup_bits(roles, base);
    return detail::prefix_range(v, o, detail::lookup_key(roles, base, t.row(r)), detail::bound_count(bits)).size();
}

/// What the deal balances: per METIS region, the rows its first-step
/// matches lead to. When the first step is small (a few hundred rows:
/// LUBM's departments or universities), the master runs the plan's
/// prefix that does not grow it (Q8: the departments, then only
/// University0's) and weighs each surviving row by the matches its next
/// lookup will find (its students): a split of 15 departments is only
/// even if it counts what hangs off each. Otherwise the first matches
/// are counted per region: looked up (region_counts), or counted in the
/// index, no row copied.
inline std::vector<std::uint64_t> split_weights(const store_view& v, const prepared_query& p,
                                                std::span<const std::uint16_t> part_of, std::uint32_t parts,
                                                const region_counts& regions) {
    constexpr double small_first_step = 256;
    std::vector<std::uint64_t> weight(parts, 0);
    const auto& steps = p.chosen.steps;
    if (p.encoded.unsatisfiable || steps.empty()) return weight;
    const encoded_pattern& first = p.encoded.patterns[steps.front().pattern];
    const int key = detail::split_position(first);
    // (A ground first pattern's one row has no column to weigh it by.)
    if (first.at[key].is_var() && steps.front().estimate <= small_first_step) {
        std::size_t prefix = 1;
        while (prefix < steps.size() && steps[prefix].estimate <= steps.front().estimate) ++prefix;
        plan head;
        head.steps.assign(steps.begin(), steps.begin() + std::ptrdiff_t(prefix));
        const table t = execute(v, p.encoded, head); // column 0: the first pattern's split variable
        const plan_step* next = prefix < steps.size() && steps[prefix].kind == join_kind::bind ? &steps[prefix] : nullptr;
        for (std::size_t r = 0; r < t.rows(); ++r)
            weight[part_of[t.cells[r * t.width()]]] += next ? lookup_size(v, t, r, p.encoded.patterns[next->pattern], next->index) : 1;
        return weight;
    }
    if (const auto* counts = regions.counted(first)) {
        std::copy(counts->begin(), counts->end(), weight.begin());
        return weight;
    }
    std::array<term_id, 3> c;
    const unsigned bits = detail::constant_bits(detail::roles(first, table{}), c);
    detail::for_each_match(v, steps.front().index, c, bits, [&](const std::array<term_id, 3>& t) { ++weight[part_of[t[key]]]; });
    return weight;
}

} // namespace rdf
