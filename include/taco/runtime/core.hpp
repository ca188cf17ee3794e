#pragma once
// The per-core runtime loop (CCI paper, section IV): it polls the platform's
// channels (in order per source), runs short invocations straight from the
// message buffer, keeps messages that did not fit a full channel in a local
// queue per destination (never dropped, never blocking the sender), runs
// ready tasks and due timers, and idles through the platform when there is
// nothing to do.
//
// This class knows no platform: the channel and memory operations it needs
// are virtual, implemented once by platform_core<P>. Everything above it
// (invocations, futures, tasks, groups, MESH) reaches the running core
// through detail::runtime() and compiles without any platform.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include <taco/config.hpp>
#include <taco/core_id.hpp>
#include <taco/core_stats.hpp>
#include <taco/runtime/bulk_port.hpp>
#include <taco/runtime/call_slots.hpp>
#include <taco/runtime/core_locals.hpp>
#include <taco/runtime/memory_port.hpp>
#include <taco/runtime/message.hpp>
#include <taco/runtime/send_queue.hpp>
#include <taco/schedulers/any.hpp>
#include <taco/stopped_error.hpp>
#include <taco/usage_error.hpp>
#include <taco/task.hpp>
#include <taco/detail/core_identity.hpp>
#include <taco/detail/thread_stack.hpp>
#include <taco/detail/timer_queue.hpp>

namespace taco::detail {

/// Whether a send that had to queue locally may make the sender serve
/// invocations (back-pressure, see apply_backpressure). The pieces of one
/// carried invocation (bulk.hpp) go unpaced, so that nothing the sender
/// runs meanwhile can put a message of its own between them.
enum class pacing : bool { unpaced, paced };

/// A send or a wait inside taco::preemptible (debug checks): an urgent
/// invocation could interrupt it halfway through the runtime's state.
[[noreturn, gnu::cold]] inline void inside_preemptible() {
    throw usage_error("taco: a TACO call that sends or waits inside taco::preemptible, whose computation an urgent "
                      "invocation may interrupt at any instruction, also in the middle of that call; compute "
                      "there, and invoke before or after it");
}

class core : public memory_port, public bulk_port {
public:
    core(core_id id, core_id count, policy scheduling, const scheduling_tiers& tiers = {});
    virtual ~core();
    core(const core&) = delete;
    core& operator=(const core&) = delete;

    core_id id() const noexcept { return id_; }
    core_id core_count() const noexcept { return count_; }
    const core_stats& stats() const noexcept { return stats_; }

    /// Send the message Msg{args...} to `dest`. Constructed in place in the
    /// channel when it has room and nothing older to `dest` waits locally;
    /// otherwise queued locally (in order) and flushed by progress().
    template <class Msg, pacing Pace = pacing::paced, class... Args>
    void send(core_id dest, Args&&... args) {
        check_message<Msg>();
#if TACO_DEBUG_CHECKS
        if (preemptible_now()) [[unlikely]]
            inside_preemptible();
#endif
        // Messages queued for dest go first (order per destination); try to
        // move them now rather than queueing behind them until the next poll.
        // Nothing queued at all is the common case: one load decides it.
        if (queued_.empty() || !queued_.waiting(dest) || drain(dest)) [[likely]] {
            if (std::byte* slot = try_acquire(dest)) [[likely]] {
                write_message<Msg>(slot, std::forward<Args>(args)...);
                publish(dest, message_length<Msg>);
                ++stats_.sent;
                return;
            }
        }
        // The message is built here, on the slow path, and handed over
        // whole: were the arguments passed by reference to the out-of-line
        // defer(), their addresses would escape and the fast path above
        // would have to build them in memory and copy them into the slot.
        defer<Pace>(dest, Msg{std::forward<Args>(args)...});
    }

    /// Send Msg{args...} to `dest` behind the messages already queued for it,
    /// without trying the channel first: the rest of a burst (the pieces of
    /// a carried buffer, bulk.hpp) once one has found the channel full.
    /// Trying it for each would read the receiver's slot line each time (a
    /// cache miss per message while the ring is full); progress() moves them.
    template <class Msg, class... Args>
    void send_queued(core_id dest, Args&&... args) {
        check_message<Msg>();
        if (queued_.empty() || !queued_.waiting(dest)) return send<Msg, pacing::unpaced>(dest, std::forward<Args>(args)...);
        defer<pacing::unpaced>(dest, Msg{std::forward<Args>(args)...});
    }

