#pragma once
#include <cstdlib>
#include <string_view>

#include <tacomesh/mpi/platform.hpp>

namespace test {
/// How the tests' cores on one host talk: TACOMESH_TEST_MPI_ON_HOST=mpi
/// makes them use MPI messages and RMA, as across hosts (CTest runs the
/// suites both ways); else the host's shared memory, the default.
inline tacomesh::mpi::on_host mpi_on_host() {
    const char* s = std::getenv("TACOMESH_TEST_MPI_ON_HOST");
    return s && std::string_view(s) == "mpi" ? tacomesh::mpi::on_host::mpi : tacomesh::mpi::on_host::shared_memory;
}
} // namespace test
