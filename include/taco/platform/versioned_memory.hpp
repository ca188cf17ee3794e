#pragma once
// Optional part of the memory seam, beside remote_memory_endpoint: the two
// sides of a seqlock over one range, each done where the canonical copy is,
// in one exchange. Between hosts every word operation and every copy of a
// remote_memory_endpoint is a network round trip, so a seqlock's release
// (mark odd, copy, mark even) and acquire (read the word, copy, read it
// again) cost three each; a platform whose canonical copy is kept by a
// process of its own (platforms/mpi: the home rank) can do either side
// there, under the same seqlock as the copy's other writers, and answer
// once.
// MESH uses these for objects that are one range (no SharingAware parts)
// where versioned_copies() is true for the run; elsewhere the word
// operations and copies of remote_memory_endpoint, as before.
#include <concepts>
#include <cstddef>
#include <cstdint>

#include <taco/platform/remote_memory.hpp>

namespace taco {

/// `version` is the 8-byte seqlock word (even: no write-back under way) of
/// the range [p, p+n) of shared memory, all logical addresses.
///
/// - `refresh_versioned(version, p, n, seen)`: if the word is `seen`, copies
///   nothing and returns `seen`; else copies the range from the canonical
///   copy into this core's view as it was at one even value V of the word
///   (torn-free) and returns V. `seen` = ~0 always copies.
/// - `publish_versioned(version, p, n)`: copies the range from this core's
///   view to the canonical copy, the word going from even V to V + 2 around
///   the copy (no versioned reader sees a torn range); returns V + 2.
///
/// Both are complete when they return, ordered with the core's word
/// operations and copies, and wait out a write-back under way.
template <class E>
concept versioned_memory_endpoint =
    remote_memory_endpoint<E> &&
    requires(E& e, const E& ce, void* version, void* p, std::size_t n, std::uint64_t seen) {
        { ce.versioned_copies() } -> std::same_as<bool>; ///< whether this run's core should use them
        { e.refresh_versioned(version, p, n, seen) } -> std::same_as<std::uint64_t>;
        { e.publish_versioned(version, static_cast<const void*>(p), n) } -> std::same_as<std::uint64_t>;
    };

} // namespace taco
