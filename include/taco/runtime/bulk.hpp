#pragma once
// An invocation with carried arguments (detail/carried.hpp), or a carried
// result (detail/carried_result.hpp): the bytes travel ahead of it through
// the same channel, cut into messages, and the invocation (or the message
// that delivers the result) follows. Only channels are used, so it works wherever
// invocations do (threads, processes, the SCC's message buffers, MPI).
//
// Messages from one source to one destination arrive in order, and the
// pieces are sent unpaced (core.hpp): nothing the sender runs meanwhile can
// put a message between them. So the receiver needs no ids: it appends every
// piece from a source to that source's inbox, and the invocation that
// follows takes the inbox whole.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
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
        std::vector<std::byte> bytes = runtime().take_bulk(source);
        request<T, Call, Cont> r{target, wire_call<Call>::from(call, bytes), cont};
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

/// Send `bytes` to `dest` as pieces, unpaced: the caller sends the message
/// that takes them next, then paces.
inline void send_pieces(core& rt, core_id dest, std::span<const std::byte> bytes) {
    if (bytes.size() > reserve_from_pieces * bulk_piece::capacity)
        rt.send<bulk_reserve, pacing::unpaced>(dest, rt.id(), std::uint32_t(bytes.size()));
    for (std::size_t at = 0; at < bytes.size(); at += bulk_piece::capacity)
        rt.send_queued<bulk_piece>(dest, rt.id(), bytes.subspan(at, std::min(bulk_piece::capacity, bytes.size() - at)));
}

/// Send an invocation of `call` (which carries arguments) on `target`.
template <class T, class Call, class Cont, class Run>
void send_carried(core& rt, core_id dest, object_ref<T> target, const Call& call, const Cont& cont, Run run) {
    carried_writer w;
    const auto wire = wire_call<Call>::to(call, w); // may throw (too large): before anything is sent
    send_pieces(rt, dest, w.bytes());
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

/// Deliver `v` to `dest` carried: its bytes ahead, straight from the value
/// (no staging copy), then bulk_value<D, Finish>. A value beyond
/// taco::max_carried_bytes is not sent: `fail` gets the error instead.
template <class D, class Finish, class V, class Fail>
void send_carried_value(core_id dest, const V& v, const Finish& finish, Fail&& fail) {
    const std::span<const std::byte> bytes = value_bytes(v);
    if (bytes.size() > max_carried_bytes) [[unlikely]]
        return fail(too_large_result());
    core& rt = runtime();
    send_pieces(rt, dest, bytes);
    rt.send<bulk_value<D, Finish>, pacing::unpaced>(dest, finish, rt.id());
    rt.pace(dest);
}

} // namespace taco::detail
