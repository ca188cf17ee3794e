// A channel carries values: a bare event is an empty struct.
#include <tacomesh/posix.hpp>
struct tick {};
void f() {
#ifdef TACO_NEG_CONTROL
    taco::channel<tick> c;
#else
    taco::channel<void> c;
#endif
    (void)c;
}
