// The future must have the method's result type.
#include <tacomesh/posix.hpp>
struct source {
    long value() const { return 1; }
};
void f(taco::global_ptr<source> gp) {
#ifdef TACO_NEG_CONTROL
    taco::future<long> fut;
#else
    taco::future<int> fut;
#endif
    taco::async(gp, taco::m2f(&source::value), fut);
}