    /// Back-pressure owed by unpaced sends (a no-op below the soft limit).
    void pace(core_id dest) {
        if (queued_.size() > queued_soft_limit) [[unlikely]] apply_backpressure(dest);
    }

    /// Carried bytes (bulk.hpp) received from `source` for the invocation
    /// it sends next. A new inbox starts as a spare buffer (see give_back_bulk).
    std::vector<std::byte>& bulk_inbox(core_id source) {
        auto [at, fresh] = bulk_in_.try_emplace(source);
        if (fresh && bulk_spares_ > 0) at->second = std::move(bulk_spare_[--bulk_spares_]);
        return at->second;
    }
    std::vector<std::byte> take_bulk(core_id source) {
        auto node = bulk_in_.extract(source);
        return node ? std::move(node.mapped()) : std::vector<std::byte>{};
    }
    /// A buffer take_bulk returned, handed back once its invocation is done
    /// with it: kept, emptied but with its capacity, for the next inbox.
    /// Freed, a 64 KiB buffer costs more than its copy: malloc gives a
    /// thread's arena back to the kernel when its top is free, and every
    /// piece of the next one faults its page in again (core threads moved
    /// carried strings at a third of the speed of core processes, whose
    /// single-threaded malloc keeps its memory), and growing it piece by
    /// piece reallocates and copies it about log2(size / piece) times.
    void give_back_bulk(std::vector<std::byte>&& bytes) noexcept {
        if (bulk_spares_ == bulk_spare_.size() || bytes.capacity() == 0 || bytes.capacity() > max_spare_bulk_bytes)
            return; // freed with `bytes` by the caller
        bytes.clear();
        bulk_spare_[bulk_spares_++] = std::move(bytes);
    }
    /// Spare buffers larger than this are freed (malloc maps such sizes
    /// apart and unmaps them anyway; a core should not keep 256 MiB).
    static constexpr std::size_t max_spare_bulk_bytes = std::size_t(4) << 20;

    /// One round of work: flush locally queued sends, run received messages
    /// (in order per source), move due timers, then run one ready task.
    /// Messages go first: invocations are short and may make tasks ready.
    /// Returns how many messages and tasks were moved or run.
    ///
    /// Small enough to inline into every wait: each rarer step (queued sends,
    /// timers, tasks) is one test here and an out-of-line call when it has
    /// work (a task switch alone would otherwise make this too large to
    /// inline, which cost ~20 instructions per round trip).
    [[gnu::always_inline]] std::size_t progress() {
        return progress_polling([this] { return poll_channels(); });
    }

    /// A scheduling point for long-running code: if an urgent invocation has
    /// been signalled, run the channels now (all of them, in order per source:
    /// the urgent message may sit behind older ones). Costs one load otherwise.
    bool urgent_point() {
        if (!take_urgent()) [[likely]] return false;
        if (!queued_.empty()) flush();
        stats_.received += poll_channels();
        return true;
    }
    virtual void signal_urgent(core_id dest) = 0;
    /// After sending an urgent message to `dest`: signal dest now, and if
    /// the channel was full (the message waits in the local queue; at 48
    /// cores the SCC's MPB holds one message per sender) again as the
    /// messages before it, and then it, enter the channel. Each signal makes
    /// a computing dest take what the channel holds, which frees room; the
    /// first alone left the urgent message to wait for the end of the
    /// computation it was to interrupt.
    void urgent_sent(core_id dest) {
        if (!queued_.empty() && queued_.waiting(dest)) queued_.mark_urgent(dest);
        signal_urgent(dest);
    }

