/* What boot's interposers of libc functions share (blocking.c, libc_state.c). */
#ifndef SKN_INTERPOSE_H
#define SKN_INTERPOSE_H

#include "base/base.h"

/* libc's own definition of `name`, looked up once and kept in *slot; fatal if missing. */
SKN_INTERNAL void *skn_real_fn(void *_Atomic *slot, const char *name);
#define SKN_REAL(name)                                                               \
  ({                                                                                 \
    static void *_Atomic real_slot;                                                  \
    (__typeof__(&name))skn_real_fn(&real_slot, #name);                               \
  })

#endif
