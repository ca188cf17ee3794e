#pragma once
// Object groups whose members change (CCI paper, section II.B: groups have
// "methods to add objects"), safely while collectives run on them.
//
//   auto g = taco::make_dynamic_group(members);        // home: this core
//   taco::reduce(g, taco::m2f(&T::m), combiner, f);   // as on a taco::group
//   taco::add_member(g, p).get();                      // rank = the old size
//   taco::remove_member(g, q).get();                   // later ranks move down
//   taco::members(g).get();                            // the current members, in rank order
//   taco::destroy_group(g);
//
// The guarantee: every collective sees the group as it was before a change
// or as it is after it, never a mix, and remove_member's future is ready
// only once no collective will reach the removed member any more (the
// member's object may then be deleted). Only the member parts that
// collectives started with taco::as_task left queued in their cores'
// schedulers may still run after it.
//
// How: a dynamic group is a succession of immutable trees (taco::group) and
// a home object on one core that knows the current one. Collectives go to
// the home first, which starts each on its current tree, and a change builds
// the next tree, makes it current, and sends the old one's destruction down
// the old tree from the home. Channels deliver in order per pair of cores,
// so at every node of the old tree the destruction arrives after each
// collective the home started on it, and it only goes on to a node's
// children after forwarding those collectives to them: the old tree goes
// away behind its last collective, which never meets a freed node, and the
// nodes' acknowledgements to the home say when the last has passed.
//
// The price is a hop: a collective started on another core than the home's
// travels caller -> home -> root (one more message than a taco::group's).
// Make the group on the core that starts most of its collectives. A change
// costs what make_group does (O(n) messages from the home), batched: the
// changes asked for while a tree is being built are applied together to
// the next one.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <taco/async.hpp>
#include <taco/continuation.hpp>
#include <taco/future.hpp>
#include <taco/global_ptr.hpp>
#include <taco/group.hpp>
#include <taco/m2f.hpp>
#include <taco/remote_error.hpp>
#include <taco/this_core.hpp>
#include <taco/topology.hpp>
#include <taco/detail/object_registry.hpp>

namespace taco {

namespace detail {

enum class membership_change : std::uint8_t { add, remove };

inline error_info membership_error(std::string_view text) {
    error_info e{this_core(), 0, {}};
    e.assign(text);
    return e;
}

/// A dynamic group's state, on its home core.
template <class T>
class group_home {
public:
    // Each entry point checks (in debug builds) and reports to its own sink
    // or future: a collective relayed to a destroyed home fails its caller's
    // future instead of the home core's uncaught-error handler.
    using checks_own_liveness = void;

    group_home(topology shape) : shape_(shape) {}

    const group<T>& current() const noexcept { return current_; }
    const std::vector<global_ptr<T>>& members() const noexcept { return members_; }

    /// Adopt the first tree (make_dynamic_group, on this core).
    void start_with(std::vector<global_ptr<T>> members) {
        if (!members.empty()) current_ = make_group(members, shape_);
        members_ = std::move(members);
    }

    void change(membership_change op, global_ptr<T> member, future_continuation<void> done) {
        if (auto e = deleted_target_error(this)) [[unlikely]]
            return done.fail(*e);
        if (closing_)
            return done.fail(membership_error("taco: membership change on a dynamic group being destroyed"));
        queue_.push_back({op, member, done});
        // A change asked for while a tree is being built (make_group waits,
        // and this core serves invocations meanwhile, this one among them)
        // waits in the queue for the loop further up this core's stack.
        if (building_) return;
        building_ = true;
        while (!queue_.empty()) {
            std::vector<pending> batch = std::exchange(queue_, {});
            std::vector<global_ptr<T>> next = members_;
            std::vector<future_continuation<void>> applied;
            for (const pending& p : batch) {
                if (const char* why = apply(next, p.op, p.member)) p.done.fail(membership_error(why));
                else applied.push_back(p.done);
            }
            if (applied.empty()) continue;
            group<T> built{};
            try {
                if (!next.empty()) built = make_group(next, shape_);
            } catch (...) {
                const error_info e = error_info::current(this_core());
                for (const auto& d : applied) d.fail(e);
                continue;
            }
            members_ = std::move(next);
            retire(std::exchange(current_, built), std::move(applied));
        }
        building_ = false;
        finish_closing();
    }

    /// A node of a retired tree is gone (after it forwarded every collective
    /// the home started on it).
    void node_retired(std::uint32_t id) {
        for (auto it = retiring_.begin(); it != retiring_.end(); ++it) {
            if (it->id != id) continue;
            if (--it->remaining == 0) {
                for (const auto& d : it->waiting) d.deliver();
                retiring_.erase(it);
                finish_closing();
            }
            return;
        }
    }

    /// destroy_group: the current tree and the home go once the changes in
    /// progress are done and every retired tree has drained.
    void close() {
        check_target_alive(this);
        if (closing_) throw usage_error("taco::destroy_group: the dynamic group was destroyed already");
        closing_ = true;
        finish_closing();
    }

private:
    struct pending {
        membership_change op;
        global_ptr<T> member;
        future_continuation<void> done;
    };
    struct retiring_tree {
        std::uint32_t id;
        std::uint32_t remaining; // nodes still to acknowledge
        std::vector<future_continuation<void>> waiting;
    };
    /// Each node of a retired tree tells its home when it is gone.
    struct retire_ack {
        global_ptr<group_home> home;
        std::uint32_t id;
        void operator()() const {
            if (home.core() == this_core()) home.get()->node_retired(id);
            else async(home, &group_home::node_retired, id);
        }
    };

