#pragma once
#include <stdexcept>

namespace taco {

/// A call that cannot be right whatever the other cores do: an invocation
/// on a null global_ptr or on a core the run does not have, a future armed
/// again while it still waits, an invocation outside taco::run. Thrown
/// before anything is sent or changed, so the program may catch it and go on.
class usage_error : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

} // namespace taco
