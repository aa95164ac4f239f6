/* The entry gate's trampoline (driver_wrap.h). At entry: r11 = the wrapped
   function, [rsp] = the caller's return address, arguments in rdi rsi rdx
   rcx r8 r9 (al: vector registers used by a variadic call), xmm0-7 and on
   the stack above the return address. */
    .text
    .globl gpucap_gate_trampoline
    .hidden gpucap_gate_trampoline
    .type gpucap_gate_trampoline, @function
gpucap_gate_trampoline:
    .cfi_startproc
    pushq %r11
    pushq %rdi
    pushq %rsi
    pushq %rdx
    pushq %rcx
    pushq %r8
    pushq %r9
    pushq %rax
    subq $136, %rsp                /* xmm0-7 and the enter's answer; rsp 16-aligned */
    movdqu %xmm0, 0(%rsp)
    movdqu %xmm1, 16(%rsp)
    movdqu %xmm2, 32(%rsp)
    movdqu %xmm3, 48(%rsp)
    movdqu %xmm4, 64(%rsp)
    movdqu %xmm5, 80(%rsp)
    movdqu %xmm6, 96(%rsp)
    movdqu %xmm7, 112(%rsp)
    movq 200(%rsp), %rdi           /* the caller's return address */
    call gpucap_gate_enter
    movq %rax, 128(%rsp)
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
    popq %rax
    popq %r9
    popq %r8
    popq %rcx
    popq %rdx
    popq %rsi
    popq %rdi
    popq %r11
    testq %r10, %r10
    jz 1f
    addq $8, %rsp                  /* the caller's return address is on the thread's stack now */
    call *%r11                     /* fn sees its stack arguments where the caller put them */
    pushq %rax                     /* rsp 16-aligned after the two pushes */
    pushq %rdx
    call gpucap_gate_leave         /* returns the caller's return address */
    movq %rax, %r11
    popq %rdx
    popq %rax
    jmp *%r11
1:  jmp *%r11                      /* too deep: unwrapped */
    .cfi_endproc
    .size gpucap_gate_trampoline, .-gpucap_gate_trampoline
    .section .note.GNU-stack,"",@progbits
