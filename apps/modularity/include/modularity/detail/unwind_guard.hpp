#pragma once
// Runs a teardown when a scope is left by an exception (a stale-data report,
// a remote error), so a failed search still frees its workers, group and
// shared objects: the run goes on, and nothing leaks into the next one. On
// the normal path the caller runs the teardown itself, after release(), so
// that its errors propagate.
#include <utility>

namespace modularity::detail {

template <class F>
class unwind_guard {
public:
    explicit unwind_guard(F f) : f_(std::move(f)) {}
    unwind_guard(const unwind_guard&) = delete;
    unwind_guard& operator=(const unwind_guard&) = delete;
    ~unwind_guard() {
        if (armed_) try {
                f_();
            } catch (...) {
                // the exception in flight is the one to report
            }
    }
    void release() noexcept { armed_ = false; }

private:
    F f_;
    bool armed_ = true;
};

} // namespace modularity::detail
