// A SharingAware object with a std::string member (longer than the small
// string buffer, its characters are in the heap of the core that made it).
#include <string>
#include <tacomesh/posix.hpp>
struct station : mesh::sharing_aware<station> {
#ifdef TACO_NEG_CONTROL
    mesh::string name;
#else
    std::string name;
#endif
    double reading = 0;
};
void f() { (void)mesh::make_shared_object<station>(); }
