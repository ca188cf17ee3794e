// A lambda that captures a std::string is not a message.
#include <string>
#include <tacomesh/posix.hpp>
void f() {
    std::string s = "hello";
    long n = 5;
#ifdef TACO_NEG_CONTROL
    taco::async(1, [n] { (void)n; });
#else
    taco::async(1, [s] { (void)s; });
#endif
}
