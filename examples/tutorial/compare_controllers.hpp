#pragma once
// Tutorial steps 4 and 5 (docs/tutorial.md): the word count under two
// consistency controllers, timed in pairs in one run. Platform-neutral: step 4
// runs it on POSIX, step 5 under mpirun.
#include "word_count.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <vector>

// One round: core 0 adds a word (a writer proxy, released at the end of the
// statement), then core 1 reads the total through its own view.
inline double ns_per_round(word_count_ptr t, int rounds) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < rounds; ++i) {
        mesh::write(t)->add("tick");
        if (taco::sync(1, &total_here, t) == 0) throw std::logic_error("core 1 read a stale total");
    }
    const std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - start;
    return took.count() / rounds;
}

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

inline void compare_controllers(const char* where, int rounds, int pairs) {
    auto ts = mesh::make_shared_object<word_count, mesh::controllers::timestamp>();
    auto bc = mesh::make_shared_object<word_count, mesh::controllers::broadcast>();
    ns_per_round(ts, rounds); // warm up: first touches, the broadcast tree
    ns_per_round(bc, rounds);

    // The machine's speed drifts (other processes, CPU frequency, a host
    // moving virtual CPUs). Timing the two in alternating batches and taking
    // the ratio within each pair cancels what both batches saw; the order
    // flips every pair so that a drift favours neither.
    std::vector<double> ts_ns, bc_ns, ratios;
    for (int p = 0; p < pairs; ++p) {
        double a, b;
        if (p % 2 == 0) {
            a = ns_per_round(ts, rounds);
            b = ns_per_round(bc, rounds);
        } else {
            b = ns_per_round(bc, rounds);
            a = ns_per_round(ts, rounds);
        }
        ts_ns.push_back(a);
        bc_ns.push_back(b);
        ratios.push_back(b / a);
    }

    // What each release does, from core 0's event counts.
    auto broadcasts = [](word_count_ptr t) {
        const auto before = mesh::events().broadcasts;
        mesh::write(t)->add("tick");
        return mesh::events().broadcasts - before;
    };
    const auto ts_broadcasts = broadcasts(ts), bc_broadcasts = broadcasts(bc);

    std::sort(ratios.begin(), ratios.end());
    std::printf("%s, %u cores, %d pairs of %d rounds\n", where, taco::core_count(), pairs, rounds);
    std::printf("timestamp: %.2f us per round\n", median(ts_ns) / 1000);
    std::printf("broadcast: %.2f us per round\n", median(bc_ns) / 1000);
    std::printf("broadcast / timestamp: %.2f (median of %d pairs; least %.2f, most %.2f)\n", median(ratios), pairs,
                ratios.front(), ratios.back());
    std::printf("invalidation broadcasts per release: timestamp %llu, broadcast %llu\n",
                static_cast<unsigned long long>(ts_broadcasts), static_cast<unsigned long long>(bc_broadcasts));
    mesh::destroy_shared_object(ts);
    mesh::destroy_shared_object(bc);
}
