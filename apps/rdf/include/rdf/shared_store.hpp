#pragma once
// The store as a MESH shared object (MESH paper, section III.C: a
// SharingAware composite whose parts are shared containers): the
// dictionary and the four permutation indexes in mesh::vectors, and the
// METIS partition of the entities that the data-parallel model buckets by.
// Workers on every core read it through one reader proxy for a whole query
// (one acquire, not one per lookup) and evaluate over a store_view of its
// spans: the same code as on the private store. On threads the parts are
// the same memory for every core; on core processes each has a private
// view that the controller refreshes when the master has written (after
// loading, after each round of inference).
#include <cstdint>

#include <mesh/mesh.hpp>
#include <rdf/store.hpp>

namespace rdf {

template <class T>
using shared_vector = mesh::vector<T>;

struct shared_store : mesh::sharing_aware<shared_store> {
    shared_vector<char> dict_text;
    shared_vector<std::uint64_t> dict_offsets;
    shared_vector<std::uint32_t> dict_table;
    index_parts<shared_vector> index;
    /// Entity -> METIS part (partition.hpp); empty until the data-parallel
    /// model first needs it.
    shared_vector<std::uint16_t> part_of;
    /// The ids where part_of changes: a part's ids as runs, which a worker
    /// steps over in the sorted index (execute.hpp, for_each_kept_match).
    shared_vector<term_id> part_runs;
    std::uint32_t parts = 0;

    store_view view() const {
        return {dictionary_view(span_of(dict_text), span_of(dict_offsets), span_of(dict_table)), index.perm_views(),
                span_of(index.predicates)};
    }

    /// Copy a private store in (under a writer proxy: the controller then
    /// tells every core's view).
    void assign(const store& s) {
        const dictionary_builder& d = s.dictionary();
        dict_text.assign(d.text().begin(), d.text().end());
        dict_offsets.assign(d.offsets().begin(), d.offsets().end());
        dict_table.assign(d.table().begin(), d.table().end());
        const auto& from = s.index();
        for (std::size_t i = 0; i < order_count; ++i) {
            index.offsets[i].assign(from.offsets[i].begin(), from.offsets[i].end());
            index.second[i].assign(from.second[i].begin(), from.second[i].end());
            index.third[i].assign(from.third[i].begin(), from.third[i].end());
        }
        index.predicates.assign(from.predicates.begin(), from.predicates.end());
        part_of.clear();
        part_runs.clear();
        parts = 0;
    }
};

} // namespace rdf
