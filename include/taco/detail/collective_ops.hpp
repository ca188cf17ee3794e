#pragma once
// The machinery of the collectives (collective.hpp): the steps each tree
// node runs (forward to the children, apply to its own member), the
// temporary reduction helpers of the CCI paper's Fig. 1 that merge a node's
// value with its children's in rank order, and the sinks a merged result
// or a gathered value goes to.
#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include <taco/async.hpp>
#include <taco/continuation.hpp>
#include <taco/future.hpp>
#include <taco/group.hpp>
#include <taco/image_ptr.hpp>
#include <taco/remote_error.hpp>
#include <taco/runtime/bulk.hpp>
#include <taco/detail/carried_result.hpp>
#include <taco/detail/helper_pool.hpp>
#include <taco/detail/request.hpp>
#include <taco/detail/task_request.hpp>

namespace taco::detail {

/// Merges the "unit" results of at_each with completion.
struct unit_combiner {
    unit operator()(unit, unit) const noexcept { return {}; }
};

/// A result (value != nullptr; the helper may move from it) or an error for
/// slot `index` of helper number `helper` in its core's pool (helper_pool.hpp).
template <class R>
using helper_entry = void (*)(std::uint32_t helper, std::uint32_t index, R* value, const error_info* error);

// The helper's number and the slot share 8 bytes: with the handler, a
// word-sized value fills exactly one 32-byte line (a pointer would spill
// the value into a second).
template <class R>
struct contribute_message {
    image_ptr<helper_entry<R>> entry;
    std::uint32_t helper;
    std::uint32_t index;
    R value;
    void operator()() { entry.get()(helper, index, &value, nullptr); }
};
template <class R>
struct contribute_error_message {
    image_ptr<helper_entry<R>> entry;
    std::uint32_t helper;
    std::uint32_t index;
    error_info error;
    void operator()() { entry.get()(helper, index, nullptr, &error); }
};

/// Hands a carried value to slot `index` of a helper (bulk_value's finish).
template <class R>
struct contribute_finish {
    image_ptr<helper_entry<R>> entry;
    std::uint32_t helper;
    std::uint32_t index;
    void operator()(R&& v) const { entry.get()(helper, index, &v, nullptr); }
};

/// Where a node's (merged) result goes: slot `index` of a helper on `core`.
/// A value too large for contribute_message (a vector, a histogram array)
/// is carried (carried_result.hpp); v may be a member's taco::view, sent
/// as its elements and rebuilt as the R (a vector) the helper takes.
template <class R>
struct helper_link {
    core_id core;
    std::uint32_t index;
    std::uint32_t helper; // its number in `core`'s pool
    image_ptr<helper_entry<R>> entry;

    template <class V>
    void deliver(V&& v) const { deliver_at(index, std::forward<V>(v)); }
    void fail(const error_info& e) const { fail_at(index, e); }
    template <class V>
    void deliver_at(std::uint32_t i, V&& v) const {
        if constexpr (travels_carried<R, contribute_message>()) {
            // A helper on this very core takes a large value at once (as the
            // node's own member's value does), rather than through pieces
            // sent to ourselves.
            if (core == this_core()) {
                R own = to_delivered<R>(std::forward<V>(v));
                return contribute_finish<R>{entry, helper, i}(std::move(own));
            }
            send_carried_value<R>(core, v, contribute_finish<R>{entry, helper, i},
                                  [&](const error_info& e) { fail_at(i, e); });
        } else {
            runtime().send<contribute_message<R>>(core, entry, helper, i, std::forward<V>(v));
        }
    }
    void fail_at(std::uint32_t i, const error_info& e) const {
        runtime().send<contribute_error_message<R>>(core, entry, helper, i, e);
    }
};

/// The user's continuation at the root; a void result is delivered as no value.
template <class Cont, bool Void>
struct final_sink {
    Cont cont;
    template <class V>
    void deliver(V&& v) const {
        if constexpr (Void) cont.deliver(); else cont.deliver(std::forward<V>(v));
    }
    void fail(const error_info& e) const { cont.fail(e); }
};

/// Temporary reduction helper at one tree node: slot 0 is the node's own
/// member, slot i its i-th child's subtree. Merges in slot order as soon as
/// a prefix is complete, so out-of-order arrivals wait in their slot. Large
/// values are not copied: the one that arrives in order merges straight
/// into the accumulator (moved into the combiner, which returns it), an
/// early one is moved into its slot.
template <class R, class Comb, class Sink>
struct reduce_helper {
    // optional: combiners and sinks (a continuation may hold a user's
    // function object) need not be default-constructible, helpers are pooled
    std::optional<Comb> comb;
    std::optional<Sink> sink;
    std::vector<std::optional<R>> slots; // capacity survives reuse from the pool
    std::vector<bool> failed;
    std::optional<R> acc;
    std::optional<error_info> error;
    std::uint32_t next = 0;
    std::uint32_t id = 0; // in helper_pool<reduce_helper>

