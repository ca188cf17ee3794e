#pragma once
// A platform (docs/architecture.md, section 1): a per-core endpoint, a configuration that
// names its platform, and a way to start a function on every core. Nothing
// in taco/ or mesh/ names a platform: taco::run deduces it from the
// configuration it is given, and platform_core<P> (runtime/platform_core.hpp)
// is the one place where a concrete platform meets the runtime.
#include <concepts>
#include <cstddef>

#include <taco/platform/channel_endpoint.hpp>
#include <taco/platform/memory_endpoint.hpp>
#include <taco/schedulers/any.hpp>

namespace taco {

/// What every core needs of a run besides its endpoint, trivially copyable:
/// `arg` of launch points to a struct whose first member is a launch_args.
/// A platform whose cores live in other processes started apart from the
/// caller (cluster ranks: platforms/mpi) copies it there and passes those
/// cores a pointer to the copy: `entry` reads nothing else for cores other
/// than 0.
struct launch_args {
    policy scheduling = policy::fifo;
    scheduling_tiers tiers{};
};

/// `launch(config, entry, arg)` calls `entry(endpoint&, arg)` once on each
/// core and returns when all have returned. `config::platform` names P, so
/// that `taco::run(config, main)` finds the platform from its argument.
template <class P>
concept platform = requires {
    typename P::endpoint;
    typename P::config;
    { P::message_bytes } -> std::convertible_to<std::size_t>;
    { P::message_align } -> std::convertible_to<std::size_t>;
    requires P::message_bytes >= taco::message_bytes;
    requires P::message_align >= taco::message_align;
    requires std::same_as<typename P::config::platform, P>;
} && channel_endpoint<typename P::endpoint>
  && requires(const typename P::config& cfg, void (*entry)(typename P::endpoint&, void*), void* arg) {
    { P::launch(cfg, entry, arg) } -> std::same_as<void>;
};

} // namespace taco