    // ---- preemptive invocations (preemption.hpp) ----
    // The state lives in atomics only because the platform's interrupt (a
    // signal handler on this core's thread) reads it between any two
    // instructions: relaxed suffices (one thread), and the stores compile
    // to plain moves that the compiler may not reorder across the
    // signal fences below.
    /// Inside taco::preemptible, and not running its interruption.
    bool preemptible_now() const noexcept {
        return preemptible_depth_.load(std::memory_order_relaxed) != 0 && !preempting_.load(std::memory_order_relaxed);
    }
    /// Running urgent invocations that interrupted a preemptible computation.
    bool preempting() const noexcept { return preempting_.load(std::memory_order_relaxed); }
    void enter_preemptible() {
        // What was signalled before the computation runs before it, here,
        // not through an interrupt at arming: cheaper (no signal, no IPI),
        // and the flag may be stale. An ordinary poll serves urgent
        // messages without clearing it, so after one the arming interrupted
        // the computation for nothing; on the emulated SCC that interrupt
        // also put an urgent invocation read before the computation started
        // on the interrupt path. Before the depth goes up: what runs here is
        // not inside the computation, and a throw leaves nothing to undo.
        if (preemptible_depth_.load(std::memory_order_relaxed) == 0) urgent_point();
        const bool outermost = preemptible_depth_.fetch_add(1, std::memory_order_relaxed) == 0;
        std::atomic_signal_fence(std::memory_order_seq_cst);
        // Armed after the depth is up: the platform interrupts at once for
        // what was signalled before it was armed.
        if (outermost) allow_interrupts(true);
    }
    /// Leave (and, when the outermost, disarm); then what the interruptions
    /// could not report goes to the caller, and what came too late runs.
    void leave_preemptible() {
        std::atomic_signal_fence(std::memory_order_seq_cst);
        if (preemptible_depth_.fetch_sub(1, std::memory_order_relaxed) == 1) allow_interrupts(false);
        std::atomic_signal_fence(std::memory_order_seq_cst);
        if (preempt_error_) std::rethrow_exception(std::exchange(preempt_error_, nullptr));
        if (preemptible_depth_.load(std::memory_order_relaxed) == 0) urgent_point();
    }
    /// The platform's interrupt: run the urgent invocations now if this
    /// core computes inside taco::preemptible and is not running them
    /// already. The caller has checked that the interrupted code is the
    /// program's own (not a library that may hold a lock the invocations
    /// would take). Never throws: an exception (this core stopping) waits
    /// for leave_preemptible.
    void preempt_now() noexcept {
        if (!preemptible_now()) return;
        ++stats_.interruptions;
        preempting_.store(true, std::memory_order_relaxed);
        std::atomic_signal_fence(std::memory_order_seq_cst);
        try {
            urgent_point();
        } catch (...) {
            if (!preempt_error_) preempt_error_ = std::current_exception();
        }
        std::atomic_signal_fence(std::memory_order_seq_cst);
        preempting_.store(false, std::memory_order_relaxed);
    }

    /// Make `t` ready: it runs when the scheduler picks it. Never allocates.
    /// Ready is a state, not a count: a task made ready twice before it
    /// runs (taco::start twice, a start racing its awaited result) runs
    /// once. Linking it again would corrupt the intrusive queue.
    void make_ready(task& t) {
        if (!t.queued()) ready_.push(t);
    }
    /// The task running on this core (nullptr: main, or an invocation run
    /// straight from the channel).
    task* current_task() const noexcept { return current_; }
    /// Run `t` here and now, as its task, if the scheduler would pick it
    /// next whatever its policy: nothing is ready, no task runs (the core is
    /// between tasks: an arrival handled by the poll loop, or main waiting),
    /// and no preemptive interruption is in progress. Saves the ready
    /// queue's push and pop for a task made ready by an arrival at an idle
    /// core (sinks/activity_sink.hpp). False: make it ready instead.
    bool run_if_idle(task& t) {
        if (current_ || !ready_.empty() || preempting() || t.queued()) return false;
        current_ = &t;
        t.run();
        current_ = nullptr;
        return true;
    }

    /// Run `t` when its due time has come, then as a task.
    void add_timer(timer_task& t) { timers_.add(t); }
    /// Drop a timer that has not fired yet.
    void cancel_timer(timer_task& t) { timers_.cancel(t); }
    std::size_t pending_timers() const noexcept { return timers_.size(); }

    call_slots& slots() noexcept { return slots_; }
    void count_late_result() noexcept { ++stats_.late_results; }

