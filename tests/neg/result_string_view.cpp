// A std::string_view result points into the callee's memory: refused, with
// what to return instead (a std::string is carried back by value).
#include <string>
#include <string_view>
#include <tacomesh/posix.hpp>
struct named {
    std::string text = "x";
    std::string_view name() const { return text; }
    std::string copy() const { return text; }
};
void f(taco::global_ptr<named> gp) {
#ifdef TACO_NEG_CONTROL
    (void)taco::sync(gp, &named::copy);
#else
    (void)taco::sync(gp, &named::name);
#endif
}
