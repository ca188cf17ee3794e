#pragma once
// An invocation with carried arguments (detail/carried.hpp): its buffer
// travels ahead of it through the same channel, cut into messages, and the
// invocation itself follows. Only channels are used, so it works wherever
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

/// Send an invocation of `call` (which carries arguments) on `target`.
template <class T, class Call, class Cont, class Run>
void send_carried(core& rt, core_id dest, object_ref<T> target, const Call& call, const Cont& cont, Run run) {
    carried_writer w;
    const auto wire = wire_call<Call>::to(call, w); // may throw (too large): before anything is sent
    const std::span<const std::byte> bytes = w.bytes();
    for (std::size_t at = 0; at < bytes.size(); at += bulk_piece::capacity)
        rt.send<bulk_piece, pacing::unpaced>(dest, rt.id(), bytes.subspan(at, std::min(bulk_piece::capacity, bytes.size() - at)));
    rt.send<bulk_request<T, Call, Cont, Run>, pacing::unpaced>(dest, target, wire, cont, run, rt.id());
    rt.pace(dest);
}

} // namespace taco::detail
