#pragma once
// f(v, D) for every cluster D next to a vertex v: the sums each gain needs,
// in the greedy search (greedy.hpp) and the multilevel steps
// (local_moving.hpp). Reused for every vertex on a core: a stamp per cluster
// says whether its sum belongs to the current vertex, so nothing is cleared
// between vertices, and the touched list names the adjacent clusters (also
// those reached only through zero-weight edges) in the order first seen.
//
// A cluster's stamp and sum sit side by side in one 16-byte slot: the
// clusters of a vertex's neighbours are scattered over the whole array, so
// each add is a cache miss on a big graph, and with the two in separate
// arrays it was two. The touched list has room for every cluster from the
// start, so an add never checks a capacity: with that check (push_back) the
// compiler kept add out of line in the edge loops.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace modularity {

using cluster = std::uint32_t;

class neighbour_sums {
public:
    void resize(std::size_t n) {
        if (size_ >= n) return;
        // The stamps start at 0 and the current one at 1 or more: new slots
        // belong to no vertex. Only what is already stamped needs keeping.
        auto slots = std::make_unique_for_overwrite<slot[]>(n);
        std::copy_n(slots_.get(), size_, slots.get());
        std::fill(slots.get() + size_, slots.get() + n, slot{0.0, 0});
        slots_ = std::move(slots);
        auto touched = std::make_unique_for_overwrite<cluster[]>(n);
        std::copy_n(touched_.get(), count_, touched.get());
        touched_ = std::move(touched);
        size_ = n;
    }
    void start() noexcept {
        if (++stamp_ == 0) {
            std::for_each(slots_.get(), slots_.get() + size_, [](slot& s) { s.stamp = 0; });
            stamp_ = 1;
        }
        count_ = 0;
    }
    [[gnu::always_inline]] void add(cluster c, double w) noexcept {
        slot& s = slots_[c];
        if (s.stamp != stamp_) {
            s.stamp = stamp_;
            s.sum = w;
            touched_[count_++] = c;
        } else {
            s.sum += w;
        }
    }
    double operator[](cluster c) const noexcept {
        const slot& s = slots_[c];
        return s.stamp == stamp_ ? s.sum : 0.0;
    }
    std::span<const cluster> touched() const noexcept { return {touched_.get(), count_}; }

private:
    struct slot {
        double sum;
        std::uint32_t stamp;
    };
    std::unique_ptr<slot[]> slots_;
    std::unique_ptr<cluster[]> touched_;
    std::size_t size_ = 0, count_ = 0;
    std::uint32_t stamp_ = 0;
};

} // namespace modularity
