#pragma once
// Conservative modelled-time order for the emulated cores: a core's
// hardware operation at modelled cycle t waits (on the host) until every
// other core that could still act before t has got there. Without it, the
// host decides which of two messages a core reads first and whether a
// message is there when it looks: a parent of a reduce tree that reads its
// later child's message first (that child's thread had a CPU) and its
// earlier child's after, pays the handling of both after the later one, and
// 48 threads on 2 CPUs made the 48-core reduce 14,900 cycles in one run and
// 18,300 in the next.
//
// The operations that take turns are those through which cores see each
// other: sends, polls, and the requests to the memory controllers (whose
// calendars would otherwise be booked in host order: a core that the host
// ran first took the slots of requests modelled earlier than its own).
//
// The rule is the one of conservative parallel discrete-event simulation
// (Chandy and Misra; the lookahead is `window`): core c may run an
// operation at cycle t only when t <= min over the other cores d of
// effective(d) + window (at equality, only if c < d: ties go by core
// index, not by whichever thread the host ran first), where effective(d)
// is the earliest cycle at which d could still make a write another core
// would see:
//  - a running core: its clock (published at each of its operations; it
//    can only act later than that);
//  - a waiting core (in the runtime's wait loop: idle(), or pause() with a
//    message waiting for room): the earliest message written to it that it
//    has not read (it can act only after reading one), or, if it waits for
//    room at some receivers, the earliest of those receivers' own times (the
//    acknowledgement that frees the room comes from them); never earlier
//    than its clock; and no time at all (infinity) when nothing is coming;
//  - a core whose program returned: infinity.
// The core with the smallest effective time can always go on, so the order
// cannot deadlock as long as every wait goes through the wait loop. A wait
// that does not (a program spinning on plain memory, which no emulated
// operation sees) is broken by `patience`: past it, the operation goes
// ahead out of order and the run's report counts it (order_timeouts), so
// a figure can show that it was taken in order.
//
// Messages are counted on the receiver before they become visible and
// uncounted as it reads them: a waiting core with a message on its way has
// that message's cycle as its time, never infinity, whatever the host's
// threads are doing (the publisher's count is sequentially consistent with
// the receiver's read).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <compare>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <tacomesh/scc/geometry.hpp>

namespace tacomesh::scc::emulated {

/// A set of cores, a bit each (the receivers a core waits for room at).
class core_set {
public:
    explicit core_set(core_index cores = 0) : words_((cores + 63) / 64) {}
    void assign(core_index c, bool in) noexcept {
        const std::uint64_t bit = std::uint64_t(1) << (c % 64);
        words_[c / 64] = in ? words_[c / 64] | bit : words_[c / 64] & ~bit;
    }
    bool empty() const noexcept {
        return std::all_of(words_.begin(), words_.end(), [](std::uint64_t w) { return w == 0; });
    }
    const std::vector<std::uint64_t>& words() const noexcept { return words_; }
    friend bool operator==(const core_set&, const core_set&) = default;

private:
    std::vector<std::uint64_t> words_;
};

/// How the emulated cores' host threads are ordered (config::order).
enum class core_order {
    host,     ///< as the host schedules them: fastest, but modelled cycles then depend on the host's load
    modelled, ///< in modelled-time order (time_order.hpp): the same cycles on a loaded or idle host, 1 or 2 CPUs
};

class time_order {
public:
    static constexpr std::uint64_t never = std::numeric_limits<std::uint64_t>::max();

    /// `window`: how far (cycles) a core may run ahead of the slowest core
    /// that could still write to it; 0 is exact. `patience`: the host time
    /// an operation waits for its turn before it goes ahead out of order.
    time_order(core_index cores, std::uint64_t window,
               std::chrono::milliseconds patience = std::chrono::milliseconds(2000))
        : window_(window), patience_(patience), cores_(cores), room_words_((cores + 63) / 64),
          room_at_(std::make_unique<std::atomic<std::uint64_t>[]>(std::size_t(cores) * room_words_)),
          spins_(cores <= 8 * std::max(1u, std::thread::hardware_concurrency()) ? 64 : 0),
          slice_(std::max<std::chrono::milliseconds::rep>(1, cores / 16)) {}
    time_order(const time_order&) = delete;
    time_order& operator=(const time_order&) = delete;

    /// Core `me` runs an operation at cycle `t`: it is running from here
    /// on, and waits until no other core can still act before t - window.
    void turn(core_index me, std::uint64_t t) {
        core_state& s = cores_[me];
        // A running core whose clock stands still (a poll that found
        // nothing, on the runtime's loop) changes nothing the others see.
        if (t != s.clock.load(std::memory_order_relaxed) || s.state.load(std::memory_order_relaxed) != running) {
            s.clock.store(t, std::memory_order_seq_cst);
            s.state.store(running, std::memory_order_seq_cst);
            wake_blocked();
        }
        if (!may_run(me, t)) block(me, t);
    }

