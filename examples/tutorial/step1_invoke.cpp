// Tutorial step 1 (docs/tutorial.md): an object on another core and the
// three ways to invoke it.
#include <tacomesh/posix.hpp>

#include <cstdio>

struct counter {
    long value = 0;
    void add(long n) { value += n; }
    long get() const { return value; }
};

// A plain function can run on a core too: the target is then a core id.
long square(long x) { return x * x; }

int main() {
    taco::run(tacomesh::posix::config{.cores = 2}, [] {
        // Core 0 runs this lambda. The counter is made on core 1; the global
        // pointer names it from any core: {core, address}.
        taco::global_ptr<counter> c = taco::new_on<counter>(1).get();

        taco::async(c, &counter::add, 5L);                   // fire and forget
        taco::async(c, &counter::add, 7L);                   // runs after the first: one source keeps its order
        taco::future<long> f = taco::call(c, &counter::get); // the result, later
        long first = f.get();                                // core 0 serves invocations while it waits
        long second = taco::sync(c, &counter::get);          // call(...).get() in one step
        long nine = taco::sync(1, &square, 3L);              // a function on core 1

        std::printf("core %u: the counter on core %u holds %ld, then %ld; 3 squared on core 1 is %ld\n",
                    taco::this_core(), c.core(), first, second, nine);
        taco::delete_on(c);
    });
}
