/* A call out of a stub with every argument of the stub's caller kept
   (GNU assembler macros, included by driver_wrap_x86_64.S and
   runtime_entries_x86_64.S): SAVE_ARGUMENTS pushes r11 (the stub's word:
   the wrapped function, or a runtime stub's entry), rdi rsi rdx rcx r8 r9
   and rax (a variadic call's vector count), then xmm0-7 and one word for
   the callee's answer; RESTORE_ARGUMENTS puts them all back and leaves that
   answer in r10 (no argument register). Between the two, the caller's
   return address is at SAVED_RETURN_ADDRESS(%rsp) and the answer goes to
   SAVED_ANSWER(%rsp). Entered with rsp 8 mod 16 (just called), rsp is 16-
   aligned between the two, ready for a call. */
#ifndef GPUCAP_RECORDER_SAVED_ARGUMENTS_X86_64_H_
#define GPUCAP_RECORDER_SAVED_ARGUMENTS_X86_64_H_

#define SAVED_ANSWER 128
#define SAVED_RETURN_ADDRESS 200

.macro SAVE_ARGUMENTS
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
    subq $136, %rsp                /* xmm0-7 and the answer */
    .cfi_adjust_cfa_offset 136
    movdqu %xmm0, 0(%rsp)
    movdqu %xmm1, 16(%rsp)
    movdqu %xmm2, 32(%rsp)
    movdqu %xmm3, 48(%rsp)
    movdqu %xmm4, 64(%rsp)
    movdqu %xmm5, 80(%rsp)
    movdqu %xmm6, 96(%rsp)
    movdqu %xmm7, 112(%rsp)
.endm

.macro RESTORE_ARGUMENTS
    movdqu 0(%rsp), %xmm0
    movdqu 16(%rsp), %xmm1
    movdqu 32(%rsp), %xmm2
    movdqu 48(%rsp), %xmm3
    movdqu 64(%rsp), %xmm4
    movdqu 80(%rsp), %xmm5
    movdqu 96(%rsp), %xmm6
    movdqu 112(%rsp), %xmm7
    movq SAVED_ANSWER(%rsp), %r10
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
    popq %r11
    .cfi_adjust_cfa_offset -8
.endm

#endif  /* GPUCAP_RECORDER_SAVED_ARGUMENTS_X86_64_H_ */
