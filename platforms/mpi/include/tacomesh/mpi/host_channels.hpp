#pragma once
// Invocations between cores on one host: the POSIX platform's rings
// (tacomesh/posix/ring.hpp) in an MPI-3 shared-memory window
// (MPI_Win_allocate_shared over the ranks of the host), the "MPI + MPI"
// model. An MPI message between two ranks of one host is itself a copy
// through shared memory (Open MPI's vader), behind a matching engine, a
// request and a progress engine: 400 ns for an 8-byte ping-pong here, where
// a ring's round trip is two cache-line transfers. Cores on other hosts
// stay on MPI messages (platform.hpp); a pair of cores uses one or the
// other for the whole run, so order per source holds.
//
// Layout: every core of the host has one block in its rank's segment of the
// window:
//   header     connected: rings announced to this core (written on connect)
//              urgent: the urgent flag (channel_endpoint::signal_urgent)
//   flags      one byte per core of the host: its ring to this core exists
//   rings      one per core of the host, as the sender's host index
// A sender creates its ring in place on its first message to the core,
// then sets its flag (release) and bumps `connected`; the core sees the
// count change on its next poll and scans the flags (acquire) for rings
// it does not poll yet. So a core polls only the rings that carry
// something, as on POSIX, and an untouched ring costs address space only.
// The window's segments map at different addresses in each rank: nothing in
// them points (the posix ring's `next` link stays unused; the flags stand
// for it), and each rank reaches a block through MPI_Win_shared_query.
//
// C++ atomics on the shared pages order the messages (x86 and ARM keep them
// across processes, as the POSIX core processes rely on): MPI's unified
// memory model leaves load/store synchronisation in a shared window to the
// program.
#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <vector>

#include <taco/core_id.hpp>
#include <taco/platform/channel_endpoint.hpp>
#include <tacomesh/mpi/session.hpp>
#include <tacomesh/posix/ring.hpp>

namespace tacomesh::mpi::detail {

using ring = posix::detail::ring;
static_assert(posix::detail::slot::bytes >= taco::message_bytes);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free && std::atomic<std::uint8_t>::is_always_lock_free,
              "atomics shared between processes must be lock-free (address-free)");

class host_channels {
public:
    struct alignas(posix::detail::cache_line) header {
        std::atomic<std::uint32_t> connected;
        std::atomic<std::uint32_t> urgent;
    };

    /// Collective over `comm` (a run's communicator, core c on rank c % ranks).
    /// `window`: messages in flight per pair (rounded up to a power of two).
    host_channels(MPI_Comm comm, int rank, int ranks, taco::core_id cores, std::uint32_t window)
        : ranks_(ranks), capacity_(std::bit_ceil(std::max<std::uint32_t>(window, 2))), index_(cores, -1) {
        check(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &host_comm_),
              "MPI_Comm_split_type");
        int host_size = 0;
        MPI_Comm_size(host_comm_, &host_size);
        // Which ranks of the run are on this host, as host ranks.
        std::vector<int> host_ranks(static_cast<std::size_t>(host_size)), run_ranks(host_ranks.size());
        for (int q = 0; q < host_size; ++q) host_ranks[std::size_t(q)] = q;
        MPI_Group host_group, run_group;
        MPI_Comm_group(host_comm_, &host_group);
        MPI_Comm_group(comm, &run_group);
        check(MPI_Group_translate_ranks(host_group, host_size, host_ranks.data(), run_group, run_ranks.data()),
              "MPI_Group_translate_ranks");
        MPI_Group_free(&host_group);
        MPI_Group_free(&run_group);
        host_rank_of_.assign(std::size_t(ranks), -1);
        for (int q = 0; q < host_size; ++q) host_rank_of_[std::size_t(run_ranks[std::size_t(q)])] = q;
        for (taco::core_id c = 0; c < cores; ++c)
            if (host_rank_of_[c % taco::core_id(ranks)] >= 0) index_[c] = std::int32_t(host_cores_++);

