// A future that is dropped at once would only wait in its destructor:
// [[nodiscard]] (this test compiles with -Werror=unused-result).
#include <tacomesh/posix.hpp>
struct source {
    long value() const { return 1; }
};
void f(taco::global_ptr<source> gp) {
#ifdef TACO_NEG_CONTROL
    auto r = taco::call(gp, &source::value);
    (void)r.get();
#else
    taco::call(gp, &source::value);
#endif
}
