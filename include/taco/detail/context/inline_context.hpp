#pragma once
// The x86 execution context: the stack switch is inline assembly in the
// code that resumes or suspends, not a call into jump_fcontext. x86-64, and
// 32-bit x86 for the SCC's cores (the bare-metal build, where no
// Boost.Context library is there to link).
//
// Why not Boost.Context here: its switch is a call whose return happens on
// the other stack (jump_fcontext ends with an indirect jmp), so the CPU's
// return-stack buffer goes out of step at every switch and the next `ret`
// on each side mispredicts. With the switch inline, a resume inside
// task::run() pairs the scheduler's `call run` with run()'s own `ret`, and
// the only branches the switch adds are two indirect jmps, one per site,
// which the branch target buffer predicts. It also saves no more than the
// enclosing function needs: the asm clobbers every register but rsp/rbp,
// and the compiler spills only what is live across it.
//
// What it does not save: the MXCSR and x87 control words (rounding mode,
// exception masks). Coroutines share their core thread's floating-point
// environment, as the activities and protothreads on that core do.
#include <cstddef>
#include <type_traits>

#include <boost/context/stack_context.hpp>

#include <taco/detail/context/pooled_stack.hpp>
#include <taco/detail/context/sanitizer_reports.hpp>

#if !defined(__x86_64__) && !defined(__i386__)
#error "taco/detail/context/inline_context.hpp is x86 only; other targets use boost_context"
#endif

namespace taco::detail {

// Saves this side's rbp and resume address on its own stack, stores its
// stack pointer in *save, and continues the other side at `to` (a stack
// pointer saved the same way). Returns when something switches back here.
// The 128 bytes step over the red zone: the enclosing function may be a
// leaf that keeps locals below rsp, where the pushes would land. `save`
// stays in rdi across the jump: a fresh stack's entry receives it as its
// first argument.
#if defined(__x86_64__)
#if defined(__AVX512F__)
#define TACO_CONTEXT_AVX512_CLOBBERS                                                                     \
    , "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "xmm24", "xmm25", "xmm26", \
        "xmm27", "xmm28", "xmm29", "xmm30", "xmm31"
#else
#define TACO_CONTEXT_AVX512_CLOBBERS
#endif
[[gnu::always_inline]] inline void switch_stack(void** save, void* to) noexcept {
    asm volatile("subq $128, %%rsp\n\t"
                 "leaq 1f(%%rip), %%rax\n\t"
                 "pushq %%rbp\n\t"
                 "pushq %%rax\n\t"
                 "movq %%rsp, (%0)\n\t"
                 "movq %1, %%rsp\n\t"
                 "popq %%rax\n\t"
                 "popq %%rbp\n\t"
                 "jmpq *%%rax\n"
                 "1:\n\t"
#if defined(__CET__)
                 "endbr64\n\t"
#endif
                 "addq $128, %%rsp"
                 : "+D"(save), "+S"(to)
                 :
                 : "rax", "rbx", "rcx", "rdx", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "xmm0",
                   "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
                   "xmm12", "xmm13", "xmm14", "xmm15", "st", "st(1)", "st(2)", "st(3)", "st(4)", "st(5)",
                   "st(6)", "st(7)", "mm0", "mm1", "mm2", "mm3", "mm4", "mm5", "mm6", "mm7", "cc",
                   "memory" TACO_CONTEXT_AVX512_CLOBBERS);
}
#undef TACO_CONTEXT_AVX512_CLOBBERS
#else
// 32-bit: no red zone. The resume address comes from call/pop (the same
// text in position-independent code); ebx may be clobbered, GCC saves it
// where it holds the GOT.
#if defined(__SSE__)
#define TACO_CONTEXT_SSE_CLOBBERS , "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7"
#else
#define TACO_CONTEXT_SSE_CLOBBERS
#endif
[[gnu::always_inline]] inline void switch_stack(void** save, void* to) noexcept {
    asm volatile("call 2f\n"
                 "2:\n\t"
                 "popl %%eax\n\t"
                 "addl $1f-2b, %%eax\n\t"
                 "pushl %%ebp\n\t"
                 "pushl %%eax\n\t"
                 "movl %%esp, (%0)\n\t"
                 "movl %1, %%esp\n\t"
                 "popl %%eax\n\t"
                 "popl %%ebp\n\t"
                 "jmp *%%eax\n"
                 "1:"
                 : "+D"(save), "+S"(to)
                 :
                 : "eax", "ebx", "ecx", "edx", "st", "st(1)", "st(2)", "st(3)", "st(4)", "st(5)", "st(6)", "st(7)",
                   "cc", "memory" TACO_CONTEXT_SSE_CLOBBERS);
}
#undef TACO_CONTEXT_SSE_CLOBBERS
#endif

class inline_context {
public:
    inline_context() = default;
    inline_context(const inline_context&) = delete;
    inline_context& operator=(const inline_context&) = delete;
    ~inline_context() {
        // Still set only if the coroutine never finished: its frames are
        // abandoned (nothing on it is destroyed), the memory is not.
        if (stack_.sp) pooled_stack(requested_).deallocate(stack_);
    }

