// The target is a global_ptr, a core id or a group.
#include <tacomesh/posix.hpp>
long twice(long x) { return 2 * x; }
void f() {
#ifdef TACO_NEG_CONTROL
    taco::async(1u, &twice, 2L);
#else
    taco::async(1.0, &twice, 2L);
#endif
}
