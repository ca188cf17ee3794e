#pragma once
// The POSIX platform of tacomesh, bound as this program's TACO platform,
// then TACO and MESH. Include it before any other taco/ or mesh/ header.
#include <taco/platform.hpp>
#include <tacomesh/posix/platform.hpp>

TACO_BIND_PLATFORM(tacomesh::posix::platform);

#include <taco/taco.hpp>
#include <mesh/mesh.hpp>