    /// Prepare a stack on which main(arg) runs from the first resume().
    void start(std::size_t stack_size, void (*main)(void*) noexcept, void* arg) {
        requested_ = stack_size;
        stack_ = pooled_stack(stack_size).allocate();
        main_ = main;
        arg_ = arg;
        // The frame the first switch pops: resume address `entry`, rbp 0,
        // then entry's return address, null so that unwinders and debuggers
        // stop there. entry then starts with rsp = 8 (mod 16), as after a call.
        auto* top = static_cast<void**>(stack_.sp);
#if defined(__x86_64__)
        top[-1] = nullptr;
        top[-2] = nullptr;
        top[-3] = reinterpret_cast<void*>(&entry);
        self_sp_ = top - 3;
#else
        // 32-bit: entry's argument (&resumer_sp_) on the stack above its
        // null return address, so that entry starts with esp + 4 a
        // multiple of 16, as after a call.
        top[-2] = &resumer_sp_;
        top[-3] = nullptr;
        top[-4] = nullptr;
        top[-5] = reinterpret_cast<void*>(&entry);
        self_sp_ = top - 5;
#endif
    }
    /// From the resumer: run the coroutine until it suspends (false) or its
    /// main returns (true; the stack is then released).
    bool resume() noexcept {
        reports_.switching_to(stack_.sp, stack_.size);
        switch_stack(&resumer_sp_, self_sp_);
        reports_.switched_back();
        if (!finished_) return false;
        pooled_stack(requested_).deallocate(stack_);
        stack_ = {};
        return true;
    }
    /// From the coroutine: back to the resumer.
    void suspend() noexcept {
        reports_.leaving(false);
        switch_stack(&self_sp_, resumer_sp_);
        reports_.entered();
    }

    /// The stack as mapped (its size counts the guard page), for the
    /// sanitizers and the overflow report; null once released.
    const boost::context::stack_context& stack() const noexcept { return stack_; }
    /// The usable size asked for at start().
    std::size_t requested_size() const noexcept { return requested_; }

private:
    // Reached by the first switch with rdi = &resumer_sp_ (switch_stack's
    // `save`; on 32-bit x86 start() put it on the stack), the first member
    // of this standard-layout class.
    [[noreturn]] static void entry(void** resumer_slot) noexcept {
        auto* self = reinterpret_cast<inline_context*>(resumer_slot);
        self->reports_.entered();
        self->main_(self->arg_);
        self->finished_ = true;
        self->reports_.leaving(true);
        switch_stack(&self->self_sp_, self->resumer_sp_); // for good
        __builtin_unreachable();
    }

    void* resumer_sp_ = nullptr; // first: see entry()
    void* self_sp_ = nullptr;
    void (*main_)(void*) noexcept = nullptr;
    void* arg_ = nullptr;
    boost::context::stack_context stack_{};
    std::size_t requested_ = 0;
    bool finished_ = false;
    switch_reports reports_;
};
static_assert(std::is_standard_layout_v<inline_context>, "entry() finds the context from its first member");

} // namespace taco::detail
