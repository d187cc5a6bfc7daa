/* Privatizer runtime inside libskein: per-rank copies of the privatized globals of every
 * registered module. Knows ranks (core) but nothing of MPI calls.
 * Thread safety: module registration happens before ranks exist or under a lock; a rank's
 * segments are created and freed by the rank's own ULT. */
#ifndef SKN_PRIV_H
#define SKN_PRIV_H

#include "core/core.h"

/* On the rank's ULT, before main: map its copy of each module, run the init hooks. */
SKN_INTERNAL void skn_priv_rank_start(skn_rank *r);
/* On the rank's ULT, when it ends: run its destructors (reverse order), unmap. */
SKN_INTERNAL void skn_priv_rank_end(skn_rank *r);

#endif
