#pragma once
// The consistency-controller interface (MESH paper, section III.B). A
// controller is a type with a per-core `state` (in core-private memory,
// initialised by adopt on every core when the object is made) and five
// events, called by the access proxies:
//
//   adopt(view, state, version)   this core's view was just made current
//   acquire_read / release_read   a reader proxy is made / destroyed
//   acquire_write / release_write a writer proxy is made / destroyed
//                                 (release says whether it modified the object)
//
// Controllers act through shared_object_view: invalidate(), write_back() and
// notify_others() are the mechanisms of the paper; which of them runs when is
// the controller's policy. Alternatives sit side by side in controllers/.
#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <mesh/detail/control_block.hpp>
#include <mesh/detail/core_group.hpp>
#include <mesh/event_counts.hpp>
#include <mesh/memory.hpp>
#include <taco/collective.hpp>

namespace mesh {

/// What a controller sees of one shared object.
class shared_object_view {
public:
    explicit shared_object_view(detail::control_block& cb) noexcept : cb_(cb) {}

    /// The object's current version (even; +2 per write-back). Acquire: a
    /// view refreshed after seeing it is at least that new.
    std::uint64_t version() const noexcept { return cb_.version.load(std::memory_order_acquire) & ~std::uint64_t(1); }

    /// Refresh this core's view of the object (and its SharingAware extra
    /// ranges) from memory, torn-free; returns the version it copied.
    std::uint64_t invalidate() { return detail::agent::invalidate_object(cb_); }

    /// Publish this core's view to memory. `during()` runs once the write-back
    /// has begun (version odd: readers that look now wait for it to end), so
    /// a broadcast started there overlaps the copy and still cannot let a
    /// reader re-validate old data. Returns the new version.
    template <class During>
    std::uint64_t write_back(During&& during) {
        const std::uint64_t odd = cb_.version.fetch_add(1, std::memory_order_relaxed) + 1;
        std::atomic_thread_fence(std::memory_order_release); // odd is visible before any copied byte
        during();
        std::size_t bytes = 0;
        for_each_range([&](const void* p, std::size_t n) {
            detail::write_back_range(p, n);
            bytes += n;
        });
        cb_.version.store(odd + 1, std::memory_order_release);
        auto& e = events();
        ++e.write_backs;
        e.written_back_bytes += bytes;
        return odd + 1;
    }
    std::uint64_t write_back() {
        return write_back([] {});
    }

    /// Start the invalidation broadcast: clears the `valid` flag of this
    /// object's controller state on every other core (the state must begin
    /// with a std::uint32_t valid); `done` is ready once every core has run it.
    void notify_others(taco::future<void>& done) {
        ++events().broadcasts;
        taco::at_each(detail::all_cores(), taco::m2f(&detail::agent::clear_valid, detail::address{cb_.state},
                                                     taco::this_core()),
                      done);
    }

    /// Overlapped Broadcast: writers between acquire and release.
    void begin_pending_write() noexcept { cb_.writes_pending.fetch_add(1, std::memory_order_relaxed); }
    void end_pending_write() noexcept { cb_.writes_pending.fetch_sub(1, std::memory_order_release); }
    bool write_pending() const noexcept { return cb_.writes_pending.load(std::memory_order_acquire) != 0; }

    /// Whether the platform's hardware keeps cached memory coherent.
    static bool coherent() { return detail::coherent_memory(); }

    template <class F>
    void for_each_range(F&& f) const {
        f(static_cast<const void*>(cb_.object), cb_.bytes);
        if (cb_.extra_ranges)
            cb_.extra_ranges(cb_.object, {&f, +[](void* c, const void* p, std::size_t n) { (*static_cast<F*>(c))(p, n); }});
    }

private:
    detail::control_block& cb_;
};

/// A consistency controller (see the top of this file).
template <class C>
concept consistency_controller =
    std::is_trivially_copyable_v<typename C::state> && std::is_default_constructible_v<typename C::state> &&
    requires(shared_object_view& v, typename C::state& s, std::uint64_t version, bool modified) {
        { C::name } -> std::convertible_to<const char*>;
        C::adopt(v, s, version);
        C::acquire_read(v, s);
        C::release_read(v, s);
        C::acquire_write(v, s);
        C::release_write(v, s, modified);
    };

namespace detail {

// Seqlock reader (see control_block::version). The object is copied first
// and checked, so the extra ranges are read from a consistent object.
inline std::uint64_t agent::invalidate_object(control_block& cb) {
    shared_object_view view(cb);
    std::size_t bytes = 0;
    for (;;) {
        const std::uint64_t before = cb.version.load(std::memory_order_acquire);
        if (before & 1) {
            pause_core(); // a write-back is copying: it takes a memcpy, not a message
            continue;
        }
        bytes = 0;
        view.for_each_range([&](const void* p, std::size_t n) {
            invalidate_range(p, n);
            bytes += n;
        });
        std::atomic_thread_fence(std::memory_order_acquire); // the copies happen before the re-check
        if (cb.version.load(std::memory_order_relaxed) == before) {
            auto& e = events();
            ++e.invalidations;
            e.invalidated_bytes += bytes;
            return before;
        }
    }
}

template <consistency_controller C>
struct ops_of {
    using state = typename C::state;
    static state& s(void* p) noexcept { return *static_cast<state*>(p); }
    static constexpr controller_ops table{
        C::name,
        sizeof(state),
        +[](control_block& cb, void* st, std::uint64_t v) {
            ::new (st) state{};
            shared_object_view view(cb);
            C::adopt(view, s(st), v);
        },
        +[](control_block& cb, void* st) {
            shared_object_view view(cb);
            C::acquire_read(view, s(st));
        },
        +[](control_block& cb, void* st) {
            shared_object_view view(cb);
            C::release_read(view, s(st));
        },
        +[](control_block& cb, void* st) {
            shared_object_view view(cb);
            C::acquire_write(view, s(st));
        },
        +[](control_block& cb, void* st, bool modified) {
            shared_object_view view(cb);
            C::release_write(view, s(st), modified);
        },
    };
};

} // namespace detail
} // namespace mesh
