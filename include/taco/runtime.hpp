#pragma once
// The per-core runtime loop (CCI paper, section IV): it polls the platform's
// channels (in order per source), runs short invocations straight from the
// message buffer, keeps messages that did not fit a full channel in a local
// queue per destination (never dropped, never blocking the sender), and idles
// through the platform when there is nothing to do.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <deque>
#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include <taco/core_id.hpp>
#include <taco/platform.hpp>
#include <taco/schedulers/any.hpp>
#include <taco/task.hpp>
#include <taco/detail/timer_queue.hpp>
#include <taco/remote_error.hpp>
#include <taco/this_core.hpp>

namespace taco {

/// Per-core message counters (for tests, tuning and the demo).
struct core_stats {
    std::uint64_t sent = 0;      ///< messages handed to the platform
    std::uint64_t received = 0;  ///< messages run by this core
    std::uint64_t deferred = 0;  ///< sends that found the channel full and were queued locally
    std::uint64_t late_results = 0; ///< results that came after their future timed out (dropped)
};

/// Options of a run that belong to TACO, not to the platform.
struct run_options {
    /// Scheduling policy of every core's tasks.
    policy scheduling = policy::fifo;
};

/// Thrown out of a wait (future::get, sync, wait_until) on a core that has
/// been told to stop because main() returned on core 0: the awaited result
/// will never come, and unwinding beats hanging the program at exit.
class stopped_error : public std::runtime_error {
public:
    stopped_error()
        : std::runtime_error("taco: the program is stopping (main returned on core 0) while this core "
                             "waited for a result; wait for your futures before main returns") {}
};

/// Called, on the core where it happened, for an exception thrown by an
/// invocation that has no continuation to report it to (fire-and-forget, or
/// a method continuation). The default prints the error and aborts: an
/// exception nobody can see must not vanish.
using uncaught_error_handler = void (*)(const error_info&);

namespace detail {

inline void default_uncaught(const error_info& e) {
    std::fprintf(stderr,
                 "taco: fire-and-forget invocation on core %u threw: %.*s\n"
                 "      (no continuation to report it to; use taco::sync / a future, or "
                 "taco::set_uncaught_error_handler)\n",
                 unsigned(e.origin), int(e.length), e.text);
    std::abort();
}
inline std::atomic<uncaught_error_handler> uncaught_handler{&default_uncaught};

template <platform P>
class core_runtime;

template <platform P>
inline thread_local core_runtime<P>* tls_runtime = nullptr;

/// Messages are [handler][payload]: the handler knows the payload's type.
inline constexpr std::size_t payload_offset = sizeof(message_handler);

template <class Msg>
void run_message(std::byte* m) {
    (*std::launder(reinterpret_cast<Msg*>(m + payload_offset)))();
}

inline void dispatch(std::byte* m) {
    message_handler h;
    std::memcpy(&h, m, sizeof h);
    h(m);
}

/// Compile-time capacity check that shows both sizes in the error trace.
template <std::size_t Needed, std::size_t Capacity>
constexpr bool fits_in_message() {
    static_assert(Needed <= Capacity,
                  "taco: this invocation does not fit one message (see Needed/Capacity in the "
                  "instantiation above: bytes of method pointer + arguments + continuation vs. the "
                  "platform's message size). Invocations carry small values only: pass a "
                  "taco::global_ptr to the data, or a MESH sharing_ptr for large data, instead.");
    return true;
}

/// Index of T among the types that have core-local state (taco::core_local).
inline std::size_t next_core_local_index() noexcept {
    static std::atomic<std::size_t> next{0};
    return next.fetch_add(1, std::memory_order_relaxed);
}
template <class T>
inline const std::size_t core_local_index = next_core_local_index();

/// An owned, type-erased core-local object.
struct local_slot {
    void* object = nullptr;
    void (*destroy)(void*) = nullptr;
    local_slot() = default;
    local_slot(local_slot&& o) noexcept : object(std::exchange(o.object, nullptr)), destroy(o.destroy) {}
    local_slot& operator=(local_slot&&) = delete;
    ~local_slot() {
        if (object) destroy(object);
    }
};

template <platform P>
class core_runtime {
public:
    using endpoint = typename P::endpoint;

    explicit core_runtime(endpoint& ep, const run_options& opt = {})
        : ep_(ep), pending_(ep.core_count()), sched_(opt.scheduling) {
        tls_runtime<P> = this;
        tls_core = ep.id();
        tls_core_count = ep.core_count();
    }
    ~core_runtime() {
        // Core-local state goes first: its destructors may still use the runtime.
        while (!locals_.empty()) locals_.pop_back();
        // Timers that never fired (the program ended first) are freed, not run.
        while (timer_task* t = timers_.pop_due(task_clock::time_point::max())) t->discard();
        tls_runtime<P> = nullptr;
        tls_core = no_core;
        tls_core_count = 0;
    }
    core_runtime(const core_runtime&) = delete;
    core_runtime& operator=(const core_runtime&) = delete;

