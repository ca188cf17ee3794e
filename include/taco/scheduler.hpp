#pragma once
// Scheduling policies behind one interface (CCI paper, section IV.B):
// first-come-first-served, fixed priority, earliest deadline first. Each is
// an intrusive container over task hooks: push and pop never allocate.
#include <concepts>
#include <cstddef>

#include <taco/task.hpp>

namespace taco {

template <class S>
concept scheduler = requires(S& s, const S& cs, task& t) {
    { s.push(t) } -> std::same_as<void>;  // t must not be queued already
    { s.pop() } -> std::same_as<task*>;   // next task to run, or nullptr
    { cs.empty() } -> std::same_as<bool>;
    { cs.size() } -> std::same_as<std::size_t>;
};

} // namespace taco
