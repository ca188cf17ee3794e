#pragma once
#include <stdexcept>

namespace taco {

/// A core of the run is gone (a POSIX core process that died, an MPI rank
/// that stopped answering): the platform stops the run and taco::run
/// throws this, naming the core, instead of hanging on it. One type for
/// every platform, so a program's handler does not change with it.
class core_failure : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

} // namespace taco
