// A raw pointer names memory of the sender only.
#include <tacomesh/posix.hpp>
struct sink {
    void take(const int*) {}
    void take_global(taco::global_ptr<int>) {}
};
void f(taco::global_ptr<sink> gp, int* local) {
#ifdef TACO_NEG_CONTROL
    taco::async(gp, &sink::take_global, taco::to_global(local));
#else
    taco::async(gp, &sink::take, local);
#endif
}
