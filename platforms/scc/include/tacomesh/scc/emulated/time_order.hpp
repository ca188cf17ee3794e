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
//    has not read (it can act only after reading one) or acknowledgement
//    that freed room it waits for (it can send from there), or, if it
//    waits for room at some receivers that have not freed it yet, the
//    earliest of those receivers' own times (the acknowledgement comes from
//    them); never earlier than its clock; and no time at all (infinity)
//    when nothing is coming;
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
// threads are doing (the publisher counts it under the order's lock before
// it publishes, and the receiver, having read it, takes that lock after).
#include <algorithm>
#include <atomic>
#include <bit>
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

#include <boost/intrusive/set.hpp>

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
    /// f(c) for each core c in the set, in index order, until one returns true.
    template <class F>
    bool any_of(F&& f) const {
        for (std::size_t w = 0; w < words_.size(); ++w)
            for (std::uint64_t bits = words_[w]; bits; bits &= bits - 1)
                if (f(core_index(w * 64 + std::size_t(std::countr_zero(bits))))) return true;
        return false;
    }
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
        : window_(window), patience_(patience), n_(cores), cores_(std::make_unique<core_state[]>(cores)),
          places_(cores), spins_(cores <= 8 * std::max(1u, std::thread::hardware_concurrency()) ? 64 : 0),
          slice_(std::max<std::chrono::milliseconds::rep>(1, cores / 16)) {
        for (core_index c = 0; c < cores; ++c) {
            cores_[c].id = c;
            places_.set(c, {0, c});
        }
        // Whichever core's thread grows the list would free the old block
        // into its own malloc cache (see blocked_set): never grown.
        room_waiters_.reserve(cores);
    }
    time_order(const time_order&) = delete;
    time_order& operator=(const time_order&) = delete;

    /// Core `me` runs an operation at cycle `t`: it is running from here
    /// on, and waits until no other core can still act before t - window.
    void turn(core_index me, std::uint64_t t) {
        std::unique_lock g(m_);
        core_state& s = cores_[me];
        // A running core whose clock stands still (a poll that found
        // nothing, on the runtime's loop) changes nothing the others see.
        if (t != s.clock || s.state != running) {
            s.clock = t;
            set_state(me, running);
            wake_blocked();
        }
        if (!may_run(me, t)) block(g, me, t);
    }

    /// Core `me` enters the wait loop at cycle `t`, waiting for messages
    /// and for room at the receivers in `room_at`; unless `room_written()`
    /// says that one of them has freed the room already: then it stays
    /// running, at its clock, and false says so.
    template <class RoomWritten>
    bool wait(core_index me, std::uint64_t t, const core_set& room_at, RoomWritten&& room_written) {
        std::lock_guard g(m_);
        // Asked under the lock, whose holder received() is when an
        // acknowledgement is counted: a receiver's acknowledgement either
        // is in the MPB here, or comes after and finds this core waiting.
        // The try that found no room was at an earlier cycle than the
        // acknowledgement, which the host may have written before this
        // wait, while the core ran on (it queued the message): waiting, it
        // would have no place (room_place) while its retry may act at that
        // acknowledgement's cycle.
        if (!room_at.empty() && room_written()) return false;
        core_state& s = cores_[me];
        s.clock = t;
        s.room.clear();
        room_at.any_of([&](core_index r) {
            s.room.push_back(r);
            return false;
        });
        set_state(me, waiting);
        wake_blocked();
        return true;
    }

    /// Core `me` looks at its messages from the wait loop: it waits until no
    /// other core can still write one to it earlier than the first it has.
    void look(core_index me) {
        std::unique_lock g(m_);
        const core_state& s = cores_[me];
        if (s.state != waiting || s.mail_first == never) return;
        const std::uint64_t at = std::max(s.clock, s.mail_first);
        if (!may_run(me, at)) block(g, me, at);
    }

    /// A message to core `to` is about to become visible, at cycle `t` or later.
    void sending(core_index to, std::uint64_t t) {
        std::lock_guard g(m_);
        core_state& s = cores_[to];
        ++s.mail;
        s.mail_first = std::min(s.mail_first, t);
        refresh(to); // can only lower its place: wakes nobody
    }
    /// `me` read a message from `from` and acknowledged it, freeing its slot,
    /// at cycle `t`; it is running from there.
    void received(core_index me, std::uint64_t t, core_index from) {
        std::lock_guard g(m_);
        // A sender waiting for room here may send from t on. Counted now,
        // before the receiver's clock moves past t: the receiver's own time
        // no longer holds the others back (room_place), and the sender's
        // thread may not run for a while (one host CPU for 48 cores), so
        // without it a third core went ahead at a later cycle than the send
        // and the RDF pool's last queries went out as the host ran threads.
        if (core_state& f = cores_[from]; from != me && f.state == waiting && t < f.freed_first &&
                                           std::find(f.room.begin(), f.room.end(), me) != f.room.end()) {
            f.freed_first = t;
            refresh(from); // can only lower its place: wakes nobody
        }
        core_state& s = cores_[me];
        s.clock = std::max(s.clock, t);
        // The earliest of the rest is not known: the read one's cycle stays
        // as a lower bound (the core is running, at its clock, from here on).
        if (s.mail <= 1) s.mail = 0, s.mail_first = never;
        else --s.mail;
        set_state(me, running);
        wake_blocked();
    }

    /// Core `me`'s program returned: it acts no more.
    void done(core_index me) {
        std::lock_guard g(m_);
        set_state(me, finished);
        wake_blocked();
    }

    /// Operations that waited for their turn, and those that gave up
    /// waiting after `patience` and went ahead out of order.
    std::uint64_t waits() const noexcept { return waits_.load(std::memory_order_relaxed); }
    std::uint64_t timeouts() const noexcept { return timeouts_.load(std::memory_order_relaxed); }

