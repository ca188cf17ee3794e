// A completion passed in the unbound form would be taken for a method argument.
#include <tacomesh/posix.hpp>
struct source {
    long add(long x) const { return x; }
};
void f(taco::global_ptr<source> gp) {
    taco::future<long> a;
#ifdef TACO_NEG_CONTROL
    taco::async(gp, taco::m2f(&source::add, 1L), a);
#else
    taco::async(gp, &source::add, 1L, a);
#endif
}
