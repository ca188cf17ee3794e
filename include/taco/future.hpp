#pragma once
// Future variables (CCI paper, section II.A and III.B): the caller passes the
// global address of the future's state with its invocation; the callee's
// continuation assigns it with a message back to the caller's core. The
// state lives on that core and is only touched there, so it needs no
// atomics.
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include <taco/core_id.hpp>
#include <taco/remote_error.hpp>
#include <taco/detail/core_identity.hpp>
#include <taco/runtime/core.hpp>
#include <taco/task.hpp>
#include <taco/usage_error.hpp>

namespace taco {

template <class R>
class future;

namespace detail {
template <class R>
struct future_access;
}

/// Thrown by future::get() when the result did not come within its limit
/// (the taco::timeout option).
class timeout_error : public std::runtime_error {
public:
    timeout_error() : std::runtime_error("taco: no result within the time limit (taco::timeout)") {}
};

namespace detail {
struct start_tag {};

/// What a future's state runs when its result comes, instead of waking a
/// task: a chain (future::then, when_all: detail/future_chain.hpp). It runs
/// on the state's core, inside whatever assigned the state, and may recycle
/// that state (it owns it): the state touches nothing of itself after.
class ready_hook {
public:
    virtual void fire() = 0;

protected:
    ~ready_hook() = default;
};

template <class R>
struct future_value {
    std::optional<R> value;
    template <class V>
    void set(V&& v) { value.emplace(std::forward<V>(v)); }
    R take() { return std::move(*value); }
    void clear() noexcept { value.reset(); }
};
template <>
struct future_value<void> {
    void set() {}
    void take() {}
    void clear() noexcept {}
};

/// For operations that send, then wait (sync, a barrier's arrival): refuse
/// a task that cannot wait *before* anything is sent. Checked only at the
/// wait, the request would already be out, and the pending future's
/// destructor would then wait inside the activity for a reply that may
/// need this very task to finish first (a barrier's other parties): a
/// deadlock where blocking_error was promised.
inline void require_can_wait() {
    if (task* t = runtime().current_task(); t && t->kind() != task_kind::coroutine) t->block(); // throws
}

/// What a future's continuation assigns: its state, apart from the future
/// object. Results in flight address the state, which stays where it is
/// while the future itself is moved (into a vector that grows, out of a
/// function), so a future may move even while it waits.
template <class R>
class future_state {
public:
    // One field for what used to be three flags (armed, ready, timed out):
    // arming, assigning and the tests in get() and the destructor are then
    // one store or one compare each. Ordered: ready() is "> pending",
    // failed() is "> value".
    // taken: the value went to a get(); still ready, so waits return and the
    // future can be passed again, but a second get() has nothing to give.
    enum class state : unsigned char { unarmed, pending, taken, value, failed, timed_out };

    bool ready() const noexcept { return state_ > state::pending; }
    bool failed() const noexcept { return state_ > state::value; }
    bool pending() const noexcept { return state_ == state::pending; }
    state status() const noexcept { return state_; }

    template <class... V>
    void set_value(V&&... v) {
        value_.set(std::forward<V>(v)...);
        became_ready(state::value);
    }
    void set_timeout() { became_ready(state::timed_out); }
    void set_error(const error_info& e) {
        error_.emplace(e.view());
        error_origin_ = e.origin;
        became_ready(state::failed);
    }

    void arm() {
        state_ = state::pending;
        error_.reset();
    }
    /// Undo arm() when the invocation was refused before anything was sent:
    /// nothing will come, so a wait must not wait (and the future reads as
    /// one no invocation was given).
    void disarm() noexcept {
        if (state_ == state::pending) state_ = state::unarmed;
    }
    R take() {
        state_ = state::taken;
        return value_.take();
    }
    const std::string& error() const { return *error_; }
    core_id error_origin() const noexcept { return error_origin_; }

