#pragma once
// TACO: cross-core invocations in a partitioned global address space.
// Include a platform header (e.g. <tacomesh/posix.hpp>) to bind the platform.
#include <taco/activity.hpp>
#include <taco/async.hpp>
#include <taco/co_task.hpp>
#include <taco/collective.hpp>
#include <taco/combiner.hpp>
#include <taco/config.hpp>
#include <taco/continuation.hpp>
#include <taco/coroutine.hpp>
#include <taco/core_id.hpp>
#include <taco/future.hpp>
#include <taco/global_ptr.hpp>
#include <taco/group.hpp>
#include <taco/m2f.hpp>
#include <taco/new_on.hpp>
#include <taco/platform.hpp>
#include <taco/protothread.hpp>
#include <taco/remote_error.hpp>
#include <taco/runtime.hpp>
#include <taco/scheduler.hpp>
#include <taco/task.hpp>
#include <taco/this_core.hpp>
#include <taco/timer.hpp>
#include <taco/topology.hpp>
