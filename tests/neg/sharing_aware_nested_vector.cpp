// The port that read 1 of 400 vertices in process mode: a graph whose
// adjacency, inside a member struct, is a std::vector of std::vectors.
#include <cstdint>
#include <vector>
#include <tacomesh/posix.hpp>
struct adjacency {
#ifdef TACO_NEG_CONTROL
    mesh::vector<std::uint64_t> first; // CSR: where each vertex's targets start
    mesh::vector<std::uint32_t> targets;
#else
    std::vector<std::vector<std::uint32_t>> targets;
#endif
};
struct graph : mesh::sharing_aware<graph> {
    std::uint32_t vertices = 0;
    adjacency out[2]; // in a member struct, in an array: still seen
};
void f() { (void)mesh::make_shared_object<graph>(); }
