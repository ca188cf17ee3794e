// An invocation has at most one completion.
#include <tacomesh/posix.hpp>
struct source {
    long value() const { return 1; }
};
void f(taco::global_ptr<source> gp) {
    taco::future<long> a, b;
#ifdef TACO_NEG_CONTROL
    taco::async(gp, taco::m2f(&source::value), a);
#else
    taco::async(gp, taco::m2f(&source::value), a, b);
#endif
}
