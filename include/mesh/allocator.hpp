#pragma once
// mesh::allocator<T, Mode>: a standard allocator over MESH's shared memory
// (mesh::allocate), so the memory of a standard container is at the same
// logical address on every core:
//
//   std::vector<int, mesh::allocator<int, mesh::memory_mode::non_cached>> v;
//
// What it does not do is consistency. In non-cached memory (the paper's NCM)
// every core sees every write at once, with no event, so a standard
// container works across cores as on a coherent machine (with the same data
// races: one writer, and readers that do not read while it writes). In
// cached memory (the default, as mesh::allocate's) each core works on its
// own view: use it where the program calls mesh::invalidate / write_back
// itself, or for memory a SharingAware object lists. Inside shared objects
// prefer mesh::vector, mesh::string and mesh::hash_map, which track their
// changes and are kept consistent by the object's controller.
//
// Every allocation is a request to MESH's home core (a round trip from any
// other core): reserve() up front where sizes are known.
#include <cstddef>
#include <limits>
#include <new>

#include <mesh/memory.hpp>

namespace mesh {

template <class T, memory_mode Mode = memory_mode::cached>
class allocator {
public:
    using value_type = T;
    static constexpr memory_mode mode = Mode;
    template <class U>
    struct rebind {
        using other = allocator<U, Mode>;
    };

    allocator() noexcept = default;
    template <class U>
    allocator(const allocator<U, Mode>&) noexcept {}

    T* allocate(std::size_t n) {
        if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) throw std::bad_array_new_length();
        return static_cast<T*>(mesh::allocate(n * sizeof(T), Mode, alignof(T))); // a cache line at least
    }
    void deallocate(T* p, std::size_t) { mesh::deallocate(p, Mode); }

    template <class U>
    friend bool operator==(const allocator&, const allocator<U, Mode>&) noexcept {
        return true; // one arena per mode: any allocator frees what another allocated
    }
};

} // namespace mesh
