#pragma once
// The consistency-controller interface (MESH paper, section III.B). A
// controller is a type with a per-core `state` (in core-private memory,
// initialised by adopt on every core when the object is made) and five
// events, called by the access proxies:
//
//   adopt(object, state, version)   this core's view was just made current
//   acquire_read / release_read     a reader proxy is made / destroyed
//   acquire_write / release_write   a writer proxy is made / released
//                                   (release says whether it modified the object)
//
// Events go one way: proxy -> controller -> platform. A controller acts on
// its object through controlled_object (refresh this core's view, publish
// it: the paper's invalidate and write-back), and reaches other cores
// itself, with TACO collectives over taco::all_cores(); what a core does
// when notified (the remote side) is in the controller's own file.
// Alternatives sit side by side in controllers/.
#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>

#include <mesh/detail/control_block.hpp>
#include <mesh/detail/parts.hpp>
#include <mesh/detail/shared_word.hpp>
#include <mesh/event_counts.hpp>
#include <mesh/memory.hpp>
#include <taco/all_cores.hpp>
#include <taco/collective.hpp>
#include <taco/future.hpp>

namespace mesh {

namespace detail {
class copied_ranges;
}

/// What a controller sees of one shared object.
class controlled_object {
public:
    explicit controlled_object(detail::control_block& cb) noexcept : cb_(cb) {}

    /// The object's current version (even; +2 per write-back). Acquire: a
    /// view refreshed after seeing it is at least that new.
    std::uint64_t version() const {
        loaded_ = version64::load(cb_.version);
        return loaded_ & ~std::uint64_t(1);
    }

    /// "This core's view holds nothing yet": refresh everything.
    static constexpr std::uint64_t nothing_seen = ~std::uint64_t(0);

    /// This core's view made current, if the object moved since `seen` (the
    /// version the view holds, updated): version() and, if it differs,
    /// refresh(seen). Where the platform does a seqlock's acquire at the
    /// canonical copy (cluster ranks between hosts:
    /// taco::versioned_memory_endpoint), one exchange instead of three.
    void make_current(std::uint64_t& seen) {
        if (detail::memory().versioned_copies) [[unlikely]] return make_current_versioned(seen);
        if (version() == seen) [[likely]] return;
        seen = refresh(seen);
    }

    /// Refresh this core's view of the object (and its SharingAware extra
    /// ranges) from memory, torn-free; returns the version it copied. With
    /// the version this core's view was last refreshed at (or published),
    /// an object that tracks its changes refreshes only what changed since.
    std::uint64_t refresh(std::uint64_t seen = nothing_seen);

    /// Publish this core's view to memory. `during()` runs once the write-back
    /// has begun (version odd: readers that look now wait for it to end), so
    /// a broadcast started there overlaps the copy and still cannot let a
    /// reader re-validate old data. Returns the new version.
    template <class During>
    std::uint64_t publish(During&& during);
    std::uint64_t publish() {
        return publish([] {});
    }

    /// Overlapped Broadcast: writers between acquire and release.
    void begin_pending_write() { pending32::fetch_add(cb_.writes_pending, 1); }
    void end_pending_write() { pending32::fetch_add(cb_.writes_pending, ~std::uint32_t(0), std::memory_order_release); }
    bool write_pending() const { return pending32::load(cb_.writes_pending) != 0; }

    /// Run OnNotify(state) on every other core, with that core's instance of
    /// this object's controller state (the controller's remote side, e.g. a
    /// Broadcast clearing its valid flag); `done` is assigned once every core
    /// has. Goes over the k-ary tree of taco::all_cores().
    template <auto OnNotify>
    void notify_others(taco::future<void>& done);

    /// Whether the platform's hardware keeps cached memory coherent.
    static bool coherent() { return detail::memory().coherent(); }

    /// The object's own bytes and every extra range (its own and its parts').
    template <class F>
    void for_each_range(F&& f) const {
        f(static_cast<const void*>(cb_.object), cb_.bytes);
        if (cb_.type().extra_ranges) cb_.type().extra_ranges(cb_.object, visitor(f));
        detail::for_each_part(cb_, [&](const detail::part_ops& ops, void* at) { ops.extra_ranges(at, visitor(f)); });
    }

private:
    using version64 = detail::shared_word<std::uint64_t>;
    using pending32 = detail::shared_word<std::uint32_t>;