private:
    enum state_t : std::uint8_t { running, waiting, finished };

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
    static constexpr place nowhere{never, std::numeric_limits<std::size_t>::max()};

    /// The cores' own places in a tournament tree: the least of all but one
    /// core in log2(n) steps. A scan of every core's state at every
    /// operation cost 1024 cores 1024 cache misses an operation, and world
    /// trade at 256 cores 90 us of host time per wait.
    class place_tree {
    public:
        explicit place_tree(std::size_t n) : leaves_(std::bit_ceil(std::max<std::size_t>(n, 1))), node_(2 * leaves_, nowhere) {}
        void set(std::size_t i, place p) noexcept {
            std::size_t k = leaves_ + i;
            node_[k] = p;
            for (k /= 2; k >= 1; k /= 2) node_[k] = std::min(node_[2 * k], node_[2 * k + 1]);
        }
        place least() const noexcept { return node_[1]; }
        /// The least place of every core but `i`: the siblings on its path.
        place least_but(std::size_t i) const noexcept {
            place p = nowhere;
            for (std::size_t k = leaves_ + i; k > 1; k /= 2) p = std::min(p, node_[k ^ 1]);
            return p;
        }

    private:
        std::size_t leaves_;
        std::vector<place> node_;
    };

    struct core_state {
        std::uint64_t clock = 0;
        std::uint64_t mail = 0;            ///< messages counted to it and not read
        std::uint64_t mail_first = never;  ///< the earliest of them (a lower bound once one is read)
        std::uint64_t freed_first = never; ///< while waiting: the earliest acknowledgement that freed room it waits for
        state_t state = running;
        std::vector<core_index> room;      ///< while waiting: the receivers it waits for room at
        std::size_t room_slot = npos;      ///< its index in room_waiters_, or npos
        std::uint64_t blocked_at = never;  ///< the cycle it waits to run at, or never
        core_index id = 0;
        bool woken = false;
        std::condition_variable cv;
        boost::intrusive::set_member_hook<> blocked_hook; ///< in blocked_ while it is there
    };
    /// The blocked cores by cycle, then index. Intrusive: blocking and
    /// waking allocate nothing. The nodes of a std::set were allocated by
    /// the core that blocked and freed by the one that woke it, into that
    /// thread's malloc cache, which handed them out again as that core's own
    /// data: the emulated cores' private heaps then depended on which thread
    /// the host ran first, and with them the cache model's hits (the RDF
    /// pool's cycles at 2 cores varied by 2 % from run to run).
    struct by_blocked_place {
        bool operator()(const core_state& a, const core_state& b) const noexcept {
            return std::pair(a.blocked_at, a.id) < std::pair(b.blocked_at, b.id);
        }
    };
    using blocked_set = boost::intrusive::set<
        core_state, boost::intrusive::member_hook<core_state, boost::intrusive::set_member_hook<>, &core_state::blocked_hook>,
        boost::intrusive::compare<by_blocked_place>>;
    static constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();

    /// The earliest cycle at which core d could still write what another
    /// core reads, leaving out the receivers it waits for room at:
    ///  - a running core: its clock (it can only act later than that);
    ///  - a waiting core: the earliest message written to it that it has
    ///    not read (it can act only after reading one) or acknowledgement
    ///    that freed room it waits for, never earlier than its clock;
    ///    infinity when nothing is coming;
    ///  - a core whose program returned: infinity.
    std::uint64_t own_time(const core_state& d) const noexcept {
        switch (d.state) {
        case running: return d.clock;
        case finished: return never;
        default: {
            const std::uint64_t first = std::min(d.mail_first, d.freed_first);
            return first == never ? never : std::max(d.clock, first);
        }
        }
    }
    void refresh(core_index d) noexcept { places_.set(d, {own_time(cores_[d]), d}); }
    void set_state(core_index d, state_t st) {
        core_state& s = cores_[d];
        s.state = st;
        if (st != waiting) s.freed_first = never; // it acted: on from its clock
        refresh(d);
        // Only a waiting core waits for room; the list stays as short as
        // the cores that do (a few, against the n scanned at every turn).
        const bool listed = st == waiting && !s.room.empty();
        if (listed && s.room_slot == npos) {
            s.room_slot = room_waiters_.size();
            room_waiters_.push_back(d);
        } else if (!listed && s.room_slot != npos) {
            cores_[room_waiters_.back()].room_slot = s.room_slot;
            room_waiters_[s.room_slot] = room_waiters_.back();
            room_waiters_.pop_back();
            s.room_slot = npos;
        }
    }
    /// A core d waiting for room: the acknowledgement that frees it comes
    /// from a receiver, no earlier than the receiver's own time, and d can
    /// act no earlier than its clock c. So its place is c when a receiver's
    /// time is below c, and otherwise the receiver's own place (already in
    /// the tree, and never holding that receiver back), which adds nothing.
    place room_place(core_index d) const noexcept {
        const core_state& s = cores_[d];
        for (const core_index r : s.room)
            if (const std::uint64_t rt = own_time(cores_[r]); rt != never && rt < s.clock) return {s.clock, d};
        return nowhere;
    }
    /// The least place of the cores other than `me`, and whose it is.
    place others_least(core_index me) const noexcept {
        place least = places_.least_but(me);
        for (const core_index d : room_waiters_)
            if (d != me) least = std::min(least, room_place(d));
        return least;
    }
    bool within(core_index me, std::uint64_t t, place least) const noexcept {
        if (least.t == never) return true;
        const std::uint64_t bound = least.t + window_;
        return t < bound || (t == bound && me <= least.core);
    }
    bool may_run(core_index me, std::uint64_t t) const noexcept { return within(me, t, others_least(me)); }

    void block(std::unique_lock<std::mutex>& g, core_index me, std::uint64_t t) {
        core_state& s = cores_[me];
        waits_.fetch_add(1, std::memory_order_relaxed);
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
        for (int round = 0; round < spins_; ++round) {
            g.unlock();
            std::this_thread::yield();
            g.lock();
            if (may_run(me, t)) return;
        }
        s.blocked_at = t;
        blocked_.insert(s);
        while (!may_run(me, t)) {
            // Slices, not one wait: the rule is rechecked even if a wake-up is
            // missed (a core that leaves the wait loop without an operation).
            if (!s.cv.wait_for(g, slice_, [&] { return s.woken; }) && std::chrono::steady_clock::now() >= give_up) {
                in_order = false;
                break;
            }
            if (s.woken) blocked_.insert(s); // the waker took it out
            s.woken = false;
        }
        if (s.blocked_hook.is_linked()) blocked_.erase(blocked_.iterator_to(s));
        s.blocked_at = never;
        s.woken = false;
        if (!in_order) timeouts_.fetch_add(1, std::memory_order_relaxed);
    }

    /// After a core's time rose: wake the blocked cores that may now run.
    /// Every core but the one whose place is the least has that least place
    /// as its "least of the others", so in the order of their cycles the
    /// first that may not run ends the search (after the least place's own
    /// core, which looks at the second least, is checked on its own).
    void wake_blocked() {
        if (blocked_.empty()) return;
        place first = places_.least();
        for (const core_index d : room_waiters_) first = std::min(first, room_place(d));
        auto wake = [&](blocked_set::iterator i) {
            core_state& s = *i;
            s.woken = true;
            s.cv.notify_one();
            return blocked_.erase(i);
        };
        if (first.core < n_) {
            // Blocked, and not woken already (a woken core leaves the set).
            if (core_state& f = cores_[first.core];
                f.blocked_hook.is_linked() && within(f.id, f.blocked_at, others_least(f.id)))
                wake(blocked_.iterator_to(f));
        }
        for (auto i = blocked_.begin(); i != blocked_.end();) {
            if (i->id == first.core) {
                ++i;
                continue;
            }
            if (!within(i->id, i->blocked_at, first)) break;
            i = wake(i);
        }
    }

    std::uint64_t window_;
    std::chrono::milliseconds patience_;
    core_index n_;
    // One lock over the order's state: each operation's update and check is
    // a few tree steps, shorter than the host's thread switch it may lead to.
    std::mutex m_;
    std::unique_ptr<core_state[]> cores_;
    place_tree places_;
    std::vector<core_index> room_waiters_;                  ///< the waiting cores with receivers to wait for room at
    blocked_set blocked_; ///< the cores blocked in block(), by cycle then index
    int spins_; ///< yields before a blocked core sleeps: see block()
    /// How long a blocked core sleeps before it looks again unwoken: 1 ms,
    /// and longer the more cores there are (256 cores blocked in 1 ms
    /// slices woke 250 000 times a second and kept 2 host CPUs busy).
    std::chrono::milliseconds slice_;
    std::atomic<std::uint64_t> waits_{0}, timeouts_{0};
};

} // namespace tacomesh::scc::emulated
