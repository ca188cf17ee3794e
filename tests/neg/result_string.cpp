// A std::string result: carried types go as arguments only.
#include <string>
#include <tacomesh/posix.hpp>
struct named {
    std::string name() const { return "x"; }
    int id() const { return 1; }
};
void f(taco::global_ptr<named> gp) {
#ifdef TACO_NEG_CONTROL
    taco::sync(gp, &named::id);
#else
    taco::sync(gp, &named::name);
#endif
}
