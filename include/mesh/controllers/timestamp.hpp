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
    static void adopt(shared_object_view&, state& s, std::uint64_t version) noexcept { s.seen = version; }
    static void acquire_read(shared_object_view& v, state& s) {
        if (v.version() == s.seen) [[likely]] return;
        s.seen = v.invalidate();
    }
    static void release_read(shared_object_view&, state&) noexcept {}
    static void acquire_write(shared_object_view& v, state& s) { acquire_read(v, s); }
    static void release_write(shared_object_view& v, state& s, bool modified) {
        if (modified) s.seen = v.write_back();
    }
};

} // namespace mesh::controllers
