// A method needs an object: a core id is no target for it.
#include <tacomesh/posix.hpp>
struct source {
    long value() const { return 1; }
};
void f(taco::global_ptr<source> gp) {
#ifdef TACO_NEG_CONTROL
    taco::async(gp, &source::value);
#else
    (void)gp;
    taco::async(1, &source::value);
#endif
}
