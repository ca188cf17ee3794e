#pragma once
// MESH's memory across ranks (platforms/mpi/README.md, "Shared objects").
//
// Every rank maps the shared regions at one address agreed by the ranks of
// the run (rank 0 proposes, each maps it with MAP_FIXED_NOREPLACE, and they
// move on to the next candidate if any rank could not), so a logical
// address means the same on all of them. What a rank holds there is its
// view, as a core process's on POSIX; the canonical copy of cached and
// non-cached memory is at the home rank (rank 0, whose core 0 runs MESH's
// allocator). The other ranks reach it one of two ways
// (config.remote_memory):
//
// - home_messages (the default): requests that the home's core 0 serves
//   when it polls (home_requests.hpp): invalidate and write-back copy the
//   range in one exchange, the words MESH updates from several cores
//   (taco::remote_memory_endpoint::word: version counters, pending writers,
//   the writer claim) are atomics done there, and a seqlock's release or
//   acquire of an object of one range is one exchange
//   (taco::versioned_memory_endpoint). No MPI window: no one-sided
//   component is needed for the network.
// - rma: one MPI window at the home; invalidate is an MPI_Get of exactly
//   the range, write-back an MPI_Put, the words MPI_Fetch_and_op.
//
// Every operation is complete before it returns, so operations of one core
// take effect in program order, which is what the controllers' seqlock
// needs: a copy that overlapped a write-back is torn only between version
// reads that differ.
//
// Where all ranks share a host the window is MPI shared memory, and with
// config.on_host = shared_memory (the default) the ranks reach the
// canonical copy by plain copies and C++ atomics (MPI_Win_shared_query),
// as POSIX core processes do: an MPI_Put to a shared window is such a copy
// behind a call, a flush and the component's bookkeeping, and each of the
// seqlock's words an MPI_Fetch_and_op and a flush (~25 ns apiece: a 64-byte
// object's release + acquire took 130 ns that way, 38 ns by atomics). The
// seqlock then rests on the atomics' ordering, exactly as on POSIX.
//
// Core-private memory is the rank's own, one slab per core of the rank, as
// in POSIX threads mode.
//
// One core per rank: cores that are threads of one rank would share its
// view, and one core's refresh would overwrite another's unpublished
// writes. region() refuses such a run with a message saying so.
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>

#include <taco/core_id.hpp>
#include <taco/platform/remote_memory.hpp>
#include <taco/usage_error.hpp>
#include <tacomesh/mpi/home_requests.hpp>
#include <tacomesh/mpi/session.hpp>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000 // Linux 4.17; older kernels take it as a hint (checked below)
#endif

namespace tacomesh::mpi {

/// How a rank that cannot load and store MESH's canonical copy (a rank on
/// another host than the home, or every rank with on_host::mpi) reaches it.
enum class remote_memory : std::uint8_t {
    /// Requests to the home rank, served by its core 0 when it polls: one
    /// exchange per copy or word, and per release or acquire of an object
    /// of one range. Over TCP a third to a sixth of RMA's cost.
    home_messages,
    /// MPI one-sided operations on a window at the home: for networks that
    /// do RMA in hardware, where a home core that computes for long does
    /// not hold the others up. Needs a one-sided component for the network
    /// (mpirun --mca osc ucx,sm).
    rma,
};

} // namespace tacomesh::mpi

namespace tacomesh::mpi::detail {

/// A window of `bytes` at `home` (none elsewhere), collective over `comm`
/// (the world's ranks, or a copy of them: the session knows how many share
/// this host). Where all share one host, MPI_Win_allocate_shared: Open MPI
/// then serves RMA by osc/sm, plain copies in shared memory. Its default
/// for MPI_Win_allocate, osc/rdma over the vader BTL, moves each Put or Get
/// of a buffer in mmap'd memory (as MESH's views are) by a single-copy
/// system call: 2.5 us instead of 0.15 us for 4 KiB (measured, Open MPI
/// 4.1). Across hosts, MPI_Win_allocate and the network's RMA.
inline int allocate_window(MPI_Comm comm, std::size_t bytes, int home, void* base, MPI_Win* win) {
    const session& s = session::get();
    const MPI_Aint mine = s.rank() == home ? MPI_Aint(bytes) : 0;
    if (s.host_ranks() == s.ranks()) return MPI_Win_allocate_shared(mine, 1, MPI_INFO_NULL, comm, base, win);
    return MPI_Win_allocate(mine, 1, MPI_INFO_NULL, comm, base, win);
}

/// Sizes of a run's shared memory (config's, as the serving ranks get them).
struct memory_sizes {
    std::uint64_t cached = 0, non_cached = 0, private_per_core = 0;
};

class shared_memory {
public:
    static constexpr std::size_t page = 4096;
    static constexpr int home = 0; ///< the rank holding the canonical copy

