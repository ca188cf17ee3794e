#pragma once
// A merger (CCI paper, section III.C: sinks that "collect and merge
// incoming data before invoking an action"; section V: the temporary sinks
// that count and merge results at a multicast tree's nodes): it combines
// every `count` values it accepts, in arrival order, and writes the merged
// value to its output channel, then starts over for the next `count`.
//
//   taco::future<long> total;
//   taco::merger sum(workers, taco::channel_to(total), std::plus<long>{});
//   for (core : workers) taco::async(core, taco::m2f(&work, ...), taco::channel_to(sum));
//
// The combiner, combine(T accumulated, const T& next) -> T as a reduction's
// (combiner.hpp; it need not be trivially copyable here, as it stays on its
// core), is applied in the order the values arrive: associative and
// commutative, unless the writers are ordered otherwise.
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include <taco/channel.hpp>

namespace taco {

template <class T, class C>
class merger {
public:
    using value_type = T;

    /// Merge every `count` values (count >= 1) with `combine` and write the
    /// result to `out`.
    merger(std::size_t count, channel<T> out, C combine = {}) : count_(count), out_(out), combine_(combine) {
        static_assert(std::is_invocable_r_v<T, C&, T&&, const T&>,
                      "taco::merger<T, C>: the combiner must be callable as combine(T, T) and return a T");
        if (count == 0) throw std::invalid_argument("taco::merger: a count of 0 values never merges; give count >= 1");
        if (!out) throw std::invalid_argument("taco::merger: a null output channel");
    }
    merger(const merger&) = delete;
    merger& operator=(const merger&) = delete;

    void accept(T&& v) {
        if (acc_) acc_.emplace(combine_(std::move(*acc_), v));
        else acc_.emplace(std::move(v));
        if (++seen_ < count_) return;
        seen_ = 0;
        T merged = std::move(*acc_);
        acc_.reset();
        emit(out_, std::move(merged));
    }

    /// Values merged so far in the current round.
    std::size_t seen() const noexcept { return seen_; }

private:
    std::size_t count_;
    std::size_t seen_ = 0;
    channel<T> out_;
    C combine_;
    std::optional<T> acc_;
};

template <class T, class C>
merger(std::size_t, channel<T>, C) -> merger<T, C>;

} // namespace taco
