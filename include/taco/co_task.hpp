#pragma once
// Kept for one release: the C++20 coroutine task's header is now
// <taco/stackless_coroutine.hpp> (beside <taco/stackful_coroutine.hpp>), so
// the two kinds can be told apart by name.
#include <taco/stackless_coroutine.hpp>
