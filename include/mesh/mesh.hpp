#pragma once
// MESH: shared objects with software-managed consistency, on top of TACO.
#include <mesh/change_stamps.hpp>
#include <mesh/chunked_map.hpp>
#include <mesh/controller.hpp>
#include <mesh/controllers/broadcast.hpp>
#include <mesh/controllers/noop.hpp>
#include <mesh/controllers/overlapped_broadcast.hpp>
#include <mesh/controllers/timestamp.hpp>
#include <mesh/event_counts.hpp>
#include <mesh/memory.hpp>
#include <mesh/proxy.hpp>
#include <mesh/range_space.hpp>
#include <mesh/shared_object.hpp>
#include <mesh/sharing_aware.hpp>
#include <mesh/sharing_ptr.hpp>
