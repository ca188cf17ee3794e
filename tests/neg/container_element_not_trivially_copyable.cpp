// A mesh::vector of std::string: each string's characters would stay in
// the heap of the core that made them.
#include <string>
#include <tacomesh/posix.hpp>
struct names : mesh::sharing_aware<names> {
#ifdef TACO_NEG_CONTROL
    mesh::vector<char> all;
    mesh::vector<std::size_t> starts;
#else
    mesh::vector<std::string> all;
#endif
};
void f() { (void)mesh::make_shared_object<names>(); }
