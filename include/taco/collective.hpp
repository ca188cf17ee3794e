#pragma once
// One-sided collective invocations over object groups (CCI paper, sections
// II.B-C and III.B): members never call in. The invocation travels down the
// group's tree, each node forwarding to its children before applying it to
// its own member, so the tree parallelises the propagation.
//
//   taco::at_each(g, &T::m, args...);                          // on every member (= taco::async(g, ...))
//   taco::at_each(g, taco::m2f(&T::m, args...), done);         // + completion (future<void>& or then(...))
//   taco::sync(g, &T::m, args...);                             // ... and wait until all have run it
//   taco::reduce(g, taco::m2f(&T::m, args...), combiner, fut); // merged up the tree into future<R>
//   auto f = taco::reduce(g, taco::m2f(&T::m), combiner);      // ... or the future returned
//   taco::gather(g, taco::m2f(&T::m, args...), taco::then(c, &C::put)); // put(rank, R) per member
//   taco::gather(g, taco::m2f(&T::m, args...), std::span<R> out, done); // out[rank] = R, then done
//
// g is a taco::group or a taco::dynamic_group (dynamic_group.hpp), whose
// collectives each see one version of its membership; the array form of
// gather takes a taco::group only (a dynamic group's size is not known
// where the gather starts).
//
// Reductions merge with temporary helpers at the tree nodes (Fig. 1): a
// helper collects its member's and its children's results and sends the
// merge to its parent's helper. Order guarantee: the tree is numbered in
// pre-order (topology.hpp), and each helper merges its own value and then
// its children's subtrees in rank order, so the result is
// v0 (+) v1 (+) ... (+) v(n-1) in rank order, bracketed by the tree: exact
// for any associative combiner, commutative or not. If a member throws, the
// continuation receives one error (the first its root helper saw), after
// all members have finished.
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include <taco/async.hpp>
#include <taco/combiner.hpp>
#include <taco/image_ptr.hpp>
#include <taco/continuation.hpp>
#include <taco/dynamic_group.hpp>
#include <taco/group.hpp>
#include <taco/object_group.hpp>
#include <taco/remote_error.hpp>
#include <taco/detail/collective_ops.hpp>
#include <taco/detail/helper_pool.hpp>

namespace taco {

namespace detail {

/// Start a collective at the group's root: inline when the root is on this
/// core. A message to ourselves would wait in our own channel until we next
/// poll, and the caller typically has other work first (MESH's Broadcast
/// copies its write-back while the broadcast should already be travelling).
template <class T, class Step, class... A>
void start_at_root(global_ptr<group_node<T>> root, Step step, A&&... args) {
    if (root.core() == this_core())
        step(*root.get(), std::forward<A>(args)...);
    else
        async(root, step, std::forward<A>(args)...);
}

/// What a collective on a dynamic group does instead when the group has no
/// members (all were removed) or its home was destroyed: per kind of
/// collective, on the arguments it would have started with.
struct at_each_outcome {
    template <class... A>
    static void empty(const A&...) noexcept {}
    template <class... A>
    static void failed(const error_info& e, const A&...) { no_continuation{}.fail(e); }
};
struct completion_outcome { // at_each with a completion: every member (none) has run it
    template <class Call, class Comb, class Sink, class How>
    static void empty(const Call&, const Comb&, const Sink& sink, const How&) { sink.deliver(unit{}); }
    template <class Call, class Comb, class Sink, class How>
    static void failed(const error_info& e, const Call&, const Comb&, const Sink& sink, const How&) { sink.fail(e); }
};
struct reduce_outcome {
    template <class Call, class Comb, class Sink, class How>
    static void empty(const Call&, const Comb&, const Sink& sink, const How&) {
        sink.fail(membership_error("taco::reduce: the dynamic group has no members, so there is nothing to reduce"));
    }
    template <class Call, class Comb, class Sink, class How>
    static void failed(const error_info& e, const Call&, const Comb&, const Sink& sink, const How&) { sink.fail(e); }
};
struct gather_outcome { // no member: no put
    template <class Call, class Sink>
    static void empty(const Call&, const Sink&) noexcept {}
    template <class Call, class Sink>
    static void failed(const error_info& e, const Call&, const Sink& sink) { sink.fail_at(0, e); }
};

/// On a dynamic group's home: start the collective on the current tree.
/// Started from here, it is ordered before the destruction of this tree that
/// a later change sends from here too (dynamic_group.hpp).
template <class T, auto Step, class Outcome, class... A>
void relay_to_root(group_home<T>& home, A... args) {
    if (auto e = deleted_target_error(&home)) [[unlikely]]
        return Outcome::failed(*e, args...);
    if (!home.current()) return Outcome::empty(args...);
    start_at_root(home.current().root, Step, std::move(args)...);
}

/// Start a collective: Step on the root of a group's tree, or through a
/// dynamic group's home (inline when it is this core, as start_at_root).
template <auto Step, class Outcome, class T, class... A>
void start_collective(group<T> g, A&&... args) {
    start_at_root(g.root, Step, std::forward<A>(args)...);
}
template <auto Step, class Outcome, class T, class... A>
void start_collective(dynamic_group<T> g, A&&... args) {
    if (g.home.core() == this_core())
        relay_to_root<T, Step, Outcome>(*g.home.get(), std::forward<A>(args)...);
    else
        async(g.home, &relay_to_root<T, Step, Outcome, std::decay_t<A>...>, std::forward<A>(args)...);
}

template <class T, class Call>
constexpr void check_group_call() {
    static_assert(!carries_v<Call>,
                  "taco collective: strings, vectors and views are carried to single targets (a global_ptr "
                  "or a core id), not down a group's tree: put the data in a MESH shared object and pass "
                  "its sharing_ptr, which every member can read");
    static_assert(Call::template applies_to<T>,
                  "taco collective: the bound method cannot be called on the group's member type with these arguments");
}

template <class Mods>
constexpr void check_collective_options() {
    static_assert(!Mods::is_urgent,
                  "taco collective: taco::urgent applies to single targets (a global_ptr or a core id): a "
                  "collective's messages travel down a tree, core by core");
}

/// How members run their part, from the options: straight, or as a task.
template <class Mods>
auto how_members_run(const option_set& o) {
    if constexpr (Mods::as_task) return run_as_task{o.spec};
    else return run_straight{};
}

/// A group as the target of async / call / sync: the call runs on every
/// member (the paper's at_each); a completion is told once all have run it
/// (a member's exception reaches it instead).
template <class G>
struct group_target {
    using T = group_member_t<G>;
    static constexpr bool single = false;
    using object = T;
    template <class Call>
    using result = void;

