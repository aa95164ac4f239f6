/* libgpucap_gate's dlsym (gate_preload.cc): RTLD_NEXT lookups go straight
   to glibc's dlsym with the caller's return address in place (glibc finds
   "next" from it); every other lookup goes to gpucap_gate_dlsym, which wraps
   the driver's entry points. */
    .text
    .globl dlsym
    .type dlsym, @function
dlsym:
    .cfi_startproc
    cmpq $-1, %rdi                 /* RTLD_NEXT */
    je 1f
    jmp gpucap_gate_dlsym
1:  movq gpucap_real_dlsym(%rip), %rax
    testq %rax, %rax
    jz 2f
    jmp *%rax
2:  jmp gpucap_gate_dlsym          /* before the library's constructor: no caller-relative lookup */
    .cfi_endproc
    .size dlsym, .-dlsym
    .section .note.GNU-stack,"",@progbits
