// Tutorial step 3 (docs/tutorial.md): the ported word count, shared by the
// cores, with cores as threads or as processes with private memory.
//   tutorial_step3 threads|processes [noop]
#include <tacomesh/posix.hpp>

#include "word_count.hpp"

#include <cstdio>
#include <string_view>
#include <vector>

const char* const lines[] = {"the quick brown fox", "jumps over the lazy dog", "and the end"};

// Runs on core c: send line c - 1 to the owner.
void send_line(word_count_ptr t, int line) { taco::sync(0, &add_words, t, std::string(lines[line])); }

int main(int argc, char** argv) {
    using namespace tacomesh::posix;
    const bool processes = argc > 1 && std::string_view(argv[1]) == "processes";
    const bool noop = argc > 2 && std::string_view(argv[2]) == "noop";
    const config cfg{.cores = 4, .mode = processes ? execution_mode::processes : execution_mode::threads};
    taco::run(cfg, [noop] {
        auto table = noop ? mesh::make_shared_object<word_count, mesh::controllers::noop>()
                          : mesh::make_shared_object<word_count>(); // the Timestamp controller
        std::vector<taco::future<void>> sent(taco::core_count());
        for (taco::core_id c = 1; c < taco::core_count(); ++c)
            taco::async(c, taco::m2f(&send_line, table, int(c - 1)), sent[c]);
        for (taco::core_id c = 1; c < taco::core_count(); ++c) sent[c].get();

        std::printf("%llu words, \"the\" %llu times\n", static_cast<unsigned long long>(total_here(table)),
                    static_cast<unsigned long long>(count_here(table, "the")));
        for (taco::core_id c = 1; c < taco::core_count(); ++c)
            std::printf("core %u reads \"the\" %llu times\n", c,
                        static_cast<unsigned long long>(taco::sync(c, &count_here, table, std::string("the"))));
        mesh::destroy_shared_object(table);
    });
}
