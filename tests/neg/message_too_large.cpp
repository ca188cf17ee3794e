// Large values do not travel through messages: pass a global_ptr / MESH object.
#include <tacomesh/posix.hpp>
#ifdef TACO_NEG_CONTROL
struct big { char bytes[64]; };
#else
struct big { char bytes[512]; };
#endif
struct sink {
    void take(big) {}
};
void f(taco::global_ptr<sink> gp) { taco::async(gp, &sink::take, big{}); }