    /// This core's instance of T for this run (see taco::core_local).
    template <class T>
    T& core_local() {
        return locals_.template get<T>();
    }

    /// Serve invocations until pred() holds: a core waiting for a result keeps
    /// running its incoming invocations, so two cores that sync-call each
    /// other do not deadlock.
    template <class Pred>
    void wait_until(Pred&& pred) {
        if (!wait_until_or_stopped(pred)) throw_stopped();
    }
    /// A wait ends because the core stops: with the platform's error if that
    /// is why, else stopped_error.
    [[noreturn]] void throw_stopped() {
        if (platform_failure_) std::rethrow_exception(platform_failure_);
        throw stopped_error();
    }
    /// As wait_until, but returns false instead of throwing when stopped.
    template <class Pred>
    bool wait_until_or_stopped(Pred&& pred) {
        if (!pred()) {
#if TACO_DEBUG_CHECKS
            if (preemptible_now()) [[unlikely]]
                inside_preemptible();
#endif
            check_stack_room();
        }
        while (!pred()) {
            if (stopped_) return false;
            if (progress() == 0 && !pred()) idle_once();
        }
        return true;
    }

    /// Room left on the thread's stack, below which a wait that would serve
    /// invocations nested on it ends the program with a report instead.
    static constexpr std::size_t min_stack_room = 256 * 1024;

    /// The loop of every core but the one running main: serve until stopped.
    void run_until_stopped() {
        while (!stopped_) {
            try {
                if (progress() == 0 && !stopped_) idle_once();
            } catch (const stopped_error&) {
                // a handler's wait unwound: we are leaving anyway
            }
        }
    }
    void request_stop() noexcept { stopped_ = true; }

    /// Messages still queued locally (their channel was full).
    std::size_t queued_count() const noexcept { return queued_.size(); }
    /// Locally queued messages beyond which a sender serves invocations until
    /// half have left (see defer()).
    static constexpr std::size_t queued_soft_limit = 1024;

    /// A short wait that lets other cores on this CPU run; throws when the
    /// platform cannot go on.
    virtual void pause() = 0;

protected:
    /// Free core-local state and pending timers while the whole runtime
    /// still works (the derived platform_core calls it from its destructor).
    void release_state();

    // ---- the platform's channels (platform_core<P>) ----
    virtual std::byte* try_acquire(core_id dest) = 0;
    virtual void publish(core_id dest, std::size_t length) = 0;
    virtual std::size_t poll_channels() = 0;
    virtual void idle(std::chrono::nanoseconds limit) = 0;
    virtual bool take_urgent() = 0;
    /// Arm (or disarm) the platform's interrupt of this core for urgent
    /// invocations (taco::preemption_endpoint); nothing where it has none.
    virtual void allow_interrupts(bool on) = 0;
    // back-pressure (taco::backpressure_endpoint; defaults: poll everything)
    virtual void waiting_for(core_id peer, std::size_t backlog) = 0;
    virtual std::size_t poll_channels_but(core_id peer, std::size_t backlog) = 0;

private:
    // A wait serves the next invocation on the same stack, whose handler
    // may wait again: a core with thousands of waiting handlers queued
    // nests them all, and nothing bounds the depth but the stack. On a
    // thread's stack (coroutines have stacks and a guard-page report of
    // their own) the program ends here with a report, while a report can
    // still be written, as after a coroutine's overflow, rather than in a
    // bare SIGSEGV at the guard page a few frames later. Not an exception:
    // the future's destructor waits as well, and cannot throw.
    // Two compares per wait: the bounds are read once, on the core's
    // thread (the only one that drives it).
    void check_stack_room() noexcept {
        const auto here = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
        if (!stack_known_) [[unlikely]] {
            const std::span<const std::byte> stack = detail::thread_stack(); // empty: unknown, never checked
            stack_low_ = reinterpret_cast<std::uintptr_t>(stack.data());
            stack_floor_ = stack_low_ + std::min(min_stack_room, stack.size() / 4);
            stack_known_ = true;
        }
        if (here >= stack_floor_ || here < stack_low_) [[likely]] return; // room left, or not on the thread's stack
        report_stack_room(here);
    }
    [[noreturn, gnu::noinline, gnu::cold]] void report_stack_room(std::uintptr_t here) const noexcept {
        const std::span<const std::byte> stack = detail::thread_stack();
        const std::size_t room = std::size_t(here - stack_low_);
        std::fprintf(stderr,
                     "taco: core %u's thread stack is nearly used up (%zu of %zu KiB left) by nested waits: a handler "
                     "that waits (future::get, sync, a barrier) serves the next invocation on the same stack, and "
                     "each of those may wait in turn. Run such handlers as coroutines (taco::as_coroutine), or "
                     "deliver their results to a continuation (taco::then) instead of waiting\n",
                     unsigned(id_), room / 1024, stack.size() / 1024);
        std::abort();
    }

