#include <tacomesh/cli/options.hpp>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>

#if TACOMESH_WITH_MPI
#include <tacomesh/mpi/session.hpp>
#endif

namespace tacomesh::cli {

void usage_error(const program& p, const std::string& why) {
    const std::string name(p.name), hint(p.help_hint);
    std::fprintf(stderr, "%s: %s\n%s\n", name.c_str(), why.c_str(), hint.c_str());
    std::exit(2);
}

const char* core_options::platform_name() const noexcept { return mpi ? "mpi" : posix::name(platform); }

bool read_core_option(const program& p, const core_option_readers& read, int argc, char** argv, int& i,
                      core_options& o) {
    const std::string a = argv[i];
    const bool controller = a == "--controller" && read.controller;
    if (a != "--cores" && a != "--platform" && !controller) return false;
    if (i + 1 >= argc) usage_error(p, a + " needs a value");
    const std::string v = argv[++i];
    try {
        if (a == "--cores") {
            o.cores = read.cores(a, v);
        } else if (a == "--platform") {
            o.mpi = v == "mpi";
            if (!o.mpi) o.platform = posix::parse_execution_mode(v);
        } else {
            read.controller(v);
        }
    } catch (const std::invalid_argument& e) {
        usage_error(p, e.what());
    }
    return true;
}

void start_platform(const program& p, core_options& o, [[maybe_unused]] bool& quiet) {
    if (!o.mpi) return;
#if TACOMESH_WITH_MPI
    try {
        o.cores = mpi::one_core_per_rank(o.cores);
    } catch (const std::invalid_argument& e) {
        usage_error(p, e.what());
    }
    o.platform = posix::execution_mode::processes;
    if (mpi::rank() != 0) quiet = true;
#else
    usage_error(p, "--platform mpi: this " + std::string(p.name) +
                       " was built without MPI (install libopenmpi-dev and rebuild)");
#endif
}

} // namespace tacomesh::cli
