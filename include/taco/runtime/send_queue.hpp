#pragma once
// Messages a core could not hand to a full channel yet (docs/architecture.md, section 2:
// "the send may fail when the channel is full: the caller ... queues
// locally, never drops"). One FIFO of message bytes per destination, kept
// in order so that messages from one source to one destination never
// overtake each other. Only destinations with queued messages have a queue
// (memory grows with the peers a core is backed up on, not with the core
// count: a dense array was cores^2 bookkeeping over a run); a drained
// queue's buffer is kept for the next one, so a flood allocates only while
// a queue grows. None of this is on the send path while nothing is queued.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <unordered_map>
#include <utility>
#include <vector>

#include <taco/core_id.hpp>
#include <taco/platform/channel_endpoint.hpp>

namespace taco::detail {

class send_queue {
public:
    bool waiting(core_id dest) const noexcept { return active_.contains(dest); }
    bool empty() const noexcept { return total_ == 0; }
    std::size_t size() const noexcept { return total_; }
    const std::vector<core_id>& destinations() const noexcept { return dests_; }
    /// Bytes the queues of all destinations hold, left messages included (tests).
    std::size_t buffer_bytes() const noexcept {
        std::size_t n = 0;
        for (const auto& [dest, q] : active_) n += q.bytes.size();
        return n;
    }

    /// Room for a message of `length` bytes at the back of dest's queue.
    std::byte* push(core_id dest, std::size_t length) {
        auto [it, fresh] = active_.try_emplace(dest);
        auto& q = it->second;
        if (fresh) {
            dests_.push_back(dest);
            if (!spare_.empty()) {
                q.bytes = std::move(spare_.back());
                spare_.pop_back();
            }
        }
        const std::size_t at = q.bytes.size();
        q.bytes.resize(at + header + round(length));
        const auto len = std::uint32_t(length);
        std::memcpy(q.bytes.data() + at, &len, sizeof len);
        ++total_;
        return q.bytes.data() + at + header;
    }

    /// The message just pushed for `dest` is urgent: until it is in the
    /// channel, drain calls its `urgent` whenever it has put messages ahead
    /// of it there, and once more when it has put it (the receiver is
    /// signalled each time: core::urgent_sent).
    void mark_urgent(core_id dest) {
        auto& q = active_.at(dest);
        q.urgent_end = q.bytes.size();
    }

    /// Hand dest's messages, oldest first, to `put(bytes, length)` until it
    /// returns false (the channel is full); true when none is left. Calls
    /// `urgent()` as mark_urgent says.
    template <class Put>
    bool drain(core_id dest, Put&& put) {
        return drain(dest, put, [] {});
    }
    template <class Put, class Urgent>
    bool drain(core_id dest, Put&& put, Urgent&& urgent) {
        const auto it = active_.find(dest);
        if (it == active_.end()) return true;
        auto& q = it->second;
        bool put_any = false;
        while (!q.empty()) {
            std::uint32_t len;
            std::memcpy(&len, q.bytes.data() + q.head, sizeof len);
            if (!put(q.bytes.data() + q.head + header, std::size_t(len))) {
                // Full again before the urgent message: the receiver, if it
                // computes, must take what came, or the channel stays full.
                if (put_any && q.urgent_end != 0) urgent();
                q.compact();
                return false;
            }
            put_any = true;
            q.head += header + round(len);
            --total_;
            if (q.urgent_end != 0 && q.head >= q.urgent_end) {
                q.urgent_end = 0;
                urgent();
            }
        }
        if (spare_.size() < max_spare) {
            q.bytes.clear(); // keeps the capacity for the next burst
            spare_.push_back(std::move(q.bytes));
        }
        active_.erase(it);
        std::erase(dests_, dest);
        return true;
    }

private:
    // Entries start at multiples of message_align, so a payload constructed
    // in place is aligned as it would be in a channel slot.
    static constexpr std::size_t header = message_align;
    static constexpr std::size_t round(std::size_t n) noexcept { return (n + message_align - 1) / message_align * message_align; }
    static constexpr std::size_t max_spare = 8;

    struct fifo {
        std::vector<std::byte> bytes;
        std::size_t head = 0;
        std::size_t urgent_end = 0; ///< where the last urgent message ends (0: none queued)
        bool empty() const noexcept { return head == bytes.size(); }
        /// Drop what has left once it is most of the buffer: a queue that is
        /// never empty (a steady flood) would otherwise only ever grow at its
        /// end, its count bounded and its bytes not (measured: 3 M messages
        /// through a queue of ~1000 held 288 MB). Amortised: each byte moves
        /// at most once per halving.
        void compact() {
            if (head < compact_from || head < bytes.size() / 2) return;
            bytes.erase(bytes.begin(), bytes.begin() + std::ptrdiff_t(head));
            if (urgent_end != 0) urgent_end -= head; // still ahead of head: drain clears it once passed
            head = 0;
        }
    };
    static constexpr std::size_t compact_from = std::size_t(64) << 10;
    std::unordered_map<core_id, fifo> active_; // destinations with queued messages
    std::vector<core_id> dests_;               // the same, in the order they filled (flush order)
    std::vector<std::vector<std::byte>> spare_;
    std::size_t total_ = 0;
};

} // namespace taco::detail
