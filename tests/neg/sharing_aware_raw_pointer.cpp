// A SharingAware object with a raw pointer it does not list in extra_ranges:
// the pointer leads into the making core's private memory.
#include <cstddef>
#include <tacomesh/posix.hpp>
struct buffer : mesh::sharing_aware<buffer> {
    double* data = nullptr;
    std::size_t n = 0;
#ifdef TACO_NEG_CONTROL
    // the memory comes from mesh::allocate and is listed: the controller
    // writes it back and refreshes it with the object
    template <class Visit>
    void extra_ranges(Visit&& visit) const {
        visit(data, n * sizeof(double));
    }
#endif
};
void f() { (void)mesh::make_shared_object<buffer>(); }