    static const char* apply(std::vector<global_ptr<T>>& members, membership_change op, global_ptr<T> m) {
        if (!m) return "taco: a dynamic group's member cannot be null";
        auto it = std::find(members.begin(), members.end(), m);
        if (op == membership_change::add) {
            if (it != members.end()) return "taco::add_member: the object is a member already";
            if (members.size() >= std::numeric_limits<std::uint32_t>::max())
                return "taco::add_member: a group has at most 2^32 - 1 members";
            members.push_back(m);
        } else {
            if (it == members.end()) return "taco::remove_member: the object is not a member";
            members.erase(it);
        }
        return nullptr;
    }

    void retire(group<T> old, std::vector<future_continuation<void>> waiting) {
        if (!old) {
            for (const auto& d : waiting) d.deliver();
            return;
        }
        const std::uint32_t id = next_retirement_++;
        retiring_.push_back({id, old.size, std::move(waiting)});
        // From here, as every collective on the old tree was: the same
        // channel, after them.
        async(old.root.core(), &destroy_subtree<T, retire_ack>, old.root, retire_ack{to_global(this), id});
    }

    void finish_closing();

    topology shape_;
    group<T> current_{};
    std::vector<global_ptr<T>> members_;
    std::vector<pending> queue_;
    std::vector<retiring_tree> retiring_;
    std::uint32_t next_retirement_ = 0;
    bool building_ = false;
    bool closing_ = false;
};

/// The homes living on this core: those still alive when the run ends are
/// freed with the core, as the group nodes are (node_registry).
template <class T>
using home_registry = owned_on_core<group_home<T>>;

template <class T>
void group_home<T>::finish_closing() {
    if (!closing_ || building_ || !retiring_.empty()) return;
    destroy_nodes(current_);
    core_local<home_registry<T>>().live.erase(this);
#if TACO_DEBUG_CHECKS
    // Quarantined (object_registry.hpp): a collective or a change that comes
    // after the destruction is refused with an error to its caller.
    this->~group_home();
    objects().retire(this, sizeof(group_home));
#else
    delete this;
#endif
}

template <class T>
void request_change(group_home<T>& home, membership_change op, global_ptr<T> member, future_continuation<void> done) {
    home.change(op, member, done);
}

template <class T>
std::vector<global_ptr<T>> member_list(group_home<T>& home) {
    check_target_alive(&home);
    return home.members();
}

template <class T>
void close_home(group_home<T>& home) {
    home.close();
}

} // namespace detail

/// A handle to a dynamic group: trivially copyable, valid on every core; the
/// group itself lives on its home core (the one that made it).
template <class T>
struct dynamic_group {
    global_ptr<detail::group_home<T>> home;

    explicit operator bool() const noexcept { return static_cast<bool>(home); }
};

/// A dynamic group over `members` (rank i = members[i]; none is fine), with
/// the given tree shape for every version, homed on this core. Returns once
/// the first tree is ready. Throws std::invalid_argument as make_group does.
template <class T>
dynamic_group<T> make_dynamic_group(std::span<const global_ptr<T>> members, topology shape = topology::binomial()) {
    auto* home = new detail::group_home<T>(shape);
    try {
        home->start_with({members.begin(), members.end()});
    } catch (...) {
        delete home;
        throw;
    }
    core_local<detail::home_registry<T>>().live.insert(home);
    return {to_global(home)};
}

template <class T>
dynamic_group<T> make_dynamic_group(const std::vector<global_ptr<T>>& members, topology shape = topology::binomial()) {
    return make_dynamic_group(std::span<const global_ptr<T>>(members), shape);
}

namespace detail {
template <class T>
future<void> change_membership(dynamic_group<T> g, membership_change op, global_ptr<T> member, const char* caller) {
    if (!g) throw std::invalid_argument(std::string(caller) + ": null group");
    return future<void>(start_tag{}, [&](future<void>& f) {
        const future_continuation<void> done{this_core(), f.arm()};
        const disarm_on_throw<future_continuation<void>> refused(done);
        if (g.home.core() == this_core()) g.home.get()->change(op, member, done);
        else async(g.home, &request_change<T>, op, member, done);
    });
}
} // namespace detail

/// Add `member` as the last rank. The future is ready once collectives
/// started after it see the member (an error if it is a member already or
/// null; the group is unchanged then).
template <class T>
[[nodiscard]] future<void> add_member(dynamic_group<T> g, global_ptr<T> member) {
    return detail::change_membership(g, detail::membership_change::add, member, "taco::add_member");
}

/// Remove `member`; the ranks after it move down by one. The future is ready
/// once no collective will reach the member any more (an error if it is not
/// a member; the group is unchanged then).
template <class T>
[[nodiscard]] future<void> remove_member(dynamic_group<T> g, global_ptr<T> member) {
    return detail::change_membership(g, detail::membership_change::remove, member, "taco::remove_member");
}

/// The members of the group's current tree, in rank order.
template <class T>
[[nodiscard]] future<std::vector<global_ptr<T>>> members(dynamic_group<T> g) {
    if (!g) throw std::invalid_argument("taco::members: null group");
    return call(g.home, m2f(&detail::member_list<T>));
}

/// Destroy the group (not its members) once the changes in progress are
/// done; collectives still in flight on it finish first.
template <class T>
void destroy_group(dynamic_group<T> g) {
    if (!g) throw std::invalid_argument("taco::destroy_group: null group");
    if (g.home.core() == this_core()) g.home.get()->close();
    else async(g.home, &detail::close_home<T>);
}

} // namespace taco
