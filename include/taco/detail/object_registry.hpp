#pragma once
// Debug checks (TACO_DEBUG_CHECKS) for objects made with new_on and deleted
// with delete_on: an invocation or a continuation on a deleted object, a
// delete twice, a stale global_ptr.
//
// Two mechanisms, because an invocation message carries the object's
// address only (its generation would cost 8 bytes of every message's
// argument space in every build):
// - Generations: each object new_on makes gets a number from its core's
//   counter, kept in the registry and in the global_ptr's spare bytes (it
//   has 4 after the core id). delete_on sends the global_ptr itself, so a
//   delete through a stale pointer is caught even after the address was
//   reused by a newer object.
// - Quarantine, as AddressSanitizer's: delete_on runs ~T but holds the
//   memory back for a while, so the address cannot be reused and stays
//   known as deleted; an invocation on it is refused with a usage_error
//   that reaches the caller's future (or the uncaught-error handler).
//   Bounded per core (quarantine_bytes, quarantine_objects); what leaves
//   the quarantine is freed and no longer checked.
// Objects made otherwise (plain new, to_global) have generation 0 and are
// never refused: no false alarms, only missed ones.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <new>
#include <optional>
#include <set>
#include <string>
#include <type_traits>

#include <taco/global_ptr.hpp>
#include <taco/remote_error.hpp>
#include <taco/this_core.hpp>
#include <taco/usage_error.hpp>

namespace taco::detail {

struct generation_access {
    template <class T>
    static std::uint32_t get(const global_ptr<T>& p) noexcept {
        return p.generation_;
    }
    template <class T>
    static void set(global_ptr<T>& p, std::uint32_t g) noexcept {
        p.generation_ = g;
    }
};

/// Quarantine memory: T's storage came from the global operator new and can
/// be released apart from its destructor (not a class-specific allocator, not
/// reached through a polymorphic base).
template <class T>
inline constexpr bool quarantinable_v =
    !std::is_polymorphic_v<T> && alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__ &&
    !requires { T::operator new(std::size_t(1)); } && !requires(void* p) { T::operator delete(p); };

class object_registry {
public:
    static constexpr std::size_t quarantine_bytes = std::size_t(16) << 20;
    static constexpr std::size_t quarantine_objects = 1u << 16;

    object_registry() = default;
    object_registry(const object_registry&) = delete;
    object_registry& operator=(const object_registry&) = delete;
    ~object_registry() {
        while (!held_.empty()) release_oldest();
    }

    std::uint32_t made(const void* p) {
        if (++next_ == 0) ++next_; // 0 means "not made by new_on"
        live_[p] = next_;
        deleted_.erase(p);
        return next_;
    }

    /// Before delete_on destroys the object at p that `generation` named.
    void check_delete(const void* p, std::uint32_t generation) {
        if (deleted_.contains(p)) refuse("delete_on of an object deleted already", p);
        const auto it = live_.find(p);
        if (generation != 0) {
            if (it == live_.end()) refuse("delete_on of an object deleted already", p);
            if (it->second != generation) refuse("delete_on via a stale global_ptr: address reused", p);
        }
        if (it != live_.end()) live_.erase(it);
    }

    /// After ~T: hold the storage (of `bytes`, from operator new) back.
    void retire(const void* p, std::size_t bytes) {
        deleted_.insert(p);
        held_.push_back({const_cast<void*>(p), bytes});
        bytes_ += bytes;
        while (bytes_ > quarantine_bytes || held_.size() > quarantine_objects) release_oldest();
    }

    void check_alive(const void* p) const {
        if (!deleted_.empty() && deleted_.contains(p)) [[unlikely]]
            refuse("invocation on a deleted object", p); // delete_on, or a node destroy_group freed
    }

private:
    struct held {
        void* p;
        std::size_t bytes;
    };
    void release_oldest() {
        const held h = held_.front();
        held_.pop_front();
        deleted_.erase(h.p);
        bytes_ -= h.bytes;
        ::operator delete(h.p); // unsized: clang does not declare the sized form without -fsized-deallocation
    }
    // Key facts first: a remote error keeps error_info::text_capacity characters.
    [[noreturn]] static void refuse(const char* what, const void* p) {
        char where[64];
        std::snprintf(where, sizeof where, " (%p, core %u)", p, unsigned(this_core()));
        throw usage_error(std::string("taco: ") + what + where);
    }

    // Ordered by address, not hashed: a hash of a pointer follows where the
    // host put this core's heap, and with it an emulated core's modelled
    // cache misses (as for the group registry, taco/group.hpp).
    std::map<const void*, std::uint32_t> live_;
    std::set<const void*> deleted_;
    std::deque<held> held_;
    std::size_t bytes_ = 0;
    std::uint32_t next_ = 0;
};

inline object_registry& objects() { return core_local<object_registry>(); }

/// The target of an invocation, on its core, before the call (debug builds).
inline void check_target_alive([[maybe_unused]] const void* p) {
#if TACO_DEBUG_CHECKS
    objects().check_alive(p);
#endif
}

/// The same check as an error to deliver instead of an exception (for
/// collective steps, which pass it down their own sink).
inline std::optional<error_info> deleted_target_error([[maybe_unused]] const void* p) noexcept {
#if TACO_DEBUG_CHECKS
    try {
        objects().check_alive(p);
    } catch (...) {
        return error_info::current(this_core());
    }
#endif
    return std::nullopt;
}

} // namespace taco::detail
