// A channel as a completion takes the method's result type, as a future does.
#include <string>
#include <tacomesh/posix.hpp>
struct member {
    long count() const { return 1; }
};
void f(taco::global_ptr<member> a, taco::channel<long> numbers, taco::channel<std::string> texts) {
#ifdef TACO_NEG_CONTROL
    (void)texts;
    taco::async(a, taco::m2f(&member::count), numbers);
#else
    (void)numbers;
    taco::async(a, taco::m2f(&member::count), texts);
#endif
}
