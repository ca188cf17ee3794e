// Carried arguments go to single targets, not down a group's tree.
#include <string>
#include <tacomesh/posix.hpp>
struct member {
    void hello(std::string) {}
    void hello_id(int) {}
};
void f(taco::group<member> g) {
#ifdef TACO_NEG_CONTROL
    taco::at_each(g, taco::m2f(&member::hello_id, 1));
#else
    taco::at_each(g, taco::m2f(&member::hello, std::string("hi")));
#endif
}
