#pragma once
// Invocation channels (CCI paper, section III.C; REFLEX event channels): a
// channel is the global pointer to a sink. The writer names only the
// channel and the value; the sink, on its own core, chooses the action.
// Continuation passing works by sending a channel for the result inside the
// value, or by giving it to an invocation as its completion:
//
//   taco::mailbox<request> box;                        // a sink on this core (taco/sinks/)
//   taco::channel<request> in = taco::channel_to(box); // trivially copyable: send it anywhere
//   taco::channel_to(gp)                               // gp: a taco::global_ptr to a sink on any core
//   taco::emit(in, request{...});                      // from any core
//   taco::emit(in, request{...}, taco::urgent);        // ... interrupting a preemptible computation
//
//   taco::future<long> f;
//   taco::emit(in, request{.reply = taco::channel_to(f)}); // a future is a sink of one value
//   taco::async(gp, taco::m2f(&T::size), some_channel);    // a channel as a completion
//
// Writes through one channel from one core arrive in the order they were
// made (channels between cores are FIFO). A value is a plain (trivially
// copyable) value, a std::string or a std::vector of plain values: what
// does not fit one message is carried as results are. The sink must
// outlive every write to it.
#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>

#include <taco/core_id.hpp>
#include <taco/future.hpp>
#include <taco/global_ptr.hpp>
#include <taco/image_ptr.hpp>
#include <taco/invocation_options.hpp>
#include <taco/remote_error.hpp>
#include <taco/runtime/bulk.hpp>
#include <taco/runtime/core.hpp>
#include <taco/sink.hpp>
#include <taco/stopped_error.hpp>
#include <taco/uncaught_error.hpp>
#include <taco/usage_error.hpp>
#include <taco/detail/argument_check.hpp>
#include <taco/detail/carried_result.hpp>
#include <taco/detail/core_identity.hpp>

namespace taco {

template <class T>
class channel;

namespace detail {

/// (For T = void a stand-in, so that channel<void>'s static_assert is its one error.)
template <class T>
using accept_fn = void (*)(void* sink, std::conditional_t<std::is_void_v<T>, int, T>&& value);

/// What a sink does with a value: accept it, and a future's state (a sink
/// of one value) is assigned.
template <class S, class T>
void accept_value(S& s, T&& v) {
    s.accept(std::move(v));
}
template <class T>
void accept_value(future_state<T>& state, T&& v) {
    if (!state.pending()) [[unlikely]]
        throw usage_error("taco: a second value written to a future's channel; a future takes one value per "
                          "taco::channel_to(future) (get it, then make a new channel to it)");
    state.set_value(std::move(v));
}

/// The sink's accept, reached through the channel: it knows the sink's
/// type, which the writer does not. What the sink throws is an invocation's
/// failure with no continuation: the uncaught-error handler of its core.
template <class S, class T>
void accept_into(void* s, T&& v) {
    try {
        accept_value(*static_cast<S*>(s), std::move(v));
    } catch (const stopped_error&) {
        throw;
    } catch (...) {
        report_uncaught(error_info::current(this_core()));
    }
}

template <class T>
constexpr void check_channel_value() {
    static_assert(!is_view_v<T>,
                  "taco::channel<taco::view<T>>: a view points into one core's memory; use a std::vector<T>");
    static_assert(std::is_same_v<T, std::remove_cvref_t<T>>, "taco::channel<T>: T is a value type (no const, no &)");
    check_invocation_result<T>(); // what may travel back as a result may travel through a channel
}

/// The message a write is: the sink's address and entry, then the value.
/// The entry is image-relative, so a channel means the same in every process.
template <class T>
struct channel_write {
    void* sink;
    image_ptr<accept_fn<T>> accept;
    T value;
    void operator()() { accept.get_nonnull()(sink, std::move(value)); }
};

/// What a carried value is handed to once rebuilt on the sink's core.
template <class T>
struct channel_finish {
    void* sink;
    image_ptr<accept_fn<T>> accept;
    void operator()(T&& v) const { accept.get_nonnull()(sink, std::move(v)); }
};

struct channel_access {
    template <class T>
    static channel<T> make(core_id core, void* sink, accept_fn<T> accept) noexcept {
        channel<T> c;
        c.core_ = core;
        c.sink_ = sink;
        c.accept_ = image_ptr<accept_fn<T>>(accept);
        return c;
    }
    template <class T>
    static void* sink(const channel<T>& c) noexcept { return c.sink_; }
    template <class T>
    static image_ptr<accept_fn<T>> accept(const channel<T>& c) noexcept { return c.accept_; }
};

[[gnu::cold, noreturn]] inline void bad_channel(core_id core, bool null) {
    if (!tls_runtime) outside_a_core();
    if (null)
        throw usage_error("taco::emit: a write to a null channel (default-constructed: make it with "
                          "taco::channel_to(sink) on the sink's core)");
    throw usage_error("taco::emit: a channel to core " + std::to_string(core) + ", but this run has " +
                      std::to_string(tls_runtime->core_count()) + " cores");
}

[[gnu::cold, noreturn]] inline void value_too_large(std::size_t bytes) {
    throw usage_error("taco::emit: a value of " + std::to_string(bytes) + " bytes, beyond taco::max_carried_bytes (" +
                      std::to_string(max_carried_bytes >> 20) + " MiB); write a taco::global_ptr to the data instead");
}

} // namespace detail

/// The global pointer to a sink that accepts T: its core and address, and
/// the sink's entry. Trivially copyable (24 bytes): it travels inside
/// invocations, values and other channels' values. Default: null.
template <class T>
class channel {
    static_assert(!std::is_void_v<T>, "taco::channel<void>: a channel carries values; for a bare event use an empty struct");

public:
    using value_type = T;
    /// Lets invocations take a channel as their completion.
    static constexpr bool is_taco_channel = true;

