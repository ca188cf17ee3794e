// "Porting a data structure" (docs/reference.md): a symbol table that was a
// std::unordered_map<std::string, ...> shared by threads under a mutex, as a
// MESH shared object. The same code runs with cores as threads and as
// processes with private memory; only the config changes.
//   example_porting threads|processes [cores]
#include <tacomesh/posix.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

// Before:
//   struct symbol_table {
//       std::unordered_map<std::string, std::uint32_t> ids;
//       std::vector<std::uint64_t> uses;
//       ...
//   };
struct symbol_table : mesh::sharing_aware<symbol_table> { // 1. derive: it owns memory beyond its bytes
    mesh::hash_map<mesh::string, std::uint32_t> ids;      // 2. std containers -> shared containers
    mesh::vector<std::uint64_t> uses;

    std::uint32_t intern(std::string_view name) {
        auto [id, fresh] = ids.try_emplace(name, std::uint32_t(uses.size()));
        if (fresh) uses.push_back(0);
        uses.set(*id, uses[*id] + 1);
        return *id;
    }
    std::uint64_t uses_of(std::string_view name) const {
        const std::uint32_t* id = ids.find(name);
        return id ? uses[*id] : 0;
    }
};
using table_ptr = mesh::sharing_ptr<symbol_table>;

// 4. One writer at a time, and no reader while it writes (threads share one
// copy of the table): every change goes to the core that owns the table
// (core 0), as the mutex's critical section did; the cores read once the
// changes are done.
std::uint32_t intern_on_owner(table_ptr t, std::string name) { return mesh::write(t)->intern(name); }

/// Each core interns some names through the owner.
void worker(table_ptr t) {
    for (const char* w : {"alpha", "beta", "gamma", "beta", "delta", "beta"})
        taco::sync(0, &intern_on_owner, t, std::string(w));
}

/// A count through this core's own view (a reader proxy: refreshed if the
/// table changed since this core last read it).
std::uint64_t uses_here(table_ptr t) { return mesh::read(t)->uses_of("beta"); }

int main(int argc, char** argv) {
    using namespace tacomesh::posix;
    const bool processes = argc > 1 && std::string_view(argv[1]) == "processes";
    const taco::core_id cores = argc > 2 ? taco::core_id(std::atoi(argv[2])) : 3;
    // 5. threads or processes: the same program.
    const config cfg{.cores = cores, .mode = processes ? execution_mode::processes : execution_mode::threads};
    taco::run(cfg, [cores] {
        auto table = mesh::make_shared_object<symbol_table>(); // 3. a shared object (Timestamp controller)
        std::vector<taco::future<void>> done(cores);
        for (taco::core_id c = 1; c < cores; ++c) taco::async(c, taco::m2f(&worker, table), done[c]);
        for (taco::core_id c = 1; c < cores; ++c) done[c].get();
        for (taco::core_id c = 1; c < cores; ++c) // every core's view agrees
            if (taco::sync(c, &uses_here, table) != 3 * (cores - 1)) std::printf("core %u read a stale count\n", c);
        auto r = mesh::read(table);
        std::printf("symbols %zu, uses of beta %llu (expected %u), of alpha %llu\n", r->ids.size(),
                    static_cast<unsigned long long>(r->uses_of("beta")), 3 * (cores - 1),
                    static_cast<unsigned long long>(r->uses_of("alpha")));
    });
}
