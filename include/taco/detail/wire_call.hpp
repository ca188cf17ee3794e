#pragma once
// A bound call with carried arguments (carried.hpp), as it travels: the
// arguments that fit stay in place, the carried ones become references into
// the buffer that travels ahead of it (runtime/bulk.hpp).
#include <cstddef>
#include <span>
#include <utility>

#include <taco/m2f.hpp>
#include <taco/detail/carried.hpp>

namespace taco::detail {

/// A bound call's wire form: its carried arguments replaced by references.
template <class Call>
struct wire_call;
template <class F, class... A>
struct wire_call<bound_call<F, A...>> {
    static constexpr bool carries = (is_carried_v<A> || ...);
    using type = bound_call<F, wire_of<A>...>;

    static type to(const bound_call<F, A...>& c, carried_writer& w) {
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            // Braced: the arguments are written in order.
            return type{c.fn, {{to_wire<A>(static_cast<const arg_leaf<I, A>&>(c.args).value, w)}...}};
        }(std::index_sequence_for<A...>{});
    }
    static bound_call<F, A...> from(const type& c, std::span<const std::byte> bytes) {
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            return bound_call<F, A...>{
                c.fn, {{from_wire<A>(static_cast<const arg_leaf<I, wire_of<A>>&>(c.args).value, bytes)}...}};
        }(std::index_sequence_for<A...>{});
    }
};

template <class Call>
inline constexpr bool carries_v = false;
template <class F, class... A>
inline constexpr bool carries_v<bound_call<F, A...>> = wire_call<bound_call<F, A...>>::carries;

} // namespace taco::detail
