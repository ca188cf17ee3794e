#pragma once
// TACO: cross-core invocations in a partitioned global address space. This
// header is everything; each part also compiles on its own. Programs start
// with taco::run(<a platform's config>, main), e.g. with
// <tacomesh/posix.hpp>'s tacomesh::posix::config.
#include <taco/activity.hpp>
#include <taco/all_cores.hpp>
#include <taco/async.hpp>
#include <taco/barrier.hpp>
#include <taco/channel.hpp>
#include <taco/stackless_coroutine.hpp>
#include <taco/collective.hpp>
#include <taco/combiner.hpp>
#include <taco/config.hpp>
#include <taco/core_failure.hpp>
#include <taco/continuation.hpp>
#include <taco/core_id.hpp>
#include <taco/core_stats.hpp>
#include <taco/dynamic_group.hpp>
#include <taco/stackful_coroutine.hpp>
#include <taco/future.hpp>
#include <taco/global_ptr.hpp>
#include <taco/group.hpp>
#include <taco/image_ptr.hpp>
#include <taco/invocation_options.hpp>
#include <taco/m2f.hpp>
#include <taco/message_limits.hpp>
#include <taco/new_on.hpp>
#include <taco/object_group.hpp>
#include <taco/platform/platform.hpp>
#include <taco/preemption.hpp>
#include <taco/protothread.hpp>
#include <taco/remote_error.hpp>
#include <taco/run.hpp>
#include <taco/scheduler.hpp>
#include <taco/sink.hpp>
#include <taco/sinks/activity_sink.hpp>
#include <taco/sinks/function_sink.hpp>
#include <taco/sinks/mailbox.hpp>
#include <taco/sinks/merger.hpp>
#include <taco/stopped_error.hpp>
#include <taco/task.hpp>
#include <taco/this_core.hpp>
#include <taco/timer.hpp>
#include <taco/topology.hpp>
#include <taco/uncaught_error.hpp>
#include <taco/view.hpp>
#include <taco/when_all.hpp>