    void init(std::uint32_t self, std::uint32_t expected, const Comb& c, const Sink& s) {
        id = self;
        comb.emplace(c);
        sink.emplace(s);
        slots.assign(expected, std::nullopt);
        failed.assign(expected, false);
        acc.reset();
        error.reset();
        next = 0;
    }
    static void entry(std::uint32_t self, std::uint32_t i, R* v, const error_info* e) {
        helper_pool<reduce_helper>::at(self)->take(i, v, e);
    }
    void take(std::uint32_t i, R* v, const error_info* e) {
        if (!v) {
            if (!error) error = *e;
            failed[i] = true;
        } else if (i == next) {
            merge(*v);
            ++next;
        } else {
            slots[i].emplace(std::move(*v));
        }
        drain();
    }
    helper_link<R> link(std::uint32_t index) { return {this_core(), index, id, image_ptr(&reduce_helper::entry)}; }

private:
    void merge(R& v) {
        if (error) return;
        // The user's combiner runs inside this core's message handler: an
        // exception must become the collective's error, not unwind through
        // the handler, which would leave the helper unreleased and the
        // caller waiting for ever.
        try {
            if (acc) *acc = R((*comb)(std::move(*acc), std::as_const(v)));
            else acc.emplace(std::move(v));
        } catch (...) {
            error = error_info::current(this_core());
        }
    }
    void drain() {
        while (next < slots.size() && (slots[next] || failed[next])) {
            if (slots[next]) {
                merge(*slots[next]);
                slots[next].reset();
            }
            ++next;
        }
        if (next < slots.size()) return;
        // Copy out before releasing: the sink's send may run nothing here,
        // but the helper goes back to the pool at once.
        const Sink s = *sink;
        std::optional<R> result = std::move(acc);
        std::optional<error_info> err = error;
        helper_pool<reduce_helper>::release(id);
        if (err) s.fail(*err); else s.deliver(std::move(*result));
    }
};

/// Gather into an array on the caller's core: out[rank] = value.
template <class R>
struct gather_array_helper {
    R* out;
    std::uint32_t remaining;
    future_state<void>* done;
    std::optional<error_info> error;
    std::uint32_t id; // in helper_pool<gather_array_helper>

    static void entry(std::uint32_t self, std::uint32_t rank, R* v, const error_info* e) {
        gather_array_helper* h = helper_pool<gather_array_helper>::at(self);
        if (v)
            h->out[rank] = std::move(*v);
        else if (!h->error)
            h->error = *e;
        h->arrived();
    }
    void arrived() {
        if (--remaining != 0) return;
        future_state<void>* d = done;
        std::optional<error_info> err = error;
        helper_pool<gather_array_helper>::release(id);
        if (err) d->set_error(*err); else d->set_value();
    }
};

/// Ranked delivery for gather through a continuation: put(bound..., rank, value).
template <class Cont>
struct ranked_sink {
    Cont cont;
    template <class V>
    void deliver_at(std::uint32_t rank, V&& v) const { cont.deliver(rank, std::forward<V>(v)); }
    void fail_at(std::uint32_t, const error_info& e) const { cont.fail(e); }
};

/// The collective operations of one tree node (a friend-free extension of group_node).
template <class T>
struct collective_ops {
    using node = group_node<T>;

