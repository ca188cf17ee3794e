#pragma once
// How a core orders its ready tasks (CCI paper, section IV.B): one policy,
// or tiers under a top-level policy (schedulers/hierarchical.hpp). Plain,
// trivially copyable data: it travels to every core of a run, across
// processes and ranks too, in taco::launch_args.
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include <taco/usage_error.hpp>

namespace taco {

enum class policy { fifo, priority, edf };

/// One tier of a hierarchical scheduler: its own policy, and its priority
/// at the top level (which a priority top level runs highest first).
struct tier {
    policy kind = policy::fifo;
    int priority = 0;
};

/// The tiers of a hierarchical scheduler, tier i for the tasks whose
/// schedule::tier is i. None: the run's policy alone, no hierarchy.
struct scheduling_tiers {
    static constexpr std::size_t max = 4;
    std::array<taco::tier, max> tier{};
    std::uint8_t count = 0;

    constexpr scheduling_tiers() = default;
    scheduling_tiers(std::initializer_list<taco::tier> tiers) {
        if (tiers.size() > max)
            throw usage_error("taco::scheduling_tiers: at most 4 tiers under the top level (stack the policies "
                              "you need into 4, or give tasks of one tier priorities or deadlines)");
        for (const taco::tier& t : tiers) tier[count++] = t;
    }
};

} // namespace taco