    template <class Call, class... M>
    static void invoke(G g, const Call& call, M&&... m) {
        using Mods = modifiers<M...>;
        static_assert(Mods::valid());
        check_collective_options<Mods>();
        check_group_call<T, Call>();
        if (!g) throw std::invalid_argument("taco: invocation on a null group");
        option_set o;
        (apply_modifier(o, m), ...);
        auto how = how_members_run<Mods>(o);
        using How = decltype(how);
        if constexpr (Mods::completions == 0) {
            static_assert(!Mods::has_timeout, "taco: taco::timeout needs a future to report the timeout to");
            start_collective<&collective_ops<T>::template at_each<Call, How>, at_each_outcome>(g, call, how);
        } else {
            const auto cont = make_continuation<void, Mods>(o, std::forward<M>(m)...);
            const disarm_on_throw<std::remove_const_t<decltype(cont)>> refused(cont);
            using sink = final_sink<std::remove_const_t<decltype(cont)>, true>;
            // Completion = a reduction of "unit" values: results are discarded.
            start_collective<&collective_ops<T>::template reduce<Call, unit_combiner, sink, true, How>,
                             completion_outcome>(g, call, unit_combiner{}, sink{cont}, how);
        }
    }
};
template <class T>
struct target_traits<group<T>> : group_target<group<T>> {};
template <class T>
struct target_traits<dynamic_group<T>> : group_target<dynamic_group<T>> {};

} // namespace detail

/// Apply the call on every member: the paper's name for taco::async on a
/// group (fire-and-forget: exceptions go to the uncaught-error handler of the
/// member's core; or m2f-bound, followed by a completion).
template <object_group G, class F, class... Rest>
void at_each(G g, F&& fn, Rest&&... rest) {
    async(g, std::forward<F>(fn), std::forward<Rest>(rest)...);
}

/// Reduce the members' results with `comb` up the tree, merged in rank order.
/// With a completion (a future<R>& or taco::then(...)), the root hands the
/// merge to it; without one, the future of the merge is returned.
template <object_group G, class F, class... A, class Comb, class... M>
[[nodiscard]] auto reduce(G g, const bound_call<F, A...>& call, Comb comb, M&&... m) {
    using T = group_member_t<G>;
    using Call = bound_call<F, A...>;
    using Mods = detail::modifiers<M...>;
    static_assert(Mods::valid());
    detail::check_collective_options<Mods>();
    detail::check_group_call<T, Call>();
    using Result = detail::result_of<T, Call>;
    static_assert(!std::is_void_v<Result>, "taco::reduce: the method returns void; use at_each with a completion");
    detail::check_invocation_result<Result>();
    using R = detail::delivered_t<Result>; // what is merged (a view's elements: a vector)
    detail::check_combiner<Comb, R>();
    if (!g) throw std::invalid_argument("taco::reduce: null group");
    if constexpr (Mods::completions == 0) {
        return future<R>(detail::start_tag{}, [&](future<R>& f) { reduce(g, call, comb, f, std::forward<M>(m)...); });
    } else if constexpr (combiner<Comb, R>) { // only our static_assert when it is not: no cascade of errors
        detail::option_set o;
        (detail::apply_modifier(o, m), ...);
        auto how = detail::how_members_run<Mods>(o);
        const auto c = detail::make_continuation<R, Mods>(o, std::forward<M>(m)...);
        const detail::disarm_on_throw<std::remove_const_t<decltype(c)>> refused(c);
        using sink = detail::final_sink<std::remove_const_t<decltype(c)>, false>;
        detail::start_collective<&detail::collective_ops<T>::template reduce<Call, Comb, sink, false, decltype(how)>,
                                 detail::reduce_outcome>(g, call, comb, sink{c}, how);
    }
}

namespace detail {
template <class G, class Call, class Then>
void gather_to(G g, const Call& call, const Then& cont) {
    using T = group_member_t<G>;
    check_group_call<T, Call>();
    check_invocation_result<result_of<T, Call>>();
    if (!g) throw std::invalid_argument("taco::gather: null group");
    using sink = ranked_sink<Then>;
    start_collective<&collective_ops<T>::template gather<Call, sink>, gather_outcome>(g, call, sink{cont});
}
} // namespace detail

/// Gather: the continuation (made by taco::then(obj, &U::put, bound...))
/// receives put(bound..., rank, value) for each member, on obj's core; its
/// error continuation (.on_error), if it has one, the first member failure.
template <object_group G, class F, class... A, class U, class C>
void gather(G g, const bound_call<F, A...>& call, detail::then_continuation<U, C> cont) {
    detail::gather_to(g, call, cont);
}
template <object_group G, class F, class... A, class U, class C, class E, class EC>
void gather(G g, const bound_call<F, A...>& call, detail::then_or_else<U, C, E, EC> cont) {
    detail::gather_to(g, call, cont);
}

/// Gather into `out` (on the calling core, out.size() == group size):
/// out[rank] = member rank's result; `done` is assigned when all are in
/// (or carries the first member exception).
template <class T, class F, class... A, class R>
void gather(group<T> g, const bound_call<F, A...>& call, std::span<R> out, future<void>& done) {
    using Call = bound_call<F, A...>;
    detail::check_group_call<T, Call>();
    static_assert(std::is_same_v<std::remove_const_t<R>, detail::delivered_t<detail::result_of<T, Call>>>,
                  "taco::gather: the array's element type must be the method's result type (a "
                  "taco::view<T> result arrives as a std::vector<T>)");
    detail::check_invocation_result<detail::result_of<T, Call>>();
    if (!g) throw std::invalid_argument("taco::gather: null group");
    if (out.size() != g.size)
        throw std::invalid_argument("taco::gather: the result array has " + std::to_string(out.size()) +
                                    " elements, the group " + std::to_string(g.size));
    detail::future_state<void>* d = done.arm(); // first: it throws if `done` still waits, and nothing is taken yet
    const detail::future_continuation<void> armed{this_core(), d};
    const detail::disarm_on_throw<detail::future_continuation<void>> refused(armed);
    using helper = detail::gather_array_helper<R>;
    const auto [h, id] = detail::helper_pool<helper>::acquire();
    *h = helper{out.data(), g.size, d, std::nullopt, id};
    const detail::helper_link<std::remove_const_t<R>> link{this_core(), 0, id, image_ptr(&helper::entry)};
    detail::start_at_root(g.root, &detail::collective_ops<T>::template gather<Call, detail::helper_link<R>>, call, link);
}
/// As above; returns the future that is assigned when all results are in.
template <class T, class F, class... A, class R>
[[nodiscard]] future<void> gather(group<T> g, const bound_call<F, A...>& call, std::span<R> out) {
    return future<void>(detail::start_tag{}, [&](future<void>& f) { gather(g, call, out, f); });
}

/// The array form on a dynamic group: refused, with what to write instead.
template <class T, class F, class... A, class R, class... Done>
void gather(dynamic_group<T>, const bound_call<F, A...>&, std::span<R>, Done&&...) {
    static_assert(sizeof(T*) == 0, // false, but only once instantiated
                  "taco::gather: a dynamic group's size can change before the gather reaches its home, so no "
                  "array can be sized for it: gather through a continuation, taco::gather(g, call, "
                  "taco::then(obj, &U::put)), which receives put(rank, value) once per member");
}

} // namespace taco
