#pragma once
// f(v, D) for every cluster D next to a vertex v: the sums each gain needs,
// in the greedy search (greedy.hpp) and the multilevel steps
// (local_moving.hpp). Reused for every vertex on a core: a stamp per cluster
// says whether its sum belongs to the current vertex, so nothing is cleared
// between vertices, and the touched list names the adjacent clusters (also
// those reached only through zero-weight edges) in the order first seen.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace modularity {

using cluster = std::uint32_t;

class neighbour_sums {
public:
    void resize(std::size_t n) {
        if (sum_.size() < n) {
            sum_.resize(n, 0.0);
            stamp_of_.resize(n, 0);
        }
    }
    void start() {
        if (++stamp_ == 0) {
            std::fill(stamp_of_.begin(), stamp_of_.end(), 0);
            stamp_ = 1;
        }
        touched_.clear();
    }
    void add(cluster c, double w) {
        if (stamp_of_[c] != stamp_) {
            stamp_of_[c] = stamp_;
            sum_[c] = 0;
            touched_.push_back(c);
        }
        sum_[c] += w;
    }
    /// Mark c as next to the current vertex, without a sum (and without a
    /// place in touched()): true the first time. For counting neighbours;
    /// do not mix with add under one start().
    bool mark(cluster c) noexcept {
        if (stamp_of_[c] == stamp_) return false;
        stamp_of_[c] = stamp_;
        return true;
    }
    double operator[](cluster c) const noexcept { return stamp_of_[c] == stamp_ ? sum_[c] : 0.0; }
    const std::vector<cluster>& touched() const noexcept { return touched_; }

private:
    std::vector<double> sum_;
    std::vector<std::uint32_t> stamp_of_;
    std::uint32_t stamp_ = 0;
    std::vector<cluster> touched_;
};

} // namespace modularity
