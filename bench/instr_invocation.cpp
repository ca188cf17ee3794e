// Instructions per invocation, counted with callgrind by count_instructions.sh:
//   instr_invocation async K       K fire-and-forget invocations to an object
//                                  on the same core (send + dispatch)
//   instr_invocation round_trip K  K invocations whose result comes back to a
//                                  future on the same core (request + reply
//                                  messages, future set and get)
// One core only, so callgrind sees a single thread and no waiting. The script
// runs K1 and 2*K1 and divides the difference by K1: start-up, ring creation
// and shutdown cancel out.
#include <tacomesh/posix.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

struct target {
    std::uint64_t n = 0;
    void inc() { ++n; }
    std::uint64_t next() { return ++n; }
};

// Bursts of half the default ring: every send takes the fast path (a free
// slot), none is queued locally, as in a program that does not flood.
constexpr std::uint64_t burst = 32;

[[noreturn]] void usage() {
    std::fprintf(stderr, "usage: instr_invocation async|round_trip K\n");
    std::exit(2);
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 3) usage();
    const std::string mode = argv[1];
    const std::uint64_t k = std::strtoull(argv[2], nullptr, 10);
    if ((mode != "async" && mode != "round_trip") || k == 0) usage();

    std::uint64_t result = 0;
    taco::run(tacomesh::posix::config{.cores = 1}, [&] {
        target obj;
        const auto gp = taco::to_global(&obj);
        if (mode == "async") {
            for (std::uint64_t done = 0; done < k;) {
                const std::uint64_t end = std::min(k, done + burst);
                for (; done < end; ++done) taco::async(gp, &target::inc);
                taco::wait_until([&] { return obj.n == end; });
            }
            result = obj.n;
        } else {
            for (std::uint64_t i = 0; i < k; ++i) {
                taco::future<std::uint64_t> f;
                taco::async(gp, taco::m2f(&target::next), f);
                result = f.get();
            }
        }
    });
    std::printf("{\"mode\": \"%s\", \"k\": %llu, \"result\": %llu}\n", mode.c_str(),
                static_cast<unsigned long long>(k), static_cast<unsigned long long>(result));
    return result == k ? 0 : 1;
}
