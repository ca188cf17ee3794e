#pragma once
// Optional part of the memory seam: shared memory that no load or store
// reaches across cores, as between the nodes of a cluster (platforms/mpi).
// There every shared region is a view per core, like cached memory on the
// SCC, and the platform keeps its canonical copy elsewhere (an MPI window
// at a home rank): invalidate and write_back then also copy ranges of
// non-cached memory, and the few words MESH updates atomically from several
// cores (a control block's version counter, the Overlapped Broadcast's
// pending writers, change stamps) go to the canonical copy by `word`,
// whatever the local view holds. MESH reads `memory_port::remote_words`
// before it treats a word of non-cached memory as shared; platforms whose
// cores share memory do not model this concept, and nothing changes there.
#include <concepts>
#include <cstddef>
#include <cstdint>

#include <taco/platform/memory_endpoint.hpp>

namespace taco {

/// An atomic operation on a word of shared memory's canonical copy.
enum class word_op : std::uint8_t {
    load,      ///< returns the word
    store,     ///< stores the operand, returns 0
    fetch_add, ///< adds the operand (modulo the word's width), returns the old word
    exchange,  ///< stores the operand, returns the old word
};

/// `word(op, w, bytes, operand)`: op on the `bytes`-wide (4 or 8) word at
/// logical address `w` of shared memory, sequentially consistent with every
/// other word operation and with the calling core's earlier write-backs,
/// complete when it returns. invalidate / write_back work on non-cached
/// memory too (the view of it is this core's).
template <class E>
concept remote_memory_endpoint =
    memory_endpoint<E> && requires(E& e, void* w, std::size_t bytes, word_op op, std::uint64_t operand) {
        { e.word(op, w, bytes, operand) } -> std::same_as<std::uint64_t>;
    };

} // namespace taco
