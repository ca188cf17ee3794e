#pragma once
// Code addresses in messages, relative to a base in the program image (as
// UPC++'s global_fnptr). A message carries the address of the function that
// runs it, and an m2f-bound call the address of its method: raw, they are
// right only while every core runs the same image at the same address
// (threads, fork). A separately started process (a cluster rank, or any
// process under ASLR) loads the image elsewhere, but the distance from any
// function or static object of the image to a fixed anchor is the same in
// every process. So messages carry that distance.
//
// Limit: the target must live in the same image as the anchor (the main
// executable, or the one shared library that holds both): code in another
// shared library moves independently under ASLR.
#include <climits>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace taco {

namespace detail {

// The anchor: one function per program (inline: one address after linking).
// Aligned so that distances keep the low bit of a code address (the
// Itanium ABI's "virtual" flag in member function pointers) clear.
[[gnu::noinline, gnu::used, gnu::aligned(16)]] inline void image_anchor() noexcept { asm volatile(""); }

inline std::uintptr_t image_base() noexcept { return reinterpret_cast<std::uintptr_t>(&image_anchor); }

// Itanium C++ ABI member function pointer: {ptr, adj}. ptr is the code
// address, or 1 + the vtable offset for a virtual function (which needs no
// relocation). ARM's variant keeps the virtual flag in adj's low bit.
struct member_fn_repr {
    std::uintptr_t ptr;
    std::ptrdiff_t adj;
};
// A null member pointer (ptr == 0) counts as a code address, which keeps
// decoding to one test: it round-trips within a process, and calling a null
// member pointer is undefined anyway.
inline bool is_code_address(const member_fn_repr& r) noexcept {
#if defined(__arm__) || defined(__aarch64__)
    return (r.adj & 1) == 0;
#else
    return (r.ptr & 1) == 0;
#endif
}

} // namespace detail

/// A pointer into the program image (a function, a member function, or a
/// static object), stored as its distance from the image's anchor. Trivially
/// copyable; decode() on any process running the same executable.
template <class P>
class image_ptr;

template <class P>
    requires std::is_pointer_v<P>
class image_ptr<P> {
public:
    image_ptr() = default;
    explicit image_ptr(P p, std::uintptr_t base = detail::image_base()) noexcept
        : offset_(p ? std::intptr_t(reinterpret_cast<std::uintptr_t>(p) - base) : null) {}

    P get(std::uintptr_t base = detail::image_base()) const noexcept {
        return offset_ == null ? nullptr : get_nonnull(base);
    }
    /// For pointers known not to be null (a message's handler): no test.
    P get_nonnull(std::uintptr_t base = detail::image_base()) const noexcept {
        return reinterpret_cast<P>(base + std::uintptr_t(offset_));
    }
    explicit operator bool() const noexcept { return offset_ != null; }
    std::intptr_t offset() const noexcept { return offset_; }

private:
    static constexpr std::intptr_t null = INTPTR_MIN;
    std::intptr_t offset_ = null;
};

template <class M>
    requires std::is_member_function_pointer_v<M>
class image_ptr<M> {
    static_assert(sizeof(M) == sizeof(detail::member_fn_repr),
                  "taco::image_ptr: this compiler's member function pointers are not in the Itanium C++ ABI layout");

public:
    image_ptr() = default;
    explicit image_ptr(M m, std::uintptr_t base = detail::image_base()) noexcept {
        std::memcpy(&repr_, &m, sizeof m);
        if (detail::is_code_address(repr_)) repr_.ptr -= base;
    }
    M get(std::uintptr_t base = detail::image_base()) const noexcept {
        detail::member_fn_repr r = repr_;
        if (detail::is_code_address(repr_)) r.ptr += base;
        M m;
        std::memcpy(&m, &r, sizeof m);
        return m;
    }

private:
    detail::member_fn_repr repr_{0, 0};
};

template <class P>
image_ptr(P) -> image_ptr<P>;

static_assert(std::is_trivially_copyable_v<image_ptr<void (*)()>>);

namespace detail {
/// What a callable of type F travels as: code addresses image-relative,
/// function objects (their own bytes, no address) as they are.
template <class F>
inline constexpr bool holds_code_address =
    (std::is_pointer_v<F> && std::is_function_v<std::remove_pointer_t<F>>) || std::is_member_function_pointer_v<F>;

template <class F>
struct portable_callable {
    F fn;
    explicit portable_callable(F f) noexcept : fn(f) {}
    F get() const noexcept { return fn; }
};
template <class F>
    requires holds_code_address<F>
struct portable_callable<F> {
    image_ptr<F> fn;
    explicit portable_callable(F f) noexcept : fn(f) {}
    F get() const noexcept {
        if constexpr (std::is_pointer_v<F>) return fn.get_nonnull(); // calling a null function is undefined anyway
        else return fn.get();
    }
};
} // namespace detail

} // namespace taco
