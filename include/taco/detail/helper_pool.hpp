#pragma once
// Per-core free lists for the temporary helpers of collectives (CCI paper,
// Fig. 1: "the helper removes itself"). A helper lives and dies on one core,
// so the list is thread-local (one per core thread, or per core process) and
// needs no synchronisation; once warm, a collective allocates nothing.
#include <memory>
#include <vector>

namespace taco::detail {

template <class H>
class helper_pool {
public:
    static H* acquire() {
        auto& p = pool();
        if (p.free.empty()) return p.all.emplace_back(std::make_unique<H>()).get();
        H* h = p.free.back();
        p.free.pop_back();
        return h;
    }
    static void release(H* h) { pool().free.push_back(h); }

private:
    // The pool owns every helper it made, free or in use: a collective that
    // never completes (a core failed, the run ended first) leaves its helper
    // to the pool, which frees it with the thread, instead of leaking it.
    struct state {
        std::vector<std::unique_ptr<H>> all;
        std::vector<H*> free;
    };
    static state& pool() {
        static thread_local state s;
        return s;
    }
};

} // namespace taco::detail
