// A continuation takes one error continuation.
#include <tacomesh/posix.hpp>
struct source {
    long value() const { return 1; }
};
struct sink {
    void put(long v) { (void)v; }
    void failed(const taco::error_info& e) { (void)e; }
};
void f(taco::global_ptr<source> gp, taco::global_ptr<sink> s) {
#ifdef TACO_NEG_CONTROL
    taco::async(gp, taco::m2f(&source::value), taco::then(s, &sink::put).on_error(s, &sink::failed));
#else
    taco::async(gp, taco::m2f(&source::value),
                taco::then(s, &sink::put).on_error(s, &sink::failed).on_error(s, &sink::failed));
#endif
}
