// The TACO runtime bare metal (CTest "scc.bare-metal: the TACO runtime,
// preemptive invocations included, on N cores under QEMU"): a
// self-checking program, no Catch2, no operating system, on every core of
// the PC stand-in through pc::platform (the MPB channels, interrupts to wake
// sleeping cores). Core 0 runs one taco::run per scheduling policy and
// checks, in them: invocations (fire and forget in order, futures, sync
// calls, functions on cores), exceptions in remote methods and inside the
// C++ library, continuations and error continuations, groups and their
// collectives (at_each, reduce, gather) on a binomial tree, activities,
// protothreads and stackful coroutines (which block inside nested calls),
// tasks in priority and deadline order, a stream of invocations from every
// core to every core, and preemptive invocations (urgent ones that
// interrupt a computation that never polls, through the interrupt path).
// It prints each failure on the serial console and its verdict; the run
// ends as failed if any check did.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <vector>

#include <taco/preemption.hpp>
#include <taco/taco.hpp>
#include <tacomesh/scc/pc/console.hpp>
#include <tacomesh/scc/pc/platform.hpp>

namespace {

namespace pc = tacomesh::scc::pc;

std::uint32_t checks = 0, failures = 0; // core 0's

void check(bool ok, const char* what) {
    ++checks;
    if (ok) return;
    ++failures;
    pc::print("taco bare-metal: FAILED ", what, "\n");
}
void expect(long got, long want, const char* what) {
    ++checks;
    if (got == want) return;
    ++failures;
    pc::print("taco bare-metal: FAILED ", what, ": got ", int(got), ", want ", int(want), "\n");
}

struct account {
    long balance = 0;
    void deposit(long n) { balance += n; }
    long withdraw(long n) {
        if (n > balance) throw std::runtime_error("insufficient funds");
        return balance -= n;
    }
    long get() const { return balance; }
};

struct collector {
    long sum = 0;
    int count = 0;
    void take(long v) { sum += v, ++count; }
    int taken() const { return count; }
    long total() const { return sum; }
};

struct failure_log {
    int failures = 0, tag = -1;
    taco::core_id origin = taco::no_core;
    void failed(int t, const taco::error_info& e) { ++failures, tag = t, origin = e.origin; }
    int seen() const { return failures; }
    int last_tag() const { return tag; }
};

long square(long x) { return x * x; }

// A member's share of 1..n: [lo, hi).
struct share {
    long lo, hi, power = 1;
    share(long l, long h) : lo(l), hi(h) {}
    void set_power(long p) { power = p; }
    long sum() const {
        long s = 0;
        for (long i = lo; i < hi; ++i) s += power == 1 ? i : i * i;
        return s;
    }
    taco::core_id where() const { return taco::this_core(); }
};

// The streams below: each core's count of what it received from each
// source, and whether each source's numbers came in order. Indexed by the
// receiving core, which alone writes its entry (this_core()).
struct stream_counts {
    long next[tacomesh::scc::max_cores];
    bool in_order = true;
};
stream_counts streams_at[tacomesh::scc::max_cores];
void take_stream(taco::core_id source, long seq) {
    auto& c = streams_at[taco::this_core()];
    c.in_order = c.in_order && c.next[source] == seq;
    ++c.next[source];
}
void send_stream(long per_stream) {
    for (long i = 0; i < per_stream; ++i)
        for (taco::core_id d = 0; d < taco::core_count(); ++d) taco::async(d, &take_stream, taco::this_core(), i);
}
long received_streams() {
    long sum = 0;
    for (taco::core_id s = 0; s < taco::core_count(); ++s) sum += streams_at[taco::this_core()].next[s];
    return streams_at[taco::this_core()].in_order ? sum : -1;
}

long nested_fetch(taco::global_ptr<account> a, int depth) {
    return depth == 0 ? taco::sync(a, &account::get) : nested_fetch(a, depth - 1) + 1;
}

struct summing_protothread final : taco::protothread<summing_protothread> {
    taco::global_ptr<account> a, b;
    taco::future<long> f;
    long sum = 0;
    int i = 0;
    bool step() {
        TACO_PT_BEGIN();
        for (i = 0; i < 4; ++i) {
            taco::async(i % 2 ? b : a, taco::m2f(&account::get), f);
            TACO_PT_AWAIT(f);
            sum += f.get();
        }
        TACO_PT_END();
    }
};

void invocations() {
    const taco::core_id n = taco::core_count(), last = n - 1;
    auto acc = taco::new_on<account>(last).get();
    expect(acc.core(), last, "new_on's core");
    taco::async(acc, &account::deposit, 5L);
    taco::async(acc, &account::deposit, 7L); // after the first: one source keeps its order
    taco::future<long> f = taco::call(acc, &account::get);
    expect(f.get(), 12, "call after two asyncs");
    expect(taco::sync(last, &square, 9L), 81, "a function on a core");

    // An exception in a remote method comes back as remote_error; the object survives.
    bool caught = false;
    try {
        taco::sync(acc, &account::withdraw, 100L);
    } catch (const taco::remote_error& e) {
        caught = e.origin() == last && e.text() == "insufficient funds";
    }
    check(caught, "remote_error from a throwing method, with its origin and text");
    // Thrown inside the C++ library (position-independent code, its own
    // unwind tables), caught here.
    bool from_library = false;
    try {
        std::vector<int> v(3);
        static_cast<void>(v.at(7));
    } catch (const std::out_of_range&) {
        from_library = true;
    }
    check(from_library, "an exception thrown inside the C++ library, caught by the program");
    expect(taco::sync(acc, &account::get), 12, "the object after the exception");

    // Continuations: a value to a collector, a failure to an error continuation.
    auto col = taco::new_on<collector>(n > 2 ? 2 : 0).get();
    auto log = taco::new_on<failure_log>(0).get();
    taco::async(acc, taco::m2f(&account::withdraw, 2L), taco::then(col, &collector::take).on_error(log, &failure_log::failed, 7));
    taco::async(acc, taco::m2f(&account::withdraw, 500L), taco::then(col, &collector::take).on_error(log, &failure_log::failed, 8));
    taco::wait_until([&] { return taco::sync(col, &collector::taken) == 1 && taco::sync(log, &failure_log::seen) == 1; });
    expect(taco::sync(col, &collector::total), 10, "value continuation");
    expect(taco::sync(log, &failure_log::last_tag), 8, "error continuation's bound tag");
    taco::delete_on(log);
    taco::delete_on(col);
    taco::delete_on(acc);
}

void collectives() {
    const taco::core_id n = taco::core_count();
    const long total = 1000;
    std::vector<taco::global_ptr<share>> members;
    for (taco::core_id c = 0; c < n; ++c) members.push_back(taco::new_on<share>(c, 1 + total * c / n, 1 + total * (c + 1) / n).get());
    auto g = taco::make_group(members, taco::topology::binomial());
    expect(taco::reduce(g, taco::m2f(&share::sum), std::plus<long>{}).get(), total * (total + 1) / 2, "reduce of sums");
    taco::future<void> done;
    taco::at_each(g, taco::m2f(&share::set_power, 2L), done);
    done.get();
    const long squares = total * (total + 1) * (2 * total + 1) / 6;
    expect(taco::reduce(g, taco::m2f(&share::sum), std::plus<long>{}).get(), squares, "reduce after at_each");
    std::vector<taco::core_id> where(g.size);
    taco::gather(g, taco::m2f(&share::where), std::span<taco::core_id>(where)).get();
    bool ranks = true;
    for (std::size_t r = 0; r < where.size(); ++r) ranks = ranks && where[r] == members[r].core();
    check(ranks, "gather: each rank's answer from its member's core");
    taco::destroy_group(g);
    for (auto m : members) taco::delete_on(m);
}

void tasks() {
    const taco::core_id n = taco::core_count();
    auto a = taco::new_on<account>(n - 1).get(), b = taco::new_on<account>(n > 2 ? 1 : 0).get();
    taco::sync(a, &account::deposit, 40L);
    taco::sync(b, &account::deposit, 2L);

    // Stackful coroutines block on futures, inside nested calls, while the core serves.
    auto c1 = taco::spawn_coroutine([a] { return taco::sync(a, &account::get) + 2; });
    auto c2 = taco::spawn_coroutine([a] { return nested_fetch(a, 10); });
    expect(c1.get(), 42, "coroutine's blocking sync");
    expect(c2.get(), 50, "coroutine blocking in nested calls");

    // A protothread waits on futures assigned by other cores.
    summing_protothread p;
    p.a = a, p.b = b;
    taco::start(p);
    taco::wait_until([&] { return p.finished(); });
    expect(p.sum, 84, "protothread's awaited sum");

    // An activity runs to completion and gives its value.
    auto act = taco::spawn_activity([] { return 6L * 7L; });
    expect(act.get(), 42, "activity's value");
    taco::delete_on(a);
    taco::delete_on(b);
}

/// Tasks spawned before core 0 waits run in the policy's order when it does.
void ordered(taco::policy pol) {
    std::vector<int> ran;
    std::vector<std::unique_ptr<taco::future<void>>> done;
    const auto base = taco::task_clock::now() + std::chrono::hours(1);
    std::uint32_t x = 12345;
    for (int i = 0; i < 100; ++i) {
        x = x * 1103515245u + 12345u;
        const int key = int((x >> 16) % 10);
        const taco::schedule s = pol == taco::policy::priority ? taco::schedule{key}
                                                               : taco::schedule{.deadline = base + std::chrono::milliseconds(key)};
        done.emplace_back(new taco::future<void>(taco::spawn_activity([&ran, key] { ran.push_back(key); }, s)));
    }
    expect(long(ran.size()), 0, "tasks run before core 0 waited");
    for (auto& f : done) f->get();
    expect(long(ran.size()), 100, "tasks run");
    if (pol == taco::policy::priority) check(std::is_sorted(ran.rbegin(), ran.rend()), "priority order");
    else check(std::is_sorted(ran.begin(), ran.end()), "deadline order");
}

/// Every core sends a stream of invocations to every core (itself
/// included); each stream arrives whole and in order (one source keeps its
/// order), through every pair's channel at once.
void streams() {
    const taco::core_id n = taco::core_count();
    const long per_stream = std::max<long>(20, 1200 / long(n)); // 600 a pair at 2 cores, 25 at 48
    std::vector<std::unique_ptr<taco::future<void>>> sent;
    for (taco::core_id s = 0; s < n; ++s) sent.emplace_back(new taco::future<void>(taco::call(s, &send_stream, per_stream)));
    for (auto& f : sent) f->get();
    bool whole = true;
    taco::wait_until([&] {
        whole = true;
        for (taco::core_id d = 0; d < n; ++d) {
            const long got = taco::sync(d, &received_streams);
            if (got < 0) { // a stream out of order: no use waiting
                whole = false;
                return true;
            }
            whole = whole && got == per_stream * long(n);
        }
        return whole;
    });
    check(whole, "every stream whole and in order");
}

using pc::detail::rdtsc;

// A computation that never polls (taco::preemptible): only an urgent
// invocation that interrupts it can stop it before its time limit.
struct computation {
    std::atomic<bool> stop{false}, halted_inside{false};
    long compute(std::uint64_t limit_cycles) {
        return taco::preemptible([&] {
            const std::uint64_t start = rdtsc();
            std::uint64_t x = 88172645463325252ull;
            for (std::uint64_t i = 0;; ++i) {
                if (stop.load(std::memory_order_relaxed)) return 1L;
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                if ((i & 0xFFFF) == 0 && rdtsc() - start > limit_cycles) return x == 0 ? 2L : 0L;
            }
        });
    }
    void halt() {
        halted_inside.store(taco::preempting(), std::memory_order_relaxed);
        stop.store(true, std::memory_order_relaxed);
    }
    /// Cycles since `sent` if this interrupted the computation; -1 if it ran
    /// at an ordinary scheduling point (before the computation started).
    long long poke(std::uint64_t sent) { return taco::preempting() ? (long long)(rdtsc() - sent) : -1; }
    bool halted_by_interruption() const { return halted_inside.load(std::memory_order_relaxed); }
};

/// Preemptive invocations through the interrupt path: urgent pokes while
/// the last core computes, their latency from send to the handler, then an
/// urgent halt that ends the computation from inside it.
void preemption() {
    const taco::core_id n = taco::core_count();
    if (n < 2) return;
    const std::uint64_t hz = pc::detail::tsc_hz();
    const auto gp = taco::new_on<computation>(n - 1).get();
    taco::future<long> done;
    taco::async(gp, taco::m2f(&computation::compute, 20 * hz), done);
    std::vector<long long> latencies;
    for (int pokes = 0; latencies.size() < 21 && pokes < 5000 && !done.ready(); ++pokes)
        if (const long long l = taco::call(gp, taco::m2f(&computation::poke, rdtsc()), taco::urgent).get(); l >= 0)
            latencies.push_back(l);
    taco::async(gp, taco::m2f(&computation::halt), taco::urgent);
    expect(done.get(), 1, "a computation that never polls, halted by an urgent invocation");
    check(taco::sync(gp, &computation::halted_by_interruption), "the halt ran inside the computation (preempted)");
    expect(long(latencies.size()), 21, "urgent invocations that interrupted the computation");
    if (!latencies.empty()) {
        std::sort(latencies.begin(), latencies.end());
        const auto us = [&](long long cycles) { return std::uint64_t(cycles) * 1'000'000ull / hz; };
        pc::print("taco bare-metal: preempt: send to urgent handler, median ", us(latencies[latencies.size() / 2]),
                  " us, min ", us(latencies.front()), " us, max ", us(latencies.back()), " us (", std::uint32_t(latencies.size()),
                  " interruptions; QEMU's cores are host threads)\n");
    }
    taco::delete_on(gp);
}

} // namespace

extern "C" void tacomesh_scc_main(tacomesh::scc::core_index core) {
    if (core != 0) return pc::platform::serve();
    const pc::config cfg;
    taco::run(cfg, [] {
        invocations();
        collectives();
        tasks();
        streams();
        preemption();
    });
    for (auto pol : {taco::policy::priority, taco::policy::edf})
        taco::run(cfg, [pol] { ordered(pol); }, taco::run_options{.scheduling = pol});
    pc::platform::shut_down();
    pc::print("taco bare-metal: ", pc::hardware().core_count(), " cores, ", checks, " checks, ", failures, " failed\n");
    if (failures) pc::power_off(false);
}
