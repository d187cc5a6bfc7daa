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

/* A region attached to a dynamic window (for a member of another process: one this
 * process learnt from the member's directory, with its key). */
typedef struct skn_win_region {
  uintptr_t lo, hi;
  struct skn_win_region *next;
  uint64_t serial; /* windows spanning processes: the attachment's number at its member */
  void *mem;       /* ... its registration (this process's members) */
  void *rkey;      /* ... or its key (other processes' members) */
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
  /* dynamic windows spanning processes: the member's directory of attached regions
   * (registered memory the other processes read), its address and key there */
  void *dir;                      /* this process's members: the directory */
  uint64_t dir_addr, serial;      /* serial: the last attachment's number */
  void *dir_rkey;                 /* another process's member: key of its directory */
  bool dir_stale;                 /* the cached regions must be checked before use */
  skn_win_region *retired;        /* cached regions dropped (their keys may be in use) */
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
  /* span: the words that take the stripes' place (in the synchronization block, reached
   * from every process), and a member of this process (its rank) */
  _Atomic(uint64_t) *elocks;
  int lead;
} skn_win;

/* Collective over c (an intracommunicator; `rank` is the caller's): the first member (of
 * this process) creates the window object, every member fills in its own memory, and all
 * return the same window once all have. When c spans processes, each member registers
 * its memory with the transport and the members exchange base, size, displacement unit
 * and keys (flavor DYNAMIC: of the member's directory of attached regions instead);
 * then flavor SHARED is not supported (the API layer refuses it) and running out of
 * memory ends the job. `alloc_size` >= 0 (allocate
 * flavors) makes the window allocate the member's memory (`base` ignored); with
 * `shared`, the members' parts are consecutive in one block allocated by the first
 * member (unless `noncontig`: then each allocates its own). NULL when out of memory (for
 * every member: they agree). */
SKN_INTERNAL skn_win *skn_win_create(skn_rank *me, skn_comm *c, int rank, int flavor, void *base, size_t size,
                                     int disp_unit, bool noncontig);
/* Collective over the window: the last member out frees it. */
SKN_INTERNAL void skn_win_free(skn_rank *me, skn_win *w);

#define SKN_WIN_FLAVOR_DYNAMIC 3 /* = MPI_WIN_FLAVOR_DYNAMIC */

/* The key of the region attached at member target (of another process) holding addr. */
SKN_INTERNAL void *skn_win_dyn_rkey(skn_win *w, int target, const char *addr);
/* Spanning dynamic windows: the regions cached for target (-1: every member) are checked
 * against its directory at their next use (at the start of an epoch: a region may have
 * been detached and another attached meanwhile). */
SKN_INTERNAL void skn_win_dyn_forget(skn_win *w, int target);

/* Address addr (in member target's address space) as the transports' RMA slots name it. */
static inline skn_rma_loc skn_win_loc(skn_win *w, int target, char *addr) {
  if (__builtin_expect(w->span && w->flavor == SKN_WIN_FLAVOR_DYNAMIC, 0))
    return (skn_rma_loc){w, addr, skn_win_dyn_rkey(w, target, addr)};
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

/* Dynamic windows: attach fails with SKN_ERR_NOMEM when out of memory (or, spanning
 * processes, when the member has SKN_WIN_DYN_MAX regions attached already) and
 * SKN_ERR_NOT_FOUND when the region overlaps one attached already; detach fails when
 * base starts no attached region. Spanning processes, an attached region is registered
 * with the transport and published (address, size, key) in the member's directory,
 * which origins of other processes read when they meet an address they have no region
 * for (skn_win_dynamic_covers) and cache. */
#define SKN_WIN_DYN_MAX 64
SKN_INTERNAL int skn_win_attach(skn_win *w, int me_rank, void *base, size_t size);
SKN_INTERNAL bool skn_win_detach(skn_win *w, int me_rank, const void *base);
/* Whether [lo, hi) lies in memory attached at target (of another process: reading its
 * directory when the regions cached here do not hold it): SKN_WIN_COVERED; adjacent
 * regions together may cover it (contiguous memory attached in pieces, as MPICH allows)
 * for a member of this process, not yet for one of another process, whose regions are
 * separate registrations with a key each (SKN_WIN_SPLIT); SKN_WIN_OUTSIDE. */
enum { SKN_WIN_OUTSIDE, SKN_WIN_COVERED, SKN_WIN_SPLIT };
SKN_INTERNAL int skn_win_dynamic_covers(skn_win *w, int target, uintptr_t lo, uintptr_t hi);

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
/* Spanning windows: an element the in-process path guards with a striped lock (no
 * hardware atomic of its size, or unaligned) is guarded instead by a lock word in the
 * synchronization block of its process, picked by the element's address there; `member`
 * is any member of that process. Origins of every process take it through the member's
 * transport (a local atomic in the member's own process, a remote one elsewhere), so
 * that local and remote accumulates on the element exclude each other. */
SKN_INTERNAL void skn_win_elem_lock(skn_win *w, const skn_rank *member, const char *taddr);
SKN_INTERNAL void skn_win_elem_unlock(skn_win *w, const skn_rank *member, const char *taddr);

/* A position in the data stream of a typed layout (base, t): skn_rma_elem hands out the
 * address of the stream's next `bs` bytes (an element may straddle blocks: its address
 * is its first byte's). Start with {t, base} and the rest zero. */
typedef struct skn_rma_pos {
  const skn_dtype *t;
  char *base;
  size_t i;
  int b;
  size_t k;
} skn_rma_pos;
SKN_INTERNAL char *skn_rma_elem(skn_rma_pos *p, size_t bs);

/* *tgt = in op *tgt for one element of predefined type `basic`, tgt in the type's memory
 * layout (extent bytes), `in` in it too or, if in_packed, in the packed stream's (size
 * bytes: pairs such as MPI_DOUBLE_INT have padding). Either may be misaligned: the op
 * reads typed values, so it works on aligned copies. */
SKN_INTERNAL void skn_rma_apply(int op, int basic, const void *in, bool in_packed, void *tgt);

/* Compare-and-swap of one element of predefined type `basic` (size 1, 2, 4 or 8). */
SKN_INTERNAL void skn_rma_cas(skn_win *w, int basic, const void *origin, const void *compare, void *result,
                              char *taddr);

#endif
