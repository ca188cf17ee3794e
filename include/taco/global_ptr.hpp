#pragma once
// Global object pointers: the PGAS address of an object, {core, address}
// (CCI paper, section III.B "Remote Method Invocations"). The object's core
// decides where invocations on it run.
#include <cassert>
#include <compare>
#include <cstdio>
#include <cstdlib>
#include <type_traits>

#include <taco/config.hpp>
#include <taco/core_id.hpp>
#include <taco/detail/core_identity.hpp>

namespace taco {

namespace detail {
struct generation_access;
}

template <class T>
class global_ptr {
public:
    using element_type = T;

    constexpr global_ptr() noexcept = default;
    constexpr global_ptr(core_id core, T* address) noexcept : core_(core), ptr_(address) {}

    template <class U>
        requires std::is_convertible_v<U*, T*>
    constexpr global_ptr(const global_ptr<U>& other) noexcept
        : core_(other.core()), generation_(other.generation_), ptr_(other.address()) {}

    constexpr core_id core() const noexcept { return core_; }
    /// The address, valid on core() only. Use it elsewhere as an identity, never to load.
    constexpr T* address() const noexcept { return ptr_; }
    constexpr explicit operator bool() const noexcept { return ptr_ != nullptr; }
    bool is_local() const noexcept { return core_ == this_core(); }

    /// Dereference on the owning core only; debug builds abort elsewhere,
    /// because on a machine without coherence (or in process mode) the bytes
    /// behind the address are another core's private memory.
    T* get() const noexcept {
        check_local();
        return ptr_;
    }
    T* operator->() const noexcept { return get(); }
    T& operator*() const noexcept { return *get(); }

    /// Same object: the generation (debug builds) is not part of identity.
    friend constexpr bool operator==(const global_ptr& a, const global_ptr& b) noexcept {
        return a.core_ == b.core_ && a.ptr_ == b.ptr_;
    }

private:
    void check_local() const noexcept {
#if TACO_DEBUG_CHECKS
        if (core_ != this_core()) {
            std::fprintf(stderr,
                         "taco: global_ptr to core %u dereferenced on core %u; "
                         "invoke a method on it with taco::async/sync instead\n",
                         unsigned(core_), unsigned(this_core()));
            std::abort();
        }
#endif
    }

    template <class>
    friend class global_ptr;
    friend struct detail::generation_access;

    core_id core_ = no_core;
    /// Debug builds: which object new_on made at this address (0: unknown);
    /// see detail/object_registry.hpp. It fills what would be padding.
    std::uint32_t generation_ = 0;
    T* ptr_ = nullptr;
};

static_assert(std::is_trivially_copyable_v<global_ptr<int>>);
static_assert(sizeof(void*) != 8 || sizeof(global_ptr<int>) == 16, "the generation fills padding on 64-bit");

/// The global pointer of an object of the calling core (as UPC++'s to_global_ptr).
template <class T>
global_ptr<T> to_global(T* address) noexcept {
    return {this_core(), address};
}

} // namespace taco
