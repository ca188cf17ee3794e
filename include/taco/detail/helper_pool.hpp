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
        auto& free = list();
        if (free.empty()) return new H();
        H* h = free.back().release();
        free.pop_back();
        return h;
    }
    static void release(H* h) { list().emplace_back(h); }

private:
    static std::vector<std::unique_ptr<H>>& list() {
        static thread_local std::vector<std::unique_ptr<H>> free;
        return free;
    }
};

} // namespace taco::detail
