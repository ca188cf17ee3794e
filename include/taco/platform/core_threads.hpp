#pragma once
// Starting a process's core threads, for every platform's launcher. All of
// them wait at a gate until every one exists: if the system refuses one
// (thread limit, memory for its stack), the ones already started have run
// nothing yet and leave, and the launcher throws a message naming the core
// and the setting to change, instead of std::thread's std::system_error
// unwinding past joinable threads into std::terminate.
#include <atomic>
#include <cstddef>
#include <exception>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace taco::detail {

/// Whether every process of the run started its threads: here, one process.
struct started_alone {
    bool operator()(bool started_here, const std::string&) const noexcept { return started_here; }
};

/// Run body(k) for k in [0, n): k = 0 on the calling thread, once threads for
/// all the others have started. Returns when every body has; then rethrows
/// the first exception in k order (core 0's first). If a thread cannot be
/// started, no body runs and std::runtime_error says
/// "<who>: cannot start the thread of <name(k)> (<reason>); <hint>".
/// With several processes (MPI ranks), `all_started(started_here, report)`
/// agrees before the gate opens, so that no process runs cores whose
/// partners on another process will never run; it returns false or throws
/// (the failed process's report, say) to give up.
template <class Body, class Name, class Agree = started_alone>
void run_core_threads(std::size_t n, Body&& body, const char* who, Name&& name, const char* hint,
                      Agree&& all_started = {}) {
    enum : int { wait, go, give_up };
    std::atomic<int> gate{wait};
    std::vector<std::exception_ptr> errors(n);
    auto core_main = [&](std::size_t k) {
        gate.wait(wait, std::memory_order_acquire);
        if (gate.load(std::memory_order_acquire) == give_up) return;
        try {
            body(k);
        } catch (...) {
            errors[k] = std::current_exception();
        }
    };
    std::vector<std::thread> threads;
    const auto leave = [&] {
        gate.store(give_up, std::memory_order_release);
        gate.notify_all();
        for (auto& t : threads) t.join();
    };
    std::string refused;
    try {
        threads.reserve(n > 0 ? n - 1 : 0);
        for (std::size_t k = 1; k < n; ++k) threads.emplace_back(core_main, k);
    } catch (const std::exception& e) { // std::system_error from a thread; bad_alloc from reserve
        refused = std::string(who) + ": cannot start the thread of " + name(threads.size() + 1) + " (" + e.what() +
                  "); " + hint;
    }
    try {
        if (!all_started(refused.empty(), refused) && refused.empty())
            refused = std::string(who) + ": another process of the run could not start its core threads";
    } catch (...) {
        leave();
        throw;
    }
    if (!refused.empty()) {
        leave();
        throw std::runtime_error(refused);
    }
    gate.store(go, std::memory_order_release);
    gate.notify_all();
    if (n > 0) core_main(0);
    for (auto& t : threads) t.join();
    for (auto& e : errors)
        if (e) std::rethrow_exception(e);
}

/// A helper thread of a launcher (a liveness or failure watch), or a clear
/// error naming the setting that asked for it.
template <class F>
std::thread start_helper_thread(F&& fn, const char* who, const char* what_for) {
    try {
        return std::thread(std::forward<F>(fn));
    } catch (const std::system_error& e) {
        throw std::runtime_error(std::string(who) + ": cannot start the thread of " + what_for + " (" + e.what() +
                                 ")");
    }
}

} // namespace taco::detail
