/* Blocking libc calls of ranks as scheduler waits (blocking.c): what start-up needs. */
#ifndef SKN_BLOCKING_H
#define SKN_BLOCKING_H

#include <pthread.h>

#include "base/base.h"

/* A thread created by a rank, known to pthread_join until joined. */
typedef struct skn_rank_thread skn_rank_thread;
SKN_INTERNAL skn_rank_thread *skn_blocking_thread_new(void);
/* Called by the creator once libc's pthread_create gave the thread's id. */
SKN_INTERNAL void skn_blocking_thread_started(skn_rank_thread *t, pthread_t id);
/* Called by the thread as it ends: wakes a ULT joining it. */
SKN_INTERNAL void skn_blocking_thread_ended(skn_rank_thread *t);

#endif
