/* The entry gate's trampoline (driver_wrap.h). At entry: r11 = the wrapped
   function (the stub put it there), [rsp] = the caller's return address,
   arguments in rdi rsi rdx rcx r8 r9 (al: vector registers used by a
   variadic call), xmm0-7 and on the stack above the return address. r10
   and r11 are the only registers free (the SysV ABI's scratch registers
   that carry no argument).

   The fast path, taken when the thread already has its Slot, the gate word
   (gpucap_gate_state) is 0 (open, with membarrier) and fewer than
   GPUCAP_GATE_MAX_DEPTH wrapped calls of the thread are in flight: 17
   instructions before fn and 8 after, with the stub's 2 (counted:
   bench/gate/call_cost.sh). It is EntryGate::Enter's asymmetric path in
   assembly: depth + 1 (and the entry count + 1: driver_wrap_abi.h) by a
   plain store, THEN the load of the gate word, in
   that order (the closer's membarrier orders every running thread's store
   against its scan: the asymmetric Dekker of entry_gate.h); then the
   caller's return address moves from the machine stack to the thread's
   frames (so that fn finds its stack arguments where the caller put them),
   fn runs with every argument register untouched, depth - 1 (a release
   store: every x86 store is one), and the frame pops back into a jump to
   the caller, with rax rdx xmm0 xmm1 (fn's results) as fn left them. rax,
   borrowed for the frames' index, is pushed and popped before the call.
   Any other case (no slot yet, the gate closed or without membarrier, too
   deep) undoes the depth + 1 and takes the full path below: every
   register saved, gpucap_gate_enter (EntryGate::Enter: registration, the
   wait while closed, the exemptions, the depth limit), fn,
   gpucap_gate_leave with fn's results kept (rax rdx xmm0 xmm1, as on the
   fast path).

   Thread-local data by initial-exec through the GOT (sym@gottpoff, then
   %fs-relative): the linker resolves the offsets, so the stubs stay two
   instructions of position-free code that need nothing patched in them;
   baking the offsets into each stub as immediates would save one load per
   variable but tie the stub's bytes to the layout of the static TLS block.
   The order of the frames' updates keeps a frame intact against a signal
   handler's wrapped call in between (the count grows before the frame is
   written and shrinks after it is read).

   Unwinding: the CFI follows every push; once the caller's return address
   is on the thread's frames (which DWARF cannot name), it marks the return
   address undefined, so that an unwinder stops at the trampoline rather
   than walk on from a wrong one. */
#include "driver_wrap_abi.h"
#include "saved_arguments_x86_64.h"

    .text
    .globl gpucap_gate_trampoline
    .hidden gpucap_gate_trampoline
    .type gpucap_gate_trampoline, @function
    .p2align 4
gpucap_gate_trampoline:
    .cfi_startproc
    movq GPUCAP_GATE_SLOT_TLS@gottpoff(%rip), %r10
    movq %fs:(%r10), %r10                  /* the thread's Slot */
    testq %r10, %r10
    jz .Lfull                              /* none yet: Enter() registers the thread */
    addl $GPUCAP_GATE_ENTRY, GPUCAP_GATE_SLOT_DEPTH(%r10)  /* depth + 1, entries + 1 */
    cmpl $0, gpucap_gate_state(%rip)       /* then the gate word */
    jne .Lundo_depth                       /* closed, or no membarrier */
    pushq %rax
    .cfi_adjust_cfa_offset 8
    movq gpucap_gate_frames@gottpoff(%rip), %r10
    movl %fs:GPUCAP_GATE_FRAMES_N(%r10), %eax
    cmpl $GPUCAP_GATE_MAX_DEPTH, %eax
    jae .Ltoo_deep
    incl %fs:GPUCAP_GATE_FRAMES_N(%r10)
    leaq GPUCAP_GATE_FRAMES_RET(%r10,%rax,8), %r10  /* the thread's free frame, as an offset from %fs */
    popq %rax                              /* given back before fn */
    .cfi_adjust_cfa_offset -8
    popq %fs:(%r10)                        /* the caller's return address moves to it */
    .cfi_def_cfa_offset 0
    .cfi_undefined %rip
    call *%r11                             /* fn sees its stack arguments where the caller put them */
    movq GPUCAP_GATE_SLOT_TLS@gottpoff(%rip), %r10
    movq %fs:(%r10), %r10
    decl GPUCAP_GATE_SLOT_DEPTH(%r10)      /* depth - 1 */
    movq gpucap_gate_frames@gottpoff(%rip), %r10
    movl %fs:GPUCAP_GATE_FRAMES_N(%r10), %r11d
    movq %fs:GPUCAP_GATE_FRAMES_RET-8(%r10,%r11,8), %r11  /* the caller's return address */
    decl %fs:GPUCAP_GATE_FRAMES_N(%r10)
    jmp *%r11

.Ltoo_deep:                                /* rax pushed */
    .cfi_def_cfa_offset 16
    .cfi_restore %rip
    popq %rax
    .cfi_adjust_cfa_offset -8
    movq GPUCAP_GATE_SLOT_TLS@gottpoff(%rip), %r10
    movq %fs:(%r10), %r10
.Lundo_depth:
    subl $GPUCAP_GATE_ENTRY, GPUCAP_GATE_SLOT_DEPTH(%r10)  /* as if never entered: Enter() decides */
.Lfull:
    SAVE_ARGUMENTS
    movq SAVED_RETURN_ADDRESS(%rsp), %rdi  /* the caller's return address */
    call gpucap_gate_enter
    movq %rax, SAVED_ANSWER(%rsp)
    RESTORE_ARGUMENTS
    testq %r10, %r10
    jz 1f
    addq $8, %rsp                  /* the caller's return address is on the thread's frames now */
    .cfi_def_cfa_offset 0
    .cfi_undefined %rip
    call *%r11                     /* fn sees its stack arguments where the caller put them */
    subq $48, %rsp                 /* fn's results, kept as the fast path keeps them; rsp 16-aligned */
    .cfi_adjust_cfa_offset 48
    movdqu %xmm0, 0(%rsp)
    movdqu %xmm1, 16(%rsp)
    movq %rax, 32(%rsp)
    movq %rdx, 40(%rsp)
    call gpucap_gate_leave         /* returns the caller's return address */
    movq %rax, %r11
    movdqu 0(%rsp), %xmm0
    movdqu 16(%rsp), %xmm1
    movq 32(%rsp), %rax
    movq 40(%rsp), %rdx
    addq $48, %rsp
    .cfi_adjust_cfa_offset -48
    jmp *%r11
1:                                 /* too deep: unwrapped */
    .cfi_def_cfa_offset 8
    .cfi_restore %rip
    jmp *%r11
    .cfi_endproc
    .size gpucap_gate_trampoline, .-gpucap_gate_trampoline
    .section .note.GNU-stack,"",@progbits
