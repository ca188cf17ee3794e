#pragma once
// The group over all cores that consistency broadcasts use: one agent per
// core (a taco::core_local), one k-ary tree per run. It is built lazily by
// the first core that needs it and published at the home core; a core that
// loses the race frees its own tree. Building it never blocks inside an
// invocation handler on the home core, so concurrent first uses cannot
// deadlock there.
#include <cstdint>
#include <vector>

#include <mesh/detail/control_block.hpp>
#include <mesh/event_counts.hpp>
#include <mesh/memory.hpp>
#include <taco/group.hpp>

namespace mesh::detail {

/// The first member of every broadcast-family controller state: nonzero
/// while this core's view of the object is known to be current.
struct flag_state {
    std::uint32_t valid;
};

struct agent {
    /// make_shared_object: bring this core's view of a new object up to date
    /// and initialise this core's controller state.
    void adopt(address block) {
        auto& cb = *static_cast<control_block*>(block.p);
        cb.ops->adopt(cb, local(cb.state), invalidate_object(cb));
    }
    /// A Broadcast controller's release (or Overlapped's write-acquire) on
    /// core `origin`: this core's view may be stale.
    void clear_valid(address state, taco::core_id origin) {
        if (taco::this_core() == origin) return;
        static_cast<flag_state*>(local(state.p))->valid = 0;
        ++events().notifications;
    }

    static std::uint64_t invalidate_object(control_block& cb); // controller.hpp
};

struct group_cache {
    taco::group<agent> all;
};

inline taco::global_ptr<agent> agent_here() { return taco::global_ptr<agent>::local(&taco::core_local<agent>()); }
inline taco::group<agent> home_group() { return taco::core_local<group_cache>().all; }
inline taco::group<agent> home_publish_group(taco::group<agent> g) {
    auto& c = taco::core_local<group_cache>();
    if (!c.all) c.all = g;
    return c.all;
}

/// Fan-out of the broadcast tree: depth 3 at 48 cores, 5 at 1024 (see
/// bench/README.md, collectives: k-ary 4 was the fastest shape modelled).
inline constexpr std::uint32_t broadcast_fanout = 4;

inline taco::group<agent> all_cores() {
    auto& mine = taco::core_local<group_cache>();
    if (mine.all) [[likely]] return mine.all;
    taco::group<agent> g = at_home(&home_group);
    if (!g) {
        const taco::core_id n = taco::core_count();
        std::vector<taco::future<taco::global_ptr<agent>>> f(n);
        for (taco::core_id k = 0; k < n; ++k) taco::async(k, taco::m2f(&agent_here), f[k]);
        std::vector<taco::global_ptr<agent>> members(n);
        for (taco::core_id k = 0; k < n; ++k) members[k] = f[k].get();
        const auto built = taco::make_group(members, taco::topology::kary(broadcast_fanout));
        g = at_home(&home_publish_group, built);
        if (g.root.core() != built.root.core() || g.root.address() != built.root.address())
            taco::destroy_group(built);
    }
    if (taco::this_core() != home_core) mine.all = g; // the home core's copy is already set
    return g;
}

} // namespace mesh::detail