    /// Collective over `comm`. cores_here: cores of this rank; cores_per_rank: the most any rank has.
    /// direct: reach a window in shared memory by loads and stores (on_host::shared_memory).
    /// how: the other ranks' way to the canonical copy; first_tag: the first
    /// of the four tags of `comm` its requests use (home_messages).
    shared_memory(MPI_Comm comm, const memory_sizes& s, taco::core_id cores_here, taco::core_id cores_per_rank,
                  bool direct, remote_memory how = remote_memory::home_messages, int first_tag = 0)
        : cached_(round_up(s.cached)), non_cached_(round_up(s.non_cached)),
          private_stride_(round_up(s.private_per_core)), cores_per_rank_(cores_per_rank) {
        total_ = cached_ + non_cached_ + private_stride_ * std::max<taco::core_id>(cores_here, 1);
        reserve(comm);
        if (cached_ + non_cached_ == 0) return; // no shared memory asked for: no window
        const session& ses = session::get();
        if (how == remote_memory::home_messages && !(direct && ses.host_ranks() == ses.ranks())) {
            open_home_copy(comm, direct, first_tag);
            return;
        }
        // Not fatal: a run that uses no MESH memory goes on, and one that
        // does hears why at its first allocation (region()). Once refused,
        // never tried again (every rank was refused: the same collective
        // call): Open MPI 4.1 crashes in a later run after a failed one.
        static std::string refused;
        void* canonical = nullptr;
        if (!refused.empty()) {
            window_error_ = refused;
            return;
        }
        if (const int code = allocate_window(comm, cached_ + non_cached_, home, &canonical, &win_); code != MPI_SUCCESS) {
            char text[MPI_MAX_ERROR_STRING] = {};
            int length = 0;
            MPI_Error_string(code, text, &length);
            int kind = MPI_SUCCESS;
            MPI_Error_class(code, &kind);
            const std::string needs = "tacomesh::mpi: MESH's shared memory needs a window of " +
                                      std::to_string(cached_ + non_cached_) + " bytes at rank 0 (config.cached_bytes = " +
                                      std::to_string(s.cached) + " plus config.non_cached_bytes = " +
                                      std::to_string(s.non_cached) + "), and ";
            const std::string mpi_says(text, std::size_t(length));
            if (kind == MPI_ERR_NO_MEM) // the size: say which settings make it
                window_error_ = needs + "MPI could not allocate it (" + mpi_says +
                                "); lower config.cached_bytes or non_cached_bytes";
            else
                window_error_ =
                    needs + "MPI_Win_allocate failed (" + mpi_says +
                    "). Across hosts Open MPI needs a one-sided component for the network: Debian's Open MPI 4.1 "
                    "disables osc/ucx (/etc/openmpi/openmpi-mca-params.conf) and osc/pt2pt cannot serve "
                    "MPI_THREAD_MULTIPLE, so start mpirun with --mca osc ucx,sm -x UCX_TLS=tcp,self (or your "
                    "network's UCX transports)";
            refused = window_error_;
            win_ = MPI_WIN_NULL;
            return;
        }
        check(MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN), "MPI_Win_set_errhandler");
        int* flavor = nullptr;
        int found = 0;
        check(MPI_Win_get_attr(win_, MPI_WIN_CREATE_FLAVOR, &flavor, &found), "MPI_Win_get_attr");
        if (direct && found && *flavor == MPI_WIN_FLAVOR_SHARED) {
            MPI_Aint size = 0;
            int unit = 0;
            check(MPI_Win_shared_query(win_, home, &size, &unit, &canonical_), "MPI_Win_shared_query");
        }
        // One passive-target epoch for the run: ranks reach the home's copy
        // whenever their cores need it, with no part played by the home.
        check(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_), "MPI_Win_lock_all");
    }
    ~shared_memory() {
        requests_.reset();
        if (home_copy_) ::munmap(home_copy_, cached_ + non_cached_);
        if (win_ != MPI_WIN_NULL) {
            MPI_Win_unlock_all(win_);
            MPI_Win_free(&win_); // collective: every rank's cores have stopped
        }
        if (base_) ::munmap(base_, total_);
    }
    shared_memory(const shared_memory&) = delete;
    shared_memory& operator=(const shared_memory&) = delete;

    std::span<std::byte> region(taco::memory_mode m) const {
        if (!window_error_.empty()) throw std::runtime_error(window_error_);
        if (cores_per_rank_ > 1)
            throw taco::usage_error(
                "tacomesh::mpi: MESH shared objects need one core per rank (" + std::to_string(cores_per_rank_) +
                " cores share a rank in this run): cores that are threads of one rank share its view of shared "
                "memory, and one core's refresh would overwrite another's unpublished writes. Start as many "
                "ranks as cores (mpirun -np N, config.cores = 0 and threads_per_rank = 1)");
        // Write-through goes to cached memory, written back value by value
        // (as on POSIX): there is no memory a store reaches across ranks.
        if (m == taco::memory_mode::non_cached) return {base_ + cached_, non_cached_};
        return {base_, cached_};
    }
    std::span<std::byte> private_region() const noexcept { return {base_ + cached_ + non_cached_, private_stride_}; }
    /// Of the k-th core of this rank.
    std::ptrdiff_t private_offset(taco::core_id k) const noexcept {
        return std::ptrdiff_t(k) * std::ptrdiff_t(private_stride_);
    }

    void invalidate(const void* p, std::size_t n) { transfer(p, n, false); }
    void write_back(const void* p, std::size_t n) { transfer(p, n, true); }

    std::uint64_t word(taco::word_op op, void* w, std::size_t bytes, std::uint64_t operand) {
        const MPI_Aint at = displacement(w, bytes);
        if (at < 0 || (bytes != 4 && bytes != 8) || reinterpret_cast<std::uintptr_t>(w) % bytes != 0)
            throw std::invalid_argument("tacomesh::mpi: a shared word must be 4 or 8 aligned bytes of shared memory");
        if (canonical_) {
            std::byte* c = static_cast<std::byte*>(canonical_) + at;
            return bytes == 8 ? word_at(op, *reinterpret_cast<std::uint64_t*>(c), operand)
                              : word_at(op, *reinterpret_cast<std::uint32_t*>(c), std::uint32_t(operand));
        }
        if (requests_) return requests_->word(op, std::uint64_t(at), bytes, operand);
        const MPI_Datatype type = bytes == 8 ? MPI_UINT64_T : MPI_UINT32_T;
        const MPI_Op mpi_op = op == taco::word_op::load        ? MPI_NO_OP
                              : op == taco::word_op::fetch_add ? MPI_SUM
                                                               : MPI_REPLACE;
        std::uint64_t in64 = operand, out64 = 0;
        std::uint32_t in32 = std::uint32_t(operand), out32 = 0;
        void* in = bytes == 8 ? static_cast<void*>(&in64) : &in32;
        void* out = bytes == 8 ? static_cast<void*>(&out64) : &out32;
        check(MPI_Fetch_and_op(in, out, type, home, at, mpi_op, win_), "MPI_Fetch_and_op");
        check(MPI_Win_flush(home, win_), "MPI_Win_flush");
        if (op == taco::word_op::store) return 0;
        return bytes == 8 ? out64 : out32;
    }

    /// taco::versioned_memory_endpoint: a rank that asks the home for its
    /// copies does a seqlock's side in one exchange. The home and direct
    /// ranks do it with their own atomics and copies, as MESH does.
    bool versioned_copies() const noexcept { return requests_ && !canonical_; }
    std::uint64_t refresh_versioned(void* version, void* p, std::size_t n, std::uint64_t seen) {
        if (!versioned_copies() || n > max_piece) {
            for (;;) { // the seqlock reader, by word operations and copies
                const std::uint64_t v = word(taco::word_op::load, version, 8, 0);
                if (v & 1) {
                    if (waiting_) waiting_();
                    continue;
                }
                if (v == seen) return v;
                invalidate(p, n);
                if (word(taco::word_op::load, version, 8, 0) == v) return v;
            }
        }
        return requests_->refresh(std::uint64_t(checked_displacement(version, 8)),
                                  std::uint64_t(checked_displacement(p, n)), static_cast<std::byte*>(p), n, seen,
                                  waiting_);
    }
    std::uint64_t publish_versioned(void* version, const void* p, std::size_t n) {
        if (!versioned_copies() || n > max_piece) {
            const std::uint64_t odd = word(taco::word_op::fetch_add, version, 8, 1) + 1;
            write_back(p, n);
            word(taco::word_op::store, version, 8, odd + 1);
            return odd + 1;
        }
        return requests_->publish(std::uint64_t(checked_displacement(version, 8)),
                                  std::uint64_t(checked_displacement(p, n)), static_cast<const std::byte*>(p), n,
                                  waiting_);
    }

    /// Called between tests of a pending request (the failure watch's
    /// report; a yield where the host is oversubscribed).
    void on_wait(std::function<void()> f) {
        waiting_ = f;
        if (requests_) requests_->on_wait(std::move(f));
    }
    /// The home's core 0, when it polls: serve the other ranks' requests.
    bool serves() const noexcept { return serving_; }
    std::size_t serve() { return requests_->serve(); }
    /// The run's end found a message by probing: a request is served, not dropped.
    bool serve_matched(MPI_Message& m, const MPI_Status& st) {
        if (!serves() || st.MPI_TAG != requests_->request_tag()) return false;
        requests_->serve_matched(m, st);
        return true;
    }

    std::size_t mapped_bytes() const noexcept { return total_; }
    /// Whether this rank reaches the canonical copy by loads and stores.
    bool direct() const noexcept { return canonical_ != nullptr && !home_copy_; }

    /// After a lost rank: keep the window (its free is collective, and the
    /// lost rank would never take its part); the views still go.
    void abandon() noexcept { win_ = MPI_WIN_NULL; }

