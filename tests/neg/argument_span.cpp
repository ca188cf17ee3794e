// A std::span points into the sender's memory: rejected; taco::view carries the values.
#include <span>
#include <vector>
#include <tacomesh/posix.hpp>
struct sink {
    void put(std::span<const int>) {}
};
void f(taco::global_ptr<sink> gp, const std::vector<int>& v) {
#ifdef TACO_NEG_CONTROL
    taco::async(gp, &sink::put, taco::view<int>(v));
#else
    taco::async(gp, &sink::put, std::span<const int>(v));
#endif
}
