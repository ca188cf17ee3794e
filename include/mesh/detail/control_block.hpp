#pragma once
// The shared half of a shared object: one control block per object, in the
// platform's on-chip memory while it has room (the SCC's MPB SRAM, where
// the MESH paper keeps the Timestamp counters), else in non-cached shared
// memory (memory.hpp, allocate_fast_block), plus the type-erased
// table of its controller's consistency events. The per-core half of the
// controller is its `state`, at one core-private logical address.
#include <atomic>
#include <cstddef>
#include <cstdint>

#include <taco/image_ptr.hpp>

namespace mesh::detail {

struct control_block;

/// Receives the extra ranges of a SharingAware object.
struct range_visitor {
    void* context;
    void (*visit)(void* context, const void* p, std::size_t bytes);
    void operator()(const void* p, std::size_t bytes) const { visit(context, p, bytes); }
};

/// What the controllers need of the object's type, erased: its destructor,
/// and for SharingAware objects the memory it owns beyond its own bytes
/// (extra_ranges) and, for those that track their changes (sharing_aware.hpp,
/// "write-back of only what changed"), the part of it that changed.
struct type_ops {
    void (*destroy)(void* object);
    /// All extra ranges; nullptr: none.
    void (*extra_ranges)(const void* object, range_visitor);
    /// The extra ranges written back after `version` (a reader's refresh);
    /// nullptr: the object does not track its changes.
    void (*changed_since)(const void* object, std::uint64_t version, range_visitor);
    /// The extra ranges changed since the last write-back, which from now on
    /// count as written back at `version` (the writer's publish).
    void (*take_changes)(void* object, std::uint64_t version, range_visitor);
};

/// A container inside a shared object (mesh::vector, mesh::string,
/// mesh::hash_map: containers/) that keeps memory of its own and tracks its
/// changes. It registers with the object while the object is constructed
/// (parts.hpp), so the controllers write back and refresh what it changed
/// with the object, with nothing for the object's type to list.
struct part_ops {
    void (*extra_ranges)(const void* part, range_visitor);
    void (*changed_since)(const void* part, std::uint64_t version, range_visitor);
    void (*take_changes)(void* part, std::uint64_t version, range_visitor);
};
struct part {
    std::size_t offset; ///< from the object's start: the part is at the same logical address on every core
    taco::image_ptr<const part_ops*> table; ///< image-relative, as the control block's tables
    const part_ops& ops() const noexcept { return *table.get_nonnull(); }
};
/// The parts of one object, in non-cached memory: written while the object
/// is constructed, before any other core knows it, and read-only afterwards.
struct part_list {
    std::size_t count;
    std::size_t capacity;
    part entries[1]; ///< capacity of them (allocated as one block)
};

/// A controller's consistency events (`state` is this core's instance of
/// the object's per-core block: proxy_counts, then the controller's state),
/// erased so that sharing_ptr<T> does not
/// name its controller (the controller is chosen when the object is made,
/// so benchmarks and applications can swap it at run time). One indirect
/// call per event; the table sits at the same address on every core (same
/// binary).
struct controller_ops {
    const char* name;
    std::size_t state_bytes;
    void (*adopt)(control_block&, void* state, std::uint64_t version);
    void (*acquire_read)(control_block&, void* state);
    void (*release_read)(control_block&, void* state);
    void (*acquire_write)(control_block&, void* state);
    void (*release_write)(control_block&, void* state, bool modified);
};

/// This core's live proxies of one object, at the start of the object's
/// core-private block (the controller's state follows it: state_offset).
/// destroy_shared_object refuses while either count is not zero: a proxy
/// that outlived the destroy would read freed memory, soon another
/// object's. Core-private, so counting costs a proxy an increment and a
/// decrement of a line its acquire reads anyway, no shared-memory traffic
/// (hence always on); and for the same reason a core sees only its own
/// proxies, not those other cores hold.
struct proxy_counts {
    std::uint32_t readers;
    std::uint32_t writers;
};
/// Where a controller's per-core state starts in its core-private block.
template <class State>
inline constexpr std::size_t state_offset = (sizeof(proxy_counts) + alignof(State) - 1) / alignof(State) * alignof(State);
template <class State>
State& state_in(void* slot) noexcept {
    return *reinterpret_cast<State*>(static_cast<char*>(slot) + state_offset<State>);
}
inline proxy_counts& counts_in(void* slot) noexcept { return *static_cast<proxy_counts*>(slot); }

/// One cache line: everything a reader's acquire touches is in it. The
/// tables are image-relative (taco/image_ptr.hpp): cluster ranks load the
/// program at different addresses, and all of them read this block.
struct alignas(64) control_block {
    taco::image_ptr<const controller_ops*> controller_table;
    void* object;
    std::size_t bytes;
    void* state; ///< core-private logical address of the per-core block: proxy_counts, then the controller's state
    taco::image_ptr<const type_ops*> type_table;
    /// Seqlock over the object's memory: odd while a write-back copies, and
    /// version / 2 counts the write-backs (the Timestamp controller's
    /// generation counter, MESH paper section III.B). A reader's copy is
    /// torn-free when it saw the same even value before and after.
    std::atomic<std::uint64_t> version{0};
    /// Overlapped Broadcast: writers between write-acquire and release.
    std::atomic<std::uint32_t> writes_pending{0};
    /// Debug builds: 1 + the core holding a writer proxy, 0 if none.
    std::atomic<std::uint32_t> writer{0};
    /// The containers inside the object (nullptr: none).
    part_list* parts = nullptr;

    const controller_ops& ops() const noexcept { return *controller_table.get_nonnull(); }
    const type_ops& type() const noexcept { return *type_table.get_nonnull(); }
};
static_assert(sizeof(control_block) == 64);

} // namespace mesh::detail
