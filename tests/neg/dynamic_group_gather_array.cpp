// Gathering into an array needs the group's size where the gather starts,
// which a dynamic group's changes make unknowable there.
#include <span>
#include <tacomesh/posix.hpp>
struct member {
    int id() { return 1; }
    void put(std::uint32_t, int) {}
};
void f(taco::dynamic_group<member> g, std::span<int> out, taco::future<void>& done, taco::global_ptr<member> sink) {
#ifdef TACO_NEG_CONTROL
    (void)out, (void)done;
    taco::gather(g, taco::m2f(&member::id), taco::then(sink, &member::put));
#else
    (void)sink;
    taco::gather(g, taco::m2f(&member::id), out, done);
#endif
}
