/* The runtime's entry points (runtime_entries.h): for each name in
   runtime_entries.inc, an exported function of that name and an entry of
   two words (the runtime's function once resolved, the name). The stub
   loads the function into r11 and jumps to the gate's trampoline
   (driver_wrap_x86_64.S), which enters the gate, calls it with the caller's
   arguments untouched and leaves; until it is resolved, the stub jumps to
   gpucap_runtime_resolve with r11 = its entry, which saves every argument
   register, calls gpucap_runtime_resolve_entry(entry) (C++: it returns the
   function and fills the entry's first word once the runtime has it),
   restores them and jumps to the trampoline with the function in r11 (r10
   carries it past the restores; neither is an argument register). At the resolver's entry rsp is 8 mod 16; eight pushes and 136
   bytes make it 0 mod 16 at the call. */

#define GPUCAP_RUNTIME_ENTRY(name)                                          \
    .section .data.rel.local,"aw";                                         \
    .p2align 3;                                                             \
gpucap_runtime_entry_##name:                                                \
    .quad 0;                                                                \
    .quad gpucap_runtime_name_##name;                                       \
    .section .rodata.str1.1,"aMS",@progbits,1;                              \
gpucap_runtime_name_##name:                                                 \
    .asciz #name;                                                           \
    .text;                                                                  \
    .globl name;                                                            \
    .type name, @function;                                                  \
    .p2align 4;                                                             \
name:                                                                       \
    movq gpucap_runtime_entry_##name(%rip), %r11;                           \
    testq %r11, %r11;                                                       \
    jz 1f;                                                                  \
    jmp gpucap_gate_trampoline;                                             \
1:  leaq gpucap_runtime_entry_##name(%rip), %r11;                           \
    jmp gpucap_runtime_resolve;                                             \
    .size name, .-name;

#include "runtime_entries.inc"

    .text
    .p2align 4
    .type gpucap_runtime_resolve, @function
gpucap_runtime_resolve:
    .cfi_startproc
    pushq %r11
    .cfi_adjust_cfa_offset 8
    pushq %rdi
    .cfi_adjust_cfa_offset 8
    pushq %rsi
    .cfi_adjust_cfa_offset 8
    pushq %rdx
    .cfi_adjust_cfa_offset 8
    pushq %rcx
    .cfi_adjust_cfa_offset 8
    pushq %r8
    .cfi_adjust_cfa_offset 8
    pushq %r9
    .cfi_adjust_cfa_offset 8
    pushq %rax
    .cfi_adjust_cfa_offset 8
    subq $136, %rsp
    .cfi_adjust_cfa_offset 136
    movdqu %xmm0, 0(%rsp)
    movdqu %xmm1, 16(%rsp)
    movdqu %xmm2, 32(%rsp)
    movdqu %xmm3, 48(%rsp)
    movdqu %xmm4, 64(%rsp)
    movdqu %xmm5, 80(%rsp)
    movdqu %xmm6, 96(%rsp)
    movdqu %xmm7, 112(%rsp)
    movq %r11, %rdi
    call gpucap_runtime_resolve_entry
    movq %rax, 128(%rsp)           /* the function to call (the pad word) */
    movdqu 0(%rsp), %xmm0
    movdqu 16(%rsp), %xmm1
    movdqu 32(%rsp), %xmm2
    movdqu 48(%rsp), %xmm3
    movdqu 64(%rsp), %xmm4
    movdqu 80(%rsp), %xmm5
    movdqu 96(%rsp), %xmm6
    movdqu 112(%rsp), %xmm7
    movq 128(%rsp), %r10
    addq $136, %rsp
    .cfi_adjust_cfa_offset -136
    popq %rax
    .cfi_adjust_cfa_offset -8
    popq %r9
    .cfi_adjust_cfa_offset -8
    popq %r8
    .cfi_adjust_cfa_offset -8
    popq %rcx
    .cfi_adjust_cfa_offset -8
    popq %rdx
    .cfi_adjust_cfa_offset -8
    popq %rsi
    .cfi_adjust_cfa_offset -8
    popq %rdi
    .cfi_adjust_cfa_offset -8
    popq %r11                      /* the entry, no longer needed */
    .cfi_adjust_cfa_offset -8
    movq %r10, %r11                /* the trampoline calls r11 */
    jmp gpucap_gate_trampoline
    .cfi_endproc
    .size gpucap_runtime_resolve, .-gpucap_runtime_resolve

    .section .note.GNU-stack,"",@progbits
