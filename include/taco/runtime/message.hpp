#pragma once
// The invocation message: [handler][payload]. The handler is the function
// that knows the payload's type and runs it; it travels image-relative
// (image_ptr.hpp), so a message means the same in a separately started
// process. Payloads are trivially copyable: a message is moved by copying
// bytes, into a channel slot or into the sender's local queue.
#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

#include <taco/image_ptr.hpp>
#include <taco/platform/channel_endpoint.hpp>

namespace taco::detail {

using message_handler = void (*)(std::byte* message);
/// The handler's image-relative pointer, padded to the payload's alignment
/// (4 bytes of padding on a 32-bit target: the SCC's cores).
inline constexpr std::size_t payload_offset =
    (sizeof(image_ptr<message_handler>) + message_align - 1) / message_align * message_align;

template <class Msg>
inline constexpr std::size_t message_length = payload_offset + sizeof(Msg);

template <class Msg>
void run_message(std::byte* m) {
    (*std::launder(reinterpret_cast<Msg*>(m + payload_offset)))();
}

/// Run a received message (the handler every platform's poll is given).
inline void dispatch(std::byte* m) {
    image_ptr<message_handler> h;
    std::memcpy(&h, m, sizeof h);
    h.get_nonnull()(m);
}

/// Compile-time capacity check that shows both sizes in the error trace.
template <std::size_t Needed, std::size_t Capacity>
constexpr bool fits_in_message() {
    static_assert(Needed <= Capacity,
                  "taco: this message does not fit (see Needed/Capacity in the instantiation above: "
                  "handler + target + callable + arguments + completion + options vs. taco::message_bytes). "
                  "The room for arguments, results and reduced values is in taco::limits "
                  "(<taco/message_limits.hpp>, docs/reference.md \"Limits\"). Pass larger arguments as a "
                  "std::vector, std::string or taco::view (carried in several messages), as a "
                  "taco::global_ptr to them, or in a MESH shared object (sharing_ptr); results and reduced "
                  "values of any size are carried already, so this is an argument list or a bound "
                  "continuation.");
    return true;
}

template <class Msg>
constexpr void check_message() {
    static_assert(std::is_trivially_copyable_v<Msg>);
    static_assert(alignof(Msg) <= message_align,
                  "taco: invocation arguments aligned beyond taco::message_align (8 bytes) cannot travel in a message");
    static_assert(fits_in_message<message_length<Msg>, message_bytes>());
}

/// Construct Msg{args...} as a message in `slot`.
template <class Msg, class... Args>
void write_message(std::byte* slot, Args&&... args) {
    const image_ptr<message_handler> h(&run_message<Msg>);
    std::memcpy(slot, &h, sizeof h);
    ::new (static_cast<void*>(slot + payload_offset)) Msg{std::forward<Args>(args)...};
}

} // namespace taco::detail
