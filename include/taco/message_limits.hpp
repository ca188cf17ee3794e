#pragma once
// The room in one message for the user's values, per kind of message.
// Everything that travels is checked against taco::message_bytes in one
// place (core::send, runtime/message.hpp); these constants say what that
// leaves for arguments, results and reduced values. They are computed from
// the message types themselves, so they follow any change of layout;
// tests/test_limits.cpp checks that each is exactly the boundary, and
// docs/reference.md's "Limits" table lists them.
//
// Beyond them: std::string, std::vector and taco::view arguments are carried
// in as many messages as they need (up to taco::max_carried_bytes); results
// and reduced or gathered values larger than `result` / `reduce_value` (and
// strings, vectors, views) are carried too (detail/carried_result.hpp), so
// those two say which values take the one-message path. Larger shared data
// belongs in a MESH shared object.
#include <cstddef>

#include <taco/continuation.hpp>
#include <taco/m2f.hpp>
#include <taco/task.hpp>
#include <taco/detail/carried_result.hpp>
#include <taco/detail/collective_ops.hpp>
#include <taco/detail/request.hpp>
#include <taco/detail/task_request.hpp>
#include <taco/runtime/message.hpp>

namespace taco::limits {

namespace probe {
struct object {
    void method();
};
void function();
template <class F, class Cont>
using request = detail::request<std::conditional_t<std::is_member_pointer_v<F>, object, void>, bound_call<F>, Cont>;
using method_request = request<void (object::*)(), detail::no_continuation>;
using function_request = request<void (*)(), detail::no_continuation>;
} // namespace probe

/// A message's bytes less the address of its handler.
inline constexpr std::size_t payload = message_bytes - detail::payload_offset;

/// Arguments (all of them, as one struct: in order, with padding) of a
/// method invoked on a global_ptr, fire and forget.
inline constexpr std::size_t method_arguments = payload - sizeof(probe::method_request);
/// Arguments of a function invoked on a core id, fire and forget.
inline constexpr std::size_t function_arguments = payload - sizeof(probe::function_request);
/// What a future completion (call, sync, async into a future) takes of them.
inline constexpr std::size_t future_completion = sizeof(detail::future_continuation<long>);
/// What task options (as_activity, as_coroutine, with_priority, deadlines) take of them.
inline constexpr std::size_t task_options = sizeof(detail::task_request<probe::method_request>) - sizeof(probe::method_request);

/// A result returned to a future in its one message (larger: carried).
inline constexpr std::size_t result = payload - offsetof(detail::future_set_message<long>, value);
/// A member's value in a reduce or gather, in its one message (larger: carried).
inline constexpr std::size_t reduce_value = payload - offsetof(detail::contribute_message<long>, value);

} // namespace taco::limits
