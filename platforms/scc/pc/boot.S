// The PC stand-in's entry points (README "Booting under QEMU"): the
// multiboot header and the boot processor's entry, the application
// processors' real-mode trampoline, and the interrupt stubs. Everything
// else of the start-up is C++ (boot.cpp).
//
// Per-core stacks: STACK_BYTES each, core c's at tacomesh_pc_stacks +
// c * STACK_BYTES, found from the core's local APIC ID (its core index).

#define STACK_SHIFT 16
#define STACK_BYTES (1 << STACK_SHIFT)
#define MAX_CORES 48
#define APIC_ID 0xFEE00020
#define APIC_EOI 0xFEE000B0

// Multiboot v1: page-aligned modules, memory information; an ELF image, so
// QEMU loads its segments where their physical addresses say.
#define MB_MAGIC 0x1BADB002
#define MB_FLAGS 0x00000003

    .section .multiboot, "a"
    .align 4
    .long MB_MAGIC
    .long MB_FLAGS
    .long -(MB_MAGIC + MB_FLAGS)

    .section .text
    .code32
    .globl _start
// The boot processor, from the loader: flat protected mode, interrupts off,
// eax the multiboot magic, ebx the information structure; no valid GDT, no
// stack. .bss is cleared here, before anything lives in it (the stacks do).
_start:
    cli
    cld
    mov %eax, %esi
    mov %ebx, %ebp
    lgdt tacomesh_pc_gdt_descriptor
    ljmp $0x08, $1f
1:  mov $0x10, %ax
    mov %ax, %ds
    mov %ax, %es
    mov %ax, %fs
    mov %ax, %gs
    mov %ax, %ss
    mov $__bss_start, %edi
    mov $__bss_end, %ecx
    sub %edi, %ecx
    xor %eax, %eax
    rep stosb
    mov $(tacomesh_pc_stacks + STACK_BYTES), %esp
    push %ebp
    push %esi
    call tacomesh_pc_boot
2:  cli
    hlt
    jmp 2b

// An application processor, from the trampoline: protected mode, our GDT.
// Its stack from its APIC ID; an ID the stacks have no room for parks.
ap_start32:
    mov $0x10, %ax
    mov %ax, %ds
    mov %ax, %es
    mov %ax, %fs
    mov %ax, %gs
    mov %ax, %ss
    mov APIC_ID, %eax
    shr $24, %eax
    cmp $MAX_CORES, %eax
    jae 2b
    lea 1(%eax), %ecx
    shl $STACK_SHIFT, %ecx
    add $tacomesh_pc_stacks, %ecx
    mov %ecx, %esp
    push %eax
    call tacomesh_pc_ap_boot
    jmp 2b

// Exceptions 0-31: the vector and an error code (0 where the CPU pushes
// none), then tacomesh_pc_exception(vector, error, eip), which reports and
// ends the run.
.macro exception_stub n
exception_\n:
    .if (\n == 8) || (\n >= 10 && \n <= 14) || (\n == 17) || (\n == 21) || (\n == 29) || (\n == 30)
    .else
    push $0
    .endif
    push $\n
    jmp exception_common
.endm
.irp n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
    exception_stub \n
.endr
exception_common:
    cld
    call tacomesh_pc_exception
    jmp 2b

// The SCC's LINT0 stand-in (the fixed IPI): the start-up interface's stub,
// as on the chip: eax, ecx and edx saved (the handler is C++ following the
// cdecl convention, integer code only), the handler, EOI, iret.
    .globl tacomesh_pc_lint_stub
tacomesh_pc_lint_stub:
    push %eax
    push %ecx
    push %edx
    cld
    call tacomesh_scc_lint_handler
    movl $0, APIC_EOI
    pop %edx
    pop %ecx
    pop %eax
    iret

// Interrupts that call a hook with the interrupted eip, if one is set: the
// local APIC timer (there to wake hlt, halt()'s bound; the TACO platform
// retries a preemption from it) and the preemption IPI (the platform runs
// urgent invocations in it, pc/platform.hpp). The hook is C++ and may use
// the x87 unit, so its state is saved (fsave: the P54C has no fxsave) with
// the caller-saved registers; the stack is aligned to 16 for it. Interrupts
// stay off in the hook (an interrupt gate): interruptions do not nest.
.macro hooked_stub name, hook
    .globl \name
\name:
    push %eax
    push %ecx
    push %edx
    push %ebp
    mov %esp, %ebp
    mov 16(%ebp), %ecx          // the interrupted eip, above the four pushes
    sub $108, %esp
    and $-16, %esp
    fsave (%esp)
    cld
    mov \hook, %eax
    test %eax, %eax
    jz 1f
    sub $12, %esp
    push %ecx
    call *%eax
    add $16, %esp
1:  frstor (%esp)
    movl $0, APIC_EOI
    mov %ebp, %esp
    pop %ebp
    pop %edx
    pop %ecx
    pop %eax
    iret
.endm
    hooked_stub tacomesh_pc_timer_stub, tacomesh_pc_timer_hook
    hooked_stub tacomesh_pc_preempt_stub, tacomesh_pc_preempt_hook

// Spurious interrupts get no EOI.
    .globl tacomesh_pc_spurious_stub
tacomesh_pc_spurious_stub:
    iret

    .section .rodata
    .align 4
    .globl tacomesh_pc_exception_stubs
tacomesh_pc_exception_stubs:
.irp n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
    .long exception_\n
.endr

// Flat 4 GB code (0x08) and data (0x10) segments, ring 0; then a data
// segment per core for %gs, whose base runtime.cpp sets to the core's
// thread-local block (selector (3 + core) * 8).
    .section .data
    .align 8
    .globl tacomesh_pc_gdt
tacomesh_pc_gdt:
gdt:
    .quad 0
    .quad 0x00CF9A000000FFFF
    .quad 0x00CF92000000FFFF
    .skip 8 * MAX_CORES
gdt_end:
    .globl tacomesh_pc_gdt_descriptor
tacomesh_pc_gdt_descriptor:
    .word gdt_end - gdt - 1
    .long gdt

// The application processors start here in real mode, at the page the
// startup IPI names: the linker script places this section at 0x8000 and
// boot.cpp copies it there. It loads the GDT (the descriptor is repeated
// here: real mode reaches only the first megabyte), turns protected mode on
// and jumps to ap_start32 in the image.
    .section .trampoline, "ax"
    .code16
    .globl tacomesh_pc_trampoline
tacomesh_pc_trampoline:
    cli
    cld
    xor %ax, %ax
    mov %ax, %ds
    lgdtl trampoline_gdt_descriptor
    mov %cr0, %eax
    or $1, %eax
    mov %eax, %cr0
    ljmpl $0x08, $ap_start32
    .align 4
trampoline_gdt_descriptor:
    .word gdt_end - gdt - 1
    .long gdt

    .section .bss
    .align 16
    .globl tacomesh_pc_stacks
tacomesh_pc_stacks:
    .skip STACK_BYTES * MAX_CORES

    .section .note.GNU-stack, "", @progbits
