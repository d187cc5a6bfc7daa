/* CPU context switch, one implementation per architecture (arch/switch_<arch>.S). */
#ifndef SKN_SCHED_CTX_H
#define SKN_SCHED_CTX_H

#include <stdint.h>

#include "base/base.h"

/* Saves the current context in *save_sp, then clears *saved (when not NULL: the mark that
 * the context may now be resumed by another thread, a plain byte store, which is a
 * release on x86-64), then resumes the context at load_sp. */
SKN_INTERNAL void skn_ctx_switch(void **save_sp, void *load_sp, _Atomic(uint8_t) *saved);
SKN_INTERNAL void skn_ctx_trampoline(void);

/* Builds the initial frame of a context that will call entry(arg) on the stack that
 * ends at stack_hi, and returns its stack pointer. entry must not return. */
static inline void *skn_ctx_make(char *stack_hi, void (*entry)(void *), void *arg) {
#if defined(__x86_64__)
  uintptr_t top = (uintptr_t)stack_hi & ~(uintptr_t)15;
  uint64_t *sp = (uint64_t *)top;
  *--sp = (uint64_t)(uintptr_t)skn_ctx_trampoline; /* return address */
  *--sp = 0;                                       /* rbp */
  *--sp = 0;                                       /* rbx */
  *--sp = (uint64_t)(uintptr_t)entry;              /* r12 */
  *--sp = (uint64_t)(uintptr_t)arg;                /* r13 */
  *--sp = 0;                                       /* r14 */
  *--sp = 0;                                       /* r15 */
  *--sp = 0x1F80ull | (0x037Full << 32);           /* MXCSR, x87 control word */
  return sp;
#else
#error "Skein has a context switch for x86-64 only (runtime/sched/arch/)"
#endif
}

#endif
