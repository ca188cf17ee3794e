#pragma once
// The group of all cores: one member per core, a k-ary tree over them, so
// that a function can run on every core with the collectives
// (taco::at_each(taco::all_cores(), &fn, args...), taco::reduce, ...). MESH's
// consistency broadcasts use it.
//
// Built lazily, once per run, by the first core that asks, and published at
// core 0; a core that loses the race frees its own tree. Building never
// blocks inside an invocation handler on core 0, so concurrent first uses
// cannot deadlock there.
#include <cstdint>
#include <vector>

#include <taco/async.hpp>
#include <taco/future.hpp>
#include <taco/global_ptr.hpp>
#include <taco/group.hpp>
#include <taco/this_core.hpp>
#include <taco/topology.hpp>

namespace taco {

/// The member of the all-cores group on each core. Functions applied to the
/// group run as fn(args...) (or fn(core_member&, args...)).
struct core_member {};

namespace detail {

struct all_cores_cache {
    group<core_member> all;
};

inline global_ptr<core_member> member_here() { return to_global(&core_local<core_member>()); }
inline group<core_member> published_all_cores() { return core_local<all_cores_cache>().all; }
inline group<core_member> publish_all_cores(group<core_member> g) {
    auto& c = core_local<all_cores_cache>();
    if (!c.all) c.all = g;
    return c.all;
}

} // namespace detail

/// Fan-out of the all-cores tree: depth 3 at 48 cores, 5 at 1024 (see
/// bench/README.md, collectives: k-ary 4 was the fastest shape modelled).
inline constexpr std::uint32_t all_cores_fanout = 4;

/// The group of all cores of this run (rank = core id).
inline group<core_member> all_cores() {
    auto& mine = core_local<detail::all_cores_cache>();
    if (mine.all) [[likely]] return mine.all;
    group<core_member> g = detail::call_on(0, &detail::published_all_cores);
    if (!g) {
        const core_id n = core_count();
        std::vector<future<global_ptr<core_member>>> f(n);
        for (core_id k = 0; k < n; ++k) async(k, m2f(&detail::member_here), f[k]);
        std::vector<global_ptr<core_member>> members(n);
        for (core_id k = 0; k < n; ++k) members[k] = f[k].get();
        const auto built = make_group(members, topology::kary(all_cores_fanout));
        g = detail::call_on(0, &detail::publish_all_cores, built);
        if (!(g.root == built.root)) detail::destroy_nodes(built);
    }
    mine.all = g;
    return g;
}

} // namespace taco