    core_id id() const noexcept { return ep_.id(); }
    /// The platform's endpoint of this core (MESH reaches the platform's memory through it).
    endpoint& platform_endpoint() noexcept { return ep_; }

    /// This core's instance of T for this run (see taco::core_local).
    template <class T>
    T& local() {
        const std::size_t i = core_local_index<T>;
        if (i >= locals_.size() || !locals_[i].object) [[unlikely]] {
            T* t = new T(); // first: T's constructor may ask for other core-local state
            if (i >= locals_.size()) locals_.resize(i + 1);
            locals_[i].object = t;
            locals_[i].destroy = +[](void* p) { delete static_cast<T*>(p); };
        }
        return *static_cast<T*>(locals_[i].object);
    }
    core_id core_count() const noexcept { return ep_.core_count(); }
    const core_stats& stats() const noexcept { return stats_; }

    /// Send the message Msg{args...} to `dest`. Constructed in place in the
    /// channel when it has room and nothing older to `dest` waits locally;
    /// otherwise queued locally (in order) and flushed by progress().
    template <class Msg, class... Args>
    void send(core_id dest, Args&&... args) {
        static_assert(std::is_trivially_copyable_v<Msg>);
        static_assert(alignof(Msg) <= P::message_align,
                      "taco: over-aligned invocation arguments are not supported by this platform");
        static_assert(fits_in_message<sizeof(Msg) + payload_offset, P::message_bytes>());
        // Messages queued for dest go first (order per destination); try to
        // move them now rather than queueing behind them until the next poll.
        if (pending_[dest] == nullptr || drain(dest)) [[likely]] {
            if (std::byte* slot = ep_.try_acquire(dest)) [[likely]] {
                write<Msg>(slot, std::forward<Args>(args)...);
                ep_.publish(dest, message_length<Msg>);
                ++stats_.sent;
                return;
            }
        }
        defer<Msg>(dest, std::forward<Args>(args)...);
    }

    /// One round of work: flush locally queued sends, run received messages
    /// (in order per source), then run one ready task. Messages go first:
    /// invocations are short and may make tasks ready. Returns how many
    /// messages and tasks were moved or run.
    std::size_t progress() {
        std::size_t n = pending_dests_.empty() ? 0 : flush();
        std::size_t r = ep_.poll(&dispatch);
        stats_.received += r;
        if (!timers_.empty()) [[unlikely]] n += fire_due_timers();
        if (task* t = sched_.pop()) {
            run_task(*t);
            ++n;
        }
        return n + r;
    }

    /// A scheduling point for long-running code: if an urgent invocation has
    /// been signalled, run the channels now (all of them, in order per source:
    /// the urgent message may sit behind older ones). Costs one load otherwise.
    bool urgent_point() {
        if (!ep_.take_urgent()) [[likely]] return false;
        if (!pending_dests_.empty()) flush();
        stats_.received += ep_.poll(&dispatch);
        return true;
    }
    void signal_urgent(core_id dest) { ep_.signal_urgent(dest); }

    /// Make `t` ready: it runs when the scheduler picks it. Never allocates.
    void schedule(task& t) { sched_.push(t); }
    /// Run `t` (a timer) when its due time has come, then as a task.
    void add_timer(timer_task& t) { timers_.add(t); }
    /// Drop a timer that has not fired yet.
    void cancel_timer(timer_task& t) { timers_.cancel(t); }
    std::size_t pending_timers() const noexcept { return timers_.size(); }

    // ---- slots of futures with a timeout (see taco/timer.hpp) ----
    // A timed-out future may be gone when its late result arrives, so such
    // results address a slot {generation, future} rather than the future:
    // a result whose generation no longer matches is dropped.
    struct call_slot {
        std::uint32_t generation = 0;
        void* future = nullptr;
        timer_task* timer = nullptr;
    };
    std::pair<std::uint32_t, std::uint32_t> open_slot(void* future, timer_task* timer) {
        std::uint32_t i;
        if (free_slots_.empty()) {
            i = std::uint32_t(slots_.size());
            slots_.emplace_back();
        } else {
            i = free_slots_.back();
            free_slots_.pop_back();
        }
        slots_[i].future = future;
        slots_[i].timer = timer;
        return {i, slots_[i].generation};
    }
    /// The slot's future if the slot is still open in that generation (and
    /// close it), else nullptr: the result is late and is dropped.
    call_slot* claim_slot(std::uint32_t i, std::uint32_t generation, bool count_late = true) {
        if (i >= slots_.size() || slots_[i].generation != generation) {
            if (count_late) ++stats_.late_results;
            return nullptr;
        }
        call_slot* s = &slots_[i];
        ++s->generation;
        free_slots_.push_back(i);
        return s;
    }

