// Task kinds, priorities and urgent apply to single targets, not to groups.
#include <tacomesh/posix.hpp>
struct member {
    void touch() {}
};
void f(taco::global_ptr<member> gp, taco::group<member> g) {
#ifdef TACO_NEG_CONTROL
    taco::async(gp, taco::m2f(&member::touch), taco::as_coroutine{});
    (void)g;
#else
    (void)gp;
    taco::async(g, taco::m2f(&member::touch), taco::as_coroutine{});
#endif
}
