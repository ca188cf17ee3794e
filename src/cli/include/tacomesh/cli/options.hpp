#pragma once
// What the tacomesh command lines (tacomesh-cluster, tacomesh-rdf) share:
// where their cores run (--cores N, --platform threads|processes|mpi,
// --controller NAME) and, for --platform mpi, MPI's start-up; and the shape
// of a usage error. Read once here, so the programs cannot drift apart.
// Where they differ on purpose, the program says how: how --cores reads its
// number (each has its own bounds and messages) and which controllers it
// knows (the names are its own library's).
//
//   tacomesh::cli::core_options where;
//   for (int i = 1; i < argc; ++i)
//       if (!tacomesh::cli::read_core_option(me, readers, argc, argv, i, where)) { ... the program's own ... }
//   tacomesh::cli::start_platform(me, where, quiet);
//
// Compiled (src/cli/options.cpp), with MPI where the build has it: the
// programs do not each carry the MPI start-up.
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <taco/core_id.hpp>
#include <tacomesh/posix/shared_state.hpp>

namespace tacomesh::cli {

/// Who speaks in usage errors.
struct program {
    std::string_view name;      ///< "tacomesh-cluster": the start of every message
    std::string_view help_hint; ///< the line after the message: "(run tacomesh-cluster --help for the options)"
};

/// "NAME: why" and the hint on stderr, then exit status 2 (the command line
/// is wrong; 1 is left for bad input).
[[noreturn]] void usage_error(const program& p, const std::string& why);

/// Where the cores run, as the command line says.
struct core_options {
    std::optional<taco::core_id> cores; ///< --cores N, if given
    posix::execution_mode platform = posix::execution_mode::threads; ///< --platform threads|processes
    bool mpi = false; ///< --platform mpi: one core per MPI rank

    /// "threads", "processes" or "mpi", as the programs' reports name it.
    const char* platform_name() const noexcept;
};

/// How a program reads the values that are its own.
struct core_option_readers {
    /// --cores' value, with the program's bounds and messages (it may call
    /// usage_error, or throw std::invalid_argument saying what is wrong).
    std::function<taco::core_id(const std::string& flag, const std::string& value)> cores;
    /// --controller's value (std::invalid_argument for an unknown name);
    /// left empty, --controller is not one of the program's options.
    std::function<void(const std::string& value)> controller;
};

/// If argv[i] is one of the shared options, reads it (and its value: i is
/// left on the value) into `o` and returns true; otherwise false, for the
/// program to read. A missing or wrong value is a usage error.
bool read_core_option(const program& p, const core_option_readers& read, int argc, char** argv, int& i,
                      core_options& o);

/// After the whole command line: with --platform mpi, MPI starts, the cores
/// are the ranks (a --cores that is another number is a usage error saying
/// how to start the job), each core a process with its own view (what the
/// programs weigh as --platform processes), and `quiet` is set on every
/// rank but 0 (every rank reads the input; rank 0 tells of it). Without MPI
/// in the build, --platform mpi is a usage error. Otherwise nothing changes.
void start_platform(const program& p, core_options& o, bool& quiet);

} // namespace tacomesh::cli
