#pragma once
// Access proxies (MESH paper, section III.B): the only way to a shared
// object. Making a proxy is the acquire event of the object's controller,
// destroying it the release. A reader proxy hands out only a const object,
// so non-const methods do not compile through it; a writer proxy hands out
// everything.
//
// A writer proxy tracks whether it was used for modification: operator->
// and operator* mark the object modified, peek() does not. A writer that
// only looked is released without write-back or broadcast ("write-back and
// invalidation only when the object was really modified").
//
// A release may fail (the program stops while a broadcast is in flight, a
// core dies): release() reports that by throwing. The destructor releases
// too but never throws, so a writer alive while an exception, a core failure
// or a stop unwinds the stack cannot terminate the program: during
// unwinding the release's own error is dropped (the first error is the one
// in flight); so are a stop (nobody waits any more) and a core failure
// (the platform recorded it before throwing it, and taco::run throws it at
// its end, also when the program caught it meanwhile and went on with its
// writer, or made a new one); any other error goes to taco's
// uncaught-error handler.
//
// Every proxy counts itself in its core's block of the object (proxy_counts,
// detail/control_block.hpp), so that destroy_shared_object can refuse to
// destroy an object under a proxy of the calling core.
//
// Composite objects specialise their proxies (the paper's graph proxies):
// if T declares `reader_proxy` / `writer_proxy` types constructible from a
// sharing_ptr<T>, mesh::read / mesh::write return those. They typically
// hold a mesh::reader<T> plus readers of the parts, so that every part is
// acquired once per proxy rather than once per method call.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include <mesh/detail/control_block.hpp>
#include <mesh/detail/shared_word.hpp>
#include <mesh/memory.hpp>
#include <mesh/sharing_ptr.hpp>
#include <taco/config.hpp>
#include <taco/core_failure.hpp>
#include <taco/remote_error.hpp>
#include <taco/stopped_error.hpp>
#include <taco/uncaught_error.hpp>
#include <taco/usage_error.hpp>

namespace mesh {

namespace detail {

/// The events of a destroyed object: the control block keeps this table
/// after destroy_shared_object, so that a proxy or a second destroy through
/// a copy of the sharing_ptr is refused instead of running on freed memory
/// (~T twice). Always on: the proxies read the table anyway. Releases pass:
/// they belong to proxies made before the destroy on other cores (the
/// destroying core's own are refused by the destroy), whose per-core block
/// is freed, so they do not count themselves out either.
[[noreturn]] inline void destroyed_object(const char* what) {
    throw taco::usage_error(std::string("mesh: ") + what +
                            " of a shared object after destroy_shared_object (through a copy of its sharing_ptr?)");
}
inline constexpr controller_ops destroyed_ops{
    "destroyed",
    0,
    +[](control_block&, void*, std::uint64_t) { destroyed_object("adopt"); },
    +[](control_block&, void*) { destroyed_object("read"); },
    +[](control_block&, void*) {},
    +[](control_block&, void*) { destroyed_object("write"); },
    +[](control_block&, void*, bool) {},
};


[[noreturn]] inline void second_writer(const control_block& cb, std::uint32_t holder) {
    std::fprintf(stderr,
                 "mesh: core %u asked for a writer proxy on the shared object at %p while core %u holds one. "
                 "MESH allows one writer at a time (the application orders writers, e.g. through the "
                 "core that owns the object); readers may be many.\n",
                 unsigned(taco::this_core()), cb.object, unsigned(holder - 1));
    std::abort();
}

} // namespace detail

/// Read access to a shared object (const only), for the proxy's lifetime.
template <class T>
class reader {
public:
    explicit reader(const sharing_ptr<T>& p) : object_(p.unsafe_object()), block_(p.block()) {
        detail::require_run("mesh::read"); // before the control block, unmapped once the run has returned
        if (!block_)
            throw taco::usage_error("mesh::read: a null sharing_ptr (never assigned, or its object destroyed "
                                    "through it: destroy_shared_object sets it to null)");
        slot_ = private_instance(block_->state);
        block_->ops().acquire_read(*block_, slot_);
        ++detail::counts_in(slot_).readers; // acquired: from here on the destructor releases
    }
    reader(reader&& o) noexcept : object_(o.object_), block_(std::exchange(o.block_, nullptr)), slot_(o.slot_) {}
    reader(const reader&) = delete;
    reader& operator=(const reader&) = delete;
    ~reader() {
        if (!block_) return;
        const detail::controller_ops& ops = block_->ops();
        if (&ops != &detail::destroyed_ops) --detail::counts_in(slot_).readers;
        ops.release_read(*block_, slot_);
    }

