// The controllers on a user's own type: the program docs/tutorial.md
// ("Benchmarking the controllers on your own type") walks through. Copy it,
// put your type and its traffic in place of sensor_log and sensor_traffic
// (sensor_traffic.hpp),
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

#include "sensor_traffic.hpp"

namespace {

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
