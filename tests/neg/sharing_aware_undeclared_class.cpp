// A SharingAware class with private members and no declaration of them:
// the check cannot see whether one owns private memory, so it asks.
#include <cstdint>
#include <tacomesh/posix.hpp>
class counters : public mesh::sharing_aware<counters> {
public:
    explicit counters(std::size_t n) : hits_(n, 0) {}

private:
    mesh::vector<std::uint64_t> hits_;
#ifdef TACO_NEG_CONTROL
public:
    using shared_members = mesh::members<&counters::hits_>;
#endif
};
void f() { (void)mesh::make_shared_object<counters>(std::size_t(4)); }
