#pragma once
// Waiting for several futures at once. Futures live on the calling core and
// are assigned by messages, so waiting for all of them is waiting for each
// in turn: the core serves invocations (or, in a coroutine, suspends) until
// the last has come, in whatever order they arrive.
//
//   taco::future<long> a, b; taco::future<void> c;
//   ...
//   auto [x, y] = taco::when_all(a, b, c).get();   // values of the non-void futures
//   std::vector<long> v = taco::when_all(std::span(futures)).get(); // a range of futures
#include <exception>
#include <span>
#include <tuple>
#include <type_traits>
#include <vector>

#include <taco/future.hpp>

namespace taco {

/// The futures of one when_all (references: the futures stay where they are).
template <class... R>
class [[nodiscard]] all_of {
public:
    explicit all_of(future<R>&... f) noexcept : futures_(f...) {}

    bool ready() const noexcept {
        return std::apply([](auto&... f) { return (f.ready() && ...); }, futures_);
    }
    /// Wait until every future has its result (values or errors).
    void wait() {
        std::apply([](auto&... f) { (f.wait(), ...); }, futures_);
    }
    /// Wait, then the values of the non-void futures as a tuple, in argument
    /// order; the first failed future's error is thrown (after all have come).
    auto get() {
        wait();
        // A function's arguments are evaluated in no set order (g++ goes
        // right to left), so take(f)... below would throw whichever failure
        // it met first: find the first in argument order here.
        std::apply([](auto&... f) { (void)((f.failed() && (throw_failure(f), true)) || ...); }, futures_);
        return std::apply([](auto&... f) { return std::tuple_cat(take(f)...); }, futures_);
    }

private:
    template <class V>
    [[noreturn]] static void throw_failure(future<V>& f) {
        (void)f.get();
        std::terminate(); // unreachable: get() on a failed future throws
    }
    template <class V>
    static auto take(future<V>& f) {
        if constexpr (std::is_void_v<V>) return f.get(), std::tuple<>{};
        else return std::tuple<V>(f.get());
    }
    std::tuple<future<R>&...> futures_;
};

/// Wait for several futures together (see the top of this file).
template <class... R>
all_of<R...> when_all(future<R>&... f) noexcept {
    return all_of<R...>(f...);
}

/// A range of futures of one type.
template <class R>
class [[nodiscard]] all_of_range {
public:
    explicit all_of_range(std::span<future<R>> f) noexcept : futures_(f) {}
    bool ready() const noexcept {
        for (auto& f : futures_)
            if (!f.ready()) return false;
        return true;
    }
    void wait() {
        for (auto& f : futures_) f.wait();
    }
    /// Wait, then the values in the range's order (R = void: nothing); the
    /// first failed future's error is thrown (after all have come).
    auto get() {
        wait();
        for (auto& f : futures_)
            if (f.failed()) (void)f.get(); // throws
        if constexpr (std::is_void_v<R>) {
            for (auto& f : futures_) f.get();
        } else {
            std::vector<R> values;
            values.reserve(futures_.size());
            for (auto& f : futures_) values.push_back(f.get());
            return values;
        }
    }

private:
    std::span<future<R>> futures_;
};

template <class R>
all_of_range<R> when_all(std::span<future<R>> f) noexcept {
    return all_of_range<R>(f);
}

} // namespace taco