    const T* operator->() const noexcept { return object_; }
    const T& operator*() const noexcept { return *object_; }
    const T& get() const noexcept { return *object_; }

private:
    const T* object_;
    detail::control_block* block_;
    void* slot_; // this core's block of the object (proxy counts, controller state): looked up once per proxy
};

/// Read and write access to a shared object, for the proxy's lifetime.
template <class T>
class writer {
public:
    explicit writer(const sharing_ptr<T>& p) : object_(p.unsafe_object()), block_(p.block()) {
        detail::require_run("mesh::write"); // before the control block, unmapped once the run has returned
        if (!block_)
            throw taco::usage_error("mesh::write: a null sharing_ptr (never assigned, or its object destroyed "
                                    "through it: destroy_shared_object sets it to null)");
#if TACO_DEBUG_CHECKS
        const std::uint32_t me = taco::this_core() + 1;
        if (std::uint32_t holder = detail::shared_word<std::uint32_t>::exchange(block_->writer, me); holder != 0)
            detail::second_writer(*block_, holder);
#endif
        slot_ = private_instance(block_->state);
        try {
            block_->ops().acquire_write(*block_, slot_);
        } catch (...) {
            drop_claim(*block_);
            throw;
        }
        ++detail::counts_in(slot_).writers; // acquired: from here on the destructor releases
    }
    writer(writer&& o) noexcept
        : object_(o.object_), block_(std::exchange(o.block_, nullptr)), slot_(o.slot_), modified_(o.modified_),
          unwinding_(o.unwinding_) {}
    writer(const writer&) = delete;
    writer& operator=(const writer&) = delete;
    ~writer() {
        if (!block_) return;
        try {
            release();
        } catch (const taco::stopped_error&) {
            // the program is stopping: nobody waits for this release any more
        } catch (const taco::core_failure&) {
            // A core is gone (the broadcast could not reach it). The platform
            // recorded the failure before throwing it here, and taco::run
            // throws it when main returns, whether main caught an earlier
            // report of it or not; the handler would abort instead.
        } catch (...) {
            if (std::uncaught_exceptions() > unwinding_) return; // the error in flight is the one to report
            taco::detail::report_uncaught(taco::error_info::current(taco::this_core()));
        }
    }

    /// Release now (write back and notify, as the controller decides), and
    /// report what went wrong by throwing; afterwards the proxy is empty.
    void release() {
        if (!block_) return;
        detail::control_block& cb = *std::exchange(block_, nullptr);
        drop_claim(cb);
        const detail::controller_ops& ops = cb.ops();
        if (&ops != &detail::destroyed_ops) --detail::counts_in(slot_).writers; // released, even if it fails
        ops.release_write(cb, slot_, modified_);
    }

    T* operator->() noexcept {
        modified_ = true;
        return object_;
    }
    T& operator*() noexcept {
        modified_ = true;
        return *object_;
    }
    /// Read without marking the object modified.
    const T& peek() const noexcept { return *object_; }
    /// For changes made through pointers the proxy did not hand out.
    void mark_modified() noexcept { modified_ = true; }
    bool modified() const noexcept { return modified_; }

private:
    static void drop_claim([[maybe_unused]] detail::control_block& cb) noexcept {
#if TACO_DEBUG_CHECKS
        detail::shared_word<std::uint32_t>::store(cb.writer, 0);
#endif
    }

    T* object_;
    detail::control_block* block_;
    void* slot_; // as the reader's
    bool modified_ = false;
    int unwinding_ = std::uncaught_exceptions(); // at construction: more at destruction = unwinding
};

namespace detail {
template <class T>
struct reader_of {
    using type = reader<T>;
};
template <class T>
    requires requires { typename T::reader_proxy; }
struct reader_of<T> {
    using type = typename T::reader_proxy;
};
template <class T>
struct writer_of {
    using type = writer<T>;
};
template <class T>
    requires requires { typename T::writer_proxy; }
struct writer_of<T> {
    using type = typename T::writer_proxy;
};
} // namespace detail

/// Acquire read access (the proxy type T chose, by default mesh::reader<T>).
template <class T>
typename detail::reader_of<T>::type read(const sharing_ptr<T>& p) {
    detail::require_run("mesh::read"); // also for T's own proxy, which may look at the object first
    return typename detail::reader_of<T>::type(p);
}
/// Acquire write access (the proxy type T chose, by default mesh::writer<T>).
template <class T>
typename detail::writer_of<T>::type write(const sharing_ptr<T>& p) {
    detail::require_run("mesh::write"); // also for T's own proxy, which may look at the object first
    return typename detail::writer_of<T>::type(p);
}

/// Acquire read access to several shared objects at once, in argument
/// order, for as long as the returned proxies live (one acquire each, however
/// many reads follow):
///
///   auto [graph, weights] = mesh::read_all(g, w);
template <class... T>
std::tuple<typename detail::reader_of<T>::type...> read_all(const sharing_ptr<T>&... p) {
    return {typename detail::reader_of<T>::type(p)...}; // braces: evaluated left to right
}

} // namespace mesh
