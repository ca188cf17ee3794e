// tacomesh demo: start N cores and show cross-core invocations, futures,
// continuations, remote exceptions, sync calls and a round-trip figure; then
// N core processes with private memory and a MESH shared object under each
// consistency controller.
//   tacomesh_demo [--cores N] [--idle poll|sleep|adaptive] [--round-trips K]
#include <tacomesh/posix.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// An ordinary object; it lives on one core and is reached through global_ptr.
class counter {
public:
    void add(long v) { value_ += v; }
    long value() const { return value_; }
    long checked_div(long d) const {
        if (d == 0) throw std::domain_error("division by zero requested");
        return value_ / d;
    }
    void report(long v) { std::printf("  core %u got the continuation's value %ld\n", taco::this_core(), v); }
    // Calls back into the caller while the caller waits: works because a
    // waiting core keeps serving invocations.
    long ask_back(taco::global_ptr<counter> other) { return taco::sync(other, &counter::value) + value_; }

private:
    long value_ = 0;
};

struct options {
    taco::core_id cores = 4;
    std::optional<tacomesh::posix::idle_policy> idle; // unset: the platform chooses by the machine's load
    int round_trips = 20000;
};

[[noreturn]] void usage(const char* why) {
    std::fprintf(stderr, "tacomesh_demo: %s\nusage: tacomesh_demo [--cores N>=2] [--idle poll|sleep|adaptive] [--round-trips K]\n", why);
    std::exit(2);
}

options parse(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage(("missing value after " + a).c_str());
            return argv[++i];
        };
        try {
            if (a == "--cores") o.cores = taco::core_id(std::stoul(value()));
            else if (a == "--round-trips") o.round_trips = std::stoi(value());
            else if (a == "--idle") {
                std::string v = value();
                if (v == "poll") o.idle = tacomesh::posix::idle_policy::poll;
                else if (v == "sleep") o.idle = tacomesh::posix::idle_policy::sleep;
                else if (v == "adaptive") o.idle = tacomesh::posix::idle_policy::adaptive;
                else usage(("unknown idle policy '" + v + "'").c_str());
            } else usage(("unknown argument '" + a + "'").c_str());
        } catch (const std::logic_error&) {
            usage(("not a number after " + a).c_str());
        }
    }
    if (o.cores < 2) usage("need at least 2 cores");
    if (o.round_trips < 1) usage("need at least 1 round trip");
    return o;
}

} // namespace

// A MESH shared object: lives in (emulated) cached shared memory.
struct shared_cell {
    long v = 0;
    void set(long x) { v = x; }
    long get() const { return v; }
};
long read_cell(mesh::sharing_ptr<shared_cell> p) { return mesh::read(p)->get(); }

template <class Controller>
void show_controller(taco::core_id reader) {
    auto p = mesh::make_shared_object<shared_cell, Controller>(1L);
    const long before = taco::sync(reader, &read_cell, p); // the reader's view now holds the object
    { mesh::write(p)->set(7); }                              // core 0 writes; the release is the event
    const long after = taco::sync(reader, &read_cell, p);
    std::printf("   %-21s core %u read %ld, then %ld after core 0 wrote 7%s\n", Controller::name, reader, before, after,
                after == 7 ? "" : "  <- stale: nothing refreshed its view");
    mesh::destroy_shared_object(p);
}

int main(int argc, char** argv) {
    const options opt = parse(argc, argv);
    tacomesh::posix::run_report report;
    tacomesh::posix::config cfg{.cores = opt.cores, .idle = opt.idle, .report = &report};

    taco::run(cfg, [&] {
        const taco::core_id n = taco::core_count();
        std::printf("tacomesh demo: %u cores, idle policy %s\n", n,
                    opt.idle ? tacomesh::posix::name(*opt.idle) : "chosen by the machine's load (see below)");

        // 1. Create one counter on every core (constructed there; we get its
        //    global pointer).
        std::vector<taco::global_ptr<counter>> counters;
        for (taco::core_id c = 0; c < n; ++c)
            counters.push_back(taco::new_on<counter>(c).get());

        // 2. Fire-and-forget invocations, then futures for the results.
        for (taco::core_id c = 0; c < n; ++c)
            for (int k = 1; k <= 10; ++k) taco::async(counters[c], &counter::add, long(k * (c + 1)));
        std::vector<taco::future<long>> values(n);
        for (taco::core_id c = 0; c < n; ++c) taco::async(counters[c], taco::m2f(&counter::value), values[c]);
        std::printf("1. counters after 10 async adds each:");
        for (auto& f : values) std::printf(" %ld", f.get());
        std::printf("\n");

        // 3. A continuation that is itself an invocation on another core.
        std::printf("2. continuation: value of core 1's counter, delivered to core %u's counter.report\n", n - 1);
        taco::async(counters[1], taco::m2f(&counter::value), taco::then(counters[n - 1], &counter::report));
        taco::sync(counters[n - 1], &counter::value); // ordered after the report on that core

        // 4. An exception thrown remotely rethrows from future::get().
        try {
            taco::sync(counters[1], &counter::checked_div, 0L);
        } catch (const taco::remote_error& e) {
            std::printf("3. remote exception caught on core %u: %s\n", taco::this_core(), e.what());
        }

        // 5. Nested sync calls: core 0 -> core 1 -> back to core 0.
        std::printf("4. nested sync (core 1 calls back into waiting core 0): %ld\n",
                    taco::sync(counters[1], &counter::ask_back, counters[0]));

        // 6. Round trip: async + continuation into a future.
        std::vector<double> ns(opt.round_trips);
        for (auto& t : ns) {
            auto t0 = std::chrono::steady_clock::now();
            taco::future<long> f;
            taco::async(counters[1], taco::m2f(&counter::value), f);
            f.get();
            t = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
        }
        std::sort(ns.begin(), ns.end());
        std::printf("5. round trip core 0 -> core 1 -> core 0: median %.0f ns, p10 %.0f ns, p90 %.0f ns (%d trips)\n",
                    ns[ns.size() / 2], ns[ns.size() / 10], ns[ns.size() * 9 / 10], opt.round_trips);

        for (auto gp : counters) taco::delete_on(gp);
    });
    std::printf("channels created: %zu, shared channel memory: %zu bytes%s\n", report.rings, report.channel_bytes,
                report.oversubscribed ? " (oversubscribed: more cores than CPUs)" : "");
    std::printf("idle policy used: %s, cores %s\n", tacomesh::posix::name(report.idle),
                report.pinned ? "pinned" : "not pinned");

    // 7. The same cores as processes: memory is really private, so a shared
    //    object needs its consistency controller to be seen fresh.
    cfg.mode = tacomesh::posix::execution_mode::processes;
    taco::run(cfg, [&] {
        std::printf("6. MESH shared object, %u core processes (private memory, emulated caches):\n", taco::core_count());
        const taco::core_id reader = taco::core_count() - 1;
        show_controller<mesh::controllers::noop>(reader);
        show_controller<mesh::controllers::broadcast>(reader);
        show_controller<mesh::controllers::overlapped_broadcast>(reader);
        show_controller<mesh::controllers::timestamp>(reader);
    });
    return 0;
}
