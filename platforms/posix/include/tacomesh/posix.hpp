#pragma once
// The POSIX platform of tacomesh, with TACO and MESH: everything a program
// on POSIX needs. The platform is chosen by the configuration passed to
// taco::run (tacomesh::posix::config), not by this header: the headers may
// be included in any order.
#include <mesh/mesh.hpp>
#include <taco/taco.hpp>
#include <tacomesh/posix/platform.hpp>
