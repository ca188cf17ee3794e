// One task kind per invocation.
#include <tacomesh/posix.hpp>
struct source {
    long value() const { return 1; }
};
void f(taco::global_ptr<source> gp) {
#ifdef TACO_NEG_CONTROL
    taco::async(gp, taco::m2f(&source::value), taco::as_coroutine{}, taco::with_priority{2});
#else
    taco::async(gp, taco::m2f(&source::value), taco::as_coroutine{}, taco::as_activity{});
#endif
}
