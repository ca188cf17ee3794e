#pragma once
// SharingAware (MESH paper, section III.C): a shared object that owns more
// memory than its own bytes derives from sharing_aware<Derived>. Two ways
// to own it, which may be mixed:
//
// - shared containers as members (mesh::vector, mesh::string,
//   mesh::hash_map): they register with the object while it is constructed
//   (detail/parts.hpp) and tell the controller which of their chunks
//   changed, so the type lists nothing;
// - memory from mesh::allocate that the type manages itself, listed in
//
//     template <class Visit> void extra_ranges(Visit&& visit) const {
//         visit(data_, size_ * sizeof(double));
//     }
//
// Controllers then invalidate and write back those ranges with the object,
// under the same version check (the object is refreshed first, so the
// ranges are read from a consistent object). The base also hands out a
// sharing pointer to the object itself (self()), for objects that register
// with others, e.g. mappings as observers of their index space; it is
// available from the constructor on.
//
// What T holds is checked by make_shared_object (detail/member_rules.hpp):
// a member that owns private memory does not compile. An aggregate T is
// looked into as it is; a T with private members or constructors declares
// them (using shared_members = mesh::members<&T::a, ...>: shared_members.hpp).
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <mesh/detail/control_block.hpp>
#include <mesh/detail/parts.hpp>
#include <mesh/shared_members.hpp>
#include <mesh/sharing_ptr.hpp>

namespace mesh {

template <class Derived>
class sharing_aware {
public:
    /// A sharing pointer to this object (valid on every core).
    sharing_ptr<Derived> self() const noexcept {
        return sharing_ptr<Derived>::from(static_cast<Derived*>(const_cast<sharing_aware*>(this)), block_);
    }

protected:
    sharing_aware() noexcept : block_(detail::constructing) {}
    sharing_aware(const sharing_aware&) noexcept : block_(detail::constructing) {}
    sharing_aware& operator=(const sharing_aware&) noexcept { return *this; }

private:
    detail::control_block* block_;
};

/// Objects that list extra ranges for their controller.
template <class T>
concept has_extra_ranges = requires(const T& t, void (*visit)(const void*, std::size_t)) { t.extra_ranges(visit); };

/// Objects that track their changes, so that a release writes back, and a
/// reader's acquire refreshes, only what changed (besides the object's own
/// bytes, which always go):
///
///   template <class Visit> void changed_since(std::uint64_t version, Visit&& visit) const;
///       visit(pointer, bytes) for each extra range written back after `version`
///   template <class Visit> void take_changes(std::uint64_t version, Visit&& visit);
///       visit each extra range changed since the last release; they count as
///       written back at `version` from now on
///
/// Versions are even and grow; a version recorded while a write is under way
/// may be odd (see change_stamps, which implements both for chunked storage).
template <class T>
concept tracks_changes =
    has_extra_ranges<T> && requires(const T& t, T& m, std::uint64_t v, void (*visit)(const void*, std::size_t)) {
        t.changed_since(v, visit);
        m.take_changes(v, visit);
    };

/// Specialise as true for a type that is not trivially copyable but whose
/// every byte, and everything it points to, is shared memory already (a
/// user-provided constructor or destructor, members that are sharing_ptrs).
template <class T>
inline constexpr bool enable_sharing = false;

/// What may be a shared object: bytes that mean the same on every core.
/// A trivially copyable type has nothing but its own bytes; a sharing_aware
/// one lists what else it owns; anything else must opt in.
template <class T>
concept shareable = std::is_trivially_copyable_v<T> || std::is_base_of_v<sharing_aware<T>, T> || enable_sharing<T>;

} // namespace mesh
