#pragma once
// The members a SharingAware object may hold. Deriving from sharing_aware<T>
// says "T owns more than its bytes, and tells MESH what": its shared
// containers register, its own mesh::allocate'd memory is listed in
// extra_ranges. A member that owns memory some other way (a std::vector's
// buffer, a std::string's characters, a unique_ptr's object) lives in the
// heap of the core that made it: with core threads every core reads it and
// the port seems right; with core processes, ranks or the SCC the other cores
// read whatever their own heap has at that address. So every member is
// checked, at compile time, where the language lets us see it:
//
// - an aggregate's leaves, found by aggregate initialisation (the probe of
//   pointer_members.hpp, whose conversion instantiates check_member with each
//   leaf's type): its members, their members' members, array elements;
// - a class that declares its members (shared_members.hpp): each of them,
//   and the declaration itself must cover sizeof(T) (a forgotten member is a
//   compile error) in declaration order (checked at program start);
// - the standard library's wrappers (pair, tuple, optional, variant, atomic)
//   by their element types, and a standard container whose allocator is a
//   non-cached mesh::allocator (coherent without events) by its elements.
//
// Refused, each with a static_assert naming the replacement (the offending
// type is the U of check_member<U, ...> in the compiler's "required from"
// lines): allocator-aware containers over private memory (std::vector,
// deque, list, string, map, set, their unordered and pmr kin, and any such
// container from another library), unique_ptr / shared_ptr / weak_ptr, raw
// object pointers unless T lists extra_ranges (they then lead into that
// memory, which the type manages), references, and classes the check cannot
// look into (private members or constructors) that are not trivially
// copyable and declare nothing. Trivially copyable classes with private
// members are trusted: they own nothing (no destructor), though one could
// hide a raw pointer.
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

#include <mesh/allocator.hpp>
#include <mesh/detail/pointer_members.hpp>
#include <mesh/shared_members.hpp>
#include <mesh/sharing_aware.hpp>

