#pragma once
// Slots of futures with a timeout (taco::timeout; detail/timed_continuation.hpp). A
// timed-out future may be gone when its late result arrives, so such
// results address a slot {index, generation} on the caller's core rather
// than the future: a result whose generation no longer matches is late and
// is dropped.
#include <cstdint>
#include <utility>
#include <vector>

namespace taco::detail {

class timer_task;

class call_slots {
public:
    struct slot {
        std::uint32_t generation = 0;
        void* future = nullptr;
        timer_task* timer = nullptr;
    };

    /// {index, generation} of a new open slot.
    std::pair<std::uint32_t, std::uint32_t> open(void* future, timer_task* timer) {
        std::uint32_t i;
        if (free_.empty()) {
            i = std::uint32_t(slots_.size());
            slots_.emplace_back();
        } else {
            i = free_.back();
            free_.pop_back();
        }
        slots_[i].future = future;
        slots_[i].timer = timer;
        return {i, slots_[i].generation};
    }

    /// The slot if it is still open in that generation (and close it), else
    /// nullptr: the result is late.
    slot* claim(std::uint32_t i, std::uint32_t generation) {
        if (i >= slots_.size() || slots_[i].generation != generation) return nullptr;
        slot* s = &slots_[i];
        ++s->generation;
        free_.push_back(i);
        return s;
    }

private:
    std::vector<slot> slots_;
    std::vector<std::uint32_t> free_;
};

} // namespace taco::detail
