#pragma once
// Making and destroying shared objects (MESH paper, section III.B: "special
// constructors ... return a sharing pointer"). make_shared_object is a
// collective of the calling core: it allocates the object (cached shared
// memory), its control block (on-chip memory while the platform has some
// free, else non-cached: memory.hpp, allocate_fast_block) and its
// controller's per-core state (core-private) through the home core's
// allocator, constructs the object in the caller's view, writes it back,
// and has every core adopt it (refresh its view, initialise its controller
// state) over the broadcast tree. When it returns, every core may read the
// object.
#include <algorithm>
#include <cstddef>
#include <concepts>
#include <cstdint>
#include <deque>
#include <exception>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

#include <mesh/controller.hpp>
#include <mesh/controllers/timestamp.hpp>
#include <mesh/detail/control_block.hpp>
#include <mesh/detail/member_rules.hpp>
#include <mesh/detail/parts.hpp>
#include <mesh/detail/pointer_members.hpp>
#include <mesh/detail/shared_word.hpp>
#include <mesh/memory.hpp>
#include <mesh/proxy.hpp>
#include <mesh/sharing_aware.hpp>
#include <mesh/sharing_ptr.hpp>
#include <taco/all_cores.hpp>
#include <taco/detail/construct.hpp>
#include <taco/collective.hpp>
#include <taco/future.hpp>
#include <taco/usage_error.hpp>