    template <class F>
    static detail::range_visitor visitor(F& f) {
        return {&f, +[](void* c, const void* p, std::size_t n) { (*static_cast<F*>(c))(p, n); }};
    }
    /// What a refresh after `seen` must copy: the object's own bytes, and
    /// of the extra ranges those written back since (all, untracked).
    template <class F>
    void for_each_changed_since(std::uint64_t seen, F&& f) const {
        if (seen == nothing_seen) return for_each_range(f);
        f(static_cast<const void*>(cb_.object), cb_.bytes);
        if (cb_.type().changed_since)
            cb_.type().changed_since(cb_.object, seen, visitor(f));
        else if (cb_.type().extra_ranges)
            cb_.type().extra_ranges(cb_.object, visitor(f));
        detail::for_each_part(
            cb_, [&](const detail::part_ops& ops, void* at) { ops.changed_since(at, seen, visitor(f)); });
    }
    /// What a write-back at `version` must copy.
    template <class F>
    void for_each_to_publish(std::uint64_t version, F&& f) {
        // The changes first: taking them changes the object's own bytes
        // (its parts' lists of changed chunks), which must go out cleared.
        if (cb_.type().take_changes)
            cb_.type().take_changes(cb_.object, version, visitor(f));
        else if (cb_.type().extra_ranges)
            cb_.type().extra_ranges(cb_.object, visitor(f));
        detail::for_each_part(
            cb_, [&](const detail::part_ops& ops, void* at) { ops.take_changes(at, version, visitor(f)); });
        f(static_cast<const void*>(cb_.object), cb_.bytes);
    }

    /// The object is one range (no extra ranges, no parts): a versioned
    /// copy at the canonical copy covers all of it.
    bool one_range() const noexcept {
        const detail::type_ops& t = cb_.type();
        return !t.extra_ranges && !t.changed_since && !t.take_changes && !cb_.parts;
    }
    /// The platform's versioned copies serve this object.
    bool versioned(const taco::detail::core& port) const noexcept { return port.versioned_copies && one_range(); }
    void count_invalidation(const detail::copied_ranges& copies) const;
    [[gnu::cold]] void make_current_versioned(std::uint64_t& seen); // off the acquire's fast path

