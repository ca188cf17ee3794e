#pragma once
// Broadcast (BC) controller, MESH paper section III.B: a needs-flush flag per
// core. Acquiring with the flag cleared refreshes this core's view;
// releasing a modified object writes it back while a TACO collective clears
// the flag on every other core (the two overlap), and the release returns
// once both are done, so whatever the writer does next (tell a reader,
// release a flag object) happens after every core's flag is cleared.
#include <cstdint>

#include <mesh/controller.hpp>
#include <taco/future.hpp>

namespace mesh::controllers {

struct broadcast {
    static constexpr const char* name = "broadcast";
    struct state {
        std::uint32_t valid; // this core's view is known to be current
        std::uint64_t seen;  // the version it was refreshed at: tracked objects refresh what changed since
    };

    /// Remote side: another core released a modified object.
    static void on_notify(state& s) noexcept { s.valid = 0; }

    static void adopt(controlled_object&, state& s, std::uint64_t version) noexcept {
        s.valid = 1;
        s.seen = version;
    }
    static void acquire_read(controlled_object& o, state& s) {
        if (s.valid) [[likely]] return;
        s.seen = o.refresh(s.seen);
        s.valid = 1;
    }
    static void release_read(controlled_object&, state&) noexcept {}
    static void acquire_write(controlled_object& o, state& s) { acquire_read(o, s); }
    static void release_write(controlled_object& o, state& s, bool modified) {
        if (!modified) return;
        taco::future<void> done;
        s.seen = o.publish([&] { o.notify_others<&on_notify>(done); });
        done.get();
    }
};

} // namespace mesh::controllers
