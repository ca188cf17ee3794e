#pragma once
// TACO on the PC stand-in, bare metal (taco::platform; README "TACO bare
// metal"): every booted core is a TACO core, invocations travel through the
// MPB channels (mpb_channel.hpp, the protocol code of the chip and the
// emulation) in pc::hardware's MPB stand-ins, and an idle core sleeps in
// hlt until a sender's interrupt wakes it (the CCI paper's interrupt-driven
// mode). Needs the hosted C++ runtime of the image (pc/runtime.cpp).
//
// Bare metal has no threads to start: every core already runs
// tacomesh_scc_main. Core 0 calls taco::run (platform::launch); the others
// call platform::serve(), which runs each launch's entry on them and
// returns once core 0 calls platform::shut_down().
//
// Idle and wake-up, without a lost wake-up: a core about to sleep raises
// its `sleeping` word, then (after a full fence) looks at its channels'
// flag bytes once more and sleeps only if nothing came; a sender publishes
// (whose last step, flush_wcb, is a full fence here) and then reads the
// receiver's word, interrupting it if it is up. One of the two sees the
// other's store (both fence between their store and their load).
//
// Preemptive invocations (taco::preemption_endpoint), the chip's interrupt
// path: a sender of an urgent invocation to a core that computes inside
// taco::preemptible also sends it the preemption IPI, whose handler runs
// the urgent invocations there, between two instructions of the
// computation (taco/preemption.hpp says what they may touch). As on the
// host platforms, only in the program's own code: an interrupt that finds
// the core in the libraries (the C++ runtime, runtime.cpp: the heap's lock
// is taken with interrupts off, but libstdc++'s own locks are not) tries
// again at the next timer tick, about 1 ms later. Interrupts stay off in the
// handler, so interruptions do not nest.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>

#include <taco/core_id.hpp>
#include <taco/platform/platform.hpp>
#include <taco/platform/preemption_endpoint.hpp>
#include <taco/runtime/core.hpp>
#include <tacomesh/scc/mpb_channel.hpp>
#include <tacomesh/scc/pc/hardware.hpp>
#include <tacomesh/scc/pc/runtime.hpp>

namespace tacomesh::scc::pc {

class platform;
class endpoint;

struct config {
    using platform = pc::platform;
};

namespace detail {
/// The cores' shared words: sleeping and urgent flags, and the launch
/// handshake (what to run, which launch, who has finished it).
struct launch_state {
    std::uint32_t sleeping[scc::max_cores];
    std::uint32_t urgent[scc::max_cores];
    std::uint32_t preemptible[scc::max_cores]; ///< inside taco::preemptible: an urgent sender interrupts
    std::uint32_t retry[scc::max_cores];       ///< an interruption found the core in the libraries
    std::uint32_t preemptions[scc::max_cores]; ///< interruptions that ran urgent invocations
    void (*entry)(endpoint&, void*);
    void* arg;
    std::uint32_t generation, finished, shut_down;
    std::exception_ptr* errors; ///< one per core, on core 0's stack during a launch
};
inline constinit launch_state launch{};

extern "C" {
extern const std::byte __library_text_start[], __library_text_end[]; // image.ld
}

/// The preemption IPI's hook (and the timer's, for a retry): the urgent
/// invocations, if the core is inside taco::preemptible and was interrupted
/// in the program's own code.
inline void preempt(std::uint32_t eip) noexcept {
    const core_index me = apic::self();
    if (!__atomic_load_n(&launch.preemptible[me], __ATOMIC_ACQUIRE)) return;
    const auto* at = reinterpret_cast<const std::byte*>(std::uintptr_t(eip));
    if (at >= __library_text_start && at < __library_text_end) {
        __atomic_store_n(&launch.retry[me], 1u, __ATOMIC_RELAXED);
        return;
    }
    __atomic_store_n(&launch.retry[me], 0u, __ATOMIC_RELAXED);
    if (taco::detail::core* rt = taco::detail::tls_runtime; rt && rt->preemptible_now()) {
        ++launch.preemptions[me];
        rt->preempt_now();
    }
}
inline void preempt_retry(std::uint32_t eip) noexcept {
    if (__atomic_load_n(&launch.retry[apic::self()], __ATOMIC_RELAXED)) preempt(eip);
}
} // namespace detail

class endpoint {
public:
    endpoint() : channels_(hw_) {}
    endpoint(const endpoint&) = delete;
    endpoint& operator=(const endpoint&) = delete;

    taco::core_id id() const noexcept { return hw_.core(); }
    taco::core_id core_count() const noexcept { return hw_.core_count(); }

