#pragma once
// Waiting for several futures at once: when_all returns one future of all
// their values, which can be waited on, passed on or chained like any other.
//
//   auto [x, y] = taco::when_all(a, b, c).get();   // values of the non-void futures
//   std::vector<long> v = taco::when_all(futures).get();          // a vector or span of futures
//   taco::when_all(a, b).then([](long x, double y) { ... });      // runs when both have come
//   taco::when_all(a, b).then(taco::then(gp, &U::on_both));       // gp->on_both(x, y)
//
// It takes the futures over (they are left empty, as moved from), as HPX
// does: their states join the result's chain (detail/future_chain.hpp),
// which counts them down as their results come, on this core, and then
// assigns the future it returned: the values in argument (range) order,
// or the first failure in that order, whatever order the results came in.
#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <taco/future.hpp>

namespace taco {

namespace detail {

template <class R>
using values_of = std::conditional_t<std::is_void_v<R>, std::tuple<>, std::tuple<R>>;
/// What when_all(f...) carries: the values of the non-void futures.
template <class... R>
using all_values = decltype(std::tuple_cat(std::declval<values_of<R>>()...));

/// The part of a when_all that waits: one hook per state still to come.
template <class Result>
class join_chain : public pending_chain {
public:
    explicit join_chain(future_state<Result>* target) : target_(target) {}

    /// Hang `input` on `s` (or count it as come): call for every state in
    /// turn, then start().
    template <class R>
    void watch(future_state<R>* s, ready_hook& input) noexcept {
        if (!s->ready()) ++waiting_, s->fire_when_ready(input);
    }
    /// Everything is watched: complete now if nothing was still to come.
    void start() {
        if (waiting_ == 0) complete();
    }

protected:
    struct input final : ready_hook {
        join_chain* join = nullptr;
        void fire() override { join->arrived(); }
    };

    /// Take the outcomes (their states recycled), delete this chain, then
    /// assign the target: its own chain may run on from there.
    virtual void complete() = 0;

    template <class R>
    static bool failed_first(future_state<R>* s, std::optional<outcome<R>>& first) {
        if (!s->failed()) return false;
        first.emplace(outcome<R>::take(*s));
        return true;
    }
    template <class R>
    static values_of<R> take(future_state<R>* s) {
        if constexpr (std::is_void_v<R>) return s->take(), std::tuple<>{};
        else return values_of<R>(s->take());
    }

    future_state<Result>* target_;

private:
    void arrived() {
        if (--waiting_ == 0) complete();
    }
    std::size_t waiting_ = 0;
};

/// when_all(f...): the futures' states, of their several types.
template <class... R>
class join_of final : public join_chain<all_values<R...>> {
    using base = join_chain<all_values<R...>>;
    using result = all_values<R...>;

public:
    join_of(future_state<result>* target, future_state<R>*... s) : base(target), states_(s...) {
        for (auto& i : inputs_) i.join = this;
    }
    ~join_of() override {
        std::apply([](auto*... s) { (drop_if_held(s), ...); }, states_);
    }
    void watch_all() noexcept {
        std::apply([this](auto*... s) {
            std::size_t i = 0;
            (this->watch(s, inputs_[i++]), ...);
        }, states_);
    }

private:
    template <class S>
    static void drop_if_held(S* s) noexcept {
        if (s) drop_unready(s);
    }
    void complete() override {
        std::unique_ptr<join_of> self(this);
        future_state<result>* target = this->target_;
        // The first failure in argument order (a fold over || stops at it).
        error_info error;
        bool timed_out = false;
        const bool failed = std::apply([&](auto*... s) {
            return (first_failure(s, error, timed_out) || ...);
        }, states_);
        std::optional<result> values;
        if (!failed) values.emplace(std::apply([](auto*... s) { return std::tuple_cat(base::take(s)...); }, states_));
        std::apply([](auto*&... s) { ((future_state<R>::recycle(s), s = nullptr), ...); }, states_);
        self.reset();
        if (!failed) target->set_value(std::move(*values));
        else if (timed_out) target->set_timeout();
        else target->set_error(error);
    }
    template <class X>
    static bool first_failure(future_state<X>* s, error_info& error, bool& timed_out) {
        std::optional<outcome<X>> o;
        if (!base::failed_first(s, o)) return false;
        error = o->error, timed_out = o->timed_out;
        return true;
    }

