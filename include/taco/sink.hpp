#pragma once
// Sinks (CCI paper, section III.C): with an invocation channel the caller
// selects only the destination; the destination selects the action. A sink
// is that destination: an object on one core that accepts the values
// written to channels to it and decides what they trigger. Any type with a
// value_type and accept(value_type&&) is one; the library's (taco/sinks/)
// apply a function, schedule a preallocated activity, wake a protothread or
// coroutine, or merge a count of inputs, and a future is one too
// (channel.hpp).
#include <concepts>
#include <utility>

namespace taco {

/// S accepts values of S::value_type on its core: accept(v) runs in the
/// handler of the message that brought v (run straight, as a plain
/// invocation), so what takes long belongs in a task it schedules.
template <class S>
concept sink = requires { typename S::value_type; } &&
               requires(S& s, typename S::value_type&& v) { s.accept(std::move(v)); };

} // namespace taco
