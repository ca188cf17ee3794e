#pragma once
// The data-parallel model's buckets (RDF-on-the-SCC paper, section III.D:
// "partition with METIS ... into buckets"): the entity graph, vertices the
// terms and an edge for every triple between two resources other than
// rdf:type (class nodes would be hubs tying every region together), cut
// by METIS into `parts` connected, balanced regions. A query's first
// pattern's matches then go to cores region by region, so each core's
// joins wander through one region of the index (cache-friendly), and the
// regions are many more than the cores so that they can be dealt out to
// balance the work (assign_parts): the paper's buckets lost answers and
// balance; here every core joins against the whole shared index, so a
// bucket only decides who does the work, never what is found. METIS is
// called from src/rdf/partition.cpp only.
#include <cstdint>
#include <vector>

#include <rdf/store.hpp>

namespace rdf {

/// part_of[term] for every term of the store, in [0, parts).
std::vector<std::uint16_t> partition_entities(const store_view& v, std::uint32_t parts);

/// Deal parts to `cores` so that the work (weight per part) is balanced:
/// heaviest part first to the least loaded core (LPT). Returns part -> core.
std::vector<std::uint32_t> assign_parts(const std::vector<std::uint64_t>& weight, std::uint32_t cores);

} // namespace rdf
