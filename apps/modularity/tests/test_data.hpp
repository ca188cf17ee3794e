#pragma once
// The shipped graphs' directory, defined once for every test file of the
// program: its files compile in batches (unity builds), where each file's
// own copy would be a second definition.
#include <string>

namespace modularity_test {

inline const std::string data = MODULARITY_DATA;

} // namespace modularity_test
