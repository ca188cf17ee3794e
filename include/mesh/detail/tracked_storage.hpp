#pragma once
// The memory of a shared container (mesh::vector, mesh::string,
// mesh::hash_map): one contiguous buffer in cached shared memory, tracked per
// 4 KB chunk with change stamps (change_stamps.hpp), so that a release writes
// back, and a reader's acquire refreshes, only the chunks the writer changed.
// The container calls touch() for every byte range it changes.
//
// Outgrown buffers. A reader refreshing its view copies from the buffer the
// object pointed to when the refresh began, possibly while a writer has
// moved on: a buffer that was ever published (written back in a release)
// may still be copied from, and if it were freed and handed to another
// object, that copy would overwrite the reader's view of the other object.
// So a published buffer is retired, not freed, and freed with the container
// (chained through a header line that goes to memory when the buffer is
// made, so the destructor can follow the chain from any core). A buffer that
// was never published (grown again within the same writer's proxy: filling a
// map with a million keys) is freed at once. Growth doubles, so what is
// retired is bounded by the current buffer.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include <mesh/change_stamps.hpp>
#include <mesh/detail/checked.hpp>
#include <mesh/memory.hpp>
#include <mesh/shared_members.hpp>

namespace mesh::detail {

class tracked_storage {
public:
    static constexpr std::size_t chunk_bytes = 4096;
    /// The largest buffer: what a pointer difference can span, less the
    /// header and the allocator's rounding (so neither can wrap). The
    /// containers' max_size() is this over their element's size.
    static constexpr std::size_t max_bytes = std::size_t(PTRDIFF_MAX) - 2 * chunk_bytes;

    tracked_storage() = default;
    tracked_storage(const tracked_storage&) = delete;
    tracked_storage& operator=(const tracked_storage&) = delete;
    /// Takes the other's buffer and its chain (a container moved during the
    /// object's construction); every chunk counts as changed here.
    tracked_storage(tracked_storage&& o)
        : data_(std::exchange(o.data_, nullptr)), capacity_(std::exchange(o.capacity_, 0)),
          published_(std::exchange(o.published_, false)) {
        if (data_) touch_all();
    }
    tracked_storage& operator=(tracked_storage&&) = delete;
    ~tracked_storage() { release(); }

    std::byte* data() const noexcept { return data_; }
    std::size_t capacity() const noexcept { return capacity_; }

    /// A buffer of `bytes` (more than now), holding the first `keep` bytes of the current one.
    /// Refused (std::length_error, nothing changed) beyond max_bytes: the
    /// containers check their counts first and name them; this is the floor.
    void reallocate(std::size_t bytes, std::size_t keep) {
        if (bytes > max_bytes) [[unlikely]]
            throw std::length_error("mesh: a shared container's buffer of " + std::to_string(bytes) +
                                    " bytes is more than the largest one may have (" + std::to_string(max_bytes) + ")");
        auto* block = static_cast<std::byte*>(allocate(header_bytes + bytes));
        std::byte* older = nullptr;
        if (data_) {
            if (keep) std::memcpy(block + header_bytes, data_, std::min(keep, capacity_));
            if (published_) {
                older = data_ - header_bytes; // readers may still copy from it: retired
            } else {
                older = link(data_ - header_bytes); // nobody else ever saw it
                deallocate(data_ - header_bytes);
            }
        }
        link(block) = older;
        write_back(block, header_bytes); // the chain is in memory from now on (see the top)
        data_ = block + header_bytes;
        capacity_ = bytes;
        published_ = false;
        touch_all();
    }

    /// The writer changed [offset, offset + n).
    void touch(std::size_t offset, std::size_t n) noexcept {
        if (n == 0) return;
        const std::size_t last = (offset + n - 1) / chunk_bytes;
        for (std::size_t c = offset / chunk_bytes; c <= last; ++c) stamps_.touch(c);
    }

    // The part's consistency methods (detail::part_ops).
    template <class Visit>
    void extra_ranges(Visit&& visit) const {
        if (data_) visit(data_, capacity_);
    }
    template <class Visit>
    void changed_since(std::uint64_t version, Visit&& visit) const {
        stamps_.changed_since(version, [&](std::size_t c) { visit_chunk(c, visit); });
    }
    template <class Visit>
    void take_changes(std::uint64_t version, Visit&& visit) {
        stamps_.take_changes(version, [&](std::size_t c) { visit_chunk(c, visit); });
        published_ = data_ != nullptr;
    }

    /// Free the buffer, the retired ones and the stamps (the container's destructor).
    void release() noexcept {
        try {
            for (std::byte* block = data_ ? data_ - header_bytes : nullptr; block;) {
                invalidate(block, header_bytes); // a header this core's view may never have held
                std::byte* older = link(block);
                deallocate(block);
                block = older;
            }
            stamps_.release();
        } catch (...) {
            // the run is ending (no home core to free to): the memory goes with it
        }
        data_ = nullptr;
        capacity_ = 0;
        published_ = false;
    }

private:
    static constexpr std::size_t header_bytes = 64; // a line: the data stays cache-line aligned
    static std::byte*& link(std::byte* block) noexcept { return *reinterpret_cast<std::byte**>(block); }

    std::size_t chunks() const noexcept { return (capacity_ + chunk_bytes - 1) / chunk_bytes; }
    void touch_all() {
        stamps_.grow(chunks());
        for (std::size_t c = 0; c < chunks(); ++c) stamps_.touch(c);
    }
    template <class Visit>
    void visit_chunk(std::size_t c, Visit& visit) const {
        if (c >= chunks()) return; // a stamp left from a larger buffer
        const std::size_t at = c * chunk_bytes;
        visit(data_ + at, std::min(chunk_bytes, capacity_ - at));
    }

    std::byte* data_ = nullptr;
    std::size_t capacity_ = 0;
    bool published_ = false; ///< the current buffer went out in a release
    change_stamps stamps_;

public:
    // data_ leads into mesh::allocate'd memory that its owner registers
    // (the containers: parts.hpp) or lists (chunked_map's extra_ranges).
    using shared_members = mesh::trust_members<tracked_storage>;
};

} // namespace mesh::detail
