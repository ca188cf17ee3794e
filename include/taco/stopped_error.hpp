#pragma once
#include <stdexcept>

namespace taco {

/// Thrown out of a wait (future::get, sync, wait_until) on a core that has
/// been told to stop because main() returned on core 0: the awaited result
/// will never come, and unwinding beats hanging the program at exit.
class stopped_error : public std::runtime_error {
public:
    stopped_error()
        : std::runtime_error("taco: the program is stopping (main returned on core 0) while this core "
                             "waited for a result; wait for your futures before main returns") {}
};

} // namespace taco
