// taco::urgent applies to single targets; task kinds and priorities also
// apply to groups (the control variant).
#include <tacomesh/posix.hpp>
struct member {
    void touch() {}
};
void f(taco::group<member> g) {
#ifdef TACO_NEG_CONTROL
    taco::async(g, taco::m2f(&member::touch), taco::as_coroutine{}, taco::with_priority{2});
#else
    taco::async(g, taco::m2f(&member::touch), taco::urgent);
#endif
}