    // Each step is a function applied to the node object on its core
    // (fn(node&, ...)): the message carries the node's address, not a
    // global_ptr, which keeps forwarding messages within one slot.
    // How (run_straight or run_as_task) runs the node's own part: the
    // forwarding to the children always happens at once, so a task option
    // never delays the rest of the tree.
    // A step that reaches a node destroy_group freed (debug checks) fails
    // its sink, so a future waiting for the collective gets the error.
    template <class Call, class How = run_straight>
    static void at_each(node& n, Call call, How how = {}) {
        if (auto e = deleted_target_error(&n)) [[unlikely]]
            return no_continuation{}.fail(*e);
        for (const auto& c : n.children) async(c.node, &collective_ops::at_each<Call, How>, call, how);
        how([call, member = n.member]() mutable {
            apply_captured<T, true>(call, member, [](unit) {}, [](const error_info& e) { no_continuation{}.fail(e); });
        });
    }

    /// Discard: results are not merged (at_each with completion), only counted.
    /// R: what the results are delivered as (a member's view: a vector).
    template <class Call, class Comb, class Sink, bool Discard = false, class How = run_straight>
    static void reduce(node& n, Call call, Comb comb, Sink sink, How how = {}) {
        using R = value_or_unit<delivered_t<std::conditional_t<Discard, void, typename Call::template result_type<T>>>>;
        if (auto e = deleted_target_error(&n)) [[unlikely]]
            return sink.fail(*e);
        if (n.children.empty()) {
            // A leaf has nothing to merge: its value goes straight up, without
            // a helper (half the nodes of a tree, and the whole far side of a
            // two-core reduction's critical path).
            how([call, sink, member = n.member]() mutable {
                apply_captured<T, Discard>(
                    call, member, [&](auto&& v) { sink.deliver(std::move(v)); },
                    [&](const error_info& e) { sink.fail(e); });
            });
            return;
        }
        using helper = reduce_helper<R, Comb, Sink>;
        // Not a structured binding: the lambdas below capture h (clang 14
        // refuses to capture a binding).
        const typename helper_pool<helper>::lease lease = helper_pool<helper>::acquire();
        helper* const h = lease.helper;
        h->init(lease.id, std::uint32_t(n.children.size() + 1), comb, sink);
        for (const auto& c : n.children)
            async(c.node, &collective_ops::reduce<Call, Comb, helper_link<R>, Discard, How>, call, comb,
                  h->link(c.slot), how);
        how([call, h, member = n.member]() mutable {
            apply_captured<T, Discard>(
                call, member,
                [h](auto&& v) {
                    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(v)>, R>) {
                        h->take(0, &v, nullptr);
                    } else {
                        R own = to_delivered<R>(v);
                        h->take(0, &own, nullptr);
                    }
                },
                [h](const error_info& e) { h->take(0, nullptr, &e); });
        });
    }

    template <class Call, class Sink>
    static void gather(node& n, Call call, Sink sink) {
        if (auto e = deleted_target_error(&n)) [[unlikely]]
            return sink.fail_at(0, *e);
        for (const auto& c : n.children) async(c.node, &collective_ops::gather<Call, Sink>, call, sink);
        apply_captured<T>(
            call, n.member, [&](auto&& v) { sink.deliver_at(n.rank, std::move(v)); },
            [&](const error_info& e) { sink.fail_at(n.rank, e); });
    }
};

} // namespace taco::detail