    /// Core `me` enters the wait loop at cycle `t`, waiting for messages
    /// and for room at the receivers in `room_at`.
    void wait(core_index me, std::uint64_t t, const core_set& room_at) {
        core_state& s = cores_[me];
        s.clock.store(t, std::memory_order_seq_cst);
        for (std::size_t w = 0; w < room_words_; ++w)
            room_at_[me * room_words_ + w].store(room_at.words()[w], std::memory_order_seq_cst);
        s.state.store(waiting, std::memory_order_seq_cst);
        wake_blocked();
    }

    /// Core `me` looks at its messages from the wait loop: it waits until no
    /// other core can still write one to it earlier than the first it has.
    void look(core_index me) {
        core_state& s = cores_[me];
        if (s.state.load(std::memory_order_relaxed) != waiting) return;
        const std::uint64_t first = earliest(s.mail.load());
        if (first == never) return;
        const std::uint64_t at = std::max(s.clock.load(std::memory_order_relaxed), first);
        if (!may_run(me, at)) block(me, at);
    }

    /// A message to core `to` is about to become visible, at cycle `t` or later.
    void sending(core_index to, std::uint64_t t) {
        std::uint64_t m = cores_[to].mail.load();
        while (!cores_[to].mail.compare_exchange_weak(m, pack(count(m) + 1, std::min(earliest(m), t)))) {
        }
    }
    /// `me` read a message (it is running from the cycle `t` it read it at).
    void received(core_index me, std::uint64_t t) {
        core_state& s = cores_[me];
        // Running before the count drops: with its last message read, a
        // waiting core's time would be infinity, not the message's.
        s.clock.store(std::max(s.clock.load(std::memory_order_relaxed), t), std::memory_order_seq_cst);
        s.state.store(running, std::memory_order_seq_cst);
        std::uint64_t m = s.mail.load();
        while (!s.mail.compare_exchange_weak(m, count(m) <= 1 ? pack(0, never) : pack(count(m) - 1, earliest(m)))) {
        }
        wake_blocked();
    }

    /// Core `me`'s program returned: it acts no more.
    void done(core_index me) {
        cores_[me].state.store(finished, std::memory_order_seq_cst);
        wake_blocked();
    }

    /// Operations that waited for their turn, and those that gave up
    /// waiting after `patience` and went ahead out of order.
    std::uint64_t waits() const noexcept { return waits_.load(std::memory_order_relaxed); }
    std::uint64_t timeouts() const noexcept { return timeouts_.load(std::memory_order_relaxed); }

private:
    enum state_t : std::uint8_t { running, waiting, finished };
    // 16 bits of count (messages in flight to one core: at most 47 senders x
    // 32 slots, or 1023 x 1, plus those being written), 48 of cycle: 4 days
    // at 800 MHz.
    static constexpr std::uint64_t cycle_bits = 48, no_cycle = (std::uint64_t(1) << cycle_bits) - 1;
    static std::uint64_t pack(std::uint64_t n, std::uint64_t t) noexcept {
        return n << cycle_bits | std::min(t, no_cycle);
    }
    static std::uint64_t count(std::uint64_t m) noexcept { return m >> cycle_bits; }
    static std::uint64_t earliest(std::uint64_t m) noexcept {
        const std::uint64_t t = m & no_cycle;
        return t == no_cycle ? never : t;
    }

    /// One core's published state, on a cache line of its own: every other
    /// core reads it at each of its operations, its owner writes it.
    struct alignas(64) core_state {
        std::atomic<std::uint64_t> clock{0};
        std::atomic<std::uint64_t> mail{pack(0, never)}; ///< messages counted to it, and the earliest one's cycle
        std::atomic<state_t> state{running};
        std::atomic<std::uint64_t> blocked_at{never}; ///< the cycle it waits to run at, or never
        std::mutex m;
        std::condition_variable cv;
        bool woken = false; ///< under m
    };

