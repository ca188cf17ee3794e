#pragma once
// An invocation with carried arguments (detail/carried.hpp), or a carried
// result (detail/carried_result.hpp): the bytes go ahead of it, and the
// invocation (or the message that delivers the result) follows through the
// same channel. How the bytes go depends on their size and the platform's
// bulk transport (taco::bulk_endpoint, reached through runtime/bulk_port.hpp):
//
// - small buffers, and every buffer on a platform without one (the
//   emulated SCC): cut into pieces, one per channel message;
// - large buffers to a core the platform reaches by messages of its own
//   (MPI ranks on another host: taco::bulk_message_endpoint): one such
//   message, then a channel message that takes it;
// - large buffers with one address space (POSIX core threads): the buffer
//   (the arguments' carried_writer buffer, or the delivered value itself) is
//   handed over by pointer, and the receiver takes it over: no copy beyond
//   the one that made the value;
// - the others on a platform with staging memory (POSIX, threads and core
//   processes): the sender copies the bytes into its staging area once, the
//   receiver copies them out into the value it rebuilds and releases them;
//   a full staging area sends pieces instead (never waits, never loses
//   anything).
//
// Messages from one source to one destination arrive in order, and the
// pieces (or the message that names the handed-over bytes) are sent
// unpaced (core.hpp): nothing the sender runs meanwhile can put a message
// between them and the one that takes them. So the receiver needs no ids: it
// appends every piece from a source to that source's inbox, and the
// invocation that follows takes the inbox whole.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include <taco/core_id.hpp>
#include <taco/platform/channel_endpoint.hpp>
#include <taco/runtime/core.hpp>
#include <taco/runtime/message.hpp>
#include <taco/detail/carried_result.hpp>
#include <taco/detail/request.hpp>
#include <taco/detail/wire_call.hpp>

namespace taco::detail {

/// One piece of a carried buffer: fills a whole message.
struct bulk_piece {
    static constexpr std::size_t capacity = message_bytes - payload_offset - 2 * sizeof(std::uint32_t);
    core_id source;
    std::uint32_t length;
    std::byte data[capacity];

    bulk_piece(core_id from, std::span<const std::byte> bytes) noexcept
        : source(from), length(std::uint32_t(bytes.size())) {
        std::memcpy(data, bytes.data(), bytes.size());
    }
    void operator()() const {
        auto& inbox = runtime().bulk_inbox(source);
        inbox.insert(inbox.end(), data, data + length);
    }
};

/// The bytes received for one carried invocation. The core that received
/// them keeps the buffer for its next inbox once the invocation is done
/// with it (core::give_back_bulk): the destructor runs where the invocation
/// ran, straight or as a task, so on the core that owns the spares.
class received_bulk {
public:
    explicit received_bulk(std::vector<std::byte> bytes) noexcept : bytes_(std::move(bytes)) {}
    // A move keeps the heap buffer where it is: the views into it stay valid.
    received_bulk(received_bulk&&) noexcept = default;
    received_bulk& operator=(received_bulk&&) = delete;
    ~received_bulk() {
        if (core* rt = tls_runtime) rt->give_back_bulk(std::move(bytes_));
    }
    std::span<const std::byte> bytes() const noexcept { return bytes_; }

private:
    std::vector<std::byte> bytes_;
};

/// The invocation that follows its pieces: rebuilds the carried arguments
/// from the inbox, then runs as a request would (Run: straight, or as a task
/// that keeps the buffer its views point into).
template <class T, class Call, class Cont, class Run>
struct bulk_request {
    [[no_unique_address]] object_ref<T> target;
    typename wire_call<Call>::type call;
    [[no_unique_address]] Cont cont;
    [[no_unique_address]] Run run;
    core_id source;