namespace mesh::detail {

template <class>
inline constexpr bool always_false = false;

template <class U>
inline constexpr bool is_sharing_aware_base = false;
template <class D>
inline constexpr bool is_sharing_aware_base<sharing_aware<D>> = true;

template <class U>
concept declares_members = requires { typename U::shared_members; };

// Standard containers are recognised by shape, not by name: an allocator
// is what a container owning heap memory has, in the standard library and
// elsewhere (Boost, pmr), and the shape says which replacement to name.
template <class U>
concept allocator_aware = requires {
    typename U::allocator_type;
    typename U::value_type;
};
template <class A>
inline constexpr bool coherent_allocator = false;
template <class E, memory_mode Mode>
inline constexpr bool coherent_allocator<mesh::allocator<E, Mode>> = Mode != memory_mode::cached;

template <class U>
inline constexpr bool smart_pointer = false;
template <class E, class D>
inline constexpr bool smart_pointer<std::unique_ptr<E, D>> = true;
template <class E>
inline constexpr bool smart_pointer<std::shared_ptr<E>> = true;
template <class E>
inline constexpr bool smart_pointer<std::weak_ptr<E>> = true;

/// The standard's value wrappers: what they hold is what they own.
template <class U>
struct wrapped {
    static constexpr bool is = false;
};
template <class... E>
struct wrapped<std::tuple<E...>> {
    static constexpr bool is = true;
    template <bool Ranges>
    static constexpr bool check();
};
template <class A, class B>
struct wrapped<std::pair<A, B>> : wrapped<std::tuple<A, B>> {};
template <class E>
struct wrapped<std::optional<E>> : wrapped<std::tuple<E>> {};
template <class... E>
struct wrapped<std::variant<E...>> : wrapped<std::tuple<E...>> {};
template <class E>
struct wrapped<std::atomic<E>> : wrapped<std::tuple<E>> {};

inline constexpr std::size_t max_member_leaves = 64;

template <class U, bool Ranges>
constexpr bool check_member();
template <class T, bool Ranges, auto... M>
constexpr bool check_declared(members<M...>);

/// The probe's hook: every leaf of an aggregate, as its type is deduced.
/// A trivially copyable member struct (a std::array of numbers) is one
/// leaf of its object, checked by itself: its own leaves do not count
/// against the object's max_member_leaves.
template <bool Ranges>
struct leaf_rules {
    template <class U>
    static constexpr bool leaf = check_member<U, Ranges>();
    template <class U>
    static constexpr bool whole = std::is_trivially_copyable_v<U>;
};

template <class T, bool Ranges>
constexpr bool check_leaves() {
    // Past the limit a trivially copyable aggregate (a table of numbers) is
    // trusted, as the raw-pointer check of plain shared objects trusts it:
    // owning nothing, it could only hide a raw pointer there.
    constexpr std::size_t n = leaf_count<T, any_leaf_of<leaf_rules<Ranges>>, max_member_leaves>();
    static_assert(n <= max_member_leaves || std::is_trivially_copyable_v<T>,
                  "mesh::make_shared_object: this aggregate (the T of check_leaves<T, ...> above) has more than 64 "
                  "leaves (a large array member? a std::array counts as one), past which its members are not "
                  "looked into: declare its data members instead, after them: using shared_members = mesh::members<&T::a, &T::b, ...>; "
                  "(mesh/shared_members.hpp)");
    return true;
}

/// U: a member's type (or an array element's, or a wrapper's element).
/// Ranges: the object lists extra_ranges, so raw pointers lead into them.
template <class U, bool Ranges>
constexpr bool check_member() {
    using V = std::remove_cv_t<U>;
    if constexpr (std::is_array_v<V>) {
        return check_member<std::remove_all_extents_t<V>, Ranges>();
    } else if constexpr (std::is_reference_v<V>) {
        static_assert(always_false<V>,
                      "mesh::make_shared_object: a reference member (the U of check_member<U, ...> above) refers "
                      "to an object the other cores may not see: hold a mesh::sharing_ptr to a shared object, or "
                      "the value itself");
        return false;
    } else if constexpr (std::is_pointer_v<V>) {
        static_assert(Ranges || std::is_function_v<std::remove_pointer_t<V>>,
                      "mesh::make_shared_object: a raw pointer member (the U of check_member<U, ...> above): on "
                      "another core it leads into that core's private memory. For data the object owns use "
                      "mesh::vector / mesh::string / mesh::hash_map; for another shared object a "
                      "mesh::sharing_ptr; for an object on one core a taco::global_ptr; or an index into a shared "
                      "container. If it leads into memory from mesh::allocate, list that memory in the object's "
                      "extra_ranges (mesh/sharing_aware.hpp), and raw pointers are allowed");
        return true;
    } else if constexpr (!std::is_class_v<V> && !std::is_union_v<V>) {
        return true; // arithmetic, enum, member pointer, nullptr_t
    } else if constexpr (is_sharing_aware_base<V>) {
        return true;
    } else if constexpr (declares_members<V>) {
        using declared = typename V::shared_members;
        if constexpr (std::is_same_v<declared, trust_members<V>>) {
            return true;
        } else if constexpr (requires { check_declared<V, Ranges>(declared{}); }) {
            return check_declared<V, Ranges>(declared{});
        } else {
            static_assert(always_false<V>,
                          "mesh::make_shared_object: the shared_members of the U of check_member<U, ...> above is "
                          "neither mesh::members<&U::a, ...> nor mesh::trust_members<U> (a base class's "
                          "declaration, inherited? declare U's own)");
            return false;
        }
    } else if constexpr (enable_sharing<V>) {
        return true;
    } else if constexpr (std::is_aggregate_v<V>) {
        return check_leaves<V, Ranges>();
    } else if constexpr (std::is_trivially_copyable_v<V>) {
        return true; // no destructor, so it owns nothing (its private bytes are not looked into)
    } else if constexpr (allocator_aware<V>) {
        if constexpr (coherent_allocator<typename V::allocator_type>) {
            return check_member<typename V::value_type, Ranges>();
        } else if constexpr (allocator_aware<std::remove_cv_t<typename V::value_type>>) {
            static_assert(always_false<V>,
                          "mesh::make_shared_object: a container of containers (the U of check_member<U, ...> "
                          "above, e.g. std::vector<std::vector<int>>): every buffer lives in the heap of the core "
                          "that made it. Shared containers hold trivially copyable elements, so flatten it: one "
                          "mesh::vector<E> of all the elements and a mesh::vector<std::size_t> of where each inner "
                          "one starts (a graph's adjacency: offsets and targets, as CSR)");
            return false;
        } else if constexpr (requires { typename V::key_type; }) {
            static_assert(always_false<V>,
                          "mesh::make_shared_object: a std::map / std::unordered_map / std::set member (the U of "
                          "check_member<U, ...> above): its nodes live in the heap of the core that made them. Use "
                          "mesh::hash_map<K, V> (mesh/containers/hash_map.hpp; for a set, a value per key or a "
                          "sorted mesh::vector<K>), with mesh::string for string keys");
            return false;
        } else if constexpr (requires { typename V::traits_type; }) {
            static_assert(always_false<V>,
                          "mesh::make_shared_object: a std::string member (the U of check_member<U, ...> above): "
                          "its characters live in the heap of the core that made them. Use mesh::string "
                          "(mesh/containers/string.hpp)");
            return false;
        } else {
            static_assert(always_false<V>,
                          "mesh::make_shared_object: a std::vector (or deque, list: the U of check_member<U, ...> "
                          "above) member: its elements live in the heap of the core that made them. Use "
                          "mesh::vector<E> (mesh/containers/vector.hpp), or a standard container over "
                          "mesh::allocator<E, mesh::memory_mode::non_cached>");
            return false;
        }
    } else if constexpr (smart_pointer<V>) {
        static_assert(always_false<V>,
                      "mesh::make_shared_object: a std::unique_ptr / std::shared_ptr member (the U of "
                      "check_member<U, ...> above): its object lives in the heap of the core that made it. Make "
                      "the object a shared object of its own and hold a mesh::sharing_ptr to it, keep an array "
                      "in a mesh::vector, or allocate with mesh::allocate and list the memory in extra_ranges");
        return false;
    } else if constexpr (wrapped<V>::is) {
        return wrapped<V>::template check<Ranges>();
    } else {
        static_assert(always_false<V>,
                      "mesh::make_shared_object: a member whose class (the U of check_member<U, ...> above) has "
                      "private members or constructors and is not trivially copyable: it may own memory, and the "
                      "check cannot look inside. Declare its data members in it, after them: using "
                      "shared_members = mesh::members<&U::a, &U::b, ...>; (mesh/shared_members.hpp). If it holds "
                      "only shared memory that its object keeps consistent, say so: using shared_members = "
                      "mesh::trust_members<U>; or, for a type you cannot edit, template <> inline constexpr bool "
                      "mesh::enable_sharing<U> = true;");
        return false;
    }
}

template <class... E>
template <bool Ranges>
constexpr bool wrapped<std::tuple<E...>>::check() {
    return (check_member<E, Ranges>() && ...);
}

// ---- declared members ---------------------------------------------------------

template <class M>
struct member_pointer {
    static constexpr bool is = false;
};
template <class C, class E>
struct member_pointer<E C::*> {
    static constexpr bool is = !std::is_function_v<E>;
    using owner = C;
    using type = E;
};

template <std::size_t N>
struct member_layout {
    std::size_t offset[N + 1]; // + 1: no zero-length array for an empty list
    std::size_t size;
    std::size_t largest_gap;
};

/// Where T's declared members would be, laid out in the order given after
/// the sharing_aware base (the Itanium and MSVC rules for a class without
/// virtual bases or bit-fields: each member at the next offset its alignment
/// allows).
template <class T, class... E>
constexpr member_layout<sizeof...(E)> layout_of() {
    member_layout<sizeof...(E)> l{};
    std::size_t end = std::is_base_of_v<sharing_aware<T>, T> ? sizeof(sharing_aware<T>) : 0;
    std::size_t i = 0;
    auto place = [&](std::size_t size, std::size_t align) {
        const std::size_t at = (end + align - 1) / align * align;
        l.largest_gap = at - end > l.largest_gap ? at - end : l.largest_gap;
        l.offset[i++] = at;
        end = at + size;
    };
    (place(sizeof(E), alignof(E)), ...);
    l.size = (end + alignof(T) - 1) / alignof(T) * alignof(T);
    l.largest_gap = l.size - end > l.largest_gap ? l.size - end : l.largest_gap;
    return l;
}

template <auto A, auto B>
constexpr bool same_member() {
    if constexpr (std::is_same_v<decltype(A), decltype(B)>) return A == B;
    else return false;
}
template <auto A, auto... M>
constexpr std::size_t occurrences() {
    return (std::size_t(same_member<A, M>()) + ... + 0);
}
template <auto... M>
constexpr bool all_distinct() {
    return ((occurrences<M, M...>() == 1) && ...);
}

/// The declared offsets against the real ones, once per type at program
/// start. Constant evaluation cannot compare where two members of different
/// types lie (clang: "unspecified"), so this one part of the check runs:
/// a list out of declaration order stops the program before main.
template <class T, auto... M>
struct declared_order {
    static bool verify() noexcept {
        constexpr auto expected = layout_of<T, typename member_pointer<decltype(M)>::type...>();
        alignas(T) static unsigned char storage[sizeof(T)]; // addresses only: nothing is read or made there
        const T* object = reinterpret_cast<const T*>(storage);
        std::size_t i = 0;
        bool in_order = true;
        auto at = [&](const void* member) {
            const std::size_t offset = std::size_t(static_cast<const unsigned char*>(member) - storage);
            in_order &= offset == expected.offset[i++];
        };
        (at(&(object->*M)), ...);
        if (!in_order) {
            std::fprintf(stderr,
                         "mesh::members: the members listed in %s are not in declaration order; list every data "
                         "member in the order the class declares them (a list in another order can hide a "
                         "forgotten member in padding)\n",
                         __PRETTY_FUNCTION__);
            std::abort();
        }
        return in_order;
    }
    static inline const bool verified = verify();
};

template <class T, bool Ranges, auto... M>
constexpr bool check_declared(members<M...>) {
    static_assert((member_pointer<decltype(M)>::is && ...),
                  "mesh::members<...>: list pointers to data members, &T::name (the T of check_declared<T, ...> "
                  "above)");
    if constexpr ((member_pointer<decltype(M)>::is && ...)) {
        static_assert((std::is_same_v<typename member_pointer<decltype(M)>::owner, T> && ...),
                      "mesh::members<...>: a listed member belongs to another class than the T of "
                      "check_declared<T, ...> above (a base class's member?): list T's own members; a T with "
                      "data members in base classes besides sharing_aware cannot be checked: use "
                      "mesh::trust_members<T> and say why");
        constexpr bool distinct = all_distinct<M...>();
        static_assert(distinct, "mesh::members<...>: a member is listed twice (the T of check_declared<T, ...> above)");
        constexpr auto layout = layout_of<T, typename member_pointer<decltype(M)>::type...>();
        static_assert(layout.size == sizeof(T),
                      "mesh::members<...>: the members listed do not fill the T of check_declared<T, ...> above: "
                      "a data member is missing from the list (or the list is not in declaration order). List "
                      "every data member, in declaration order, after the last of them: using shared_members = "
                      "mesh::members<&T::a, &T::b, ...>;");
        static_assert(layout.largest_gap < sizeof(void*),
                      "mesh::members<...>: the T of check_declared<T, ...> above is over-aligned (alignas), and "
                      "its padding could hold a member the list forgot: the check cannot prove the list complete. "
                      "Move the alignas onto a member listed first, or use mesh::trust_members<T> and say why");
        (void)&declared_order<T, M...>::verified; // instantiates the start-up check
        return (check_member<typename member_pointer<decltype(M)>::type, Ranges>() && ...);
    }
    return false;
}

/// A SharingAware T: its own members, by declaration or by aggregate
/// initialisation. Ranges: T lists extra_ranges.
template <class T, bool Ranges>
constexpr bool check_sharing_aware() {
    if constexpr (enable_sharing<T>) {
        return true;
    } else if constexpr (declares_members<T>) {
        return check_member<T, Ranges>();
    } else if constexpr (std::is_aggregate_v<T>) {
        return check_leaves<T, Ranges>();
    } else {
        static_assert(always_false<T>,
                      "mesh::make_shared_object: T is sharing_aware and has private members or constructors, so "
                      "the members that may own private memory (a std::vector, a std::string, a unique_ptr) "
                      "cannot be seen. Declare them in T, after the last: using shared_members = "
                      "mesh::members<&T::a, &T::b, ...>; (every data member, in declaration order: a forgotten "
                      "one does not compile; mesh/shared_members.hpp). If T's members truly cannot be checked, "
                      "opt out, greppably: using shared_members = mesh::trust_members<T>;");
        return false;
    }
}

} // namespace mesh::detail
