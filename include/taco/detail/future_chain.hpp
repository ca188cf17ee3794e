#pragma once
// Chains on futures: future::then, and when_all (when_all.hpp). A future's
// state is only ever touched on its own core, so a chain needs neither a
// thread nor atomics: it is a hook the state runs when its result comes, on
// that core, inside the message (or the local call) that assigns it. The
// chain owns the states it waits on (the futures it was given are left
// empty, so dropping them does not wait), and the future it returns owns
// the state the chain assigns in turn.
//
// If the core stops first, a waiting chain never runs: the core's registry
// (core-local state of the run) frees it, and the states it holds, when the
// core's local state goes.
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include <taco/future.hpp>
#include <taco/remote_error.hpp>
#include <taco/stopped_error.hpp>
#include <taco/uncaught_error.hpp>
#include <taco/usage_error.hpp>

namespace taco::detail {

template <class R>
struct future_access {
    static future_state<R>* state(const future<R>& f) noexcept { return f.s_; }
    static future_state<R>* take(future<R>& f) noexcept { return std::exchange(f.s_, nullptr); }
};

/// The state a chain takes over: one given to an invocation, whose value no
/// get() took. Checked before anything is taken, so a refusal leaves every
/// future as it was.
template <class R>
future_state<R>* chainable_state(const future<R>& f, const char* who) {
    if (!f.valid())
        throw usage_error(std::string(who) + ": a future that no invocation was given, that was moved from, or "
                                             "whose value get() took already; chain a future before taking its "
                                             "value");
    return future_access<R>::state(f);
}

class chain_registry;

/// A chain that waits (see the top of this file).
class pending_chain {
public:
    pending_chain(const pending_chain&) = delete;
    pending_chain& operator=(const pending_chain&) = delete;

protected:
    pending_chain();
    virtual ~pending_chain();

private:
    friend class chain_registry;
    chain_registry& registry_;
    pending_chain* prev_ = nullptr;
    pending_chain* next_ = nullptr;
};

class chain_registry {
public:
    chain_registry() = default;
    chain_registry(const chain_registry&) = delete;
    chain_registry& operator=(const chain_registry&) = delete;
    /// The core stops: chains still waiting never run (their destructors
    /// free what they hold).
    ~chain_registry() {
        while (head_) delete head_;
    }

private:
    friend class pending_chain;
    void add(pending_chain& c) noexcept {
        c.next_ = head_;
        if (head_) head_->prev_ = &c;
        head_ = &c;
    }
    void remove(pending_chain& c) noexcept {
        (c.prev_ ? c.prev_->next_ : head_) = c.next_;
        if (c.next_) c.next_->prev_ = c.prev_;
    }
    pending_chain* head_ = nullptr;
};

inline pending_chain::pending_chain() : registry_(runtime().core_local<chain_registry>()) { registry_.add(*this); }
inline pending_chain::~pending_chain() { registry_.remove(*this); }

/// A state that never became ready goes with its chain when the core stops.
/// Deleted, not recycled: the core's free list may be gone by then.
template <class R>
void drop_unready(future_state<R>* s) noexcept {
    delete s;
}

/// What came for a future, taken out of its state: its value (std::tuple<>
/// for void), or its error; a timeout is an error that says so.
template <class R>
struct outcome {
    using value_type = std::conditional_t<std::is_void_v<R>, std::tuple<>, R>;
    std::optional<value_type> value;
    bool timed_out = false;
    error_info error{};

