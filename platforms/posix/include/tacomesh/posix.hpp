#pragma once
// The POSIX platform of tacomesh, bound as this program's TACO platform.
#include <taco/platform.hpp>
#include <tacomesh/posix/platform.hpp>

TACO_BIND_PLATFORM(tacomesh::posix::platform);

#include <taco/taco.hpp>
