// A timeout needs a future to report the timeout to.
#include <chrono>
#include <tacomesh/posix.hpp>
struct source {
    long value() const { return 1; }
};
void f(taco::global_ptr<source> gp) {
#ifdef TACO_NEG_CONTROL
    taco::future<long> a;
    taco::async(gp, taco::m2f(&source::value), a, taco::timeout(std::chrono::seconds(1)));
#else
    taco::async(gp, taco::m2f(&source::value), taco::timeout(std::chrono::seconds(1)));
#endif
}
