#pragma once
// No consistency events: for memory the hardware keeps coherent (threads
// mode, non-cached memory). On emulated cached memory (process mode) a reader
// keeps whatever its view held: the test that proves the emulation is real.
#include <cstdint>

#include <mesh/controller.hpp>

namespace mesh::controllers {

struct noop {
    static constexpr const char* name = "noop";
    struct state {};
    static void adopt(controlled_object&, state&, std::uint64_t) noexcept {}
    static void acquire_read(controlled_object&, state&) noexcept {}
    static void release_read(controlled_object&, state&) noexcept {}
    static void acquire_write(controlled_object&, state&) noexcept {}
    static void release_write(controlled_object&, state&, bool) noexcept {}
};

} // namespace mesh::controllers
