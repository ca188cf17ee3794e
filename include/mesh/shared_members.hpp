#pragma once
// What a SharingAware object declares about its members, so that
// make_shared_object can refuse one that owns private memory (a std::vector,
// a std::string, a std::unique_ptr, a raw pointer) at compile time. An
// aggregate (public members, no constructors) needs nothing: every member,
// and every member of its member structs and arrays, is seen by aggregate
// initialisation (detail/member_rules.hpp). A class with private members or
// constructors cannot be looked into without reflection, so it lists its
// data members, after them, in declaration order:
//
//   class graph : public mesh::sharing_aware<graph> {
//   public:
//       explicit graph(std::size_t n);
//   private:
//       mesh::vector<std::uint32_t> first_, targets_;
//       std::size_t vertices_ = 0;
//   public:
//       using shared_members = mesh::members<&graph::first_, &graph::targets_, &graph::vertices_>;
//   };
//
// Forgetting a member is a compile error, not a silent bug: the listed
// members, laid out in the order given after the sharing_aware base, must
// fill sizeof(T). A member that can own memory holds a pointer, so it is
// pointer-aligned and at least pointer-sized; in a type aligned to at most a
// pointer (every type without alignas), leaving one out shrinks that layout
// by its size, and the sizes differ. (A list out of declaration order could
// add padding that makes up for a forgotten member: the listed offsets are
// checked against the real ones at program start, which stops with a message
// naming the type.)
//
// A type whose members cannot be checked this way but hold only memory that
// is shared and kept consistent (the shared containers: their buffers come
// from mesh::allocate and register with the object) says so, greppably:
//
//   using shared_members = mesh::trust_members<vector>;
//
// and a type one cannot edit is vouched for from outside with
// `template <> inline constexpr bool mesh::enable_sharing<U> = true;`.

namespace mesh {

/// The data members of T, in declaration order: members<&T::a, &T::b, ...>.
template <auto... Member>
struct members {};

/// T's members are not checked: T vouches that every byte it holds, and
/// everything those bytes lead to, is shared memory its object keeps
/// consistent. Names T so that a derived class does not inherit the trust.
template <class T>
struct trust_members {};

} // namespace mesh