    std::byte* try_acquire(taco::core_id dest) { return channels_.try_acquire(dest); }
    void publish(taco::core_id dest, std::size_t length) {
        channels_.publish(dest, length); // ends with a full fence (flush_wcb)
        wake(dest);
    }
    template <class Handler>
    std::size_t poll(Handler&& handler) {
        return channels_.poll([&](std::byte* bytes, std::size_t, core_index) { handler(bytes); });
    }
    /// Sleep in hlt until a message or an urgent signal may have come, or
    /// `limit` has passed (at most 10 ms at a time: the runtime looks at its
    /// timers after each wake-up).
    void idle(std::chrono::nanoseconds limit) {
        auto& l = detail::launch;
        const core_index me = hw_.core();
        __atomic_store_n(&l.sleeping[me], 1u, __ATOMIC_SEQ_CST); // xchg: a full fence before the look
        if (!channels_.pending() && __atomic_load_n(&l.urgent[me], __ATOMIC_ACQUIRE) == 0) {
            const auto ns = std::min<std::chrono::nanoseconds>(limit, std::chrono::milliseconds(10)).count();
            if (ns > 0) hw_.halt(std::uint64_t(ns) * pc::detail::tsc_hz() / 1'000'000'000ull + 1);
        }
        __atomic_store_n(&l.sleeping[me], 0u, __ATOMIC_RELEASE);
        static_cast<void>(hw_.take_interrupt());
    }
    void pause() noexcept { asm volatile("pause"); }
    void signal_urgent(taco::core_id dest) {
        auto& l = detail::launch;
        // seq_cst store, then load: against allow_preemption's store and
        // load in the other order, one of the two sees the other's.
        __atomic_store_n(&l.urgent[dest], 1u, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&l.preemptible[dest], __ATOMIC_SEQ_CST)) interrupt_computation(dest);
        wake(dest);
    }
    /// Entering (on) and leaving taco::preemptible's outermost computation.
    void allow_preemption(bool on) {
        auto& l = detail::launch;
        const core_index me = hw_.core();
        __atomic_store_n(&l.preemptible[me], on ? 1u : 0u, __ATOMIC_SEQ_CST);
        if (!on) return;
        // Signalled before we were armed: interrupt ourselves now.
        if (__atomic_load_n(&l.urgent[me], __ATOMIC_SEQ_CST)) interrupt_computation(me);
    }
    /// Urgent invocations that interrupted a computation on this core so far.
    std::uint32_t preemptions() const noexcept { return detail::launch.preemptions[hw_.core()]; }
    bool take_urgent() { return __atomic_exchange_n(&detail::launch.urgent[hw_.core()], 0u, __ATOMIC_ACQ_REL) != 0; }

private:
    void interrupt_computation(taco::core_id dest) {
        const std::uintptr_t flags = pc::detail::save_flags_cli();
        apic::send(dest, apic::assert_level | preempt_vector);
        pc::detail::restore_flags(flags);
    }
    /// Both callers have fenced since their store (publish's flush_wcb,
    /// signal_urgent's seq_cst store): no second fence on the send path.
    void wake(taco::core_id dest) {
        if (__atomic_load_n(&detail::launch.sleeping[dest], __ATOMIC_SEQ_CST)) hw_.interrupt(dest);
    }

    hardware hw_;
    mpb_channels<hardware> channels_;
};

/// The platform (satisfies taco::platform).
class platform {
public:
    using endpoint = pc::endpoint;
    using config = pc::config;
    static constexpr std::size_t message_bytes = mpb_channels<hardware>::payload_bytes;
    static constexpr std::size_t message_align = 8;

    /// On core 0: run entry(endpoint, arg) on every booted core (the others
    /// inside serve()); returns when all have returned, rethrowing the first
    /// core's exception, if any.
    static void launch(const config&, void (*entry)(endpoint&, void*), void* arg) {
        auto& l = detail::launch;
        hardware hw;
        std::exception_ptr errors[scc::max_cores];
        tacomesh_pc_preempt_hook = &detail::preempt;
        tacomesh_pc_timer_hook = &detail::preempt_retry;
        l.entry = entry;
        l.arg = arg;
        l.errors = errors;
        __atomic_store_n(&l.finished, 0u, __ATOMIC_RELAXED);
        __atomic_fetch_add(&l.generation, 1u, __ATOMIC_RELEASE);
        for (core_index c = 1; c < hw.core_count(); ++c) hw.interrupt(c);
        run_entry(0);
        while (__atomic_load_n(&l.finished, __ATOMIC_ACQUIRE) < hw.core_count()) hw.halt(1'000'000);
        for (core_index c = 0; c < hw.core_count(); ++c)
            if (errors[c]) std::rethrow_exception(errors[c]);
    }

    /// On every core but 0: take part in each launch until shut_down().
    static void serve() {
        auto& l = detail::launch;
        hardware hw;
        std::uint32_t seen = 0;
        for (;;) {
            while (__atomic_load_n(&l.generation, __ATOMIC_ACQUIRE) == seen) {
                if (__atomic_load_n(&l.shut_down, __ATOMIC_ACQUIRE)) return;
                hw.halt(10'000'000);
                static_cast<void>(hw.take_interrupt());
            }
            ++seen;
            run_entry(hw.core());
        }
    }

    /// On core 0, after its last launch: serve() returns on every core.
    static void shut_down() {
        hardware hw;
        __atomic_store_n(&detail::launch.shut_down, 1u, __ATOMIC_RELEASE);
        for (core_index c = 1; c < hw.core_count(); ++c) hw.interrupt(c);
    }

private:
    /// Each core's endpoint lives from its first launch to the end of the
    /// boot: the channels' sequence numbers in the MPBs outlast a launch.
    static endpoint& endpoint_of(core_index core) {
        static endpoint* endpoints[scc::max_cores];
        if (!endpoints[core]) endpoints[core] = new endpoint;
        return *endpoints[core];
    }
    static void run_entry(core_index core) {
        auto& l = detail::launch;
        try {
            l.entry(endpoint_of(core), l.arg);
        } catch (...) {
            l.errors[core] = std::current_exception();
        }
        __atomic_fetch_add(&l.finished, 1u, __ATOMIC_ACQ_REL);
        hardware hw;
        if (core != 0) hw.interrupt(0);
    }
};

static_assert(taco::platform<platform>);
static_assert(taco::preemption_endpoint<endpoint>);

} // namespace tacomesh::scc::pc
