#pragma once
// Coroutine stacks: guarded (one inaccessible page below each, so an
// overflow faults instead of corrupting a neighbour) and recycled through a
// per-thread free list, so that starting a coroutine on a warm core maps no
// memory.
#include <cstddef>
#include <vector>

#include <boost/context/protected_fixedsize_stack.hpp>
#include <boost/context/stack_context.hpp>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

namespace taco::detail {

/// A Boost.Context StackAllocator over the per-thread free list.
class pooled_stack {
public:
    explicit pooled_stack(std::size_t size) : size_(size) {}

    boost::context::stack_context allocate() {
        auto& free = pool();
        for (std::size_t i = free.size(); i-- > 0;) {
            if (free[i].size == size_) {
                const auto sc = free[i];
                free[i] = free.back();
                free.pop_back();
                return sc;
            }
        }
        return boost::context::protected_fixedsize_stack(size_).allocate();
    }
    void deallocate(boost::context::stack_context& sc) {
#if defined(__SANITIZE_ADDRESS__)
        // The frames that switched away for good (the context's entry and,
        // with Boost, its fiber_entry) never ran their epilogues: their
        // redzones are still poisoned. Clean the shadow, or the next user
        // of this memory (another coroutine, or any mapping at this
        // address once it is unmapped) gets false reports.
        ASAN_UNPOISON_MEMORY_REGION(static_cast<char*>(sc.sp) - sc.size, sc.size);
#endif
        auto& free = pool();
        if (free.size() < max_pooled) free.push_back(sc);
        else boost::context::protected_fixedsize_stack(sc.size).deallocate(sc);
    }

private:
    static constexpr std::size_t max_pooled = 256;
    struct free_list : std::vector<boost::context::stack_context> {
        ~free_list() {
            for (auto& sc : *this) boost::context::protected_fixedsize_stack(sc.size).deallocate(sc);
        }
    };
    static free_list& pool() {
        static thread_local free_list free;
        return free;
    }
    std::size_t size_;
};

} // namespace taco::detail