    void operator()() {
        received_bulk bytes(runtime().take_bulk(source));
        request<T, Call, Cont> r{target, wire_call<Call>::from(call, bytes.bytes()), cont};
        run([r = std::move(r), bytes = std::move(bytes)]() mutable { r(); });
    }
};

/// Announces the bytes of a carried buffer of many pieces, so that the
/// receiver's inbox grows once instead of doubling its way there (each
/// doubling copied everything received so far: 16 MB moved for an 8 MB
/// vector).
struct bulk_reserve {
    core_id source;
    std::uint32_t bytes;
    void operator()() const {
        auto& inbox = runtime().bulk_inbox(source);
        inbox.reserve(inbox.size() + bytes);
    }
};
inline constexpr std::size_t reserve_from_pieces = 8;

/// Carried buffers from this size on are staged where the platform can:
/// below it, two or three pieces cost less than the staging copies
/// (measured: 64 doubles reduced in 1.1-1.4 us staged, 1.6 us in pieces).
inline constexpr std::size_t bulk_min_bytes = 256;
/// From this size on, with one address space, the buffer is handed over by
/// pointer instead of staged: it saves a copy, which outweighs the
/// allocation the receiver frees (an allocator lock, on another thread's
/// arena) only for large buffers. Measured at 2-core reduces: 512 bytes
/// handed over 2.0 us against 1.3 us staged; 32 KiB 14 us against 11 us;
/// 8 MiB 2-6 ms against 24 ms staged.
inline constexpr std::size_t handover_min_bytes = 64 * 1024;

/// From this size on, a platform with bulk messages (MPI between hosts)
/// sends a buffer as one: below it, its pieces cost less than a message of
/// its own and the small message that names it.
inline constexpr std::size_t bulk_message_min_bytes = 4 * 1024;

/// A carried buffer sent as a bulk message of the platform's
/// (taco::bulk_message_endpoint): taken from there into the source's inbox.
struct bulk_sent {
    core_id source;
    std::uint32_t length;
    void operator()() const {
        core& rt = runtime();
        rt.bulk_receive(source, rt.bulk_inbox(source), length);
    }
};

/// Send `bytes` to `dest` ahead of the message that takes them, unpaced (the
/// caller sends that message next, then paces): as one bulk message where
/// the platform has them, else as pieces.
inline void send_ahead(core& rt, core_id dest, std::span<const std::byte> bytes) {
    if (bytes.size() >= bulk_message_min_bytes && rt.bulk_send(dest, bytes))
        return rt.send<bulk_sent, pacing::unpaced>(dest, rt.id(), std::uint32_t(bytes.size()));
    if (bytes.size() > reserve_from_pieces * bulk_piece::capacity)
        rt.send<bulk_reserve, pacing::unpaced>(dest, rt.id(), std::uint32_t(bytes.size()));
    for (std::size_t at = 0; at < bytes.size(); at += bulk_piece::capacity)
        rt.send_queued<bulk_piece>(dest, rt.id(), bytes.subspan(at, std::min(bulk_piece::capacity, bytes.size() - at)));
}

/// A carried buffer handed over by pointer (one address space): becomes
/// the source's inbox as it is.
struct bulk_handover {
    core_id source;
    std::vector<std::byte>* bytes; // owned: taken over here

    void operator()() const {
        const std::unique_ptr<std::vector<std::byte>> owned(bytes);
        runtime().bulk_inbox(source) = std::move(*owned);
    }
};

/// A carried buffer in the sender's staging area: copied into the source's
/// inbox, then released for the sender to reuse.
struct bulk_staged {
    core_id source;
    std::uint32_t length;
    std::byte* bytes;

