#pragma once
// The SCC platform of tacomesh on the emulated chip, with TACO and MESH:
// everything a program needs to run on it, as <tacomesh/posix.hpp> is on
// POSIX (tacomesh::scc::emulated::config picks it in taco::run). The real
// chip's build is apart: platforms/scc/README.md.
#include <mesh/mesh.hpp>
#include <taco/taco.hpp>
#include <tacomesh/scc/emulated/platform.hpp>
