// A timeout reports to a future, not to a then() continuation.
#include <chrono>
#include <tacomesh/posix.hpp>
struct source {
    long value() const { return 1; }
};
struct sink {
    void put(long) {}
};
void f(taco::global_ptr<source> gp, taco::global_ptr<sink> s) {
#ifdef TACO_NEG_CONTROL
    taco::async(gp, taco::m2f(&source::value), taco::then(s, &sink::put));
#else
    taco::async(gp, taco::m2f(&source::value), taco::then(s, &sink::put), taco::timeout(std::chrono::seconds(1)));
#endif
}
