#pragma once
// Starting a program on every core. The platform comes from the
// configuration's type (config::platform), so nothing else in a program
// names it: `taco::run(tacomesh::posix::config{.cores = 4}, main)`.
#include <cstddef>
#include <exception>
#include <string>
#include <type_traits>

#include <taco/platform/platform.hpp>
#include <taco/runtime/core.hpp>
#include <taco/runtime/platform_core.hpp>
#include <taco/schedulers/any.hpp>
#include <taco/usage_error.hpp>

namespace taco {

/// Options of a run that belong to TACO, not to the platform.
struct run_options {
    /// Scheduling policy of every core's tasks; with tiers, the top level's.
    policy scheduling = policy::fifo;
    /// Tiers under the policy (schedulers/hierarchical.hpp), each of its
    /// own policy, a task in the one its schedule::tier names; none: one
    /// level. E.g. {{policy::fifo, 1}, {policy::edf, 0}} under
    /// policy::priority: FIFO work before EDF work.
    scheduling_tiers tiers{};
};

namespace detail {
struct stop_message {
    void operator()() const { runtime().request_stop(); }
};
} // namespace detail

/// Start the program on every core of the configuration's platform: core 0
/// runs main(), the other cores serve invocations; when main() returns, every
/// core stops. An exception from main() is rethrown here. Work still in
/// flight when main() returns is abandoned, as when a normal program returns
/// from main: wait for the futures you need first.
template <class Config, class Main>
void run(const Config& config, Main&& main, const run_options& options = {}) {
    static_assert(requires { typename Config::platform; },
                  "taco::run: the first argument must be a platform's configuration "
                  "(e.g. tacomesh::posix::config), whose `platform` member names the platform");
    using P = typename Config::platform;
    static_assert(platform<P>, "taco::run: the configuration's platform does not satisfy taco::platform "
                               "(see taco/platform/platform.hpp)");
    if (detail::tls_runtime)
        throw usage_error("taco::run: called on core " + std::to_string(this_core()) +
                          " of a program that is already running; one taco::run at a time: start the next "
                          "after this one has returned, or use the running cores (taco::async, taco::call)");
    struct context {
        launch_args args; // first: all that cores other than 0 read (see launch_args)
        std::remove_reference_t<Main>* main;
        std::exception_ptr error;
    } ctx{{options.scheduling, options.tiers}, &main, nullptr};
    static_assert(std::is_standard_layout_v<context> && offsetof(context, args) == 0);
    P::launch(
        config,
        +[](typename P::endpoint& ep, void* arg) {
            const launch_args& args = *static_cast<const launch_args*>(arg);
            detail::platform_core<P> rt(ep, args.scheduling, args.tiers);
            if (ep.id() != 0) {
                rt.run_until_stopped();
                return;
            }
            auto& c = *static_cast<context*>(arg);
            try {
                (*c.main)();
            } catch (...) {
                c.error = std::current_exception();
            }
            detail::core& self = rt;
            for (core_id d = 1; d < self.core_count(); ++d) self.send<detail::stop_message>(d);
            self.wait_until([&] { return self.queued_count() == 0; });
        },
        &ctx);
    if (ctx.error) std::rethrow_exception(ctx.error);
}

} // namespace taco
