// Tutorial step 2 (docs/tutorial.md): one object per core, made a group, and
// the collectives over it.
#include <tacomesh/posix.hpp>

#include <cstdio>
#include <functional>
#include <span>
#include <vector>

// A member's share of the numbers 1..n: [lo, hi).
struct share {
    long lo, hi;
    int power = 1;
    share(long lo, long hi) : lo(lo), hi(hi) {}
    void set_power(int p) { power = p; }
    long sum() const {
        long s = 0;
        for (long i = lo; i < hi; ++i) {
            long term = 1;
            for (int k = 0; k < power; ++k) term *= i;
            s += term;
        }
        return s;
    }
};

int main() {
    taco::run(tacomesh::posix::config{.cores = 4}, [] {
        const long n = 1000;
        const taco::core_id cores = taco::core_count();
        std::vector<taco::global_ptr<share>> members;
        for (taco::core_id c = 0; c < cores; ++c)
            members.push_back(taco::new_on<share>(c, 1 + n * c / cores, 1 + n * (c + 1) / cores).get());
        auto g = taco::make_group(members, taco::topology::binomial());

        taco::future<void> done;
        taco::at_each(g, taco::m2f(&share::set_power, 2), done); // every member, down the tree
        done.get();
        long squares = taco::reduce(g, taco::m2f(&share::sum), std::plus<long>{}).get(); // merged up the tree

        std::vector<long> parts(g.size);
        taco::gather(g, taco::m2f(&share::sum), std::span<long>(parts)).get(); // parts[rank]

        std::printf("sum of squares 1..%ld = %ld; by member:", n, squares);
        for (long p : parts) std::printf(" %ld", p);
        std::printf("\n");
        taco::destroy_group(g);
        for (auto m : members) taco::delete_on(m);
    });
}