    /// The task running on this core (nullptr: main, or an invocation run
    /// straight from the channel).
    task* current_task() const noexcept { return current_; }
    std::size_t ready_tasks() const noexcept { return sched_.size(); }

    /// Serve invocations until pred() holds: a core waiting for a result keeps
    /// running its incoming invocations, so two cores that sync-call each
    /// other do not deadlock.
    template <class Pred>
    void wait_until(Pred&& pred) {
        if (!wait_until_or_stopped(pred)) {
            if (platform_failure_) std::rethrow_exception(platform_failure_);
            throw stopped_error();
        }
    }
    /// As wait_until, but returns false instead of throwing when stopped.
    template <class Pred>
    bool wait_until_or_stopped(Pred&& pred) {
        while (!pred()) {
            if (stopped_) return false;
            if (progress() == 0 && !pred()) idle();
        }
        return true;
    }

    /// The loop of every core but the one running main: serve until stopped.
    void run_until_stopped() {
        while (!stopped_) {
            try {
                if (progress() == 0 && !stopped_) idle();
            } catch (const stopped_error&) {
                // a handler's wait unwound: we are leaving anyway
            }
        }
    }

    void request_stop() noexcept { stopped_ = true; }

    /// Messages still queued locally (their channel was full).
    std::size_t pending_count() const noexcept { return pending_total_; }

    /// Locally queued messages beyond which a sender serves invocations until
    /// half have left (see defer()).
    static constexpr std::size_t pending_soft_limit = 1024;

private:
    struct buffer {
        std::size_t length;
        alignas(P::message_align) std::byte bytes[P::message_bytes];
    };
    template <class Msg>
    static constexpr std::size_t message_length = payload_offset + sizeof(Msg);

    template <class Msg, class... Args>
    static void write(std::byte* slot, Args&&... args) {
        const message_handler h = &run_message<Msg>;
        std::memcpy(slot, &h, sizeof h);
        ::new (static_cast<void*>(slot + payload_offset)) Msg{std::forward<Args>(args)...};
    }

    template <class Msg, class... Args>
    [[gnu::noinline]] void defer(core_id dest, Args&&... args) {
        auto& q = pending_[dest];
        if (!q) {
            q = std::make_unique<std::deque<buffer>>();
            pending_dests_.push_back(dest);
        }
        buffer& b = q->emplace_back();
        b.length = message_length<Msg>;
        write<Msg>(b.bytes, std::forward<Args>(args)...);
        ++stats_.deferred;
        ++pending_total_;
        // Back-pressure: a core that floods a slow receiver would otherwise
        // grow its local queue without bound. Past the soft limit the sender
        // serves its own incoming invocations until the queue has drained to
        // half (so two cores flooding each other both make progress). The
        // nesting cap keeps a handler that sends from recursing without end;
        // beyond it messages still queue, so nothing is ever dropped.
        if (pending_total_ > pending_soft_limit && backpressure_depth_ < max_backpressure_depth) {
            ++backpressure_depth_;
            wait_until([this] { return pending_total_ <= pending_soft_limit / 2; });
            --backpressure_depth_;
        }
    }

    /// Move what fits of dest's queue into its channel; true if none is left.
    [[gnu::noinline]] bool drain(core_id dest) {
        auto& q = *pending_[dest];
        while (!q.empty()) {
            std::byte* slot = ep_.try_acquire(dest);
            if (!slot) return false;
            const buffer& b = q.front();
            std::memcpy(slot, b.bytes, b.length);
            ep_.publish(dest, b.length);
            q.pop_front();
            --pending_total_;
            ++stats_.sent;
        }
        pending_[dest].reset();
        std::erase(pending_dests_, dest);
        return true;
    }

    std::size_t flush() {
        const std::size_t before = pending_total_;
        // Backwards: drain() may erase entry i, which only shifts entries
        // already visited.
        for (std::size_t i = pending_dests_.size(); i-- > 0;) drain(pending_dests_[i]);
        return before - pending_total_;
    }

    void run_task(task& t) {
        task* const outer = current_;
        current_ = &t;
        t.run(); // may free t: do not touch it afterwards
        current_ = outer;
    }

    std::size_t fire_due_timers() {
        std::size_t n = 0;
        const auto now = task_clock::now();
        while (timer_task* t = timers_.pop_due(now)) {
            schedule(*t);
            ++n;
        }
        return n;
    }

