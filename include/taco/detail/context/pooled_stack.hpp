#pragma once
// Coroutine stacks: guarded (one inaccessible page below each, so an
// overflow faults instead of corrupting a neighbour) and recycled through a
// per-thread free list, so that starting a coroutine on a warm core maps no
// memory.
#include <cstddef>
#include <vector>

#include <boost/context/protected_fixedsize_stack.hpp>
#include <boost/context/stack_context.hpp>
#include <boost/context/stack_traits.hpp>

#include <taco/detail/context/sanitizer_reports.hpp>

namespace taco::detail {

/// A Boost.Context StackAllocator over the per-thread free list.
class pooled_stack {
public:
    explicit pooled_stack(std::size_t size) : size_(size) {}

    boost::context::stack_context allocate() {
        auto& free = pool();
        for (std::size_t i = free.size(); i-- > 0;) {
            if (free[i].requested == size_) {
                const auto sc = free[i].stack;
                free[i] = free.back();
                free.pop_back();
                return sc;
            }
        }
        return boost::context::protected_fixedsize_stack(size_).allocate();
    }
    void deallocate(boost::context::stack_context& sc) {
#if TACO_ASAN_FIBERS
        // The frames that switched away for good (the context's entry and,
        // with Boost, its fiber_entry) never ran their epilogues: their
        // redzones are still poisoned. Clean the shadow, or the next user
        // of this memory (another coroutine, or any mapping at this
        // address once it is unmapped) gets false reports.
        ASAN_UNPOISON_MEMORY_REGION(static_cast<char*>(sc.sp) - sc.size, sc.size);
#endif
        auto& free = pool();
        if (free.size() < max_pooled) free.push_back({size_, sc});
        else boost::context::protected_fixedsize_stack(sc.size).deallocate(sc);
    }

    /// The lowest page of a stack handed out here: inaccessible, so that an
    /// overflow faults there (sc.size counts it).
    static bool in_guard_page(const boost::context::stack_context& sc, const void* address) noexcept {
        const auto* bottom = static_cast<const char*>(sc.sp) - sc.size;
        const auto* a = static_cast<const char*>(address);
        return a >= bottom && a < bottom + boost::context::stack_traits::page_size();
    }

private:
    static constexpr std::size_t max_pooled = 256;
    // Keyed by the size asked for: the stack_context's size is larger (it
    // counts the guard page and rounds up to pages).
    struct entry {
        std::size_t requested;
        boost::context::stack_context stack;
    };
    struct free_list : std::vector<entry> {
        ~free_list() {
            for (auto& e : *this) boost::context::protected_fixedsize_stack(e.stack.size).deallocate(e.stack);
        }
    };
    static free_list& pool() {
        static thread_local free_list free;
        return free;
    }
    std::size_t size_;
};

} // namespace taco::detail
