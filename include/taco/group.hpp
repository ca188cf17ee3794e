#pragma once
// Object groups (CCI paper, section II.B; TACO object groups): members are
// global pointers (one or more per core), a multicast tree is laid over them,
// and the tree is the group's distributed description: each member's core
// holds a node that knows only its member and its children, so the group
// handle is just the root node, and a collective starts there.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <taco/async.hpp>
#include <taco/future.hpp>
#include <taco/global_ptr.hpp>
#include <taco/this_core.hpp>
#include <taco/usage_error.hpp>
#include <taco/detail/object_registry.hpp>
#include <taco/topology.hpp>

namespace taco {

namespace detail {

/// A tree node, on its member's core.
template <class T>
struct group_node {
    using checks_own_liveness = void; // each collective step does, and fails its sink (collective_ops.hpp)
    T* member;
    std::uint32_t rank;
    std::uint32_t size;
    /// A child and the helper slot its subtree's result takes: slots go in
    /// rank order (slot 1 for the lowest-ranked child), so a reduction
    /// merges in rank order whatever the order of sending.
    struct child {
        global_ptr<group_node> node;
        std::uint32_t slot;
    };
    /// In sending order, the largest subtree first: its propagation takes
    /// longest, so it starts first, and the smaller subtrees finish in its
    /// shadow (a binomial tree sent smallest first puts all of the root's
    /// sends ahead of its deepest path).
    std::vector<child> children;

    void add_child(global_ptr<group_node> c, std::uint32_t slot) { children.push_back({c, slot}); }
    void ready() const {}
};

/// The nodes living on this core: those of groups still alive when the run
/// ends are freed with the core (a group handle is not an owner, and
/// libraries such as MESH keep groups for the whole run).
///
/// Ordered by address, not hashed: a hash of a pointer places the node by
/// the address's high bits, which follow where the host put this core's
/// heap, so the accesses of an insert or an erase, and with them an
/// emulated core's modelled cache misses (tacomesh::scc), changed from run
/// to run. The order of nodes one core allocated depends only on their
/// offsets in its heap, and a core holds a node per group it is in: a few.
template <class X>
struct owned_on_core {
    std::set<X*> live;
    owned_on_core() = default;
    owned_on_core(const owned_on_core&) = delete;
    ~owned_on_core() {
        for (X* x : live) delete x;
    }
};
template <class T>
using node_registry = owned_on_core<group_node<T>>;

template <class T>
global_ptr<group_node<T>> create_node(global_ptr<T> member, std::uint32_t rank, std::uint32_t size) {
    auto* n = new group_node<T>{member.get(), rank, size, {}};
    core_local<node_registry<T>>().live.insert(n);
    return to_global(n);
}

/// What a destroyed node does last: nothing (destroy_group), or tell a
/// dynamic group's home that one more node of a retired tree is gone.
struct no_ack {
    void operator()() const noexcept {}
};

template <class T, class Ack = no_ack>
void destroy_subtree(global_ptr<group_node<T>> node, Ack ack) {
    // A node no longer live here went with an earlier destroy_group (a second
    // one, or one through a copy of the handle): refused before it is read.
    if (core_local<node_registry<T>>().live.erase(node.get()) == 0)
        throw usage_error("taco::destroy_group: the group was destroyed already (a second destroy_group, or one "
                          "through a copy of its handle)");
    for (const auto& c : node->children) async(c.node.core(), &destroy_subtree<T, Ack>, c.node, ack);
#if TACO_DEBUG_CHECKS
    // Quarantined as delete_on's objects are: the address is not reused for
    // a while, so a collective on the destroyed group is refused on arrival
    // (check_target_alive) instead of walking freed nodes.
    node->~group_node();
    objects().retire(node.get(), sizeof(group_node<T>));
#else
    delete node.get();
#endif
    ack();
}

} // namespace detail

/// A handle to an object group: trivially copyable, valid on every core.
template <class T>
struct group {
    global_ptr<detail::group_node<T>> root;
    std::uint32_t size = 0;

