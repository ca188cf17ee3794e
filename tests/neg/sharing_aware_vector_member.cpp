// A SharingAware object with a std::vector member: deriving from
// sharing_aware does not make the vector's buffer shared; it stays in the
// heap of the core that made it (right with core threads, garbage on every
// other core with core processes).
#include <vector>
#include <tacomesh/posix.hpp>
struct samples : mesh::sharing_aware<samples> {
    long count = 0;
#ifdef TACO_NEG_CONTROL
    mesh::vector<long> values; // what the message says to write
#else
    std::vector<long> values;
#endif
};
void f() { (void)mesh::make_shared_object<samples>(); }
