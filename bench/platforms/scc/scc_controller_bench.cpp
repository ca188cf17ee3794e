// The controllers on a user's own type, on the emulated SCC: modelled
// cycles of a round for each of noop, broadcast, overlapped_broadcast and
// timestamp (<tacomesh/scc/emulated/controller_bench.hpp>). The traffic is
// bench/controller_bench.cpp's (sensor_traffic.hpp): copy both and put your
// type in its place. Link tacomesh::scc_counted, so that computation is
// counted and loads and stores priced: the figures then repeat on any host.
//
//   scc_controller_bench [--writers N] [--readers N] [--bytes N] [--rounds N]
//                        [--baseline NAME] [--halt] [--json]
//
// --json prints the figures as one JSON object on stdout, the table on
// stderr. BENCH_SMOKE=1 (the bench-smoke test) counts fewer rounds.
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>

#include <tacomesh/scc/emulated/controller_bench.hpp>

#include "../../sensor_traffic.hpp"

namespace {

[[noreturn]] void usage(const std::string& why) {
    std::cerr << "scc_controller_bench: " << why
              << "\nusage: scc_controller_bench [--writers N] [--readers N] [--bytes N] [--rounds N] "
                 "[--baseline NAME] [--halt] [--json]\n";
    std::exit(2);
}

std::size_t count(const std::string& flag, const char* value) {
    char* end = nullptr;
    const unsigned long long n = value ? std::strtoull(value, &end, 10) : 0;
    if (!value || *end || !*value || *value == '-' || n > 1u << 20) usage(flag + " takes a count");
    return std::size_t(n);
}

} // namespace

int main(int argc, char** argv) {
    namespace cb = tacomesh::scc::emulated::controller_bench;
    const char* smoke_env = std::getenv("BENCH_SMOKE");
    const bool smoke = smoke_env && *smoke_env && std::string(smoke_env) != "0";
    cb::workload w{.rounds = smoke ? 4u : 20u};
    bool json = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
        if (a == "--writers") w.writers = unsigned(count(a, v)), ++i;
        else if (a == "--readers") w.readers = unsigned(count(a, v)), ++i;
        else if (a == "--bytes") w.bytes_changed = count(a, v), ++i;
        else if (a == "--rounds") w.rounds = count(a, v), ++i;
        else if (a == "--baseline" && v) w.baseline = v, ++i;
        else if (a == "--halt") w.idle = tacomesh::scc::emulated::idle_policy::halt;
        else if (a == "--json") json = true;
        else usage("unknown argument " + a);
    }
    try {
        const cb::result r = cb::run<sensor_traffic>(w);
        cb::print(json ? std::cerr : std::cout, r);
        if (json) cb::print_json(std::cout, r);
    } catch (const taco::usage_error& e) {
        usage(e.what());
    }
}
