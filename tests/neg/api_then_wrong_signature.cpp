// A then() continuation must take (bound arguments..., result).
#include <tacomesh/posix.hpp>
struct source {
    long value() const { return 1; }
};
struct sink {
    void put(int tag, long v) { (void)tag, (void)v; }
    void put_pointer(int tag, long* v) { (void)tag, (void)v; }
};
void f(taco::global_ptr<source> gp, taco::global_ptr<sink> s) {
#ifdef TACO_NEG_CONTROL
    taco::async(gp, taco::m2f(&source::value), taco::then(s, &sink::put, 3));
#else
    taco::async(gp, taco::m2f(&source::value), taco::then(s, &sink::put_pointer, 3));
#endif
}
