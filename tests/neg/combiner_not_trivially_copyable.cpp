// A combiner travels down the tree in messages: no owning captures.
#include <string>
#include <tacomesh/posix.hpp>
struct member {
    long load() const { return 1; }
};
void f(taco::group<member> g) {
    taco::future<long> total;
    std::string label = "sum";
#ifdef TACO_NEG_CONTROL
    taco::reduce(g, taco::m2f(&member::load), [](long a, long b) { return a + b; }, total);
#else
    taco::reduce(g, taco::m2f(&member::load), [label](long a, long b) { return a + b + long(label.size()); }, total);
#endif
}