    template <pacing Pace, class Msg>
    [[gnu::noinline]] void defer(core_id dest, const Msg& msg) {
        write_message<Msg>(queued_.push(dest, message_length<Msg>), msg);
        ++stats_.deferred;
        stats_.peak_queued = std::max<std::uint64_t>(stats_.peak_queued, queued_.size());
        if constexpr (Pace == pacing::paced) apply_backpressure(dest);
    }
    // Each out of line, so that progress() stays small (see there).
    [[gnu::noinline]] void apply_backpressure(core_id dest) {
        // A core that floods a slow receiver would otherwise grow its local
        // queue without bound. Past the soft limit the sender serves its own
        // incoming invocations until the queue has drained to half, but not
        // those of `dest`, the core it waits for: the replies they would ask
        // for could only join the queue (a peer flooding us with requests
        // whose replies it does not take grew it to millions), and a peer
        // that finds its channel to us full must come to serve our messages
        // in turn. The platform says when we must take dest's messages after
        // all: dest has ended its part, or waits too (for any core: waits
        // may form a cycle of any length, A for B for C for A, in which each
        // skipping the one it waits for stalled all) with a backlog at least
        // ours. Then the largest backlog is never skipped, so it drains and
        // nobody waits forever; and a core takes a waiting peer's requests
        // only while its own backlog is not the larger, so mutual serving
        // never raises the largest backlog (taking them whenever the peer
        // waited for us let the two backlogs random-walk apart: 72,000 on
        // a loaded host). The nesting cap keeps a handler that sends from
        // recursing without end; beyond it messages still queue, so nothing
        // is ever dropped.
        if (queued_.size() <= queued_soft_limit || backpressure_depth_ >= max_backpressure_depth) return;
        ++backpressure_depth_;
        const core_id outer = waiting_for_;
        waiting_for_ = dest;
        const auto restore = [&] {
            waiting_for_ = outer;
            waiting_for(outer, queued_.size());
            --backpressure_depth_;
        };
        try {
            while (queued_.size() > queued_soft_limit / 2) {
                if (stopped_) throw_stopped();
                // Announced each round: the peers compare backlogs as they are.
                waiting_for(dest, queued_.size());
                // The channel from dest skipped when the platform allows.
                if (progress_polling([&] { return poll_channels_but(dest, queued_.size()); }) == 0 &&
                    queued_.size() > queued_soft_limit / 2)
                    idle_once();
            }
        } catch (...) {
            restore();
            throw;
        }
        restore();
    }
    /// One round of progress() whose receiving step is `poll` (all
    /// channels, or all but one during back-pressure).
    template <class Poll>
    [[gnu::always_inline]] std::size_t progress_polling(Poll&& poll) {
        std::size_t n = queued_.empty() ? 0 : flush();
        const std::size_t r = poll();
        stats_.received += r;
        if (!timers_.empty()) [[unlikely]] n += fire_due_timers();
        if (!ready_.empty()) n += run_one_task();
        return n + r;
    }
    /// Move what fits of dest's queue into its channel; true if none is left.
    [[gnu::noinline]] bool drain(core_id dest) {
        return queued_.drain(
            dest,
            [&](const std::byte* bytes, std::size_t length) {
                std::byte* slot = try_acquire(dest);
                if (!slot) return false;
                std::memcpy(slot, bytes, length);
                publish(dest, length);
                ++stats_.sent;
                return true;
            },
            [&] { signal_urgent(dest); });
    }
    [[gnu::noinline]] std::size_t flush() {
        const std::size_t before = queued_.size();
        // Backwards: drain() may erase entry i, which only shifts entries
        // already visited.
        const auto& dests = queued_.destinations();
        for (std::size_t i = dests.size(); i-- > 0;) drain(dests[i]);
        return before - queued_.size();
    }
    [[gnu::noinline]] std::size_t run_one_task() {
        task* t = ready_.pop();
        if (!t) return 0;
        task* const outer = current_;
        current_ = t;
        t->run(); // may free t: do not touch it afterwards
        current_ = outer;
        return 1;
    }
    [[gnu::noinline]] std::size_t fire_due_timers() {
        std::size_t n = 0;
        const auto now = task_clock::now();
        while (timer_task* t = timers_.pop_due(now)) {
            make_ready(*t);
            ++n;
        }
        return n;
    }
    void idle_once();

