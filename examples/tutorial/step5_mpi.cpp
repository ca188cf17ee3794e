// Tutorial step 5 (docs/tutorial.md): step 4's comparison with each core an
// MPI rank. Only the configuration differs.
//   mpirun -np 2 tutorial_step5 [rounds]
#include <tacomesh/mpi.hpp> // the MPI platform, <taco/taco.hpp> and <mesh/mesh.hpp>

#include "compare_controllers.hpp"

#include <cstdlib>

int main(int argc, char** argv) {
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 20000;
    taco::run(tacomesh::mpi::config{}, [&] { compare_controllers("mpi", rounds, 9); });
}
