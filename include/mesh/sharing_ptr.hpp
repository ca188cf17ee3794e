#pragma once
// Sharing pointer (MESH paper, section III.B): the object's address (the
// same logical address on every core) and its control block, which names the
// object's consistency controller. Valid on every core, trivially copyable,
// so it travels in invocations and in shared memory. It gives no access by
// itself: use mesh::read / mesh::write (proxy.hpp).
#include <compare>
#include <type_traits>

#include <mesh/detail/control_block.hpp>

namespace mesh {

template <class T>
class sharing_ptr {
public:
    using element_type = T;

    sharing_ptr() = default;

    explicit operator bool() const noexcept { return object_ != nullptr; }
    friend bool operator==(const sharing_ptr& a, const sharing_ptr& b) noexcept { return a.object_ == b.object_; }

    /// Name of the object's consistency controller ("timestamp", ...).
    const char* controller() const noexcept { return block_ ? block_->ops().name : "none"; }

    // For proxies and controllers; not an access path (bypasses consistency).
    T* unsafe_object() const noexcept { return object_; }
    detail::control_block* block() const noexcept { return block_; }

    static sharing_ptr from(T* object, detail::control_block* block) noexcept {
        sharing_ptr p;
        p.object_ = object;
        p.block_ = block;
        return p;
    }

private:
    T* object_ = nullptr;
    detail::control_block* block_ = nullptr;
};

static_assert(std::is_trivially_copyable_v<sharing_ptr<int>>);

} // namespace mesh
