// A SharingAware object with a std::map member: its nodes are in one core's heap.
#include <cstdint>
#include <map>
#include <tacomesh/posix.hpp>
struct index_table : mesh::sharing_aware<index_table> {
#ifdef TACO_NEG_CONTROL
    mesh::hash_map<std::uint64_t, std::uint32_t> ids;
#else
    std::map<std::uint64_t, std::uint32_t> ids;
#endif
};
void f() { (void)mesh::make_shared_object<index_table>(); }
