#pragma once
// Answers any SPARQL 1.1 query (sparql_algebra.hpp) over a store, on one
// core: the algebra evaluated bottom-up over tables of term ids (execute.hpp's
// `table`), each BGP by the BGP engine (plan.hpp's join order, execute.hpp's
// operators), the rest by the operators of SPARQL 1.1 section 18.5: Join and
// LeftJoin over compatible solutions (a hash on the variables both sides
// always bind, the others compared per pair), Minus, Union, Filter, Extend,
// Group and the aggregates, OrderBy, Project, Distinct, Slice, and property
// paths by breadth-first search.
//
// Terms a query makes (BIND's values, CONSTRUCT's fresh blank nodes) get ids
// after the dictionary's, in the result's term_pool; a made term equal to a
// stored one takes the stored id, so a join never sees one term under two ids.
//
//   rdf::sparql::result r = rdf::sparql::evaluate(rdf::sparql::parse_sparql(text), store.view());
//   rdf::sparql::write(r, store.view().dict, rdf::sparql::result_format::json, out);
#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <rdf/execute.hpp>
#include <rdf/sparql_algebra.hpp>
#include <rdf/store.hpp>

namespace rdf::sparql {

/// The terms a query made, by canonical key (term.hpp), numbered from `base`
/// (the dictionary's size) up.
class term_pool {
public:
    explicit term_pool(term_id base = 0) : base_(base) {}
    // The index views the deque's strings: a copy would view the original's.
    // A move keeps them (a deque's move hands over its blocks).
    term_pool(const term_pool&) = delete;
    term_pool& operator=(const term_pool&) = delete;
    term_pool(term_pool&&) noexcept = default;
    term_pool& operator=(term_pool&&) noexcept = default;
    term_id base() const noexcept { return base_; }
    /// The id of the term with key `k`: the dictionary's if it has it, else the pool's.
    term_id intern(const dictionary_view& dict, std::string_view k);
    std::string_view key(term_id id) const noexcept { return keys_[id - base_]; }
    bool contains(std::string_view k) const { return ids_.count(k) != 0; }
    std::size_t size() const noexcept { return keys_.size(); }

private:
    term_id base_;
    /// A deque: its strings stay where they are as it grows, so the index
    /// can name them by view (one copy of each key, not two).
    std::deque<std::string> keys_;
    std::unordered_map<std::string_view, term_id> ids_;
};

/// A result's ids to keys: the dictionary's, then the pool's. The view is
/// held by value (spans: a store's view() is often a temporary); the pool
/// by reference.
class result_terms {
public:
    result_terms(dictionary_view dict, const term_pool& pool) : dict_(dict), pool_(&pool) {}
    std::string_view key(term_id id) const noexcept { return id < pool_->base() ? dict_.key(id) : pool_->key(id); }

private:
    dictionary_view dict_;
    const term_pool* pool_;
};

struct result {
    query_tree::form what = query_tree::form::select;
    std::vector<std::string> names;                ///< SELECT: the projected variables
    table rows;                                    ///< SELECT: a column per name, no_term where unbound
    bool boolean = false;                          ///< ASK
    std::vector<std::array<term_id, 3>> triples;   ///< CONSTRUCT, DESCRIBE: the graph, each triple once
    term_pool pool;
};

struct evaluate_options {
    query_limits limits;
    /// RAND(), UUID() and STRUUID() draw from it; unset: a seed of their own.
    std::optional<std::uint64_t> seed;
};

result evaluate(const query_tree& q, const store_view& v, const evaluate_options& o = {});

} // namespace rdf::sparql
