// A local then() step must take the future's value (a tuple's elements, or
// the tuple; nothing for future<void>).
#include <tacomesh/posix.hpp>
void f(taco::future<long>& x, taco::future<long>& y) {
#ifdef TACO_NEG_CONTROL
    auto g = taco::when_all(x, y).then([](long a, long b) { return a + b; });
#else
    auto g = taco::when_all(x, y).then([](long a) { return a; });
#endif
    (void)g;
}