    detail::control_block& cb_;
    /// The counter as version() last read it: a refresh that follows starts
    /// from it (a seqlock reader needs a value read before its copy, not a
    /// new one), which saves a remote read per acquire where the counter is
    /// across the network (cluster ranks: one MPI_Fetch_and_op each).
    mutable std::uint64_t loaded_ = 1;
};

namespace detail {

/// Which ranges the platform's cache control copies (event_counts): on a
/// platform whose hardware keeps memory coherent (thread mode) none; else
/// those in cached memory, and in non-cached memory where each core has a
/// view of it too (remote_words: MPI ranks). Non-cached and write-through
/// memory elsewhere is one copy, and its cache control a fence.
class copied_ranges {
public:
    explicit copied_ranges(taco::detail::core& port)
        : cached_(port.coherent() ? std::span<std::byte>{} : port.region(memory_mode::cached)),
          non_cached_(port.coherent() || !port.remote_words ? std::span<std::byte>{}
                                                           : port.region(memory_mode::non_cached)) {}
    std::size_t bytes(const void* p, std::size_t n) const noexcept { return in(cached_, p) || in(non_cached_, p) ? n : 0; }

private:
    static bool in(std::span<std::byte> r, const void* p) noexcept {
        const auto a = reinterpret_cast<std::uintptr_t>(p), b = reinterpret_cast<std::uintptr_t>(r.data());
        return a - b < r.size(); // unsigned: below the start wraps past the size
    }
    std::span<std::byte> cached_, non_cached_;
};

} // namespace detail

inline void controlled_object::count_invalidation(const detail::copied_ranges& copies) const {
    auto& e = events();
    ++e.invalidations;
    e.invalidated_range_bytes += cb_.bytes;
    e.invalidated_bytes += copies.bytes(cb_.object, cb_.bytes);
}

inline void controlled_object::make_current_versioned(std::uint64_t& seen) {
    auto& port = detail::memory();
    if (!one_range()) {
        if (version() != seen) seen = refresh(seen);
        return;
    }
    const std::uint64_t v = port.refresh_versioned(&cb_.version, cb_.object, cb_.bytes, seen);
    if (v != seen) count_invalidation(detail::copied_ranges(port));
    seen = v;
}

// Seqlock reader (see control_block::version). The object is copied first
// and checked, so the extra ranges are read from a consistent object.
inline std::uint64_t controlled_object::refresh(std::uint64_t seen) {
    auto& port = detail::memory();
    const detail::copied_ranges copies(port);
    if (versioned(port)) [[unlikely]] {
        const std::uint64_t v = port.refresh_versioned(&cb_.version, cb_.object, cb_.bytes, nothing_seen);
        count_invalidation(copies);
        return v;
    }
    std::size_t bytes = 0, copied = 0;
    for (;;) {
        const std::uint64_t known = std::exchange(loaded_, 1); // once: a retry reads anew
        const std::uint64_t before = known & 1 ? version64::load(cb_.version) : known;
        if (before & 1) {
            port.pause(); // a write-back is copying (a platform whose copy is served by this core serves it here)
            continue;
        }
        bytes = copied = 0;
        for_each_changed_since(seen, [&](const void* p, std::size_t n) {
            port.invalidate(p, n);
            bytes += n;
            copied += copies.bytes(p, n);
        });
        std::atomic_thread_fence(std::memory_order_acquire); // the copies happen before the re-check
        if (version64::load(cb_.version, std::memory_order_relaxed) == before) {
            auto& e = events();
            ++e.invalidations;
            e.invalidated_range_bytes += bytes;
            e.invalidated_bytes += copied;
            return before;
        }
    }
}

template <class During>
std::uint64_t controlled_object::publish(During&& during) {
    if (auto& port = detail::memory(); versioned(port)) [[unlikely]] {
        // The copy is done at the canonical copy before the reply, so
        // `during` comes after it: run while the copy was under way, its
        // broadcast could reach a reader whose refresh overtakes this
        // core's request on its way there (messages of different ranks
        // keep no order) and re-validates the old data.
        const std::uint64_t v = port.publish_versioned(&cb_.version, cb_.object, cb_.bytes);
        during();
        auto& e = events();
        ++e.write_backs;
        e.written_back_range_bytes += cb_.bytes;
        e.written_back_bytes += detail::copied_ranges(port).bytes(cb_.object, cb_.bytes);
        return v;
    }
    const std::uint64_t odd = version64::fetch_add(cb_.version, 1) + 1;
    std::atomic_thread_fence(std::memory_order_release); // odd is visible before any copied byte
    during();
    auto& port = detail::memory();
    const detail::copied_ranges copies(port);
    std::size_t bytes = 0, copied = 0;
    for_each_to_publish(odd + 1, [&](const void* p, std::size_t n) {
        port.write_back(p, n);
        bytes += n;
        copied += copies.bytes(p, n);
    });
    version64::store(cb_.version, odd + 1);
    auto& e = events();
    ++e.write_backs;
    e.written_back_range_bytes += bytes;
    e.written_back_bytes += copied;
    return odd + 1;
}

namespace detail {
template <auto OnNotify, class State>
void run_notification(address state, taco::core_id origin) {
    if (taco::this_core() == origin) return;
    OnNotify(state_in<State>(private_instance(state.p)));
    ++events().notifications;
}
template <class State>
State state_of(void (*)(State&));
} // namespace detail

template <auto OnNotify>
void controlled_object::notify_others(taco::future<void>& done) {
    using State = decltype(detail::state_of(OnNotify));
    ++events().broadcasts;
    taco::at_each(taco::all_cores(),
                  taco::m2f(&detail::run_notification<OnNotify, State>, detail::address{cb_.state}, taco::this_core()),
                  done);
}

/// A consistency controller (see the top of this file).
template <class C>
concept consistency_controller =
    std::is_trivially_copyable_v<typename C::state> && std::is_default_constructible_v<typename C::state> &&
    requires(controlled_object& o, typename C::state& s, std::uint64_t version, bool modified) {
        { C::name } -> std::convertible_to<const char*>;
        C::adopt(o, s, version);
        C::acquire_read(o, s);
        C::release_read(o, s);
        C::acquire_write(o, s);
        C::release_write(o, s, modified);
    };

namespace detail {

template <consistency_controller C>
struct ops_of {
    using state = typename C::state;
    static state& s(void* p) noexcept { return state_in<state>(p); }
    static constexpr controller_ops table{
        C::name,
        sizeof(state),
        +[](control_block& cb, void* st, std::uint64_t v) {
            ::new (st) proxy_counts{}; // reused private memory keeps what its previous owner left
            ::new (&s(st)) state{};
            controlled_object o(cb);
            C::adopt(o, s(st), v);
        },
        +[](control_block& cb, void* st) {
            controlled_object o(cb);
            C::acquire_read(o, s(st));
        },
        +[](control_block& cb, void* st) {
            controlled_object o(cb);
            C::release_read(o, s(st));
        },
        +[](control_block& cb, void* st) {
            controlled_object o(cb);
            C::acquire_write(o, s(st));
        },
        +[](control_block& cb, void* st, bool modified) {
            controlled_object o(cb);
            C::release_write(o, s(st), modified);
        },
    };
};

} // namespace detail
} // namespace mesh
