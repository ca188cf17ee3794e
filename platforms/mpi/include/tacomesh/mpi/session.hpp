#pragma once
// The MPI session behind the cluster platform (platform.hpp): one per
// process, started by the first taco::run. Rank 0 is the program: it runs
// main() on core 0 and comes back from each taco::run as on POSIX. Every
// other rank enters the first taco::run and never comes back from it: it
// serves the runs rank 0 starts, one after another (their configuration
// comes by broadcast), and when rank 0's program ends it finalises MPI and
// exits. So code between and after runs happens once, on rank 0, as with
// POSIX core processes, and an app prints its results once.
//
// Waits outside a run (for the next run, for the end of one) test
// non-blocking collectives and sleep in between: Open MPI's blocking
// collectives spin, and an idle rank spinning on an oversubscribed host
// takes the CPU from the ranks that work.

// The C API only: the deprecated C++ bindings are not used, and their
// header casts function types (warnings under -Wextra).
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <taco/core_id.hpp>

namespace tacomesh::mpi::detail {

[[noreturn]] inline void fail(const char* what, int code) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(code, text, &length);
    throw std::runtime_error(std::string("tacomesh::mpi: ") + what + " failed: " + std::string(text, std::size_t(length)));
}
/// MPI calls return their error (the session sets MPI_ERRORS_RETURN).
inline void check(int code, const char* what) {
    if (code != MPI_SUCCESS) [[unlikely]] fail(what, code);
}

/// Test `request` until it completes, sleeping between tests (up to 1 ms).
template <class Between>
void wait_politely(MPI_Request& request, Between&& between) {
    std::chrono::microseconds nap{1};
    for (;;) {
        int done = 0;
        check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
        if (done) return;
        if (between()) {
            nap = std::chrono::microseconds{1};
            continue;
        }
        std::this_thread::sleep_for(nap);
        nap = std::min(nap * 2, std::chrono::microseconds{1000});
    }
}
inline void wait_politely(MPI_Request& request) {
    wait_politely(request, [] { return false; });
}

class session {
public:
    /// The process's session, MPI started on first use (or adopted, if the
    /// program started it: then the program also finalises it).
    static session& get() {
        static session s;
        return s;
    }
    int rank() const noexcept { return rank_; }
    int ranks() const noexcept { return ranks_; }
    /// Ranks on this host (for the oversubscription test).
    int host_ranks() const noexcept { return host_ranks_; }
    bool thread_multiple() const noexcept { return provided_ >= MPI_THREAD_MULTIPLE; }
    MPI_Comm world() const noexcept { return world_; }
    int tag_limit() const noexcept { return tag_ub_; }

private:
    session() {
        int started = 0;
        MPI_Initialized(&started);
        if (started) {
            MPI_Query_thread(&provided_);
        } else {
            // Open MPI's start-up reads the host's topology with hwloc, whose
            // GL component opens X displays :0 to :N; each failed open looks
            // "localhost" up, and on a host without /etc/hosts (a minimal
            // container, a CI root) every lookup waits for DNS: MPI_Init took
            // 5-15 s per rank there, at 3-6 ranks. Nothing here places work
            // by GPU, so the component is left out, unless the user chose
            // hwloc's components. (No thread of ours reads the environment
            // yet: MPI has not started, nor any core.)
            ::setenv("HWLOC_COMPONENTS", "-gl", 0);
            if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided_) != MPI_SUCCESS)
                throw std::runtime_error("tacomesh::mpi: MPI_Init_thread failed (is the program started by mpirun?)");
            owner_ = true;
        }
        check(MPI_Comm_dup(MPI_COMM_WORLD, &world_), "MPI_Comm_dup");
        check(MPI_Comm_set_errhandler(world_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
        MPI_Comm_rank(world_, &rank_);
        MPI_Comm_size(world_, &ranks_);
        MPI_Comm host;
        check(MPI_Comm_split_type(world_, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host), "MPI_Comm_split_type");
        MPI_Comm_size(host, &host_ranks_);
        MPI_Comm_free(&host);
        int* ub = nullptr;
        int found = 0;
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &found);
        tag_ub_ = found && ub ? *ub : 32767;
        char name[MPI_MAX_PROCESSOR_NAME] = {};
        int length = 0;
        MPI_Get_processor_name(name, &length);
        std::vector<char> names(std::size_t(ranks_) * MPI_MAX_PROCESSOR_NAME);
        check(MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, world_),
              "MPI_Allgather");
        for (int r = 0; r < ranks_; ++r) hosts_.emplace_back(names.data() + std::size_t(r) * MPI_MAX_PROCESSOR_NAME);
        if (owner_ && rank_ == 0) std::atexit(+[] { get().end(); });
    }

