// A continuation's bound arguments travel in every message passing it on.
#include <string>
#include <tacomesh/posix.hpp>
struct member {
    int get() const { return 1; }
    void put(std::string, int) {}
    void put_id(int, int) {}
};
void f(taco::global_ptr<member> a, taco::global_ptr<member> b) {
#ifdef TACO_NEG_CONTROL
    taco::async(a, taco::m2f(&member::get), taco::then(b, &member::put_id, 1));
#else
    taco::async(a, taco::m2f(&member::get), taco::then(b, &member::put, std::string("x")));
#endif
}
