#pragma once
// Optional part of a platform (docs/architecture.md, section 1), beside
// bulk_endpoint: a large carried buffer sent as one message of the
// platform's own (MPI ranks on different hosts), where bulk_endpoint's
// staging memory cannot exist (no memory both sides read). Without either,
// a buffer is cut into channel messages of taco::message_bytes: 1 MiB is
// some 9,600 of them, each an MPI message between hosts.
//
// Order is the channel's: the sender sends the bytes first, then a small
// channel message that names them; the receiver, running that message,
// takes the bytes from `source` (waiting for them if they are still on the
// way). A platform keeps a source's bytes in the order they were sent.
#include <concepts>
#include <cstddef>
#include <span>
#include <vector>

#include <taco/core_id.hpp>

namespace taco {

/// - `bulk_send(d, bytes)`: send the bytes to core `d` by the platform's own
///   way and return true, or return false (too small to be worth it, or `d`
///   is reached better by the channel): the caller sends them another way.
///   The bytes may be reused once it returns.
/// - `bulk_receive(s, into, n)`: append to `into` the next n bytes that core
///   `s` sent to this core by bulk_send.
template <class E>
concept bulk_message_endpoint = requires(E& e, core_id c, std::span<const std::byte> bytes, std::vector<std::byte>& into,
                                         std::size_t n) {
    { e.bulk_send(c, bytes) } -> std::same_as<bool>;
    { e.bulk_receive(c, into, n) } -> std::same_as<void>;
};

} // namespace taco
