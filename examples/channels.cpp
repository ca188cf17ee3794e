// Channels and sinks (docs/reference.md, "Channels and sinks"): the writer
// names a channel, the sink on its core chooses what a value triggers.
//  1. A request/reply server: its sink is a preallocated activity on core 1,
//     and each request carries the channel its answer goes to.
//  2. A fan-in: sensors on cores 1..3 answer invocations into a merger on
//     core 0 (their channel is the invocations' completion), which sums
//     each round and writes the sum to a mailbox that main reads.
#include <tacomesh/posix.hpp>

#include <cstdio>
#include <functional>

namespace {

struct request {
    long x;
    taco::channel<long> reply;
};

struct squarer {
    void operator()(request r) const { taco::emit(r.reply, r.x * r.x); }
};

struct server {
    taco::activity_sink<request, squarer> requests{squarer{}};
    taco::channel<request> input() { return taco::channel_to(requests); }
};

struct sensor {
    long sample(long round) const { return 10 * round + long(taco::this_core()); }
};

} // namespace

int main() {
    taco::run(tacomesh::posix::config{.cores = 4}, [] {
        const auto srv = taco::new_on<server>(1).get();
        const taco::channel<request> in = taco::sync(srv, &server::input);
        long sum = 0;
        for (long x = 1; x <= 4; ++x) {
            taco::future<long> answer;
            taco::emit(in, request{x, taco::channel_to(answer)});
            sum += answer.get();
        }
        std::printf("squares 1..4 through the server: %ld\n", sum);

        taco::mailbox<long> totals;
        taco::merger per_round(3, taco::channel_to(totals), std::plus<long>{});
        taco::global_ptr<sensor> sensors[3];
        for (taco::core_id c = 1; c <= 3; ++c) sensors[c - 1] = taco::new_on<sensor>(c).get();
        for (long round = 0; round < 3; ++round) {
            for (const auto& s : sensors) taco::async(s, taco::m2f(&sensor::sample, round), taco::channel_to(per_round));
            std::printf("round %ld: %ld\n", round, totals.receive());
        }
        for (const auto& s : sensors) taco::delete_on(s);
        taco::delete_on(srv);
    });
}
