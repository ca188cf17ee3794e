#pragma once
// Per-core, per-run state of libraries (taco::core_local<T>): one instance of
// T on each core, made on first use and destroyed when the core stops.
#include <atomic>
#include <cstddef>
#include <utility>
#include <vector>

namespace taco::detail {

/// Index of T among the types that have core-local state.
inline std::size_t next_core_local_index() noexcept {
    static std::atomic<std::size_t> next{0};
    return next.fetch_add(1, std::memory_order_relaxed);
}
template <class T>
inline const std::size_t core_local_index = next_core_local_index();

class core_locals {
public:
    core_locals() = default;
    core_locals(const core_locals&) = delete;
    core_locals& operator=(const core_locals&) = delete;
    /// Last made, first destroyed: a destructor may still use state made before it.
    ~core_locals() { clear(); }
    void clear() {
        while (!slots_.empty()) slots_.pop_back();
    }

    template <class T>
    T& get() {
        const std::size_t i = core_local_index<T>;
        if (i >= slots_.size() || !slots_[i].object) [[unlikely]] {
            T* t = new T(); // first: T's constructor may ask for other core-local state
            if (i >= slots_.size()) slots_.resize(i + 1);
            slots_[i].object = t;
            slots_[i].destroy = +[](void* p) { delete static_cast<T*>(p); };
        }
        return *static_cast<T*>(slots_[i].object);
    }

private:
    struct slot {
        void* object = nullptr;
        void (*destroy)(void*) = nullptr;
        slot() = default;
        slot(slot&& o) noexcept : object(std::exchange(o.object, nullptr)), destroy(o.destroy) {}
        slot& operator=(slot&&) = delete;
        ~slot() {
            if (object) destroy(object);
        }
    };
    std::vector<slot> slots_;
};

} // namespace taco::detail
