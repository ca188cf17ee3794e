// A shared object with a std::vector member: the vector's buffer is private
// to the core that allocated it, so other cores would read garbage.
#include <array>
#include <vector>
#include <tacomesh/posix.hpp>
struct histogram_fixed {
    std::array<long, 16> bins{};
};
struct histogram_shared : mesh::sharing_aware<histogram_shared> { // what the message says to write
    mesh::vector<long> bins;
};
struct histogram_vector {
    std::vector<long> bins;
};
void f() {
#ifdef TACO_NEG_CONTROL
    auto p = mesh::make_shared_object<histogram_fixed>();
    auto q = mesh::make_shared_object<histogram_shared>();
    (void)q;
#else
    auto p = mesh::make_shared_object<histogram_vector>();
#endif
    (void)p;
}