    /// Schedule `t` when the result comes (it has not yet).
    void wake_when_ready(task& t) {
        if (waiter_ && waiter_ != &t) throw blocking_error("taco: two tasks wait on one future; give each its own");
        waiter_ = &t;
    }
    /// Run `h` when the result comes (it has not yet): the state belongs to
    /// the chain from now on, and no task can wait on it.
    void fire_when_ready(ready_hook& h) noexcept { hook_ = &h; }
    /// Suspend the coroutine `t` until the result has come (the others
    /// cannot block: they throw).
    void block_in(task& t) {
        if (t.kind() != task_kind::coroutine) t.block(); // throws: only coroutines keep a stack to block on
        if (waiter_ && waiter_ != &t) throw blocking_error("taco: two tasks wait on one future; give each its own");
        while (!ready()) {
            waiter_ = &t;
            t.block(); // resumed by became_ready()
        }
    }
    /// While pending: wait until the result has come, or the core stops
    /// (false then). Never throws.
    [[gnu::noinline]] bool settle() noexcept {
        auto& rt = runtime();
        if (task* t = rt.current_task(); t && t->kind() == task_kind::coroutine) {
            try {
                block_in(*t);
            } catch (...) {
                return false; // the core stops under a suspended coroutine
            }
            return true;
        }
        return rt.wait_until_or_stopped([this] { return ready(); });
    }

    // Per-core free list (core-local state of the run): arming a future
    // costs no malloc once warm, and no synchronisation, as the list is the
    // core's own. Outside a run (a future destroyed after it) the state is
    // deleted.
    static future_state* make() {
        if (core* rt = tls_runtime) [[likely]] {
            if (future_state* s = rt->core_local<free_list>().pop()) return s;
        }
        return new future_state();
    }
    static void recycle(future_state* s) noexcept {
        s->value_.clear(); // a value (or what a get() moved from) goes now, not at reuse
        s->error_.reset();
        s->waiter_ = nullptr;
        s->hook_ = nullptr;
        s->state_ = state::unarmed;
        if (core* rt = tls_runtime) [[likely]] {
            if (rt->core_local<free_list>().push(s)) return;
        }
        delete s;
    }

private:
    // Intrusive: a free state links the next through its own field.
    struct free_list {
        static constexpr std::size_t max_free = 4096;
        future_state* head = nullptr;
        std::size_t count = 0;
        free_list() = default;
        free_list(const free_list&) = delete;
        free_list& operator=(const free_list&) = delete;
        ~free_list() {
            while (future_state* s = pop()) delete s;
        }
        future_state* pop() noexcept {
            future_state* s = head;
            if (s) head = s->next_free_, --count;
            return s;
        }
        bool push(future_state* s) noexcept {
            if (count == max_free) return false;
            s->next_free_ = head, head = s, ++count;
            return true;
        }
    };

    void became_ready(state s) {
        state_ = s;
        // Tested before they are cleared: almost always no task waits and
        // no chain hangs on the result. A hook may recycle this state (and
        // the free list hand it out again at once): nothing of it is
        // touched after fire().
        if (task* w = waiter_) [[unlikely]] {
            waiter_ = nullptr;
            runtime().make_ready(*w);
        } else if (ready_hook* h = hook_) [[unlikely]] {
            hook_ = nullptr;
            h->fire();
        }
    }

    task* waiter_ = nullptr;
    ready_hook* hook_ = nullptr; // a chain (never together with a waiting task)
    future_state* next_free_ = nullptr; // in the core's free list
    future_value<R> value_;
    std::optional<std::string> error_;
    core_id error_origin_ = no_core;
    state state_ = state::unarmed;
};
} // namespace detail

/// The result of an invocation, on the caller's core. Move-only: the
/// pending continuation addresses the future's state, not the future, so a
/// future may move (into a std::vector that grows, out of a function) even
/// while it waits; the moved-from future is empty, as if default-made. A
/// future that still waits for its result when destroyed serves invocations
/// until the result has come, so a late result never writes into freed
/// memory. [[nodiscard]]: a dropped future would wait at once, in its
/// destructor.
template <class R>
class [[nodiscard]] future {
    using state = typename detail::future_state<R>::state;

public:
    using value_type = R;

