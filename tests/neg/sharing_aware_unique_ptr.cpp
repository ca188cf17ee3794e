// A SharingAware object owning another object through a std::unique_ptr.
#include <memory>
#include <tacomesh/posix.hpp>
struct settings {
    double alpha = 0.5;
};
struct model : mesh::sharing_aware<model> {
#ifdef TACO_NEG_CONTROL
    mesh::sharing_ptr<settings> config; // a shared object of its own
#else
    std::unique_ptr<settings> config;
#endif
};
void f() { (void)mesh::make_shared_object<model>(); }