    void operator()() const {
        core& rt = runtime();
        auto& inbox = rt.bulk_inbox(source);
        inbox.insert(inbox.end(), bytes, bytes + length);
        rt.bulk_release(bytes);
    }
};

/// Stage `bytes` for `dest` if the platform can and they are worth it; the
/// staging memory (filled), or nullptr: send them another way.
inline std::byte* stage_bytes(core& rt, core_id dest, std::span<const std::byte> bytes) {
    if (bytes.size() < bulk_min_bytes) return nullptr;
    std::byte* staged = rt.bulk_stage(dest, bytes.size());
    if (staged) std::memcpy(staged, bytes.data(), bytes.size());
    return staged;
}

/// Send the carried buffer `w` ahead of the message that takes it: handed
/// over, staged or as pieces (see the top of this file); unpaced.
inline void send_buffer(core& rt, core_id dest, carried_writer&& w) {
    const std::span<const std::byte> bytes = w.bytes();
    if (bytes.size() >= handover_min_bytes && rt.shared_address_space) {
        auto owned = std::make_unique<std::vector<std::byte>>(std::move(w).take());
        rt.send<bulk_handover, pacing::unpaced>(dest, rt.id(), owned.get());
        owned.release(); // the message owns it now
    } else if (std::byte* staged = stage_bytes(rt, dest, bytes)) {
        rt.send<bulk_staged, pacing::unpaced>(dest, rt.id(), std::uint32_t(bytes.size()), staged);
    } else {
        send_ahead(rt, dest, bytes);
    }
}

/// Send an invocation of `call` (which carries arguments) on `target`.
template <class T, class Call, class Cont, class Run>
void send_carried(core& rt, core_id dest, object_ref<T> target, const Call& call, const Cont& cont, Run run) {
    carried_writer w;
    const auto wire = wire_call<Call>::to(call, w); // may throw (too large): before anything is sent
    send_buffer(rt, dest, std::move(w));
    rt.send<bulk_request<T, Call, Cont, Run>, pacing::unpaced>(dest, target, wire, cont, run, rt.id());
    rt.pace(dest);
}

/// The message that follows the pieces of a carried value: rebuilds it (as
/// type D) from the inbox and hands it to `finish` (a future's state, a
/// timed future's slot, a reduction helper's slot).
template <class D, class Finish>
struct bulk_value {
    Finish finish;
    core_id source;
    void operator()() { finish(value_from_bytes<D>(runtime().take_bulk(source))); }
};

/// A carried value handed over by pointer (one address space): the value
/// the receiver gets, made by the sender, moved on to `finish`.
template <class D, class Finish>
struct bulk_value_handover {
    Finish finish;
    D* value; // owned: taken over here
    void operator()() {
        const std::unique_ptr<D> owned(value);
        finish(std::move(*owned));
    }
};

/// A carried value in the sender's staging area: rebuilt straight from it
/// (one copy), released, then handed to `finish`.
template <class D, class Finish>
struct bulk_value_staged {
    Finish finish;
    std::uint32_t length;
    std::byte* bytes;
    void operator()() {
        core& rt = runtime();
        struct release { // also when rebuilding throws
            core& rt;
            std::byte* bytes;
            ~release() { rt.bulk_release(bytes); }
        };
        std::optional<D> v;
        {
            const release r{rt, bytes};
            v.emplace(value_from_bytes<D>({bytes, length}));
        }
        finish(std::move(*v));
    }
};

/// Deliver `v` to `dest` carried: handed over, staged, or its bytes ahead
/// straight from the value (send_ahead: a bulk message or pieces, no
/// staging copy) and then bulk_value<D, Finish>. A value beyond taco::max_carried_bytes is not sent: `fail` gets
/// the error instead.
template <class D, class Finish, class V, class Fail>
void send_carried_value(core_id dest, const V& v, const Finish& finish, Fail&& fail) {
    const std::span<const std::byte> bytes = value_bytes(v);
    if (bytes.size() > max_carried_bytes) [[unlikely]]
        return fail(too_large_result());
    core& rt = runtime();
    if (bytes.size() >= handover_min_bytes && rt.shared_address_space) {
        auto owned = std::make_unique<D>(to_delivered<D>(v));
        rt.send<bulk_value_handover<D, Finish>, pacing::unpaced>(dest, finish, owned.get());
        owned.release(); // the message owns it now
    } else if (std::byte* staged = stage_bytes(rt, dest, bytes)) {
        rt.send<bulk_value_staged<D, Finish>, pacing::unpaced>(dest, finish, std::uint32_t(bytes.size()), staged);
    } else {
        send_ahead(rt, dest, bytes);
        rt.send<bulk_value<D, Finish>, pacing::unpaced>(dest, finish, rt.id());
    }
    rt.pace(dest);
}

} // namespace taco::detail
