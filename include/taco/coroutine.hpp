#pragma once
// Kept for one release: the stackful coroutine's header is now
// <taco/stackful_coroutine.hpp> (beside <taco/stackless_coroutine.hpp>, the
// C++20 co_task), so the two kinds can be told apart by name.
#include <taco/stackful_coroutine.hpp>
