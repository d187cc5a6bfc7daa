/* One-sided communication (RMA): windows, synchronization words and the data paths.
 * Members in this process are reached by the origin itself (the local transport's RMA
 * slots): a put or get is one copy, an accumulate is applied in place, complete at the
 * target when the call returns, so flush is a memory fence. Members in other processes
 * (a window whose communicator spans processes: `span`) are reached through the UCX
 * transport's slots, into memory registered when the window was created, with a flush
 * (remote completion) before every synchronization that publishes data. The per-peer
 * transport table decides; rma.c never asks which one it is. Knows nothing of MPI error
 * classes: the API layer (api/win.c) checks arguments. */
#ifndef SKN_CORE_RMA_H
#define SKN_CORE_RMA_H

#include "core.h"

/* Units waiting for a change of some member's synchronization state (lock release, a
 * post, a completion). Waiters are nodes on their own stacks. */
typedef struct skn_rma_waiter {
  skn_unit *unit;
  struct skn_rma_waiter *next;
} skn_rma_waiter;
typedef struct skn_rma_wq {
  skn_spinlock lock;
  _Atomic(int) n; /* registered waiters: wakers skip the lock when 0 */
  skn_rma_waiter *head;
} skn_rma_wq;

/* A region attached to a dynamic window. */
typedef struct skn_win_region {
  uintptr_t lo, hi;
  struct skn_win_region *next;
} skn_win_region;

#define SKN_WIN_LOCK_EXCL (UINT64_C(1) << 63) /* lock word: writer bit | reader count */

/* One member's window memory and the words others synchronize with it through. */
typedef struct skn_win_target {
  char *base;
  size_t size;
  int disp_unit;
  _Atomic(uint64_t) lock;         /* passive target */
  _Atomic(int) completes;         /* PSCW: access epochs to this member completed */
  skn_rma_wq wq;                  /* this member's waiters */
  skn_spinlock regions_lock;      /* dynamic windows */
  skn_win_region *regions;
  void *owned;                    /* memory the window allocated for this member */
  /* windows spanning processes */
  void *mem;                      /* this member's registration (members of this process) */
  void *rkey, *sync_rkey;         /* another process's member: keys of its memory and of
                                   * its process's synchronization block */
  uint64_t sync_base;             /* ... that block's address there */
} __attribute__((aligned(SKN_CACHELINE))) skn_win_target;

#define SKN_WIN_STRIPES 256

/* A window, shared by its members (one object per window in the process). */
typedef struct skn_win {
  int size, flavor;
  bool span;              /* members in other processes (one window object per process) */
  void *sync_mem;         /* span: registration of this process's t[] and posts (one block) */
  skn_comm *comm;         /* private communicator: fence and free barriers */
  skn_win_target *t;      /* by window rank */
  _Atomic(int) *posts;    /* PSCW: posts[origin * size + target], posts not yet consumed */
  _Atomic(int) refs;      /* members (of this process) that have not freed it */
  skn_spinlock stripes[SKN_WIN_STRIPES]; /* accumulates on types without hardware atomics */
} skn_win;

/* Collective over c (an intracommunicator; `rank` is the caller's): the first member (of
 * this process) creates the window object, every member fills in its own memory, and all
 * return the same window once all have. When c spans processes, each member registers
 * its memory with the transport and the members exchange base, size, displacement unit
 * and keys; then flavors DYNAMIC and SHARED are not supported (the API layer refuses
 * them) and running out of memory ends the job. `alloc_size` >= 0 (allocate
 * flavors) makes the window allocate the member's memory (`base` ignored); with
 * `shared`, the members' parts are consecutive in one block allocated by the first
 * member (unless `noncontig`: then each allocates its own). NULL when out of memory (for
 * every member: they agree). */
SKN_INTERNAL skn_win *skn_win_create(skn_rank *me, skn_comm *c, int rank, int flavor, void *base, size_t size,
                                     int disp_unit, bool noncontig);
/* Collective over the window: the last member out frees it. */
SKN_INTERNAL void skn_win_free(skn_rank *me, skn_win *w);

/* Address addr (in member target's address space) as the transports' RMA slots name it. */
static inline skn_rma_loc skn_win_loc(skn_win *w, int target, char *addr) {
  return (skn_rma_loc){w, addr, w->t[target].rkey};
}
static inline skn_rank *skn_win_member(const skn_win *w, int target) { return w->comm->members[target]; }
/* Remote completion of this rank's operations to target (-1: to every member). */
SKN_INTERNAL void skn_win_flush(skn_win *w, int target);

/* Wait queues. skn_rma_wait_until blocks the calling unit through the scheduler until
 * cond(arg) holds; whoever makes it true calls skn_rma_wake on the same queue. */
SKN_INTERNAL void skn_rma_wait_until(skn_rma_wq *q, bool (*cond)(void *), void *arg);
SKN_INTERNAL void skn_rma_wake(skn_rma_wq *q);

/* Passive target: the origin acquires the target's lock word itself. */
SKN_INTERNAL void skn_win_lock(skn_win *w, int target, bool exclusive);
SKN_INTERNAL void skn_win_unlock(skn_win *w, int target, bool exclusive);
SKN_INTERNAL bool skn_win_try_lock(skn_win *w, int target, bool exclusive);

/* PSCW. post: `origins` (window ranks) may access me. start: waits for the posts of
 * `targets`. complete: tells `targets` the access epoch ended. wait/test: all `n`
 * origins of my exposure epoch completed (test does not block; both consume them). */
SKN_INTERNAL void skn_win_post(skn_win *w, int me_rank, const int *origins, int n);
SKN_INTERNAL void skn_win_start(skn_win *w, int me_rank, const int *targets, int n);
SKN_INTERNAL void skn_win_complete(skn_win *w, const int *targets, int n);
SKN_INTERNAL void skn_win_wait(skn_win *w, int me_rank, int n);
SKN_INTERNAL bool skn_win_test(skn_win *w, int me_rank, int n);

/* Dynamic windows: attach fails (false) when out of memory or the region overlaps one
 * attached already; detach fails when base starts no attached region. */
SKN_INTERNAL int skn_win_attach(skn_win *w, int me_rank, void *base, size_t size);
SKN_INTERNAL bool skn_win_detach(skn_win *w, int me_rank, const void *base);
/* Whether [lo, hi) lies inside one region attached at target. */
SKN_INTERNAL bool skn_win_dynamic_covers(skn_win *w, int target, uintptr_t lo, uintptr_t hi);

/* The predefined type every basic element of t has (its index in skn_dt_predefined), or
 * -1 when t mixes several. */
SKN_INTERNAL int skn_rma_basic(const skn_dtype *t);

/* Accumulate: the target layout (taddr, tcount, tt) becomes origin op target element by
 * element, atomically per element with respect to other accumulates of the same basic
 * type `basic`; with result (Get_accumulate) the old target elements are stored there
 * first. The origin supplies tcount * tt->size bytes (ignored for MPI_NO_OP). `op` is a
 * predefined op index defined on basic. */
SKN_INTERNAL void skn_rma_accumulate(skn_win *w, int op, int basic, const void *origin, size_t ocount,
                                     const skn_dtype *ot, void *result, size_t rcount, const skn_dtype *rt,
                                     char *taddr, size_t tcount, const skn_dtype *tt);
/* Compare-and-swap of one element of predefined type `basic` (size 1, 2, 4 or 8). */
SKN_INTERNAL void skn_rma_cas(skn_win *w, int basic, const void *origin, const void *compare, void *result,
                              char *taddr);

#endif