    future() = default;
    future(const future&) = delete;
    future& operator=(const future&) = delete;
    future(future&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
    /// Waits first if this future still waits for a result (as its
    /// destructor would).
    future& operator=(future&& o) noexcept {
        if (this != &o) {
            release();
            s_ = std::exchange(o.s_, nullptr);
        }
        return *this;
    }
    ~future() { release(); }

    /// Used by taco::call and the spawns: start the work on this very object.
    /// A start that throws has sent nothing (the invocation paths disarm
    /// what they armed when they refuse): its state goes back at once, as
    /// no destructor runs for a future whose constructor threw.
    template <class Start>
    future(detail::start_tag, Start&& start) {
        try {
            std::forward<Start>(start)(*this);
        } catch (...) {
            if (s_) {
                s_->disarm();
                detail::future_state<R>::recycle(std::exchange(s_, nullptr));
            }
            throw;
        }
    }

    /// True if a result is on its way or here and not taken yet (as
    /// std::future::valid: false once get() took the value, or when empty).
    bool valid() const noexcept { return s_ && s_->status() != state::unarmed && s_->status() != state::taken; }
    bool ready() const noexcept { return s_ && s_->ready(); }
    /// True once the result has come and it is an exception.
    bool failed() const noexcept { return s_ && s_->failed(); }

    /// Wait until the result has come. A coroutine suspends (its core runs
    /// other tasks and invocations meanwhile); main and invocations run
    /// straight from the channel keep serving invocations (nested); an
    /// activity or protothread cannot wait: taco::blocking_error.
    void wait() {
        if (ready()) return;
        if (!s_ || s_->status() == state::unarmed) [[unlikely]] throw_unarmed();
        auto& rt = detail::runtime();
        detail::future_state<R>* s = s_; // a coroutine may move the future while another waits: keep the state
        if (task* t = rt.current_task()) s->block_in(*t);
        else rt.wait_until([s] { return s->ready(); });
    }

    /// Wait, then return the result or throw taco::remote_error. A value is
    /// taken once: a second get() is a usage_error (an error rethrows).
    R get() {
        wait();
        if (s_->status() != state::value) [[unlikely]] throw_failure();
        return s_->take();
    }

    /// Schedule `t` on this core when the result has come (protothreads:
    /// TACO_PT_AWAIT). One task per future.
    void resume_when_ready(task& t) {
        if (ready()) return detail::runtime().make_ready(t);
        if (!s_ || s_->status() == state::unarmed) [[unlikely]] throw_unarmed();
        s_->wake_when_ready(t);
    }

    /// Chain a step on the result, which runs on this core as soon as the
    /// result comes (here and now if it has): `fn(value)` (a tuple is
    /// unpacked, void gives no argument), and the future returned carries
    /// its result, or its exception; a step that returns a future is waited
    /// for, so chains stay flat. Or a taco::then continuation, which gets the
    /// value as an invocation does (then returns nothing). An error (or a
    /// timeout) skips a local step and goes on to the returned future; a
    /// taco::then continuation reports it as uncaught. Takes this future
    /// over, as HPX does: it is left empty, and dropping it does not wait.
    /// See detail/future_chain.hpp.
    template <class F>
    auto then(F&& fn);

    // --- used by continuations, on this future's core ---
    /// Arm for a new result and return the state its continuation assigns.
    detail::future_state<R>* arm() {
        // A result still on its way would land in the new invocation's
        // future: refuse before anything is sent.
        if (s_ && s_->pending()) [[unlikely]]
            throw usage_error("taco: this future still waits for the result of an earlier invocation; wait for it "
                              "(get/wait) before passing the future again, or use another future");
        if (!s_) s_ = detail::future_state<R>::make();
        s_->arm();
        return s_;
    }

private:
    friend struct detail::future_access<R>;

    void release() noexcept {
        if (!s_) return;
        // Never throws: on a stopping core the result will not come anyway,
        // and then no message will run to assign the state either.
        if (s_->pending()) [[unlikely]] s_->settle();
        detail::future_state<R>::recycle(std::exchange(s_, nullptr));
    }
    // Nothing will ever assign a future no invocation was given: waiting
    // for it would hang for ever, so it is a usage error, raised at once.
    [[noreturn]] static void throw_unarmed() {
        throw usage_error("taco: waiting on a future that no invocation was given; pass it to taco::async, "
                          "taco::call, a spawn or a collective first (or it was moved from)");
    }
    [[noreturn]] void throw_failure() {
        if (s_->status() == state::taken)
            throw usage_error("taco: get() on a future whose value was taken by an earlier get(); keep the value, "
                              "or pass the future to another invocation first");
        if (s_->status() == state::timed_out) throw timeout_error();
        throw remote_error(s_->error_origin(), s_->error());
    }

    detail::future_state<R>* s_ = nullptr;
};

} // namespace taco

#include <taco/detail/future_chain.hpp>