        ring_bytes_ = round_up(ring::bytes_for(capacity_));
        flags_offset_ = round_up(sizeof(header));
        rings_offset_ = flags_offset_ + round_up(host_cores_);
        block_bytes_ = rings_offset_ + std::size_t(host_cores_) * ring_bytes_;
        taco::core_id mine = 0;
        for (taco::core_id c = taco::core_id(rank); c < cores; c += taco::core_id(ranks)) ++mine;
        std::byte* base = nullptr;
        if (const int code = MPI_Win_allocate_shared(MPI_Aint(std::size_t(mine) * block_bytes_), posix::detail::cache_line,
                                                     MPI_INFO_NULL, host_comm_, &base, &win_);
            code != MPI_SUCCESS) {
            MPI_Comm_free(&host_comm_); // no destructor runs after a constructor throws
            fail(("MPI_Win_allocate_shared of the rings between the cores of this host (" +
                  std::to_string(std::size_t(mine) * block_bytes_) +
                  " bytes; config.on_host = tacomesh::mpi::on_host::mpi runs without them)")
                     .c_str(),
                 code);
        }
        segments_.resize(std::size_t(host_size));
        for (int q = 0; q < host_size; ++q) {
            MPI_Aint size = 0;
            int unit = 0;
            check(MPI_Win_shared_query(win_, q, &size, &unit, &segments_[std::size_t(q)]), "MPI_Win_shared_query");
        }
        // This rank's cores' headers and flags, before any sender on the host
        // can look at them (the barrier); the rings are the senders' to make.
        for (std::size_t k = 0; k < mine; ++k) {
            std::byte* b = base + k * block_bytes_;
            ::new (b) header{{0}, {0}};
            for (std::size_t i = 0; i < host_cores_; ++i) ::new (b + flags_offset_ + i) std::atomic<std::uint8_t>(0);
        }
        session::get().barrier(host_comm_);
    }
    ~host_channels() {
        if (win_ != MPI_WIN_NULL) MPI_Win_free(&win_); // collective: every core of the host has stopped
        if (host_comm_ != MPI_COMM_NULL) MPI_Comm_free(&host_comm_);
    }
    host_channels(const host_channels&) = delete;
    host_channels& operator=(const host_channels&) = delete;

    /// After a lost rank: the window's free is collective, and the lost rank
    /// may be on this host.
    void abandon() noexcept { win_ = MPI_WIN_NULL, host_comm_ = MPI_COMM_NULL; }

    bool on_host(taco::core_id c) const noexcept { return index_[c] >= 0; }
    /// Whether some core of the run is on another host (then MPI messages are polled too).
    bool spans_hosts() const noexcept { return host_cores_ < index_.size(); }

    header& header_of(taco::core_id c) const noexcept { return *std::launder(reinterpret_cast<header*>(block(c))); }

    /// The sender's side of its first message to `dest` (both on this host):
    /// make the ring and announce it.
    ring::producer connect(taco::core_id source, taco::core_id dest) const noexcept {
        std::byte* b = block(dest);
        ring* r = ring::create(b + rings_offset_ + std::size_t(index_[source]) * ring_bytes_, capacity_, source);
        // release: the ring's initialised slots before the flag that announces it.
        flag(b, std::size_t(index_[source])).store(1, std::memory_order_release);
        header_of(dest).connected.fetch_add(1, std::memory_order_release);
        return r->make_producer();
    }

    /// The receiver's side: the rings announced to `dest` that `known` does
    /// not hold yet are added to it (and `polled` marks them).
    void take_new_rings(taco::core_id dest, std::vector<ring*>& known, std::vector<bool>& polled) const {
        std::byte* b = block(dest);
        polled.resize(host_cores_);
        for (std::size_t i = 0; i < host_cores_; ++i)
            if (!polled[i] && flag(b, i).load(std::memory_order_acquire)) { // acquire: the ring's initialisation
                polled[i] = true;
                known.push_back(std::launder(reinterpret_cast<ring*>(b + rings_offset_ + i * ring_bytes_)));
            }
    }

private:
    static std::size_t round_up(std::size_t n) noexcept {
        constexpr std::size_t line = posix::detail::cache_line;
        return (n + line - 1) / line * line;
    }
    std::byte* block(taco::core_id c) const noexcept {
        const int q = host_rank_of_[c % taco::core_id(ranks_)];
        return static_cast<std::byte*>(segments_[std::size_t(q)]) + std::size_t(c / taco::core_id(ranks_)) * block_bytes_;
    }
    std::atomic<std::uint8_t>& flag(std::byte* block, std::size_t i) const noexcept {
        return *std::launder(reinterpret_cast<std::atomic<std::uint8_t>*>(block + flags_offset_ + i));
    }

    int ranks_;
    std::uint32_t capacity_;
    std::vector<std::int32_t> index_; ///< per core of the run: its index on this host, or -1
    std::vector<int> host_rank_of_;   ///< per rank of the run: its rank on this host, or -1
    std::size_t host_cores_ = 0;
    std::size_t ring_bytes_ = 0, flags_offset_ = 0, rings_offset_ = 0, block_bytes_ = 0;
    std::vector<void*> segments_; ///< per host rank: its segment, as mapped here
    MPI_Comm host_comm_ = MPI_COMM_NULL;
    MPI_Win win_ = MPI_WIN_NULL;
};

} // namespace tacomesh::mpi::detail
