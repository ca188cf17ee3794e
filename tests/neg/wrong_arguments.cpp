// Arguments that do not match the method are reported as such.
#include <tacomesh/posix.hpp>
struct pair_sink {
    void take(int, int) {}
};
struct other {};
void f(taco::global_ptr<pair_sink> gp) {
#ifdef TACO_NEG_CONTROL
    taco::async(gp, &pair_sink::take, 1, 2);
#else
    taco::async(gp, &pair_sink::take, 1, other{});
#endif
}
