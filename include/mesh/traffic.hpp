#pragma once
// The traffic on a user's shared type, as the controller benchmarks take
// it (tacomesh/posix/controller_bench.hpp times it on host cores,
// tacomesh/scc/emulated/controller_bench.hpp counts its modelled cycles on
// the emulated SCC): how to make the object under a consistency controller,
// what a writer changes, and what a reader computes, the last round
// written, which the benchmarks check on every read.
//
//   struct graph_traffic {
//       using object = graph;
//       template <class C>
//       static mesh::sharing_ptr<graph> make() { return mesh::make_shared_object<graph, C>(400u); }
//       static void write(graph& g, std::size_t bytes, std::uint64_t round);  // change ~bytes, remember round
//       static std::uint64_t read(const graph& g);                           // the round it sees
//   };
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <mesh/controllers/broadcast.hpp>
#include <mesh/controllers/noop.hpp>
#include <mesh/controllers/overlapped_broadcast.hpp>
#include <mesh/controllers/timestamp.hpp>
#include <mesh/event_counts.hpp>
#include <mesh/proxy.hpp>
#include <mesh/shared_object.hpp>
#include <taco/taco.hpp>
#include <taco/usage_error.hpp>

namespace mesh {

template <class W>
concept traffic = requires { typename W::object; } &&
                  requires(typename W::object& o, const typename W::object& c, std::size_t b, std::uint64_t r) {
                      { W::template make<controllers::timestamp>() } -> std::same_as<sharing_ptr<typename W::object>>;
                      W::write(o, b, r);
                      { W::read(c) } -> std::convertible_to<std::uint64_t>;
                  };

namespace detail::traffic {

/// One static_assert that says what W must give, for the benchmarks' run().
template <class W>
constexpr void check() {
    static_assert(mesh::traffic<W>,
                  "controller_bench::run<W>: W describes the traffic on your type: using object = T; "
                  "template <class C> static mesh::sharing_ptr<T> make() (mesh::make_shared_object<T, C>(...)); "
                  "static void write(T&, std::size_t bytes, std::uint64_t round) (change about `bytes` bytes and "
                  "remember `round`); static std::uint64_t read(const T&) (the round the object shows)");
}

template <class... C>
struct controller_list {};
using controllers = controller_list<mesh::controllers::noop, mesh::controllers::broadcast,
                                    mesh::controllers::overlapped_broadcast, mesh::controllers::timestamp>;
inline constexpr const char* controller_names[] = {"noop", "broadcast", "overlapped_broadcast", "timestamp"};
inline constexpr std::size_t controller_count = 4;

inline std::size_t controller_index(const std::string& name) {
    for (std::size_t i = 0; i < controller_count; ++i)
        if (name == controller_names[i]) return i;
    throw taco::usage_error("controller_bench: the baseline \"" + name +
                            "\" is not a controller; name one of noop, broadcast, overlapped_broadcast, timestamp");
}

template <class W, class... C>
auto make_all(controller_list<C...>) {
    return std::vector<sharing_ptr<typename W::object>>{W::template make<C>()...};
}

// Run on the writing and reading cores (invoked there by core 0).
template <class W>
void write_on(sharing_ptr<typename W::object> p, std::size_t bytes, std::uint64_t round) {
    auto w = write(p);
    W::write(*w, bytes, round);
}
template <class W>
std::uint64_t read_on(sharing_ptr<typename W::object> p) {
    return std::uint64_t(W::read(*read(p)));
}

/// Bytes this core's consistency actions copied (written back, refreshed).
inline std::uint64_t copied_here() {
    const event_counts& e = events();
    return e.written_back_bytes + e.invalidated_bytes;
}
inline std::uint64_t copied_everywhere() {
    std::uint64_t sum = copied_here();
    for (taco::core_id c = 1; c < taco::core_count(); ++c) sum += taco::sync(c, &copied_here);
    return sum;
}

/// One round on core 0: `writers` cores write in turn (core 0 first), then
/// `readers` cores (the next ones) read at once; returns the stale reads.
template <class W>
std::uint64_t run_round(sharing_ptr<typename W::object> p, unsigned writers, unsigned readers, std::size_t bytes,
                    std::uint64_t r, std::vector<taco::future<std::uint64_t>>& seen) {
    write_on<W>(p, bytes, r);
    for (taco::core_id c = 1; c < writers; ++c) taco::sync(c, &write_on<W>, p, bytes, r);
    seen.resize(readers);
    for (unsigned k = 0; k < readers; ++k) taco::async(taco::core_id(writers + k), taco::m2f(&read_on<W>, p), seen[k]);
    std::uint64_t stale = 0;
    for (unsigned k = 0; k < readers; ++k) stale += seen[k].get() != r;
    return stale;
}

} // namespace detail::traffic
} // namespace mesh
