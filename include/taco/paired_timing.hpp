#pragma once
// Timing on a noisy host: batches of work whose figures are ratios to a
// baseline timed in the same round, with the order of the contenders
// rotating from round to round. Cross-core latency on a shared machine
// shifts by ~4x within seconds; a shift that lands between two batches then
// favours each contender equally often instead of always the later one, and
// the median of the per-round ratios is the figure that means something.
// The project's Google Benchmark programs and the controller bench users
// run on their own types (tacomesh/posix/controller_bench.hpp) share it.
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <vector>

namespace taco::timing {

using clock_type = std::chrono::steady_clock;

inline double ns_since(clock_type::time_point t0) {
    return std::chrono::duration<double, std::nano>(clock_type::now() - t0).count();
}

inline double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

inline double quantile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::size_t(q * double(v.size() - 1) + 0.5)];
}

/// Operations per batch so that one batch takes about `target_ns` (after
/// one warm-up operation: pools filled, rings and groups made, pages
/// faulted in). Batch sizes differ by orders of magnitude between sizes and
/// core counts, so one fixed count would be too short to time or minutes long.
template <class Op>
std::size_t calibrate(Op&& op, double target_ns) {
    op();
    std::size_t done = 0;
    const auto t0 = clock_type::now();
    double elapsed = 0;
    do {
        op();
        ++done;
    } while ((elapsed = ns_since(t0)) < 2 * target_ns);
    return std::max<std::size_t>(1, std::size_t(double(done) * target_ns / elapsed));
}

/// Mean ns per operation over a batch of n. One untimed operation first: the
/// other cores may still be finishing the previous batch (or be descheduled
/// when oversubscribed).
template <class Op>
double time_batch(std::size_t n, Op&& op) {
    op();
    const auto t0 = clock_type::now();
    for (std::size_t i = 0; i < n; ++i) op();
    return ns_since(t0) / double(n);
}

/// CPUs this process may run on (what the POSIX platform pins cores to):
/// more cores than this is an oversubscribed run, named so in the output.
inline unsigned available_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    return ::sched_getaffinity(0, sizeof set, &set) == 0 ? unsigned(CPU_COUNT(&set)) : 1u;
}

/// Round `round` of `contenders`: time_one(i) for every contender, starting
/// with contender round % contenders and wrapping around, so that over
/// `contenders` rounds each goes first (and last) once. With two, the order
/// flips every round.
template <class TimeOne>
void rotated_round(std::size_t round, std::size_t contenders, TimeOne&& time_one) {
    for (std::size_t k = 0; k < contenders; ++k) time_one((round + k) % contenders);
}

/// The per-round times of several contenders, timed in rotated order, and
/// each one's ratios to a baseline timed in the same rounds.
class rotated_series {
public:
    explicit rotated_series(std::size_t contenders) : times_(contenders) {}

    /// One round: time(i) returns contender i's time (any unit).
    template <class Time>
    void run_round(Time&& time) {
        rotated_round(rounds_, times_.size(), [&](std::size_t i) { times_[i].push_back(time(i)); });
        ++rounds_;
    }

    std::size_t rounds() const noexcept { return rounds_; }
    const std::vector<double>& times(std::size_t i) const { return times_[i]; }
    /// Contender i's time over the baseline's, round by round.
    std::vector<double> ratios(std::size_t i, std::size_t baseline) const {
        std::vector<double> r(rounds_);
        for (std::size_t k = 0; k < rounds_; ++k) r[k] = times_[i][k] / times_[baseline][k];
        return r;
    }

private:
    std::vector<std::vector<double>> times_;
    std::size_t rounds_ = 0;
};

} // namespace taco::timing