    explicit operator bool() const noexcept { return static_cast<bool>(root); }
};

/// Build a group over `members` (rank i = members[i]) with the given tree.
/// Must run on a core; costs O(n) messages from the calling core (the node
/// on each member's core is created, then told its children), and returns
/// once every node is ready, so collectives may start from any core.
/// Throws std::invalid_argument for an empty member list or a member that
/// appears twice.
template <class T>
group<T> make_group(std::span<const global_ptr<T>> members, topology shape = topology::binomial()) {
    // Ranks are 32-bit on the wire: a larger list would wrap to a small group.
    if (members.size() > std::numeric_limits<std::uint32_t>::max())
        throw std::invalid_argument("taco::make_group: " + std::to_string(members.size()) +
                                    " members; a group has at most 2^32 - 1");
    const auto n = std::uint32_t(members.size());
    if (n == 0) throw std::invalid_argument("taco::make_group: a group needs at least one member");
    {
        std::vector<std::pair<std::pair<core_id, const void*>, std::uint32_t>> seen;
        seen.reserve(n);
        for (std::uint32_t r = 0; r < n; ++r) {
            if (!members[r]) throw std::invalid_argument("taco::make_group: member " + std::to_string(r) + " is null");
            seen.push_back({{members[r].core(), members[r].address()}, r});
        }
        std::sort(seen.begin(), seen.end());
        for (std::uint32_t i = 1; i < n; ++i)
            if (seen[i].first == seen[i - 1].first)
                throw std::invalid_argument("taco::make_group: the same object (core " +
                                            std::to_string(seen[i].first.first) + ") is member " +
                                            std::to_string(seen[i - 1].second) + " and member " +
                                            std::to_string(seen[i].second) + "; members must be distinct");
    }
    const auto layout = detail::tree_layout(n, shape);
    const std::vector<std::uint32_t> sizes = detail::subtree_sizes(layout);
    using node = detail::group_node<T>;
    std::vector<future<global_ptr<node>>> created(n);
    for (std::uint32_t r = 0; r < n; ++r)
        async(members[r].core(), m2f(&detail::create_node<T>, members[r], r, n), created[r]);
    std::vector<global_ptr<node>> nodes(n);
    for (std::uint32_t r = 0; r < n; ++r) nodes[r] = created[r].get();
    std::vector<future<void>> ready(n);
    for (std::uint32_t r = 0; r < n; ++r) {
        for (std::uint32_t i : detail::largest_first(layout[r], sizes))
            async(nodes[r], &node::add_child, nodes[layout[r][i]], i + 1);
        async(nodes[r], m2f(&node::ready), ready[r]); // in order after the add_child calls
    }
    for (auto& f : ready) f.get();
    return {nodes[0], n};
}

template <class T>
group<T> make_group(const std::vector<global_ptr<T>>& members, topology shape = topology::binomial()) {
    return make_group(std::span<const global_ptr<T>>(members), shape);
}

struct core_member; // taco::all_cores()'s members (all_cores.hpp)

namespace detail {
template <class T>
void destroy_nodes(group<T> g) {
    if (g.root) async(g.root.core(), &detail::destroy_subtree<T, no_ack>, g.root, no_ack{});
}
} // namespace detail

/// Free the group's nodes (not its members), down the tree. Collectives still
/// in flight on the group must have completed.
template <class T>
void destroy_group(group<T> g) {
    // Every core keeps the all-cores group for the rest of the run, and MESH's
    // consistency broadcasts travel on it: destroyed, the next collective on
    // any core would walk freed nodes.
    static_assert(!std::is_same_v<T, core_member>,
                  "taco::destroy_group: taco::all_cores() belongs to the run (every core and MESH's broadcasts use "
                  "it until the run ends); do not destroy it. To free a tree of your own, build it with "
                  "taco::make_group over your objects and destroy that one");
    detail::destroy_nodes(g);
}

} // namespace taco
