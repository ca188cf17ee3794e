#pragma once
// What the collectives take (collective.hpp): a taco::group (one tree, fixed
// members) or a taco::dynamic_group (members added and removed while it is
// used), and the member type either holds.
#include <taco/dynamic_group.hpp>
#include <taco/group.hpp>

namespace taco {

namespace detail {
template <class G>
struct group_member {};
template <class T>
struct group_member<group<T>> {
    using type = T;
};
template <class T>
struct group_member<dynamic_group<T>> {
    using type = T;
};
} // namespace detail

template <class G>
concept object_group = requires { typename detail::group_member<G>::type; };

/// The members' type of an object group.
template <object_group G>
using group_member_t = typename detail::group_member<G>::type;

} // namespace taco