    /// The earliest cycle at which core d could still write what another
    /// core reads, leaving out the receivers it waits for room at.
    std::uint64_t own_time(const core_state& d) const noexcept {
        switch (d.state.load()) {
        case running: return d.clock.load();
        case finished: return never;
        default: {
            const std::uint64_t e = earliest(d.mail.load());
            return e == never ? never : std::max(d.clock.load(), e);
        }
        }
    }
    /// A core's place in the order: the earliest cycle at which it could
    /// still write what another core reads, then a core index. Of two cores
    /// at the same cycle the lower index goes first, whichever thread the
    /// host ran first (at launch every core is at cycle 0, and the master of
    /// a task pool would otherwise serve its workers' first requests in host
    /// order).
    struct place {
        std::uint64_t t;
        std::size_t core;
        friend auto operator<=>(const place&, const place&) = default;
    };
    place effective(std::size_t d) const noexcept {
        const core_state& s = cores_[d];
        place p{own_time(s), d};
        if (s.state.load() != waiting) return p;
        const std::uint64_t c = s.clock.load();
        // The acknowledgement that frees the room comes from the receiver:
        // no earlier than the receiver's own time, and no earlier than d's
        // clock. Such a place takes the receiver's index, so that it ties
        // with the receiver's own and never holds the receiver back.
        for (std::size_t w = 0; w < room_words_; ++w) {
            std::uint64_t room = room_at_[d * room_words_ + w].load();
            while (room) {
                const auto r = core_index(w * 64 + std::size_t(__builtin_ctzll(room)));
                room &= room - 1;
                const std::uint64_t rt = own_time(cores_[r]);
                if (rt == never) continue;
                p = std::min(p, rt >= c ? place{rt, r} : place{c, d});
            }
        }
        return p;
    }
    place others_least(core_index me) const noexcept {
        place least{never, cores_.size()};
        for (std::size_t d = 0; d < cores_.size(); ++d)
            if (d != me) least = std::min(least, effective(d));
        return least;
    }
    bool within(core_index me, std::uint64_t t, place least) const noexcept {
        if (least.t == never) return true;
        const std::uint64_t bound = least.t + window_;
        // least.core == me: a place derived from this core's own (a core
        // waiting for room here), which only this core can move on.
        return t < bound || (t == bound && me <= least.core);
    }
    bool may_run(core_index me, std::uint64_t t) const noexcept { return within(me, t, others_least(me)); }

    void block(core_index me, std::uint64_t t) {
        core_state& s = cores_[me];
        waits_.fetch_add(1, std::memory_order_relaxed);
        blocked_.fetch_add(1);
        s.blocked_at.store(t); // sequentially consistent with the wakers' state stores (wake_blocked)
        const auto give_up = std::chrono::steady_clock::now() + patience_;
        bool in_order = true;
        // The turn usually comes within microseconds (a memory request
        // waits for the core a few cycles behind): yield first, and sleep on
        // the condition variable only after that. Yielding pays while few
        // threads share a host CPU (spins_); with many, the yield goes to
        // another core that cannot run either. World trade on NCM, host
        // seconds on 2 CPUs, sleeping at once / yielding 64 times first:
        // 2 cores 10 / 2.0, 12: 13 / 7.9, 16: 13.3 / 10.9, 24: 15.6 / 17.8,
        // 48: 19 / 40 (the modelled cycles are the same).
        for (int round = 0; round < spins_ && !may_run(me, t); ++round) std::this_thread::yield();
        while (!may_run(me, t)) {
            std::unique_lock g(s.m);
            // Slices, not one wait: the rule is rechecked even if a wake-up is
            // missed (a core that leaves the wait loop without an operation).
            if (!s.cv.wait_for(g, slice_, [&] { return s.woken; }) &&
                std::chrono::steady_clock::now() >= give_up) {
                in_order = false;
                break;
            }
            s.woken = false;
        }
        s.blocked_at.store(never);
        blocked_.fetch_sub(1);
        if (!in_order) timeouts_.fetch_add(1, std::memory_order_relaxed);
    }

    /// After a core's time rose: wake the blocked cores that may now run.
    void wake_blocked() {
        if (blocked_.load() == 0) return;
        // The least and second least places: each blocked core's "least of
        // the others" is one of them (one pass, not one per core). `first_of`:
        // the core whose place is the least (a derived place names another).
        place first{never, cores_.size()}, second{never, cores_.size()};
        std::size_t first_of = cores_.size();
        for (std::size_t d = 0; d < cores_.size(); ++d) {
            const place p = effective(d);
            if (p < first) {
                second = first;
                first = p;
                first_of = d;
            } else if (p < second) {
                second = p;
            }
        }
        for (std::size_t b = 0; b < cores_.size(); ++b) {
            core_state& s = cores_[b];
            const std::uint64_t t = s.blocked_at.load();
            if (t == never || !within(core_index(b), t, b == first_of ? second : first)) continue;
            {
                std::lock_guard g(s.m);
                s.woken = true;
            }
            s.cv.notify_one();
        }
    }

    std::uint64_t window_;
    std::chrono::milliseconds patience_;
    std::vector<core_state> cores_;
    /// Per core, while it waits: the receivers it waits for room at, a
    /// bit each (room_words_ words per core).
    std::size_t room_words_;
    std::unique_ptr<std::atomic<std::uint64_t>[]> room_at_;
    int spins_; ///< yields before a blocked core sleeps: see block()
    /// How long a blocked core sleeps before it looks again unwoken: 1 ms,
    /// and longer the more cores there are (256 cores blocked in 1 ms
    /// slices woke 250 000 times a second and kept 2 host CPUs busy).
    std::chrono::milliseconds slice_;
    std::atomic<std::size_t> blocked_{0};
    std::atomic<std::uint64_t> waits_{0}, timeouts_{0};
};

} // namespace tacomesh::scc::emulated