private:
    static std::size_t round_up(std::uint64_t n) { return std::size_t((n + page - 1) / page * page); }
    /// The most one MPI call moves (its counts are ints): larger copies go in pieces.
    static constexpr std::size_t max_piece = std::size_t(1) << 30;

    MPI_Aint checked_displacement(const void* p, std::size_t n) const {
        const MPI_Aint at = displacement(p, n);
        if (at < 0)
            throw std::out_of_range("tacomesh::mpi: a versioned copy of " + std::to_string(n) +
                                    " bytes outside MESH's shared memory");
        return at;
    }

    /// The window displacement of [p, p+n), or -1 outside cached and non-cached memory.
    MPI_Aint displacement(const void* p, std::size_t n) const noexcept {
        const auto* b = static_cast<const std::byte*>(p);
        if (b < base_ || b >= base_ + cached_ + non_cached_) return -1;
        if (n > std::size_t(base_ + cached_ + non_cached_ - b)) return -1;
        return MPI_Aint(b - base_);
    }

    void transfer(const void* p, std::size_t n, bool put) {
        if (n == 0) return;
        const MPI_Aint at = displacement(p, n);
        if (at < 0) {
            const auto* b = static_cast<const std::byte*>(p);
            if (b >= base_ && b < base_ + cached_ + non_cached_)
                throw std::out_of_range("tacomesh::mpi: " + std::string(put ? "write_back" : "invalidate") + " of " +
                                        std::to_string(n) + " bytes runs past the end of shared memory");
            return; // core-private memory: nothing to keep consistent
        }
        auto* view = const_cast<std::byte*>(static_cast<const std::byte*>(p));
        if (canonical_) {
            // The word operations are seq_cst atomics, so a copy already
            // stays after the ones before it (their acquire half). What a
            // flush also gave, and the word contract promises
            // (remote_memory.hpp): a write-back is visible before this
            // core's next word operation, even a load (store -> load needs
            // the full fence, the one that costs), and a refresh's reads
            // end before it (acquire: free on x86, as is release).
            std::byte* c = static_cast<std::byte*>(canonical_) + at;
            if (put) {
                std::atomic_thread_fence(std::memory_order_release);
                std::memcpy(c, view, n);
                std::atomic_thread_fence(std::memory_order_seq_cst);
            } else {
                std::memcpy(view, c, n);
                std::atomic_thread_fence(std::memory_order_acquire);
            }
            return;
        }
        if (requests_) {
            for (std::size_t done = 0; done < n;) { // MPI counts are ints
                const std::size_t piece = std::min(n - done, max_piece);
                if (put) requests_->put(std::uint64_t(at) + done, view + done, piece);
                else requests_->get(std::uint64_t(at) + done, view + done, piece);
                done += piece;
            }
            return;
        }
        for (std::size_t done = 0; done < n;) { // MPI counts are ints
            const int piece = int(std::min(n - done, max_piece));
            if (put)
                check(MPI_Put(view + done, piece, MPI_BYTE, home, at + MPI_Aint(done), piece, MPI_BYTE, win_), "MPI_Put");
            else
                check(MPI_Get(view + done, piece, MPI_BYTE, home, at + MPI_Aint(done), piece, MPI_BYTE, win_), "MPI_Get");
            done += std::size_t(piece);
        }
        check(MPI_Win_flush(home, win_), "MPI_Win_flush");
    }

    /// home_messages where some rank is on another host than the home (or
    /// every rank, with on_host::mpi): the canonical copy is the home's
    /// memory, which the ranks of its host share with `direct` (an MPI
    /// shared-memory window among them alone: they reach it by loads and
    /// stores, as on one host); every other rank asks the home for it.
    void open_home_copy(MPI_Comm comm, bool direct, int first_tag) {
        const int rank = session::get().rank();
        const std::size_t bytes = cached_ + non_cached_;
        std::string failed;
        if (direct) { // every rank splits `comm` by host; the home's host makes the window
            MPI_Comm host;
            check(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host), "MPI_Comm_split_type");
            if (const int home_there = rank_in(comm, home, host); home_there != MPI_UNDEFINED) {
                void* mine = nullptr;
                if (MPI_Win_allocate_shared(rank == home ? MPI_Aint(bytes) : 0, 1, MPI_INFO_NULL, host, &mine, &win_) !=
                    MPI_SUCCESS) {
                    win_ = MPI_WIN_NULL;
                    failed = "MPI_Win_allocate_shared refused it";
                } else {
                    MPI_Aint size = 0;
                    int unit = 0;
                    check(MPI_Win_shared_query(win_, home_there, &size, &unit, &canonical_), "MPI_Win_shared_query");
                    check(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_), "MPI_Win_lock_all"); // as the destructor expects
                }
            }
            MPI_Comm_free(&host);
        }
        if (rank == home && !canonical_ && failed.empty()) {
            void* got = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            if (got == MAP_FAILED) failed = "mmap refused it";
            else home_copy_ = canonical_ = got;
        }
        if (!failed.empty())
            window_error_ = "tacomesh::mpi: MESH's shared memory needs " + std::to_string(bytes) +
                            " bytes at rank 0 for its canonical copy, and " + failed +
                            "; lower config.cached_bytes or non_cached_bytes";
        serving_ = rank == home;
        requests_ = std::make_unique<home_requests>(comm, rank, first_tag,
                                                    serving_ ? static_cast<std::byte*>(canonical_) : nullptr, bytes);
    }
    /// Rank r of `from` in `to` (MPI_UNDEFINED if not there): a local look-up.
    static int rank_in(MPI_Comm from, int r, MPI_Comm to) {
        MPI_Group a, b;
        MPI_Comm_group(from, &a);
        MPI_Comm_group(to, &b);
        int there = MPI_UNDEFINED;
        check(MPI_Group_translate_ranks(a, 1, &r, b, &there), "MPI_Group_translate_ranks");
        MPI_Group_free(&a);
        MPI_Group_free(&b);
        return there;
    }

    /// Map total_ bytes at one address on every rank of `comm`.
    void reserve(MPI_Comm comm) {
        // Candidates far from where Linux puts libraries, heaps and stacks
        // (which differ per process under ASLR), 2 TiB apart.
        constexpr std::uintptr_t first = std::uintptr_t(0x2000) << 32, step = std::uintptr_t(0x200) << 32;
        for (int attempt = 0; attempt < 32; ++attempt) {
            auto* want = reinterpret_cast<std::byte*>(first + std::uintptr_t(attempt) * step);
            void* got = ::mmap(want, total_, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
            int ok = got == want;
            if (got != MAP_FAILED && !ok) ::munmap(got, total_); // a kernel that took the flag as a hint
            int all = 0;
            MPI_Request r;
            check(MPI_Iallreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm, &r), "MPI_Iallreduce");
            wait_politely(r);
            if (all) {
                base_ = want;
                return;
            }
            if (ok) ::munmap(want, total_);
        }
        throw std::runtime_error("tacomesh::mpi: the ranks found no address range of " + std::to_string(total_) +
                                 " bytes free in all of them for shared memory (config.cached_bytes " +
                                 std::to_string(cached_) + " + non_cached_bytes " + std::to_string(non_cached_) +
                                 " + private_bytes " + std::to_string(private_stride_) + " per core of this rank, "
                                 "rounded to pages; lower them)");
    }

    std::size_t cached_, non_cached_, private_stride_, total_ = 0;
    taco::core_id cores_per_rank_;
    std::byte* base_ = nullptr;
    MPI_Win win_ = MPI_WIN_NULL;
    void* canonical_ = nullptr; ///< the canonical copy, where this rank reaches it by loads and stores
    void* home_copy_ = nullptr;  ///< home_messages, at the home, where no rank shares it: the canonical copy, mapped here
    bool serving_ = false;       ///< home_messages, at the home: it serves the other ranks' requests
    std::unique_ptr<home_requests> requests_; ///< home_messages: the other ranks' way to the copy
    std::function<void()> waiting_;
    std::string window_error_; ///< why there is no window, where allocating it failed
};

} // namespace tacomesh::mpi::detail
