// Tutorial step 4 (docs/tutorial.md): the word count under the Timestamp and
// the Broadcast controller, cores as threads or processes.
//   tutorial_step4 threads|processes [rounds]
#include <tacomesh/posix.hpp>

#include "compare_controllers.hpp"

#include <cstdlib>
#include <string_view>

int main(int argc, char** argv) {
    using namespace tacomesh::posix;
    const bool processes = argc > 1 && std::string_view(argv[1]) == "processes";
    const int rounds = argc > 2 ? std::atoi(argv[2]) : 20000;
    const config cfg{.cores = 2, .mode = processes ? execution_mode::processes : execution_mode::threads};
    taco::run(cfg, [&] { compare_controllers(name(cfg.mode), rounds, 9); });
}