    static outcome take(future_state<R>& s) {
        outcome o;
        using state = typename future_state<R>::state;
        if (s.status() == state::value) {
            if constexpr (std::is_void_v<R>) s.take(), o.value.emplace();
            else o.value.emplace(s.take());
        } else if (s.status() == state::timed_out) {
            o.timed_out = true;
            o.error = {this_core(), 0, {}};
            o.error.assign(timeout_error().what());
        } else {
            o.error = {s.error_origin(), 0, {}};
            o.error.assign(s.error());
        }
        return o;
    }
    /// Hand a failure on to a state of any value type, as it came.
    template <class U>
    void fail_to(future_state<U>& t) const {
        if (timed_out) t.set_timeout();
        else t.set_error(error);
    }
};

template <class X>
inline constexpr bool is_tuple_v = false;
template <class... X>
inline constexpr bool is_tuple_v<std::tuple<X...>> = true;

/// A step takes a tuple's elements as its arguments when it can (as
/// upcxx::future::then does), else the value itself; void gives nothing.
template <class R, class F>
constexpr bool unpacks() {
    if constexpr (std::is_void_v<R>) {
        return std::is_invocable_v<F&>;
    } else if constexpr (is_tuple_v<R>) {
        return []<std::size_t... I>(std::index_sequence<I...>) {
            return std::is_invocable_v<F&, std::tuple_element_t<I, R>&&...>;
        }(std::make_index_sequence<std::tuple_size_v<R>>{});
    } else {
        return false;
    }
}
template <class R, class F>
constexpr bool step_invocable() {
    if constexpr (std::is_void_v<R> || unpacks<R, F>()) return unpacks<R, F>();
    else return std::is_invocable_v<F&, R&&>;
}
template <class R, class F>
inline constexpr bool step_invocable_v = step_invocable<R, F>();

template <class R, class F, class V>
decltype(auto) invoke_step(F& fn, V&& v) {
    if constexpr (unpacks<R, F>()) return std::apply(fn, std::forward<V>(v));
    else return fn(std::forward<V>(v));
}

template <class R, class F>
using step_result_t = decltype(invoke_step<R>(std::declval<F&>(), std::declval<typename outcome<R>::value_type&&>()));

template <class X>
inline constexpr bool is_future_v = false;
template <class R>
inline constexpr bool is_future_v<future<R>> = true;

template <class X>
struct flattened {
    using type = X;
};
template <class X>
struct flattened<future<X>> {
    using type = X;
};
/// What the future returned by then() carries: the step's result, or, for
/// a step that returns a future, that future's.
template <class R, class F>
using step_value_t = typename flattened<std::remove_cvref_t<step_result_t<R, F>>>::type;

/// A then() waiting for its state: runs `step(outcome)` once it has come.
template <class R, class Step>
class then_chain final : public pending_chain, public ready_hook {
public:
    then_chain(future_state<R>* source, Step step) : source_(source), step_(std::move(step)) {}
    ~then_chain() override {
        if (source_) drop_unready(source_);
    }
    void fire() override {
        // Everything the step needs leaves this chain first: the step may
        // run long and chain again, and the state is free for reuse.
        auto o = outcome<R>::take(*source_);
        future_state<R>::recycle(std::exchange(source_, nullptr));
        Step step = std::move(step_);
        delete this;
        step(std::move(o));
    }

private:
    future_state<R>* source_;
    Step step_;
};

/// Run `step` on the outcome of `f`'s state, taking the state over: now if
/// it is ready, else when it comes. Nothing is taken if this throws.
template <class R, class Step>
void chain_on(future<R>& f, Step step, const char* who) {
    future_state<R>* s = chainable_state(f, who);
    if (s->ready()) {
        auto o = outcome<R>::take(*s);
        future_state<R>::recycle(future_access<R>::take(f));
        step(std::move(o));
    } else {
        auto* c = new then_chain<R, Step>(s, std::move(step));
        s->fire_when_ready(*c);
        future_access<R>::take(f);
    }
}

/// Passes an outcome on as it came (a step's future, flattened into the
/// future its then() returned).
template <class U>
struct forward_step {
    future_state<U>* target;
    void operator()(outcome<U>&& o) const {
        if (!o.value) return o.fail_to(*target);
        if constexpr (std::is_void_v<U>) target->set_value();
        else target->set_value(std::move(*o.value));
    }
};

/// then(fn): fn's result, or its exception, assigns `target`.
template <class R, class U, class F>
struct local_step {
    F fn;
    future_state<U>* target;

    void operator()(outcome<R>&& o) {
        if (!o.value) return o.fail_to(*target);
        using V = std::remove_cvref_t<step_result_t<R, F>>;
        // The step's exception is caught, its result's delivery is not:
        // setting the target runs the target's own chain, which handles its
        // errors itself.
        std::optional<std::conditional_t<std::is_void_v<V>, std::tuple<>, V>> result;
        error_info error;
        try {
            if constexpr (std::is_void_v<V>) invoke_step<R>(fn, std::move(*o.value)), result.emplace();
            else result.emplace(invoke_step<R>(fn, std::move(*o.value)));
        } catch (const stopped_error&) {
            throw;
        } catch (...) {
            error = error_info::current(this_core());
        }
        if (!result) return target->set_error(error);
        if constexpr (std::is_void_v<V>) {
            target->set_value();
        } else if constexpr (is_future_v<V>) {
            // A step that starts more work: its future's outcome is ours.
            if (!result->valid()) {
                error = {this_core(), 0, {}};
                error.assign("taco::future::then: the step returned an empty future");
                return target->set_error(error);
            }
            chain_on(*result, forward_step<U>{target}, "taco::future::then");
        } else {
            target->set_value(std::move(*result));
        }
    }
};

/// then(taco::then(...)): the value goes on as an invocation's result would
/// (a tuple's elements as separate arguments); a failure is reported as
/// uncaught on this core, where no one else would see it.
template <class R, class C>
struct continuation_step {
    C cont;
    void operator()(outcome<R>&& o) const {
        try {
            if (!o.value) return cont.fail(o.error);
            if constexpr (std::is_void_v<R>) cont.deliver();
            else if constexpr (is_tuple_v<R>) std::apply([this](const auto&... v) { cont.deliver(v...); }, *o.value);
            else cont.deliver(*o.value);
        } catch (const stopped_error&) {
            throw;
        } catch (...) {
            report_uncaught(error_info::current(this_core()));
        }
    }
};

} // namespace taco::detail

namespace taco {

template <class R>
template <class F>
auto future<R>::then(F&& fn) {
    using C = std::remove_cvref_t<F>;
    if constexpr (requires { requires C::is_taco_continuation; }) {
        detail::chain_on(*this, detail::continuation_step<R, C>{fn}, "taco::future::then");
    } else {
        static_assert(detail::step_invocable_v<R, C>,
                      "taco::future::then: the step cannot be called with the future's value (a tuple's elements "
                      "as separate arguments, or the tuple itself; no argument for future<void>)");
        if constexpr (detail::step_invocable_v<R, C>) {
            using U = detail::step_value_t<R, C>;
            return future<U>(detail::start_tag{}, [&](future<U>& out) {
                detail::chain_on(*this, detail::local_step<R, U, C>{std::forward<F>(fn), out.arm()},
                                 "taco::future::then");
            });
        } else {
            return future<void>{}; // the static_assert has said it: no second error about the result
        }
    }
}

} // namespace taco
