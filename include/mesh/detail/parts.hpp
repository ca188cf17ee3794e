#pragma once
// Containers inside shared objects register themselves as parts of the
// object being constructed (make_shared_object sets `constructing` while T's
// constructor runs), so a type holding a mesh::vector or mesh::hash_map
// needs to list nothing: the controllers find the parts through the control
// block and ask each what changed (the MESH paper's type-specific
// consistency methods of SharingAware, section III.C, found instead of
// written by hand).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <new>

#include <mesh/detail/control_block.hpp>
#include <mesh/detail/shared_word.hpp>
#include <mesh/memory.hpp>

namespace mesh::detail {

// The control block of the object make_shared_object is constructing on
// this core (objects are constructed on one core, one at a time per core).
inline thread_local control_block* constructing = nullptr;

/// Called by a container's constructors: if it lies inside the object under
/// construction, the object's controller tracks it from now on. A container
/// anywhere else (a local, memory the application manages) is not tracked.
inline void register_part(const void* self, const part_ops* ops) {
    control_block* cb = constructing;
    if (!cb) return;
    const auto* object = static_cast<const std::byte*>(cb->object);
    const auto* at = static_cast<const std::byte*>(self);
    if (at < object || at >= object + cb->bytes) return;
    const std::size_t offset = std::size_t(at - object);
    part_list* list = cb->parts;
    if (list)
        for (std::size_t i = 0; i < list->count; ++i)
            if (list->entries[i].offset == offset) { // constructed again at the same place
                list->entries[i].table = taco::image_ptr(ops);
                return;
            }
    if (!list || list->count == list->capacity) {
        const std::size_t capacity = list ? 2 * list->capacity : 4;
        // Non-cached: the list is written once, here, and read by every
        // core's controller without a consistency event of its own.
        auto* grown = static_cast<part_list*>(
            allocate_bookkeeping(sizeof(part_list) + (capacity - 1) * sizeof(part), alignof(part_list)));
        grown->count = list ? list->count : 0;
        grown->capacity = capacity;
        if (list) std::copy_n(list->entries, list->count, grown->entries);
        deallocate_bookkeeping(list);
        cb->parts = list = grown;
    }
    list->entries[list->count++] = {offset, taco::image_ptr(ops)};
}

/// The consistency methods of a container whose memory is one
/// tracked_storage member named storage_ (it befriends this).
template <class Part>
struct part_ops_of {
    static constexpr part_ops table{
        +[](const void* p, range_visitor visit) { static_cast<const Part*>(p)->storage_.extra_ranges(visit); },
        +[](const void* p, std::uint64_t version, range_visitor visit) {
            static_cast<const Part*>(p)->storage_.changed_since(version, visit);
        },
        +[](void* p, std::uint64_t version, range_visitor visit) {
            static_cast<Part*>(p)->storage_.take_changes(version, visit);
        },
    };
};

/// f(ops, part address) for each part of the object.
template <class F>
void for_each_part(const control_block& cb, F&& f) {
    if (const part_list* list = cb.parts)
        for (std::size_t i = 0; i < list->count; ++i)
            f(list->entries[i].ops(), static_cast<std::byte*>(cb.object) + list->entries[i].offset);
}

/// Where each core has a view of non-cached memory (shared_word.hpp): the
/// maker of an object sends its control block and part list to memory once
/// they are complete, and every other core fetches them when it adopts the
/// object. Both are read-only afterwards, but for the words in shared_word.
inline void publish_block(control_block& cb) {
    if (!views_of_non_cached()) return;
    write_back(&cb, sizeof cb);
    if (const part_list* list = cb.parts)
        write_back(list, sizeof(part_list) + (list->capacity - 1) * sizeof(part));
}
inline void fetch_block(control_block& cb) {
    if (!views_of_non_cached()) return;
    invalidate(&cb, sizeof cb);
    if (part_list* list = cb.parts) {
        invalidate(list, offsetof(part_list, entries));
        invalidate(list->entries, list->capacity * sizeof(part));
    }
}

inline void free_parts(control_block& cb) {
    deallocate_bookkeeping(cb.parts);
    cb.parts = nullptr;
}

} // namespace mesh::detail
