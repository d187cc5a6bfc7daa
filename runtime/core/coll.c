/* Collectives inside one process. The barrier is a generation counter: the last rank to
 * arrive bumps the generation and wakes the others, who waited through the scheduler. */
#include "core.h"

void skn_coll_barrier(skn_rank *me, skn_comm *c) {
  (void)me;
  if (c->size == 1) return;
  skn_barrier *b = &c->barrier;
  skn_unit *self = skn_sched_self();
  skn_spin_lock(&b->lock);
  uint32_t gen = atomic_load_explicit(&b->generation, memory_order_relaxed);
  if (++b->arrived == c->size) {
    b->arrived = 0;
    int n = b->nwaiters;
    b->nwaiters = 0;
    atomic_store(&b->generation, gen + 1);
    /* Wake under the lock: a woken rank may enter the next barrier and reuse waiters[]. */
    for (int i = 0; i < n; i++) skn_sched_wake(b->waiters[i]);
    skn_spin_unlock(&b->lock);
    return;
  }
  b->waiters[b->nwaiters++] = self;
  skn_spin_unlock(&b->lock);
  for (;;) {
    skn_sched_prepare_wait(self);
    if (atomic_load(&b->generation) != gen) break;
    skn_sched_wait(self);
  }
  skn_sched_done_waiting(self);
}
