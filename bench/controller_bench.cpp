// The controllers on a user's own type: the program docs/tutorial.md
// ("Benchmarking the controllers on your own type") walks through. Copy it,
// put your type and its traffic in place of sensor_log and sensor_traffic,
// and build it against the installed package (find_package(tacomesh),
// link tacomesh::posix): the tool is the one header
// <tacomesh/posix/controller_bench.hpp>.
//
//   controller_bench [--writers N] [--readers N] [--bytes N] [--rounds N] [--pairs N]
//                    [--baseline NAME] [--threads-only | --processes-only] [--json]
//
// --json prints the figures as one JSON object on stdout, the table on
// stderr. BENCH_SMOKE=1 (the bench-smoke test) shortens the default batches.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include <tacomesh/posix/controller_bench.hpp>

namespace {

/// The user's type: a log of readings, a private-member class (so it
/// declares its members: mesh/shared_members.hpp).
class sensor_log : public mesh::sharing_aware<sensor_log> {
public:
    explicit sensor_log(std::size_t n) : readings_(n, 0) {}

    /// Record `round` in n readings from `at` on.
    void record(std::size_t at, std::size_t n, std::uint64_t round) {
        for (std::size_t i = 0; i < n; ++i) readings_.set(at + i, round);
        last_round_ = round;
        last_at_ = at;
    }
    /// The last round, if the readings it wrote are here too (else 0: a view
    /// that has the counter but not the readings is stale as well).
    std::uint64_t last_round() const { return readings_[last_at_] == last_round_ ? last_round_ : 0; }
    std::size_t size() const { return readings_.size(); }

private:
    mesh::vector<std::uint64_t> readings_;
    std::uint64_t last_round_ = 0;
    std::size_t last_at_ = 0;

public:
    using shared_members = mesh::members<&sensor_log::readings_, &sensor_log::last_round_, &sensor_log::last_at_>;
};

/// The traffic: each release changes `bytes` of readings, at a place that
/// moves from round to round; a reader checks it sees the last round.
struct sensor_traffic {
    using object = sensor_log;
    static constexpr std::size_t readings = std::size_t(1) << 17; // 1 MiB

    template <class C>
    static mesh::sharing_ptr<sensor_log> make() {
        return mesh::make_shared_object<sensor_log, C>(readings);
    }
    static void write(sensor_log& s, std::size_t bytes, std::uint64_t round) {
        const std::size_t n = std::clamp<std::size_t>(bytes / sizeof(std::uint64_t), 1, s.size());
        s.record(std::size_t(round * n) % (s.size() - n + 1), n, round);
    }
    static std::uint64_t read(const sensor_log& s) { return s.last_round(); }
};

[[noreturn]] void usage(const char* why) {
    std::cerr << "controller_bench: " << why
              << "\nusage: controller_bench [--writers N] [--readers N] [--bytes N] [--rounds N] [--pairs N] "
                 "[--baseline NAME] [--threads-only | --processes-only] [--json]\n";
    std::exit(2);
}

std::size_t count(const char* flag, const char* value) {
    char* end = nullptr;
    const unsigned long long n = value ? std::strtoull(value, &end, 10) : 0;
    if (!value || *end || !*value || n > 1u << 30) usage((std::string(flag) + " takes a count").c_str());
    return std::size_t(n);
}

} // namespace

int main(int argc, char** argv) {
    namespace cb = tacomesh::posix::controller_bench;
    const char* smoke_env = std::getenv("BENCH_SMOKE");
    const bool smoke = smoke_env && *smoke_env && std::string(smoke_env) != "0";
    cb::workload w{.rounds = smoke ? 20u : 400u, .pairs = smoke ? 3u : 9u};
    bool json = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
        if (a == "--writers") w.writers = unsigned(count("--writers", v)), ++i;
        else if (a == "--readers") w.readers = unsigned(count("--readers", v)), ++i;
        else if (a == "--bytes") w.bytes_changed = count("--bytes", v), ++i;
        else if (a == "--rounds") w.rounds = count("--rounds", v), ++i;
        else if (a == "--pairs") w.pairs = count("--pairs", v), ++i;
        else if (a == "--baseline" && v) w.baseline = v, ++i;
        else if (a == "--threads-only") w.processes = false;
        else if (a == "--processes-only") w.threads = false;
        else if (a == "--json") json = true;
        else usage(("unknown argument " + a).c_str());
    }
    try {
        const cb::result r = cb::run<sensor_traffic>(w);
        cb::print(json ? std::cerr : std::cout, r);
        if (json) cb::print_json(std::cout, r);
    } catch (const taco::usage_error& e) {
        usage(e.what());
    }
}
