#pragma once
// Per-core free lists for the temporary helpers of collectives (CCI paper,
// Fig. 1: "the helper removes itself"). A helper lives and dies on one core,
// so the list is thread-local (one per core thread, or per core process) and
// needs no synchronisation; once warm, a collective allocates nothing.
//
// A message names a helper by its number in its core's pool of that type,
// not by its address: 4 bytes instead of 8 keep a contribution of a word
// in one 32-byte MPB line on a 64-bit host, as on the SCC's 32-bit cores
// (a line less on every level of a reduction's way up).
#include <cstdint>
#include <memory>
#include <vector>

namespace taco::detail {

template <class H>
class helper_pool {
public:
    struct lease {
        H* helper;
        std::uint32_t id; ///< at(id) == helper on this core until release(id)
    };
    static lease acquire() {
        auto& p = pool();
        if (p.free.empty()) {
            const auto id = std::uint32_t(p.all.size());
            return {p.all.emplace_back(std::make_unique<H>()).get(), id};
        }
        const std::uint32_t id = p.free.back();
        p.free.pop_back();
        return {p.all[id].get(), id};
    }
    static H* at(std::uint32_t id) noexcept { return pool().all[id].get(); }
    static void release(std::uint32_t id) { pool().free.push_back(id); }

private:
    // The pool owns every helper it made, free or in use: a collective that
    // never completes (a core failed, the run ended first) leaves its helper
    // to the pool, which frees it with the thread, instead of leaking it.
    struct state {
        std::vector<std::unique_ptr<H>> all;
        std::vector<std::uint32_t> free;
    };
    static state& pool() {
        static thread_local state s;
        return s;
    }
};

} // namespace taco::detail