    core_id id_, count_;
    send_queue queued_;
    schedulers::any ready_;
    timer_queue timers_;
    call_slots slots_;
    task* current_ = nullptr;
    core_stats stats_;
    static constexpr int max_backpressure_depth = 4;
    int backpressure_depth_ = 0;
    core_id waiting_for_ = no_core; // the destination the innermost back-pressure wait waits for
    bool stopped_ = false;
    std::exception_ptr platform_failure_;
    core_locals locals_;
    // The thread's stack: its start, and where waits stop nesting (see
    // check_stack_room); read at the first wait.
    std::uintptr_t stack_low_ = 0, stack_floor_ = 0;
    bool stack_known_ = false;
    std::atomic<std::uint32_t> preemptible_depth_{0};
    std::atomic<bool> preempting_{false};
    std::exception_ptr preempt_error_;
    // Sparse: only sources with a carried invocation half received.
    std::unordered_map<core_id, std::vector<std::byte>> bulk_in_;
    // Buffers of carried invocations that ran (give_back_bulk): a few, for
    // a few sources sending at once; a task holding its buffer longer keeps it.
    std::array<std::vector<std::byte>, 4> bulk_spare_;
    std::size_t bulk_spares_ = 0;
};

inline thread_local core* tls_runtime = nullptr;

[[noreturn]] inline void outside_a_core() {
    throw usage_error("taco: a TACO call outside taco::run (no core runs here: before or after the run, or on "
                      "a thread of the program's own); start the program with taco::run(config, main) and "
                      "invoke from its cores");
}

/// The runtime of the calling core. Outside a TACO run this is a usage error,
/// thrown before anything is sent, as every other misuse (a null dereference
/// before; then an abort, which a caller could not catch).
inline core& runtime() {
    core* rt = tls_runtime;
    if (!rt) [[unlikely]]
        outside_a_core();
    return *rt;
}

inline core::core(core_id id, core_id count, policy scheduling, const scheduling_tiers& tiers)
    : id_(id), count_(count), ready_(scheduling, tiers) {
    tls_runtime = this;
    tls_core = id;
    tls_core_count = count;
}

inline void core::release_state() {
    // Core-local state goes first: its destructors may still use the runtime.
    locals_.clear();
    // Timers that never fired (the program ended first) are freed, not run.
    while (timer_task* t = timers_.pop_due(task_clock::time_point::max())) t->discard();
}

inline core::~core() {
    tls_runtime = nullptr;
    tls_core = no_core;
    tls_core_count = 0;
}

inline void core::idle_once() {
    // A platform reports that it cannot go on (a core process died) by
    // throwing from idle/pause. The core stops, so that every wait unwinds,
    // including the non-throwing ones in destructors; waits that may throw
    // rethrow the platform's error rather than stopped_error.
    try {
        // With sends waiting for room, nobody would wake us: never sleep then.
        if (!queued_.empty()) return pause();
        if (timers_.empty()) return idle(std::chrono::nanoseconds::max());
        // A due time may sit at either end of the clock (saturated delays):
        // test before subtracting, so neither end wraps.
        const auto now = task_clock::now(), due = timers_.next_due();
        idle(due <= now ? std::chrono::nanoseconds(0) : std::chrono::nanoseconds(due - now));
    } catch (...) {
        platform_failure_ = std::current_exception();
        stopped_ = true;
    }
}

} // namespace taco::detail