    void idle() {
        // A platform reports that it cannot go on (a core process died) by
        // throwing from idle/pause. The core stops, so that every wait
        // unwinds, including the non-throwing ones in destructors; waits that
        // may throw rethrow the platform's error rather than stopped_error.
        try {
            // With sends waiting for room, nobody would wake us: never sleep then.
            if (!pending_dests_.empty()) return ep_.pause();
            if (timers_.empty()) return ep_.idle(std::chrono::nanoseconds::max());
            ep_.idle(std::chrono::duration_cast<std::chrono::nanoseconds>(timers_.next_due() - task_clock::now()));
        } catch (...) {
            platform_failure_ = std::current_exception();
            stopped_ = true;
        }
    }

    endpoint& ep_;
    std::vector<std::unique_ptr<std::deque<buffer>>> pending_;
    std::vector<core_id> pending_dests_;
    std::size_t pending_total_ = 0;
    schedulers::any sched_;
    timer_queue timers_;
    std::vector<call_slot> slots_;
    std::vector<local_slot> locals_;
    std::vector<std::uint32_t> free_slots_;
    task* current_ = nullptr;
    core_stats stats_;
    static constexpr int max_backpressure_depth = 4;
    int backpressure_depth_ = 0;
    bool stopped_ = false;
    std::exception_ptr platform_failure_;
};

/// The runtime of the calling core. Outside a TACO runtime this is a usage
/// error reported clearly rather than a null dereference.
template <class Dep = void>
core_runtime<bound_platform<Dep>>& current_runtime() {
    auto* rt = tls_runtime<bound_platform<Dep>>;
    if (!rt) [[unlikely]] {
        std::fprintf(stderr, "taco: invocation outside a TACO core; start the program with taco::run\n");
        std::abort();
    }
    return *rt;
}

struct stop_message {
    void operator()() const { current_runtime().request_stop(); }
};

} // namespace detail

/// Replace the process-wide handler for exceptions nobody waits for.
inline void set_uncaught_error_handler(uncaught_error_handler h) noexcept {
    detail::uncaught_handler.store(h ? h : &detail::default_uncaught);
}

/// This core's instance of T, default-constructed on first use and destroyed
/// when the core stops: state a library keeps per core and per run (MESH's
/// allocator on the home core, its broadcast group). Not for T that must
/// outlive the run.
template <class T>
T& core_local() {
    return detail::current_runtime<T>().template local<T>();
}

/// Message counters of the calling core.
template <class Dep = void>
const core_stats& stats() {
    return detail::current_runtime<Dep>().stats();
}

/// A scheduling point inside long-running code (a task, a long invocation):
/// runs the invocations that arrived if one of them is urgent. Returns
/// whether it did. Cheap (one load) when nothing is urgent.
template <class Dep = void>
bool urgent_point() {
    return detail::current_runtime<Dep>().urgent_point();
}

/// Run one round of this core's runtime (flush queued sends, run received
/// invocations); returns how many messages moved. For loops that wait on
/// something other than a future.
template <class Dep = void>
std::size_t poll() {
    return detail::current_runtime<Dep>().progress();
}

/// Serve incoming invocations until pred() holds (see core_runtime::wait_until).
template <class Pred>
void wait_until(Pred&& pred) {
    detail::current_runtime<Pred>().wait_until(std::forward<Pred>(pred));
}

/// Start the program on every core of the platform: core 0 runs main(), the
/// other cores serve invocations; when main() returns, every core stops.
/// An exception from main() is rethrown here. Work still in flight when main()
/// returns is abandoned, as when a normal program returns from main: wait for
/// the futures you need first.
template <class Config, class Main>
void run(const Config& config, Main&& main, const run_options& options = {}) {
    using P = detail::bound_platform<Main>;
    static_assert(std::is_same_v<Config, typename P::config>,
                  "taco::run: pass the configuration type of the bound platform");
    struct context {
        std::remove_reference_t<Main>* main;
        const run_options* options;
        std::exception_ptr error;
    } ctx{&main, &options, nullptr};
    P::launch(
        config,
        +[](typename P::endpoint& ep, void* arg) {
            auto& c = *static_cast<context*>(arg);
            detail::core_runtime<P> rt(ep, *c.options);
            if (ep.id() != 0) {
                rt.run_until_stopped();
                return;
            }
            try {
                (*c.main)();
            } catch (...) {
                c.error = std::current_exception();
            }
            for (core_id d = 1; d < rt.core_count(); ++d) rt.template send<detail::stop_message>(d);
            rt.wait_until([&] { return rt.pending_count() == 0; });
        },
        &ctx);
    if (ctx.error) std::rethrow_exception(ctx.error);
}

} // namespace taco
