#pragma once
// Protothreads (CCI paper, section IV.A; Dunkels et al.): tasks with a
// fixed-size state and no stack. A protothread suspends by storing where to
// continue and returning; TACO_PT_AWAIT(f) attaches it to the future f,
// which schedules it again when assigned. Nothing is allocated: the
// protothread is the user's object, and its locals are its members.
//
//   struct fetch : taco::protothread<fetch> {
//       taco::global_ptr<store> s; taco::future<long> f; long value = 0;
//       bool step() {
//           TACO_PT_BEGIN();
//           taco::async(s, taco::m2f(&store::get), f);
//           TACO_PT_AWAIT(f);
//           value = f.get();
//           TACO_PT_END();
//       }
//   };
//   fetch p; p.s = ...; taco::start(p);  ...  taco::wait_until([&] { return p.finished(); });
//   p.rethrow_if_failed();   // what step() threw, if it threw (else the uncaught-error handler gets it)
//
// The base names the protothread (CRTP), so run() calls step() directly and
// the compiler inlines it: a resume is one indirect call (the scheduler's,
// through task), as cheap as a hand-written switch-based protothread, not two.
//
// As with all protothreads, locals of step() do not survive a TACO_PT_AWAIT,
// and a protothread cannot wait inside nested calls (use a coroutine there).
#include <concepts>
#include <cstdint>
#include <exception>
#include <utility>

#include <taco/core_id.hpp>
#include <taco/remote_error.hpp>
#include <taco/runtime/core.hpp>
#include <taco/this_core.hpp>
#include <taco/uncaught_error.hpp>
#include <taco/stopped_error.hpp>
#include <taco/task.hpp>

namespace taco {

/// What every protothread has, whatever its type.
class protothread_base : public task {
public:
    /// True once step() has reached TACO_PT_END (or thrown).
    bool finished() const noexcept { return finished_; }
    /// Back to the start (taco::start does this for a finished protothread).
    void reset() noexcept {
        report_if_unseen();
        pt_label = 0;
        finished_ = false;
        error_ = nullptr;
    }
    /// Whether step() threw (the error then counts as seen).
    bool failed() const noexcept {
        seen_ = true;
        return error_ != nullptr;
    }
    /// Rethrow what step() threw, if anything.
    void rethrow_if_failed() const {
        seen_ = true;
        if (error_) std::rethrow_exception(error_);
    }

    /// Where step() continues (a source line; 0: from the start). Used by the macros.
    std::uint32_t pt_label = 0;

protected:
    explicit protothread_base(schedule s) : task(task_kind::protothread, s) {}
    ~protothread_base() { report_if_unseen(); }

    void failed_with(std::exception_ptr e) noexcept {
        error_ = std::move(e);
        seen_ = false;
        core_ = this_core();
    }

    bool finished_ = false;
    std::exception_ptr error_;

private:
    // An error nobody asked about (failed() or rethrow_if_failed()) before
    // the protothread is started again or destroyed goes to the uncaught-
    // error handler, as an activity's would: waiting for finished() alone
    // must not make a blocking_error vanish.
    void report_if_unseen() noexcept {
        if (!error_ || seen_) return;
        seen_ = true;
        try {
            std::rethrow_exception(error_);
        } catch (...) {
            detail::report_uncaught(error_info::current(core_));
        }
    }
    mutable bool seen_ = false;
    core_id core_ = no_core;
};

/// A protothread whose activation is Derived::step(): run to the next
/// TACO_PT_AWAIT (return false) or to the end (return true), written between
/// TACO_PT_BEGIN and TACO_PT_END.
template <class Derived>
class protothread : public protothread_base {
public:
    explicit protothread(schedule s = {}) : protothread_base(s) {}

    void run() final {
        static_assert(requires(Derived& d) { { d.step() } -> std::same_as<bool>; },
                      "taco::protothread<Derived>: Derived needs a public `bool step()` written between "
                      "TACO_PT_BEGIN() and TACO_PT_END()");
        try {
            if (static_cast<Derived*>(this)->step()) finished_ = true;
        } catch (const stopped_error&) {
            throw;
        } catch (...) {
            failed_with(std::current_exception()); // e.g. blocking_error: future::get() instead of TACO_PT_AWAIT
            finished_ = true;
        }
    }

protected:
    ~protothread() = default;
};

/// Make a protothread (or any task) ready on this core. A task that is
/// ready already stays ready once: it runs once.
inline void start(task& t) {
    detail::runtime().make_ready(t);
}
/// Start a protothread, again from the beginning if it had finished (and
/// is not ready again already: then this start is the same as that one).
inline void start(protothread_base& p) {
    if (p.finished() && !p.queued()) p.reset();
    detail::runtime().make_ready(p);
}

} // namespace taco

#define TACO_PT_BEGIN()                                                                                  \
    switch (this->pt_label) {                                                                            \
    case 0:

/// Suspend until the future is ready (it schedules this protothread again).
#define TACO_PT_AWAIT(fut)                                                                               \
    do {                                                                                                 \
        this->pt_label = __LINE__;                                                                       \
        [[fallthrough]];                                                                                 \
    case __LINE__:                                                                                       \
        if (!(fut).ready()) {                                                                            \
            (fut).resume_when_ready(*this);                                                              \
            return false;                                                                                \
        }                                                                                                \
    } while (0)

/// Give way: continue at the next activation (the protothread is scheduled
/// again at once, behind the tasks already ready).
#define TACO_PT_YIELD()                                                                                  \
    do {                                                                                                 \
        this->pt_label = __LINE__;                                                                       \
        ::taco::start(*this);                                                                            \
        return false;                                                                                    \
        [[fallthrough]];                                                                                 \
    case __LINE__:;                                                                                      \
    } while (0)

#define TACO_PT_END()                                                                                    \
    }                                                                                                    \
    this->pt_label = 0;                                                                                  \
    return true
