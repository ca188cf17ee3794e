#pragma once
// A sink bound to a function (CCI paper, section III.C: "a functor that is
// applied on received data"): fn(value) runs in the handler of the message
// that brought the value, as a plain invocation does. Cheapest; for work
// that takes long or must be scheduled by priority or deadline, use an
// activity_sink.
//
//   auto log = taco::make_function_sink<reading>([&](reading r) { seen.push_back(r); });
//   taco::channel<reading> ch = taco::channel_to(log);
#include <type_traits>
#include <utility>

namespace taco {

template <class T, class F>
class function_sink {
public:
    using value_type = T;

    explicit function_sink(F fn) : fn_(std::move(fn)) {}
    // Channels hold its address.
    function_sink(const function_sink&) = delete;
    function_sink& operator=(const function_sink&) = delete;

    void accept(T&& v) { fn_(std::move(v)); }

private:
    F fn_;
};

/// A sink on this core that calls fn(value) for each value written to it.
template <class T, class F>
function_sink<T, std::decay_t<F>> make_function_sink(F&& fn) {
    static_assert(std::is_invocable_v<std::decay_t<F>&, T&&>,
                  "taco::make_function_sink<T>(fn): fn must be callable with a T (the channel's value type)");
    return function_sink<T, std::decay_t<F>>(std::forward<F>(fn));
}

} // namespace taco
