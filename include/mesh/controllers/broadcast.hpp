#pragma once
// Broadcast (BC) controller, MESH paper section III.B: a needs-flush flag per
// core. Acquiring with the flag set invalidates this core's view; releasing a
// modified object writes it back while a TACO collective sets the flag on
// every other core (the two overlap), and the release returns once both are
// done, so whatever the writer does next (tell a reader, release a flag
// object) happens after every core's flag is set.
#include <cstdint>

#include <mesh/controller.hpp>

namespace mesh::controllers {

struct broadcast {
    static constexpr const char* name = "broadcast";
    struct state {
        std::uint32_t valid; // detail::flag_state layout: cleared by other cores' broadcasts
    };
    static void adopt(shared_object_view&, state& s, std::uint64_t) noexcept { s.valid = 1; }
    static void acquire_read(shared_object_view& v, state& s) {
        if (s.valid) [[likely]] return;
        v.invalidate();
        s.valid = 1;
    }
    static void release_read(shared_object_view&, state&) noexcept {}
    static void acquire_write(shared_object_view& v, state& s) { acquire_read(v, s); }
    static void release_write(shared_object_view& v, state&, bool modified) {
        if (!modified) return;
        taco::future<void> done;
        v.write_back([&] { v.notify_others(done); });
        done.get();
    }
};

} // namespace mesh::controllers
