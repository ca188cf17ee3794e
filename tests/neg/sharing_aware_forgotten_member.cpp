// A class with private members declares them, and forgets one (the
// std::vector, as it happens, which the check would have refused): the list
// no longer fills the object, which does not compile.
#include <cstdint>
#include <vector>
#include <tacomesh/posix.hpp>
class histogram : public mesh::sharing_aware<histogram> {
public:
    explicit histogram(std::size_t bins) : bins_(bins) {}

private:
    std::size_t bins_;
#ifdef TACO_NEG_CONTROL
    mesh::vector<std::uint64_t> counts_;
#else
    std::vector<std::uint64_t> counts_;
#endif
    double width_ = 1.0;

public:
#ifdef TACO_NEG_CONTROL
    using shared_members = mesh::members<&histogram::bins_, &histogram::counts_, &histogram::width_>;
#else
    using shared_members = mesh::members<&histogram::bins_, &histogram::width_>;
#endif
};
void f() { (void)mesh::make_shared_object<histogram>(std::size_t(8)); }
