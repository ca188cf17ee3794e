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

#include <mesh/controller.hpp>

namespace mesh::controllers {

struct overlapped_broadcast {
    static constexpr const char* name = "overlapped_broadcast";
    struct state {
        std::uint32_t valid;             // detail::flag_state layout
        taco::future<void>* broadcast;   // on the writer's core while it writes
    };
    static void adopt(shared_object_view&, state& s, std::uint64_t) noexcept { s.valid = 1; }
    static void acquire_read(shared_object_view& v, state& s) {
        if (s.valid) [[likely]] return;
        const bool writing = v.write_pending(); // before the copy: see the comment at the top
        v.invalidate();
        s.valid = !writing;
    }
    static void release_read(shared_object_view&, state&) noexcept {}
    static void acquire_write(shared_object_view& v, state& s) {
        acquire_read(v, s);
        v.begin_pending_write();
        s.broadcast = new taco::future<void>;
        v.notify_others(*s.broadcast);
    }
    static void release_write(shared_object_view& v, state& s, bool modified) {
        if (modified) v.write_back();
        v.end_pending_write();
        taco::future<void>* b = s.broadcast;
        s.broadcast = nullptr;
        b->get(); // usually done already: it started at acquire
        delete b;
    }
};

} // namespace mesh::controllers
