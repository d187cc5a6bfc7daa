/* A worker's queue of ready units (a pool, in Argobots' terms): a FIFO under a spin lock,
 * so that other workers can take units from it (work stealing) while its owner runs one.
 * Knows nothing of policy: which queue to take from, and when, is the scheduler's choice
 * (sched.c). Owner and
 * thieves alike hold the lock for a few loads and stores; nothing blocks under it.
 * `head`, `pushes` and `pops` are also read without the lock, as hints (a thief looking
 * for work, the watchdog), hence their relaxed atomic stores. */
#ifndef SKN_SCHED_READYQ_H
#define SKN_SCHED_READYQ_H

#include "base/base.h"

/* The link a unit is queued by (its first member: a node is its unit). */
typedef struct skn_readyq_node {
  struct skn_readyq_node *next;
} skn_readyq_node;

typedef struct skn_readyq {
  skn_spinlock lock;
  skn_readyq_node *head, *tail; /* tail means something only while head is set */
  uint32_t pushes, pops; /* units ever queued and taken: a thief that saw pushes - pops
                            units queued, and fewer pops since, knows one of them still waits */
} skn_readyq;

static inline bool skn_readyq_nonempty(const skn_readyq *p) { return __atomic_load_n(&p->head, __ATOMIC_RELAXED) != NULL; }
static inline uint32_t skn_readyq_pops(const skn_readyq *p) { return __atomic_load_n(&p->pops, __ATOMIC_RELAXED); }
static inline uint32_t skn_readyq_pushes(const skn_readyq *p) { return __atomic_load_n(&p->pushes, __ATOMIC_RELAXED); }

/* Appends the chain first..last of n nodes (linked through `next`); lock held. */
static inline void skn_readyq_append_locked(skn_readyq *p, skn_readyq_node *first, skn_readyq_node *last, uint32_t n) {
  last->next = NULL;
  if (p->head) p->tail->next = first;
  else __atomic_store_n(&p->head, first, __ATOMIC_RELAXED);
  p->tail = last;
  __atomic_store_n(&p->pushes, p->pushes + n, __ATOMIC_RELAXED);
}

/* Removes and returns the first node, or NULL; lock held. */
static inline skn_readyq_node *skn_readyq_pop_locked(skn_readyq *p) {
  skn_readyq_node *n = p->head;
  if (n) {
    __atomic_store_n(&p->head, n->next, __ATOMIC_RELAXED);
    __atomic_store_n(&p->pops, p->pops + 1, __ATOMIC_RELAXED);
  }
  return n;
}

/* Removes and returns the first node that `movable` accepts, or NULL; lock held. */
static inline skn_readyq_node *skn_readyq_take_locked(skn_readyq *p, bool (*movable)(const skn_readyq_node *)) {
  for (skn_readyq_node **pp = &p->head, *prev = NULL; *pp; prev = *pp, pp = &(*pp)->next) {
    skn_readyq_node *n = *pp;
    if (!movable(n)) continue;
    __atomic_store_n(pp, n->next, __ATOMIC_RELAXED);
    if (p->tail == n) p->tail = prev;
    __atomic_store_n(&p->pops, p->pops + 1, __ATOMIC_RELAXED);
    return n;
  }
  return NULL;
}

#endif
