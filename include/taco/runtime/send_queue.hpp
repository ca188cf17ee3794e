#pragma once
// Messages a core could not hand to a full channel yet (docs/architecture.md, section 2:
// "the send may fail when the channel is full: the caller ... queues
// locally, never drops"). One FIFO of message bytes per destination, kept
// in order so that messages from one source to one destination never
// overtake each other. Memory is a byte vector per destination that is
// reused once drained: a flood allocates only while the queue grows.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include <taco/core_id.hpp>
#include <taco/platform/channel_endpoint.hpp>

namespace taco::detail {

class send_queue {
public:
    explicit send_queue(core_id cores) : queues_(cores) {}

    bool waiting(core_id dest) const noexcept { return !queues_[dest].empty(); }
    bool empty() const noexcept { return total_ == 0; }
    std::size_t size() const noexcept { return total_; }
    const std::vector<core_id>& destinations() const noexcept { return dests_; }

    /// Room for a message of `length` bytes at the back of dest's queue.
    std::byte* push(core_id dest, std::size_t length) {
        auto& q = queues_[dest];
        if (q.empty()) dests_.push_back(dest);
        const std::size_t at = q.bytes.size();
        q.bytes.resize(at + header + round(length));
        const auto len = std::uint32_t(length);
        std::memcpy(q.bytes.data() + at, &len, sizeof len);
        ++total_;
        return q.bytes.data() + at + header;
    }

    /// Hand dest's messages, oldest first, to `put(bytes, length)` until it
    /// returns false (the channel is full); true when none is left.
    template <class Put>
    bool drain(core_id dest, Put&& put) {
        auto& q = queues_[dest];
        while (!q.empty()) {
            std::uint32_t len;
            std::memcpy(&len, q.bytes.data() + q.head, sizeof len);
            if (!put(q.bytes.data() + q.head + header, std::size_t(len))) return false;
            q.head += header + round(len);
            --total_;
        }
        q.bytes.clear(); // keeps the capacity for the next burst
        q.head = 0;
        std::erase(dests_, dest);
        return true;
    }

private:
    // Entries start at multiples of message_align, so a payload constructed
    // in place is aligned as it would be in a channel slot.
    static constexpr std::size_t header = message_align;
    static constexpr std::size_t round(std::size_t n) noexcept { return (n + message_align - 1) / message_align * message_align; }

    struct fifo {
        std::vector<std::byte> bytes;
        std::size_t head = 0;
        bool empty() const noexcept { return head == bytes.size(); }
    };
    std::vector<fifo> queues_;
    std::vector<core_id> dests_; // destinations with queued messages
    std::size_t total_ = 0;
};

} // namespace taco::detail
