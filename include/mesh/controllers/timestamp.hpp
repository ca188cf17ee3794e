#pragma once
// Timestamp (TS) controller, MESH paper section III.B (after Min and Baer's
// timestamp-based coherence): each object has a generation counter in fast
// shared memory (the control block's version) and each core keeps the last
// value it saw. An acquire that finds the counter unchanged does nothing but
// compare; a release of a modified object writes back and bumps the counter.
// No messages at all: readers pull, instead of the writer pushing flags.
#include <cstdint>

#include <mesh/controller.hpp>

namespace mesh::controllers {

struct timestamp {
    static constexpr const char* name = "timestamp";
    struct state {
        std::uint64_t seen;
    };
    static void adopt(controlled_object&, state& s, std::uint64_t version) noexcept { s.seen = version; }
    static void acquire_read(controlled_object& o, state& s) {
        // version() and, only if it moved, a refresh (tracked objects: of
        // what changed since); between hosts, one exchange for both.
        o.make_current(s.seen);
    }
    static void release_read(controlled_object&, state&) noexcept {}
    static void acquire_write(controlled_object& o, state& s) { acquire_read(o, s); }
    static void release_write(controlled_object& o, state& s, bool modified) {
        if (modified) s.seen = o.publish();
    }
};

} // namespace mesh::controllers
