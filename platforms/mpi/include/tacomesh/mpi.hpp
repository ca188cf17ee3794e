#pragma once
// The MPI platform of tacomesh, with TACO and MESH: everything a program on
// MPI ranks needs, as <tacomesh/posix.hpp> is on POSIX. The platform is
// chosen by the configuration passed to taco::run (tacomesh::mpi::config),
// so a POSIX program moves to MPI by this include and its config.
#include <mesh/mesh.hpp>
#include <taco/taco.hpp>
#include <tacomesh/mpi/platform.hpp>
