#pragma once
// The execution context of a coroutine (a stack and the switch to and from
// it), chosen per target: the inline x86 switch (64- and 32-bit), else a
// Boost.Context fiber. Define TACO_BOOST_CONTEXT to use Boost.Context everywhere (the
// tests build both).
//
// Both offer: start(stack_size, main, arg), bool resume(), suspend(),
// stack(), requested_size().
#if (defined(__x86_64__) || defined(__i386__)) && !defined(TACO_BOOST_CONTEXT)
#include <taco/detail/context/inline_context.hpp>
namespace taco::detail {
using execution_context = inline_context;
}
#else
#include <taco/detail/context/boost_context.hpp>
namespace taco::detail {
using execution_context = boost_context;
}
#endif
