#pragma once
// Work counted in basic blocks, so that an emulated core's computation
// costs the same modelled cycles whatever the host does.
//
// Why counting, not timing: the emulated cores are host threads, 48 of them
// on this machine's 2 CPUs. Their CPU time (what cost_model's host_time
// charges) is noisy, and oversubscription inflates memory-bound work: a
// thread that takes turns with 47 others finds the caches cold at every
// turn, so the same query costs a worker 3-5 times its CPU time alone.
// Hardware performance counters would count retired instructions instead,
// but these VMs have none (perf_event_open fails). So the compiler counts:
// -fsanitize-coverage=trace-pc (g++ and clang++) calls
// __sanitizer_cov_trace_pc() at the start of every basic block of every
// function it compiles, and the definition below adds one to a counter of
// the calling thread. The count depends only on the program's path through
// its code: the same at 1 and at 48 emulated cores, on one host CPU or two,
// loaded or idle, and from one run to the next (cost_model.hpp prices a
// block in P54C cycles).
//
// What is not counted: code that was not compiled with the flag. That is
// the C and C++ libraries' shared objects (malloc, memcpy, std::string's
// out-of-line members, iostreams) and any translation unit of the program,
// or library it links, built without tacomesh::scc_counted. A program whose
// time goes to memcpy or to an uninstrumented library reads as cheaper than
// it is. A block is a block: a long one (unrolled, vectorised) counts as
// much as a short one, so the price per block is an average, calibrated on
// the runtime's own code (cost_model.hpp).
//
// Using it: link tacomesh::scc_counted (CMake) into every target whose code
// should count, which compiles it with the flag and defines
// TACOMESH_SCC_COUNTED; cost_model then charges counted blocks by default.
#include <cstdint>

// The callback and what it calls must not be instrumented themselves (each
// call would recurse), nor report their loads and stores, which are the
// emulation's (priced_memory.hpp).
#if defined(__clang__)
#define TACOMESH_SCC_NOT_COUNTED __attribute__((no_sanitize("coverage", "kernel-address")))
#else
#define TACOMESH_SCC_NOT_COUNTED __attribute__((no_sanitize_coverage, no_sanitize_address))
#endif

namespace tacomesh::scc::emulated::detail {

/// Basic blocks the calling thread has run in instrumented code. Initial
/// exec: one segment-relative add, not a call to __tls_get_addr (the
/// callback runs at every block); so a shared object that uses it must be
/// loaded with the program, not dlopen'ed.
inline thread_local std::uint64_t blocks_run __attribute__((tls_model("initial-exec"))) = 0;

} // namespace tacomesh::scc::emulated::detail

// Weak: every translation unit that includes this header defines it, and
// the linker keeps one. Not inline: the compiler inserts the calls after it
// has decided which inline functions a unit emits, so an inline one would
// be missing where nothing in the source calls it.
extern "C" TACOMESH_SCC_NOT_COUNTED __attribute__((weak)) void __sanitizer_cov_trace_pc() {
    ++tacomesh::scc::emulated::detail::blocks_run;
}

namespace tacomesh::scc::emulated {

/// The calling thread's basic blocks so far (0 if nothing it ran was
/// compiled with tacomesh::scc_counted).
TACOMESH_SCC_NOT_COUNTED inline std::uint64_t counted_blocks() noexcept { return detail::blocks_run; }

/// Whether the translation unit that asks was compiled for counting
/// (tacomesh::scc_counted defines TACOMESH_SCC_COUNTED).
inline constexpr bool counting_compiled =
#ifdef TACOMESH_SCC_COUNTED
    true;
#else
    false;
#endif

} // namespace tacomesh::scc::emulated