namespace mesh {

namespace detail {

template <class T>
struct type_ops_of {
    static constexpr type_ops make() {
        type_ops t{+[](void* p) { static_cast<T*>(p)->~T(); }, nullptr, nullptr, nullptr};
        if constexpr (has_extra_ranges<T>)
            t.extra_ranges = +[](const void* p, range_visitor visit) { static_cast<const T*>(p)->extra_ranges(visit); };
        if constexpr (tracks_changes<T>) {
            t.changed_since = +[](const void* p, std::uint64_t version, range_visitor visit) {
                static_cast<const T*>(p)->changed_since(version, visit);
            };
            t.take_changes = +[](void* p, std::uint64_t version, range_visitor visit) {
                static_cast<T*>(p)->take_changes(version, visit);
            };
        }
        return t;
    }
    static constexpr type_ops table = make();
};

/// make_shared_object, on every core: bring this core's view of the new
/// object up to date and initialise this core's controller state.
inline void adopt(address block) {
    auto& cb = *static_cast<control_block*>(block.p);
    fetch_block(cb);
    const std::uint64_t version = controlled_object(cb).refresh();
    cb.ops().adopt(cb, private_instance(cb.state), version);
}

// The events of a destroyed object (destroyed_ops): proxy.hpp.

/// A destroyed object's control block. Debug builds hold the last
/// retired_blocks::capacity of them back per core, so that the table above
/// stays in place; release builds free it at once (caught until the block
/// is reused), and so do debug builds for blocks in on-chip memory, of
/// which a platform has only a few hundred.
struct retired_blocks {
    static constexpr std::size_t capacity = 4096; // 256 KiB of non-cached memory per core
    std::deque<control_block*> held;
};
/// Where each core has a view of the control block (cluster ranks), every
/// core fetches the destroyed table before the block can be freed and made
/// again: a view that kept the live table would run a proxy on freed memory.
inline void fetch_destroyed(address block) { fetch_block(*static_cast<control_block*>(block.p)); }
inline void retire(control_block* cb) {
    cb->controller_table = taco::image_ptr(&destroyed_ops);
    if (views_of_non_cached()) {
        publish_block(*cb);
        taco::sync(taco::all_cores(), &fetch_destroyed, address{cb});
    }
#if TACO_DEBUG_CHECKS
    if (on_chip(cb)) return deallocate_fast_block(cb);
    std::deque<control_block*>& held = taco::core_local<retired_blocks>().held;
    held.push_back(cb);
    if (held.size() <= retired_blocks::capacity) return;
    cb = held.front(); // blocks still held when the run ends go with its memory
    held.pop_front();
#endif
    deallocate_fast_block(cb);
}

[[noreturn]] inline void proxies_held(const proxy_counts& held) {
    auto count = [](std::uint32_t n, const char* what) {
        return std::to_string(n) + " " + what + (n == 1 ? " proxy" : " proxies");
    };
    std::string what;
    if (held.readers) what = count(held.readers, "reader") + " (mesh::read)";
    if (held.readers && held.writers) what += " and ";
    if (held.writers) what += count(held.writers, "writer") + " (mesh::write)";
    throw taco::usage_error("mesh::destroy_shared_object: this core still holds " + what +
                            " of the object; release " + (held.readers + held.writers == 1 ? "it" : "them") +
                            " first (end the proxy's scope, or call a writer's release()): a proxy that outlived "
                            "the destroy would read freed memory, soon another object's");
}

/// Where a shared object's own bytes live: cached memory (kept consistent
/// by the controller's flush and invalidate), or what T asks for with a
/// `static memory_mode object_memory()`. A write-through chunked_map asks
/// for write-through memory: its header changes with every set (the
/// chunks' stamps), and on the SCC a publish of cached bytes runs the L2
/// flush routine (7,500 cycles and more) on the writer and on every
/// reader, where write-through memory takes a WCB flush and a CL1INVMB.
template <class T>
memory_mode object_memory() {
    if constexpr (requires {
                      { T::object_memory() } -> std::same_as<memory_mode>;
                  })
        return T::object_memory();
    else
        return memory_mode::cached;
}

/// Frees what make_shared_object allocated, unless released.
struct allocation_guard {
    void* object = nullptr;
    memory_mode object_mode = memory_mode::cached;
    void* block = nullptr;
    void* state = nullptr;
    ~allocation_guard() {
        try {
            if (object) deallocate(object, object_mode);
            if (block) {
                free_parts(*static_cast<control_block*>(block)); // containers its constructor made before it threw
                deallocate_fast_block(block);
            }
            if (state) deallocate_private(state);
        } catch (...) {
            // a failure while already failing: the first error is the one to report
        }
    }
};

} // namespace detail

/// Make a shared object T{args...} under consistency controller C (default:
/// Timestamp, which needs no messages on the read path). Runs on any core.
template <class T, class C = controllers::timestamp, class... Args>
sharing_ptr<T> make_shared_object(Args&&... args) {
    static_assert(consistency_controller<C>,
                  "mesh::make_shared_object<T, C>: C is not a consistency controller (see mesh/controller.hpp: "
                  "a trivially copyable `state` and static adopt/acquire_read/release_read/acquire_write/"
                  "release_write)");
    static_assert(!std::is_array_v<T> && !std::is_reference_v<T>,
                  "mesh::make_shared_object: T must be an object type; for arrays, wrap them in a "
                  "SharingAware object (mesh/sharing_aware.hpp)");
    static_assert(alignof(T) <= detail::range_allocator::granule,
                  "mesh::make_shared_object: T is aligned beyond a cache line, which shared memory does not provide");
    static_assert(shareable<T>,
                  "mesh::make_shared_object: T is not trivially copyable, so it may own memory outside its "
                  "own bytes: a std::vector, std::string or std::unordered_map member keeps its elements in "
                  "the heap of the core that made them, which other cores cannot see. Use the shared "
                  "containers instead: mesh::vector<E> for std::vector<E>, mesh::string for std::string, "
                  "mesh::hash_map<K, V> for std::unordered_map / std::map (mesh/containers/), and derive T "
                  "from mesh::sharing_aware<T>: the containers then register with T and their changes are "
                  "written back with it. For memory T allocates itself (mesh::allocate), list it in "
                  "extra_ranges. If every byte T refers to is shared already, opt in: "
                  "template <> inline constexpr bool mesh::enable_sharing<T> = true;");
    static_assert(!detail::holds_raw_pointer<T> || std::is_base_of_v<sharing_aware<T>, T> || enable_sharing<T>,
                  "mesh::make_shared_object: T holds a raw pointer (a member, or a member of a member): on "
                  "another core it leads into that core's private memory (its heap, its stack). For data T "
                  "owns use mesh::vector / mesh::string / mesh::hash_map (and derive T from "
                  "mesh::sharing_aware<T>); for another shared object a mesh::sharing_ptr; for an object on "
                  "one core a taco::global_ptr; or an index into a shared container. If the pointer leads into "
                  "memory from mesh::allocate, derive T from mesh::sharing_aware<T> and list that memory in "
                  "extra_ranges; if it leads into memory that is the same on every core (a string literal, "
                  "non-cached memory), opt in: template <> inline constexpr bool mesh::enable_sharing<T> = true;");

    if constexpr (std::is_base_of_v<sharing_aware<T>, T>)
        static_assert(detail::check_sharing_aware<T, has_extra_ranges<T>>(),
                      "mesh::make_shared_object: T holds a member that may own private memory (the static "
                      "assertion above says which, and what to use instead)");

    detail::require_run("mesh::make_shared_object");
    detail::allocation_guard g;
    g.object_mode = detail::object_memory<T>();
    g.object = allocate(sizeof(T), g.object_mode, alignof(T));
    static_assert(sizeof(detail::control_block) == detail::home_allocators::fast_block_bytes);
    g.block = detail::allocate_fast_block();
    using state = typename C::state;
    g.state = allocate_private(detail::state_offset<state> + sizeof(state), std::max<std::size_t>(64, alignof(state)));

    auto* cb = ::new (g.block) detail::control_block{};
    cb->controller_table = taco::image_ptr(&detail::ops_of<C>::table);
    cb->object = g.object;
    cb->bytes = sizeof(T);
    cb->state = g.state;
    cb->type_table = taco::image_ptr(&detail::type_ops_of<T>::table);

    detail::control_block* const outer = std::exchange(detail::constructing, cb);
    T* object;
    try {
        object = taco::detail::construct_at_address<T>(g.object, std::forward<Args>(args)...);
    } catch (...) {
        detail::constructing = outer;
        throw;
    }
    detail::constructing = outer;

    // Publish the constructed state, then let every core adopt it.
    detail::publish_block(*cb);
    controlled_object(*cb).publish();
    taco::sync(taco::all_cores(), &detail::adopt, detail::address{cb});
    g.object = g.block = g.state = nullptr; // the object is alive: keep its memory
    return sharing_ptr<T>::from(object, cb);
}

/// Destroy a shared object: runs ~T on the calling core (after refreshing
/// its view, so the destructor sees the current state and can free extra
/// memory it owns), then frees the object's memory. No proxy may be alive:
/// one of the calling core's is refused with taco::usage_error (always);
/// one held on another core cannot be seen from here, and reads freed
/// memory. `p` is null afterwards (a proxy through it throws
/// taco::usage_error); a proxy or a destroy through a copy of the sharing
/// pointer throws taco::usage_error too (in release builds until the memory
/// is reused).
template <class T>
void destroy_shared_object(sharing_ptr<T>& p) {
    detail::require_run("mesh::destroy_shared_object"); // the control block is unmapped once the run has returned
    if (!p) return;
    detail::control_block* cb = p.block();
    if (&cb->ops() == &detail::destroyed_ops)
        throw taco::usage_error("mesh::destroy_shared_object: the object was destroyed already (through a copy "
                                "of its sharing_ptr?)");
    // Before the writer below: in debug builds a writer held here would
    // otherwise abort as a second writer, with a message about writers.
    if (const detail::proxy_counts& held = detail::counts_in(private_instance(cb->state)); held.readers | held.writers)
        detail::proxies_held(held);
    {
        writer<T> w(p); // acquire: the current state, and the debug single-writer check
        cb->type().destroy(cb->object);
        // the writer's release would write the destroyed bytes back: skip it (not modified)
    }
    void* object = cb->object;
    void* state = cb->state;
    deallocate(object, detail::object_memory<T>());
    deallocate_private(state);
    detail::free_parts(*cb);
    detail::retire(cb);
    p = {};
}

} // namespace mesh
