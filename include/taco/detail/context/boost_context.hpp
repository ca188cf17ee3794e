#pragma once
// The portable execution context: a Boost.Context fiber. Every switch is a
// call into jump_fcontext (in libboost_context), which saves the
// callee-saved registers and the floating-point control words.
#include <cstddef>
#include <memory>
#include <utility>

#include <boost/context/fiber.hpp>

#include <taco/detail/context/pooled_stack.hpp>
#include <taco/detail/context/sanitizer_reports.hpp>

namespace taco::detail {

class boost_context {
public:
    boost_context() = default;
    boost_context(const boost_context&) = delete;
    boost_context& operator=(const boost_context&) = delete;

    /// Prepare a stack on which main(arg) runs from the first resume().
    void start(std::size_t stack_size, void (*main)(void*) noexcept, void* arg) {
        auto stack = pooled_stack(stack_size);
        requested_ = stack_size;
        stack_ = stack.allocate();
        // preallocated: the fiber's control block goes on the stack we chose,
        // and its exit hands the stack back to the pool.
        self_ = boost::context::fiber(
            std::allocator_arg, boost::context::preallocated(stack_.sp, stack_.size, stack_), stack,
            [this, main, arg](boost::context::fiber&& resumer) {
                resumer_ = std::move(resumer);
                reports_.entered();
                main(arg);
                finished_ = true;
                reports_.leaving(true);
                return std::move(resumer_);
            });
    }
    /// From the resumer: run the coroutine until it suspends (false) or its
    /// main returns (true; the stack is then released).
    bool resume() {
        reports_.switching_to(stack_.sp, stack_.size);
        self_ = std::move(self_).resume();
        reports_.switched_back();
        return finished_;
    }
    /// From the coroutine: back to the resumer.
    void suspend() {
        reports_.leaving(false);
        resumer_ = std::move(resumer_).resume();
        reports_.entered();
    }

    /// The stack as mapped (its size counts the guard page), for the
    /// sanitizers and the overflow report.
    const boost::context::stack_context& stack() const noexcept { return stack_; }
    /// The usable size asked for at start().
    std::size_t requested_size() const noexcept { return requested_; }

private:
    boost::context::fiber self_;    // the coroutine, while it is not running
    boost::context::fiber resumer_; // whoever resumed it, while it runs
    boost::context::stack_context stack_{};
    std::size_t requested_ = 0;
    bool finished_ = false;
    switch_reports reports_;
};

} // namespace taco::detail
