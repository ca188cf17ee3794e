// A mesh::hash_map keyed by std::string: use mesh::string keys.
#include <cstdint>
#include <string>
#include <tacomesh/posix.hpp>
struct dictionary : mesh::sharing_aware<dictionary> {
#ifdef TACO_NEG_CONTROL
    mesh::hash_map<mesh::string, std::uint32_t> ids;
#else
    mesh::hash_map<std::string, std::uint32_t> ids;
#endif
};
void f() { (void)mesh::make_shared_object<dictionary>(); }
