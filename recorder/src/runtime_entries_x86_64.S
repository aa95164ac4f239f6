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
   carries it past the restores; neither is an argument register): the
   saving and restoring are saved_arguments_x86_64.h's, as the
   trampoline's full path does them. */

#include "saved_arguments_x86_64.h"

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
    SAVE_ARGUMENTS
    movq %r11, %rdi                /* the stub's entry */
    call gpucap_runtime_resolve_entry
    movq %rax, SAVED_ANSWER(%rsp)  /* the function to call */
    RESTORE_ARGUMENTS              /* r11: the entry again, no longer needed */
    movq %r10, %r11                /* the trampoline calls r11 */
    jmp gpucap_gate_trampoline
    .cfi_endproc
    .size gpucap_runtime_resolve, .-gpucap_runtime_resolve

    .section .note.GNU-stack,"",@progbits
