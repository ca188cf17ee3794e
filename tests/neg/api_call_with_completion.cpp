// taco::call makes the future itself.
#include <tacomesh/posix.hpp>
struct source {
    long value() const { return 1; }
};
void f(taco::global_ptr<source> gp) {
#ifdef TACO_NEG_CONTROL
    auto r = taco::call(gp, taco::m2f(&source::value), taco::urgent);
#else
    taco::future<long> a;
    auto r = taco::call(gp, taco::m2f(&source::value), a);
#endif
    (void)r.get();
}
