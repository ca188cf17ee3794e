#pragma once
// Optional part of a platform (docs/architecture.md, section 1): a way for
// large carried buffers (runtime/bulk.hpp) that is faster than cutting them
// into channel messages. The channel still carries a small message that says
// where the bytes are, in order with the others, so the invocation or result
// that follows finds them; only the bytes go beside it. A platform without it
// (MPI ranks, the emulated SCC) sends them as pieces through the channel.
#include <concepts>
#include <cstddef>

#include <taco/core_id.hpp>

namespace taco {

/// - `shares_address_space()`: every core of the run lives in one address
///   space (POSIX core threads): a heap object made on one core may be handed
///   to another by pointer, which takes it over (moves from it, frees it).
///   Nothing is copied or staged then.
/// - `bulk_stage(d, n)`: n bytes of staging memory that core `d` can read at
///   the same address (aligned at least to alignof(std::max_align_t)), or
///   nullptr when there is no room now or n is too large: the caller then
///   sends pieces instead, so a full staging area never loses a message nor
///   blocks the sender. The sender fills them before it sends the message
///   that names them (the channel's publish orders the bytes before it).
/// - `bulk_release(p)`: the receiver is done with the staged bytes at p;
///   their memory may be reused.
template <class E>
concept bulk_endpoint = requires(E& e, const E& ce, core_id dest, std::size_t n, std::byte* p) {
    { ce.shares_address_space() } -> std::same_as<bool>;
    { e.bulk_stage(dest, n) } -> std::same_as<std::byte*>;
    { e.bulk_release(p) } -> std::same_as<void>;
};

} // namespace taco