public:
    /// The host a rank runs on (for reports).
    const std::string& host_of(int rank) const { return hosts_.at(std::size_t(rank)); }

    /// A run lost a rank (failure_watch): what it said, for the runs refused after it.
    void lose(std::string report) { lost_ = std::move(report); }
    const std::string& lost() const noexcept { return lost_; }

    /// Rank 0, when its program ends: tell the serving ranks, then finalise.
    /// Not after a lost rank: MPI_Finalize would wait for it (the serving
    /// ranks end when rank 0's heartbeats stop).
    void end() {
        if (ended_) return;
        ended_ = true;
        if (!lost_.empty()) return;
        if (rank_ == 0 && ranks_ > 1) {
            command c{};
            c.kind = command::stop;
            broadcast(c);
        }
        MPI_Comm_free(&world_);
        if (owner_) MPI_Finalize();
    }

    /// What rank 0 sends the serving ranks at the start of each run.
    struct command {
        enum : std::uint32_t { run, stop } kind = run;
        std::uint32_t cores = 0, idle = 0, window = 0, failure_timeout_ms = 0, on_host = 0, remote_memory = 0;
        std::uint64_t cached_bytes = 0, non_cached_bytes = 0, private_bytes = 0;
        unsigned char args[64] = {}; ///< taco::launch_args, as bytes
    };
    /// The same command on every rank (rank 0's).
    void broadcast(command& c) {
        MPI_Request r;
        check(MPI_Ibcast(&c, sizeof c, MPI_BYTE, 0, world_, &r), "MPI_Ibcast");
        wait_politely(r);
    }
    void barrier(MPI_Comm comm) {
        MPI_Request r;
        check(MPI_Ibarrier(comm, &r), "MPI_Ibarrier");
        wait_politely(r);
    }

    ~session() = default;
    session(const session&) = delete;
    session& operator=(const session&) = delete;

private:
    bool owner_ = false, ended_ = false;
    int provided_ = MPI_THREAD_SINGLE;
    int rank_ = 0, ranks_ = 1, host_ranks_ = 1, tag_ub_ = 32767;
    std::vector<std::string> hosts_;
    std::string lost_;
    MPI_Comm world_ = MPI_COMM_NULL;
};

} // namespace tacomesh::mpi::detail

namespace tacomesh::mpi {

/// This process's rank, the number of ranks and how many share this host
/// (MPI is started on first use). Programs do not need them: rank 0 runs
/// main() and the others serve; benchmarks and tools label their output.
inline int rank() { return detail::session::get().rank(); }
inline int ranks() { return detail::session::get().ranks(); }
inline int ranks_on_this_host() { return detail::session::get().host_ranks(); }

/// For command lines with --cores and an MPI mode that runs one core per
/// rank (MESH needs that): the ranks, or std::invalid_argument saying how
/// to start the job when `asked` (a --cores given) is another number.
inline taco::core_id one_core_per_rank(std::optional<taco::core_id> asked) {
    const auto n = taco::core_id(ranks());
    if (asked && *asked != n)
        throw std::invalid_argument("--platform mpi runs one core per rank: --cores " + std::to_string(*asked) +
                                    " with " + std::to_string(n) + " ranks (start mpirun -np " +
                                    std::to_string(*asked) + ", or leave --cores out)");
    return n;
}

} // namespace tacomesh::mpi