    channel() = default;

    /// The sink's core.
    core_id core() const noexcept { return core_; }
    explicit operator bool() const noexcept { return sink_ != nullptr; }
    friend bool operator==(const channel& a, const channel& b) noexcept {
        return a.core_ == b.core_ && a.sink_ == b.sink_ && a.accept_.offset() == b.accept_.offset();
    }

private:
    friend struct detail::channel_access;
    core_id core_ = no_core;
    void* sink_ = nullptr;
    image_ptr<detail::accept_fn<T>> accept_;
};

/// The channel to sink `s`, which lives on this core.
template <sink S>
channel<typename S::value_type> channel_to(S& s) {
    using T = typename S::value_type;
    detail::check_channel_value<T>();
    return detail::channel_access::make<T>(this_core(), &s, &detail::accept_into<S, T>);
}

/// The channel to the sink `p` points to, on any core: made here, without a
/// message (the sink's entry is image-relative, the same in every process).
template <sink S>
channel<typename S::value_type> channel_to(global_ptr<S> p) {
    using T = typename S::value_type;
    detail::check_channel_value<T>();
    return detail::channel_access::make<T>(p.core(), p.address(), &detail::accept_into<S, T>);
}

/// The channel to future `f` (on this core): the first value written
/// assigns it. Arms f as an invocation would (f waits for that value, also
/// in its destructor); a future already waiting for a result is refused.
template <class T>
channel<T> channel_to(future<T>& f) {
    detail::check_channel_value<T>();
    return detail::channel_access::make<T>(this_core(), f.arm(), &detail::accept_into<detail::future_state<T>, T>);
}

/// Write `value` to the channel: a message to the sink's core, whose sink
/// accepts it there (on this core too: through its own channel, in order).
/// Refused with a usage_error, before anything is sent, for a null channel
/// or a value beyond taco::max_carried_bytes.
template <class T, class V>
void emit(const channel<T>& ch, V&& value) {
    static_assert(std::is_constructible_v<T, V&&>,
                  "taco::emit: the value does not convert to the channel's value type");
    detail::core* rt = detail::tls_runtime;
    void* const s = detail::channel_access::sink(ch);
    if (!rt || ch.core() >= rt->core_count() || !s) [[unlikely]]
        detail::bad_channel(ch.core(), !s);
    const auto accept = detail::channel_access::accept(ch);
    if constexpr (detail::travels_carried<T, detail::channel_write>()) {
        const auto send = [&](const T& v) {
            const std::size_t bytes = detail::value_bytes(v).size();
            if (bytes > max_carried_bytes) [[unlikely]]
                detail::value_too_large(bytes);
            detail::send_carried_value<T>(ch.core(), v, detail::channel_finish<T>{s, accept},
                                          [](const error_info&) {}); // refused above, before any piece went
        };
        if constexpr (std::is_same_v<std::remove_cvref_t<V>, T>) send(value);
        else send(T(std::forward<V>(value)));
    } else {
        rt->template send<detail::channel_write<T>>(ch.core(), s, accept, T(std::forward<V>(value)));
    }
}

/// As emit, and urgent (the CCI paper's preemptive channels): the sink's
/// core is woken, and if it computes inside taco::preemptible it is
/// interrupted, so that the sink accepts the value there (preemption.hpp).
template <class T, class V>
void emit(const channel<T>& ch, V&& value, urgent_t) {
    emit(ch, std::forward<V>(value));
    detail::runtime().urgent_sent(ch.core());
}

namespace detail {

template <class C>
inline constexpr bool is_channel_v = requires { requires C::is_taco_channel; };

/// A channel as an invocation's completion: the result is written to it
/// from the callee's core. A failure has no sink to go to: the uncaught-
/// error handler of the core where it happened gets it, as with no
/// completion (to handle it, use a future or taco::then(...).on_error).
template <class T>
struct channel_continuation {
    channel<T> out;
    template <class V>
    void deliver(V&& v) const {
        emit(out, to_delivered<T>(std::forward<V>(v)));
    }
    void fail(const error_info& e) const { report_uncaught(e); }
};

} // namespace detail

} // namespace taco
