#pragma once
// Overlapped Broadcast (OV) controller, MESH paper section III.B: the
// invalidation broadcast starts at write-acquire, so it overlaps the whole
// write and is usually done by the release. The price the paper names: it
// cannot be skipped when the object ends up unmodified, and the controller
// keeps the pending broadcast as extra state.
//
// A reader whose flag the early broadcast cleared may acquire while the
// write is still going on; it then refreshes its view (getting the state
// before the write) but leaves its flag cleared, so its next acquire
// refreshes again: the write in progress is announced through the object's
// writes_pending count, which the writer drops only after its write-back.
#include <cstdint>
#include <memory>
#include <utility>

#include <mesh/controller.hpp>
#include <taco/future.hpp>

namespace mesh::controllers {

struct overlapped_broadcast {
    static constexpr const char* name = "overlapped_broadcast";
    struct state {
        std::uint32_t valid;             // this core's view is known to be current
        taco::future<void>* broadcast;   // on the writer's core while it writes
        std::uint64_t seen;              // the version it was refreshed at (tracked objects)
    };

    /// Remote side: another core acquired the object for writing.
    static void on_notify(state& s) noexcept { s.valid = 0; }

    static void adopt(controlled_object&, state& s, std::uint64_t version) noexcept {
        s.valid = 1;
        s.seen = version;
    }
    static void acquire_read(controlled_object& o, state& s) {
        if (s.valid) [[likely]] return;
        const bool writing = o.write_pending(); // before the copy: see the comment at the top
        s.seen = o.refresh(s.seen);
        s.valid = !writing;
    }
    static void release_read(controlled_object&, state&) noexcept {}
    static void acquire_write(controlled_object& o, state& s) {
        acquire_read(o, s);
        o.begin_pending_write();
        s.broadcast = new taco::future<void>;
        o.notify_others<&on_notify>(*s.broadcast);
    }
    static void release_write(controlled_object& o, state& s, bool modified) {
        if (modified) s.seen = o.publish();
        o.end_pending_write();
        const std::unique_ptr<taco::future<void>> b(std::exchange(s.broadcast, nullptr));
        b->get(); // usually done already: it started at acquire
    }
};

} // namespace mesh::controllers
