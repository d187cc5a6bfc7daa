/* User-level context switch for x86-64 System V.
 * void skn_ctx_switch(void **save_sp, void *load_sp, _Atomic(uint8_t) *saved)
 *   Pushes the callee-saved registers, MXCSR and the x87 control word on the current
 *   stack, stores the stack pointer in *save_sp, clears the byte *saved (if not NULL:
 *   from then on another thread may resume the saved context; x86-64 keeps stores in
 *   order, so the clear is a release), loads load_sp and pops the same frame.
 * skn_ctx_trampoline: first "return address" of a new context; r12 = entry, r13 = arg. */
    .text
    .globl  skn_ctx_switch
    .hidden skn_ctx_switch
    .type   skn_ctx_switch, @function
skn_ctx_switch:
    .cfi_startproc
    pushq   %rbp
    pushq   %rbx
    pushq   %r12
    pushq   %r13
    pushq   %r14
    pushq   %r15
    subq    $8, %rsp
    stmxcsr (%rsp)
    fnstcw  4(%rsp)
    movq    %rsp, (%rdi)
    testq   %rdx, %rdx
    jz      1f
    movb    $0, (%rdx)
1:
    movq    %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw   4(%rsp)
    addq    $8, %rsp
    popq    %r15
    popq    %r14
    popq    %r13
    popq    %r12
    popq    %rbx
    popq    %rbp
    ret
    .cfi_endproc
    .size   skn_ctx_switch, .-skn_ctx_switch

    .globl  skn_ctx_trampoline
    .hidden skn_ctx_trampoline
    .type   skn_ctx_trampoline, @function
skn_ctx_trampoline:
    .cfi_startproc
    .cfi_undefined rip
    movq    %r13, %rdi
    callq   *%r12
    ud2
    .cfi_endproc
    .size   skn_ctx_trampoline, .-skn_ctx_trampoline

    .section .note.GNU-stack,"",@progbits
