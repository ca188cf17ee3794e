// A result travels back in a message, so it must be trivially copyable too.
#include <map>
#include <tacomesh/posix.hpp>
struct named {
    std::map<int, int> table() const { return {}; }
    int id() const { return 1; }
};
void f(taco::global_ptr<named> gp) {
#ifdef TACO_NEG_CONTROL
    taco::sync(gp, &named::id);
#else
    taco::sync(gp, &named::table);
#endif
}
