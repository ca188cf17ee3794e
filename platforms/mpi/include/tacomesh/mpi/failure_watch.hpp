#pragma once
// A rank that dies, reported (platforms/mpi/README.md, "Failures").
//
// Open MPI 4.1 (no ULFM) tells no rank of another's death. By default
// mpirun ends the whole job when any rank dies, printing which; nothing
// can be reported from inside then. With `mpirun --enable-recovery` it
// keeps the others running, but a dead rank is only silent: eager sends to
// it still complete, and nothing comes from it. So every rank runs a watch
// thread that trades heartbeats with rank 0 on a communicator of its own
// (the end of a run drains every tag of the run's): a rank sends one to
// rank 0, and rank 0 one to every rank, each timeout / 8. Rank 0 names a
// rank it has not heard from for the timeout,
// and its waiting cores throw taco::core_failure, which ends taco::run. A
// serving rank that stops hearing from rank 0 has no program left to
// serve: it says so and exits.
//
// A thread, not the cores: a core busy in user code for longer than the
// timeout is not a dead rank, and the thread keeps beating meanwhile.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <taco/core_failure.hpp>
#include <taco/core_id.hpp>
#include <taco/platform/core_threads.hpp>
#include <tacomesh/mpi/session.hpp>

namespace tacomesh::mpi::detail {

class failure_watch {
public:
    using clock = std::chrono::steady_clock;

    /// Collective over the run's communicator; starts the thread.
    failure_watch(const session& s, MPI_Comm run, taco::core_id cores, std::chrono::milliseconds timeout)
        : s_(s), comm_(dup(run)), cores_(cores), timeout_(timeout), heard_(std::size_t(s.ranks()), clock::now()),
          thread_(taco::detail::start_helper_thread([this] { watch(); }, "tacomesh::mpi",
                                                    "the failure watch (config.failure_timeout; 0 turns it off)")) {}
    ~failure_watch() {
        {
            std::lock_guard lock(mutex_);
            stop_ = true;
        }
        wake_.notify_one();
        thread_.join();
        if (!failed()) MPI_Comm_free(&comm_); // else kept: the lost rank would never take its part
    }
    failure_watch(const failure_watch&) = delete;
    failure_watch& operator=(const failure_watch&) = delete;

    /// Rank 0: a rank stopped answering (read by every waiting core).
    bool failed() const noexcept { return failed_.load(std::memory_order_acquire); }
    /// What failed() found (read after it, so the release/acquire pair orders it).
    const std::string& report() const noexcept { return report_; }
    [[noreturn]] void throw_failure() const { throw taco::core_failure(report_); }

private:
    static constexpr int tag = 0;
    static MPI_Comm dup(MPI_Comm run) {
        MPI_Comm c;
        check(MPI_Comm_dup(run, &c), "MPI_Comm_dup");
        return c;
    }

    void watch() {
        const auto beat = std::clamp<std::chrono::milliseconds>(timeout_ / 8, std::chrono::milliseconds(10),
                                                                std::chrono::milliseconds(250));
        // Rank 0 trades beats with every rank, the others with rank 0.
        const int first = s_.rank() == 0 ? 1 : 0, end = s_.rank() == 0 ? s_.ranks() : 1;
        std::unique_lock lock(mutex_);
        while (!stop_) {
            for (int r = first; r < end; ++r) {
                MPI_Request q;
                if (MPI_Isend(nullptr, 0, MPI_BYTE, r, tag, comm_, &q) == MPI_SUCCESS) MPI_Request_free(&q);
            }
            take_beats();
            const auto now = clock::now();
            for (int r = first; r < end; ++r)
                if (now - heard_[std::size_t(r)] > timeout_) return lost(r, now);
            wake_.wait_for(lock, beat, [&] { return stop_; });
        }
    }

    void take_beats() {
        for (;;) {
            int found = 0;
            MPI_Message m;
            MPI_Status st;
            if (MPI_Improbe(MPI_ANY_SOURCE, tag, comm_, &found, &m, &st) != MPI_SUCCESS || !found) return;
            MPI_Mrecv(nullptr, 0, MPI_BYTE, &m, MPI_STATUS_IGNORE);
            heard_[std::size_t(st.MPI_SOURCE)] = clock::now();
        }
    }

    void lost(int r, clock::time_point now) {
        const double silent = std::chrono::duration<double>(now - heard_[std::size_t(r)]).count();
        char seconds[32];
        std::snprintf(seconds, sizeof seconds, "%.1f s", silent);
        if (s_.rank() != 0) {
            std::fprintf(stderr,
                         "tacomesh::mpi: rank %d: rank 0 (host %s), which runs the program, stopped answering (no "
                         "heartbeat for %s): nothing left to serve, this rank exits\n",
                         s_.rank(), s_.host_of(0).c_str(), seconds);
            std::_Exit(1); // no MPI_Finalize: it would wait for rank 0
        }
        std::string cores;
        for (taco::core_id c = taco::core_id(r); c < cores_; c += taco::core_id(s_.ranks()))
            cores += (cores.empty() ? "" : ", ") + std::to_string(c);
        report_ = "tacomesh::mpi: rank " + std::to_string(r) + " (core" + (cores.find(',') != std::string::npos ? "s " : " ") +
                  cores + ", host " + s_.host_of(r) + ") stopped answering: no heartbeat for " + seconds +
                  " (config.failure_timeout); it died or hangs. MPI cannot go on without it: this run ends, and "
                  "later runs are refused";
        failed_.store(true, std::memory_order_release);
    }

    const session& s_;
    MPI_Comm comm_;
    taco::core_id cores_;
    std::chrono::milliseconds timeout_;
    std::vector<clock::time_point> heard_; ///< per rank (rank 0 watches all; the others rank 0)
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stop_ = false; ///< under mutex_
    std::atomic<bool> failed_{false};
    std::string report_;
    std::thread thread_; ///< last: starts once the rest is made
};

} // namespace tacomesh::mpi::detail
