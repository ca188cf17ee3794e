// A combiner must merge two results of the method's type.
#include <functional>
#include <tacomesh/posix.hpp>
struct member {
    double load() const { return 1.0; }
};
struct not_a_combiner {
    double operator()(double) const { return 0; }
};
void f(taco::group<member> g) {
    taco::future<double> total;
#ifdef TACO_NEG_CONTROL
    taco::reduce(g, taco::m2f(&member::load), std::plus<double>{}, total);
#else
    taco::reduce(g, taco::m2f(&member::load), not_a_combiner{}, total);
#endif
}