    std::tuple<future_state<R>*...> states_;
    std::array<typename base::input, sizeof...(R)> inputs_;
};

/// when_all(range): the states of futures of one type, in range order.
template <class R>
using range_values = std::conditional_t<std::is_void_v<R>, void, std::vector<R>>;

template <class R>
class join_range final : public join_chain<range_values<R>> {
    using base = join_chain<range_values<R>>;

public:
    join_range(future_state<range_values<R>>* target, std::vector<future_state<R>*> states)
        : base(target), states_(std::move(states)), inputs_(states_.size()) {
        for (auto& i : inputs_) i.join = this;
    }
    ~join_range() override {
        for (auto* s : states_)
            if (s) drop_unready(s);
    }
    void watch_all() noexcept {
        for (std::size_t i = 0; i < states_.size(); ++i) this->watch(states_[i], inputs_[i]);
    }

private:
    void complete() override {
        std::unique_ptr<join_range> self(this);
        future_state<range_values<R>>* target = this->target_;
        std::optional<outcome<R>> failure;
        for (auto* s : states_)
            if (base::failed_first(s, failure)) break;
        std::conditional_t<std::is_void_v<R>, std::tuple<>, std::vector<R>> values;
        if (!failure) {
            if constexpr (std::is_void_v<R>) {
                for (auto* s : states_) s->take();
            } else {
                values.reserve(states_.size());
                for (auto* s : states_) values.push_back(s->take());
            }
        }
        for (auto*& s : states_) future_state<R>::recycle(std::exchange(s, nullptr));
        self.reset();
        if (failure) failure->fail_to(*target);
        else if constexpr (std::is_void_v<R>) target->set_value();
        else target->set_value(std::move(values));
    }

    std::vector<future_state<R>*> states_;
    std::vector<typename base::input> inputs_;
};

template <class F>
inline constexpr bool is_takeable_future_v = is_future_v<std::remove_cvref_t<F>> && !std::is_const_v<std::remove_reference_t<F>>;

} // namespace detail

/// One future of the values of `f...` (see the top of this file).
template <class... F>
    requires(detail::is_takeable_future_v<F> && ...)
[[nodiscard]] auto when_all(F&&... f) {
    using result = detail::all_values<typename std::remove_cvref_t<F>::value_type...>;
    (detail::chainable_state(f, "taco::when_all"), ...); // all checked before any is taken
    return future<result>(detail::start_tag{}, [&](future<result>& out) {
        auto* join = new detail::join_of<typename std::remove_cvref_t<F>::value_type...>(
            out.arm(), detail::future_access<typename std::remove_cvref_t<F>::value_type>::state(f)...);
        (detail::future_access<typename std::remove_cvref_t<F>::value_type>::take(f), ...); // nothing throws from here on
        join->watch_all();
        join->start();
    });
}

/// One future of the values of a range of futures, in its order (R = void:
/// a future<void>); an empty range is ready at once.
template <class R>
[[nodiscard]] future<detail::range_values<R>> when_all(std::span<future<R>> f) {
    using result = detail::range_values<R>;
    for (auto& x : f) detail::chainable_state(x, "taco::when_all");
    return future<result>(detail::start_tag{}, [&](future<result>& out) {
        std::vector<detail::future_state<R>*> states;
        states.reserve(f.size());
        for (auto& x : f) states.push_back(detail::future_access<R>::state(x));
        auto* join = new detail::join_range<R>(out.arm(), std::move(states));
        for (auto& x : f) detail::future_access<R>::take(x); // nothing throws from here on
        join->watch_all();
        join->start();
    });
}
template <class R>
[[nodiscard]] future<detail::range_values<R>> when_all(std::vector<future<R>>& f) {
    return when_all(std::span<future<R>>(f));
}
template <class R>
[[nodiscard]] future<detail::range_values<R>> when_all(std::vector<future<R>>&& f) {
    return when_all(std::span<future<R>>(f));
}

} // namespace taco
