// A reader proxy gives const access only: calling a modifying method through
// it must not compile. (The control variant calls a const method.)
#include <tacomesh/posix.hpp>

struct counter {
    long n = 0;
    void bump() { ++n; }
    long get() const { return n; }
};

void use(mesh::sharing_ptr<counter> p) {
    auto r = mesh::read(p);
#ifdef TACO_NEG_CONTROL
    (void)r->get();
#else
    r->bump();
#endif
}
