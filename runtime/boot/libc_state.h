/* Per-rank state for libc functions with hidden process-wide state (libc_state.c).
 * Called by start-up only; the interposed libc functions themselves are exported. */
#ifndef SKN_LIBC_STATE_H
#define SKN_LIBC_STATE_H

#include "core/core.h"

/* The rank is ending (its main returned or it called exit): hands getopt's parser to the
 * next waiting rank if this one was parsing. Runs on the rank's own unit. */
SKN_INTERNAL void skn_libc_rank_end(skn_rank *r);

#endif
