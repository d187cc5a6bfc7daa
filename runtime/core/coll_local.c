/* Collectives inside one process.
 *
 * The barrier is a generation counter in two stages. Members placed on one worker first
 * meet in a group of their own (a lock and a counter that stay in that core's cache). The
 * grouping is by the worker a rank was placed on at start (its home), which never
 * changes: the scheduler may move ranks since, and a member must keep its group;
 * the last of each group goes on to the communicator-wide stage, where the last group
 * bumps the generation; each group's last member then wakes its group, locally. Waiting
 * members first poll the generation while their worker has nothing else to run, and only
 * then register to be woken, so a barrier between idle workers costs one store seen by
 * the pollers, and one between many ranks per worker one cross-core exchange per worker. */
#include <stdlib.h>
#include <string.h>

#include "core.h"

typedef struct skn_barrier_group {
  skn_spinlock lock;
  int n;       /* members on this worker */
  int arrived;
  skn_waitlist waiting;
} __attribute__((aligned(SKN_CACHELINE))) skn_barrier_group;

typedef struct skn_barrier_groups {
  int ngroups; /* workers with members: the parties of the communicator-wide stage */
  skn_barrier_group by_worker[];
  /* followed by the groups' wait slots, 2 per member */
} skn_barrier_groups;

static int worker_of(const skn_rank *r) { return r->unit ? r->unit->home : 0; }

/* The grouping of c's members by worker, or NULL when it would not help (every member on
 * a worker of its own) or memory is short: the barrier then has one stage. */
static skn_barrier_groups *groups_of(skn_comm *c) {
  skn_barrier_groups *gs = atomic_load_explicit(&c->barrier.groups, memory_order_acquire);
  if (SKN_LIKELY(gs != NULL)) return gs->ngroups < c->size ? gs : NULL;
  int nw = 0;
  for (int i = 0; i < c->size; i++)
    if (worker_of(c->members[i]) >= nw) nw = worker_of(c->members[i]) + 1;
  size_t head = sizeof *gs + sizeof(skn_barrier_group) * (size_t)nw;
  size_t bytes = head + sizeof(skn_unit *) * 2 * (size_t)c->size;
  gs = aligned_alloc(SKN_CACHELINE, (bytes + SKN_CACHELINE - 1) & ~(size_t)(SKN_CACHELINE - 1));
  if (!gs) return NULL;
  memset(gs, 0, bytes);
  for (int i = 0; i < c->size; i++) gs->by_worker[worker_of(c->members[i])].n++;
  skn_unit **slots = (skn_unit **)((char *)gs + head);
  for (int w = 0; w < nw; w++) {
    skn_barrier_group *g = &gs->by_worker[w];
    g->waiting = (skn_waitlist){.slots = slots, .capacity = g->n};
    slots += 2 * g->n;
    gs->ngroups += g->n > 0;
  }
  skn_barrier_groups *none = NULL;
  if (!atomic_compare_exchange_strong(&c->barrier.groups, &none, gs)) { /* another member was first */
    free(gs);
    gs = none;
  }
  return gs->ngroups < c->size ? gs : NULL;
}

/* Waits until b's generation moves past gen. Registers in `wl` (under `lock`) unless
 * polling saw it first; whoever moves the generation wakes that list. */
static void await_generation(skn_barrier *b, uintptr_t gen, skn_spinlock *lock, skn_waitlist *wl) {
  skn_unit *self = skn_sched_self();
  /* Nobody can complete the next barrier before we arrive: gen + 1 is the value to see. */
  if (skn_sched_poll_word(self, &b->generation, gen + 1)) return;
  int p = (int)(gen & 1);
  skn_spin_lock(lock);
  bool passed = atomic_load_explicit(&b->generation, memory_order_relaxed) != gen;
  if (!passed) wl->slots[p * wl->capacity + wl->n[p]++] = self;
  skn_spin_unlock(lock);
  if (passed) return;
  for (;;) {
    skn_sched_prepare_wait(self);
    if (atomic_load(&b->generation) != gen) break;
    skn_sched_wait(self);
  }
  skn_sched_done_waiting(self);
}

/* Wakes those registered for generation gen. */
static void wake_all(skn_spinlock *lock, skn_waitlist *wl, uintptr_t gen) {
  int p = (int)(gen & 1);
  skn_spin_lock(lock);
  int n = wl->n[p];
  wl->n[p] = 0;
  for (int i = 0; i < n; i++) skn_sched_wake(wl->slots[p * wl->capacity + i]);
  skn_spin_unlock(lock);
}

/* The shared-memory barrier; only members of c in this process take part, so c is a
 * communicator of skn_coll_local_ops (all members here). Out of line, as when it was the
 * exported entry: inlined into the reductions it cost ~45 more instructions per 1 MiB
 * allreduce (callgrind). */
__attribute__((noinline)) static void barrier_wait(skn_comm *c) {
  if (c->size == 1) return;
  skn_barrier *b = &c->barrier;
  uintptr_t gen = atomic_load_explicit(&b->generation, memory_order_relaxed);
  skn_barrier_groups *gs = groups_of(c);
  skn_barrier_group *g = NULL;
  if (gs) {
    g = &gs->by_worker[worker_of(skn_rank_self())];
    skn_spin_lock(&g->lock);
    bool last = ++g->arrived == g->n;
    if (last) g->arrived = 0;
    skn_spin_unlock(&g->lock);
    if (!last) {
      await_generation(b, gen, &g->lock, &g->waiting);
      return;
    }
  }
  skn_spin_lock(&b->lock);
  bool last = ++b->arrived == (gs ? gs->ngroups : c->size);
  if (last) {
    b->arrived = 0;
    atomic_store(&b->generation, gen + 1);
  }
  skn_spin_unlock(&b->lock);
  if (last) wake_all(&b->lock, &b->waiting, gen);
  else await_generation(b, gen, &b->lock, &b->waiting);
  if (g) wake_all(&g->lock, &g->waiting, gen);
}

/* ------------------------------------------------------------------ shared-address collectives
 * Every member publishes its arguments (skn_coll_args on its stack) and waits at the
 * barrier; then each member reads the others' buffers directly and copies or reduces its
 * own share, so data moves once; a last barrier keeps every published buffer alive until
 * nobody reads it. Ranks wait through the scheduler, never by spinning. */

static inline void publish(skn_comm *c, int rank, skn_coll_args *a) {
  c->slots[rank] = a;
  barrier_wait(c);
}

void skn_coll_bcast(skn_comm *c, int rank, skn_coll_args *a) {
  publish(c, rank, a);
  if (rank != a->root) {
    const skn_coll_args *r = c->slots[a->root];
    skn_dt_copy(a->rbuf, a->rcount, a->rt, r->rbuf, r->rcount, r->rt);
  }
  barrier_wait(c);
}

/* Gather(v): each member copies its own contribution into the root's buffer. */
void skn_coll_gather(skn_comm *c, int rank, skn_coll_args *a) {
  publish(c, rank, a);
  const skn_coll_args *r = c->slots[a->root];
  if (a->sbuf != MPI_IN_PLACE) {
    size_t off = r->rdispls ? (size_t)r->rdispls[rank] : (size_t)rank * r->rcount;
    size_t cnt = r->rcounts ? (size_t)r->rcounts[rank] : r->rcount;
    skn_dt_copy(skn_coll_at(r->rbuf, off, r->rt), cnt, r->rt, a->sbuf, a->scount, a->st);
  }
  barrier_wait(c);
}

/* Scatter(v): each member copies its share out of the root's buffer. */
void skn_coll_scatter(skn_comm *c, int rank, skn_coll_args *a) {
  publish(c, rank, a);
  const skn_coll_args *r = c->slots[a->root];
  if (a->rbuf != MPI_IN_PLACE) {
    size_t off = r->sdispls ? (size_t)r->sdispls[rank] : (size_t)rank * r->scount;
    size_t cnt = r->scounts ? (size_t)r->scounts[rank] : r->scount;
    skn_dt_copy(a->rbuf, a->rcount, a->rt, skn_coll_at(r->sbuf, off, r->st), cnt, r->st);
  }
  barrier_wait(c);
}

/* Allgather(v): each member fills its own receive buffer from every contribution. With
 * MPI_IN_PLACE a member's contribution already sits in its receive buffer. */
void skn_coll_allgather(skn_comm *c, int rank, skn_coll_args *a) {
  publish(c, rank, a);
  for (int j = 0; j < c->size; j++) {
    if (j == rank && a->sbuf == MPI_IN_PLACE) continue;
    const skn_coll_args *s = c->slots[j];
    size_t doff = a->rdispls ? (size_t)a->rdispls[j] : (size_t)j * a->rcount;
    size_t dcnt = a->rcounts ? (size_t)a->rcounts[j] : a->rcount;
    if (s->sbuf == MPI_IN_PLACE) { /* j's block is in j's receive buffer */
      size_t soff = s->rdispls ? (size_t)s->rdispls[j] : (size_t)j * s->rcount;
      size_t scnt = s->rcounts ? (size_t)s->rcounts[j] : s->rcount;
      skn_dt_copy(skn_coll_at(a->rbuf, doff, a->rt), dcnt, a->rt, skn_coll_at(s->rbuf, soff, s->rt), scnt,
                  s->rt);
    } else {
      skn_dt_copy(skn_coll_at(a->rbuf, doff, a->rt), dcnt, a->rt, s->sbuf, s->scount, s->st);
    }
  }
  barrier_wait(c);
}

/* Alltoall(v,w): member i pulls block i of every member's send buffer. With MPI_IN_PLACE
 * the send blocks are in the receive buffers, which are overwritten: pull into a copy. */
void skn_coll_alltoall(skn_comm *c, int rank, skn_coll_args *a) {
  publish(c, rank, a);
  bool in_place = a->sbuf == MPI_IN_PLACE;
  void *dst = a->rbuf;
  size_t span = 0;
  if (in_place) { /* every member reads our receive buffer: build the result aside */
    for (int j = 0; j < c->size; j++) {
      const skn_dtype *rt = a->rts ? a->rts[j] : a->rt;
      size_t off = a->rdispls ? (size_t)a->rdispls[j] * (a->rts ? 1 : (size_t)rt->extent)
                              : (size_t)j * a->rcount * (size_t)rt->extent;
      size_t cnt = a->rcounts ? (size_t)a->rcounts[j] : a->rcount;
      size_t end = off + cnt * (size_t)rt->extent;
      if (end > span) span = end;
    }
    dst = malloc(span ? span : 1);
    if (dst) memcpy(dst, a->rbuf, span);
  }
  for (int j = 0; j < c->size && dst; j++) {
    const skn_coll_args *s = c->slots[j];
    bool s_in_place = s->sbuf == MPI_IN_PLACE;
    const void *sbase = s_in_place ? s->rbuf : s->sbuf;
    const int *scounts = s_in_place ? s->rcounts : s->scounts, *sdispls = s_in_place ? s->rdispls : s->sdispls;
    const skn_dtype *st = s_in_place ? (s->rts ? s->rts[rank] : s->rt) : (s->sts ? s->sts[rank] : s->st);
    size_t scount = s_in_place ? s->rcount : s->scount;
    const skn_dtype *rt = a->rts ? a->rts[j] : a->rt;
    /* w variants give displacements in bytes, the others in elements */
    bool sw = s_in_place ? s->rts != NULL : s->sts != NULL;
    const char *src = sdispls ? (const char *)sbase + (sw ? sdispls[rank] : sdispls[rank] * st->extent)
                              : skn_coll_at(sbase, (size_t)rank * scount, st);
    size_t scnt = scounts ? (size_t)scounts[rank] : scount;
    char *d = a->rdispls ? (char *)dst + (a->rts ? a->rdispls[j] : a->rdispls[j] * rt->extent)
                         : skn_coll_at(dst, (size_t)j * a->rcount, rt);
    size_t dcnt = a->rcounts ? (size_t)a->rcounts[j] : a->rcount;
    skn_dt_copy(d, dcnt, rt, src, scnt, st);
  }
  barrier_wait(c); /* nobody reads our buffers any more */
  if (in_place && dst) {
    memcpy(a->rbuf, dst, span);
    free(dst);
  }
}

/* ------------------------------------------------------------------ reductions */

/* Bytes from the start of element 0 to the end of element n-1. */
size_t skn_coll_span(size_t n, const skn_dtype *t) {
  if (n == 0) return 0;
  return (size_t)((ptrdiff_t)(n - 1) * t->extent + t->true_lb + t->true_extent);
}

static inline const void *input_of(const skn_coll_args *s) { return s->sbuf == MPI_IN_PLACE ? s->rbuf : s->sbuf; }

/* Built right to left so that non-commutative user ops see (a op b), the standard's order. */
void skn_coll_reduce_members(skn_coll_args *const *slots, const skn_coll_args *a, int last, size_t lo, size_t hi,
                             void *acc) {
  size_t n = hi - lo;
  if (n == 0 || last < 0) return;
  const skn_dtype *t = a->st;
  memcpy(acc, skn_coll_at(input_of(slots[last]), lo, t), skn_coll_span(n, t));
  int len = (int)n, dth = a->dt_handle;
  for (int k = last - 1; k >= 0; k--) {
    const void *src = skn_coll_at(input_of(slots[k]), lo, t);
    if (a->user_fn) a->user_fn((void *)(uintptr_t)src, acc, &len, &dth);
    else skn_op_apply(a->op, dth & 0xffffff, src, acc, n);
  }
}

/* Small allreduce: every member reduces the whole vector itself, which saves the
 * barrier between the parallel chunks and their exchange. */
#define SKN_SMALL_ALLREDUCE 2048 /* bytes */

/* Tiny allreduce (up to 256 B). Members copy their input into a cell of the communicator
 * and reduce everyone's cells, so nobody reads a user buffer and no second barrier is
 * needed. Cells come in two sets used alternately: a member can only write a cell of the
 * call after next once every member has written its cell of the next call, that is, has
 * finished reading this one's.
 *  - When each member has a (home) worker of its own (no per-worker groups), a cell carries the
 *    number of the call it holds next to the data, in one cache line, and members wait
 *    for each other's cells directly: no barrier at all, one line moved each way.
 *    Members that cannot poll (their worker has other work) sleep on the cells' list and
 *    are woken by the next cell written.
 *  - Otherwise one barrier (with its per-worker groups) separates writing and reading; the
 *    set alternates with the barrier's generation, which all members read alike. */
#define SKN_TINY_ALLREDUCE 256 /* bytes */
typedef struct skn_coll_cell {
  _Atomic(uintptr_t) seq; /* the call whose input `data` holds (flat protocol) */
  _Alignas(16) char data[SKN_TINY_ALLREDUCE];
} __attribute__((aligned(SKN_CACHELINE))) skn_coll_cell;

/* Members sleeping until some cell is written; follows the 2 x size cells. */
typedef struct skn_cell_sleepers {
  skn_spinlock lock;
  _Atomic(int) count;
  int n;
  skn_unit *units[]; /* one per member at most */
} skn_cell_sleepers;

static inline skn_cell_sleepers *sleepers_of(skn_comm *c, skn_coll_cell *cells) {
  return (skn_cell_sleepers *)(cells + 2 * (size_t)c->size);
}

static skn_coll_cell *cells_of(skn_comm *c) {
  skn_coll_cell *cells = atomic_load_explicit(&c->cells, memory_order_acquire);
  if (SKN_LIKELY(cells != NULL)) return cells;
  size_t bytes = sizeof *cells * 2 * (size_t)c->size + sizeof(skn_cell_sleepers) + sizeof(skn_unit *) * (size_t)c->size;
  skn_coll_cell *fresh = aligned_alloc(SKN_CACHELINE, (bytes + SKN_CACHELINE - 1) & ~(size_t)(SKN_CACHELINE - 1));
  skn_coll_cell *none = NULL;
  if (!fresh) return NULL;
  memset(fresh, 0, bytes);
  if (atomic_compare_exchange_strong(&c->cells, &none, fresh)) return fresh;
  free(fresh); /* another member installed its own first */
  return none;
}

static void wake_sleepers(skn_cell_sleepers *sl) {
  if (SKN_LIKELY(atomic_load(&sl->count) == 0)) return; /* after our seq store: see await_cell */
  skn_spin_lock(&sl->lock);
  for (int i = 0; i < sl->n; i++) skn_sched_wake(sl->units[i]);
  sl->n = 0;
  atomic_store(&sl->count, 0);
  skn_spin_unlock(&sl->lock);
}

/* Waits until `cell` holds call `seq`. A sleeper stores its registration before it checks
 * the cell again, and a writer stores the cell before it checks for sleepers: one of the
 * two sees the other. */
static void await_cell(skn_cell_sleepers *sl, skn_coll_cell *cell, uintptr_t seq) {
  skn_unit *self = skn_sched_self();
  if (atomic_load_explicit(&cell->seq, memory_order_acquire) == seq || skn_sched_poll_word(self, &cell->seq, seq))
    return;
  for (;;) {
    skn_sched_prepare_wait(self);
    skn_spin_lock(&sl->lock);
    bool listed = false;
    for (int i = 0; i < sl->n && !listed; i++) listed = sl->units[i] == self;
    if (!listed) {
      sl->units[sl->n++] = self;
      atomic_store(&sl->count, sl->n);
    }
    skn_spin_unlock(&sl->lock);
    if (atomic_load(&cell->seq) == seq) break;
    skn_sched_wait(self);
  }
  skn_sched_done_waiting(self);
  skn_spin_lock(&sl->lock); /* leave the list, so no later writer wakes us for nothing */
  for (int i = 0; i < sl->n; i++)
    if (sl->units[i] == self) {
      sl->units[i] = sl->units[--sl->n];
      break;
    }
  atomic_store(&sl->count, sl->n);
  skn_spin_unlock(&sl->lock);
}

static void reduce_cells(skn_comm *c, skn_coll_cell *set, skn_coll_args *a, size_t bytes) {
  char acc[SKN_TINY_ALLREDUCE];
  memcpy(acc, set[c->size - 1].data, bytes);
  int len = (int)a->scount, dth = a->dt_handle;
  for (int k = c->size - 2; k >= 0; k--) { /* right to left: (a op b) for non-commutative ops */
    if (a->user_fn) a->user_fn(set[k].data, acc, &len, &dth);
    else skn_op_apply(a->op, dth & 0xffffff, set[k].data, acc, a->scount);
  }
  skn_dt_copy(a->rbuf, a->scount, a->st, acc, a->scount, a->st);
}

static bool allreduce_tiny(skn_comm *c, int rank, skn_coll_args *a) {
  skn_coll_cell *cells = cells_of(c);
  if (!cells) return false;
  size_t bytes = skn_coll_span(a->scount, a->st);
  if (!groups_of(c)) {
    /* this member's last call number is in one of its two cells */
    uintptr_t s0 = atomic_load_explicit(&cells[rank].seq, memory_order_relaxed);
    uintptr_t s1 = atomic_load_explicit(&cells[c->size + rank].seq, memory_order_relaxed);
    uintptr_t seq = (s0 > s1 ? s0 : s1) + 1;
    skn_coll_cell *set = cells + (seq & 1) * (size_t)c->size;
    memcpy(set[rank].data, input_of(a), bytes);
    atomic_store(&set[rank].seq, seq);
    skn_cell_sleepers *sl = sleepers_of(c, cells);
    wake_sleepers(sl);
    for (int k = 0; k < c->size; k++)
      if (k != rank) await_cell(sl, &set[k], seq);
    reduce_cells(c, set, a, bytes);
    return true;
  }
  uintptr_t gen = atomic_load_explicit(&c->barrier.generation, memory_order_relaxed);
  skn_coll_cell *set = cells + (gen & 1) * (size_t)c->size;
  memcpy(set[rank].data, input_of(a), bytes);
  barrier_wait(c);
  reduce_cells(c, set, a, bytes);
  return true;
}

static skn_status allreduce_small(skn_comm *c, int rank, skn_coll_args *a) {
  if (skn_coll_room(a->scount, a->st) <= SKN_TINY_ALLREDUCE && allreduce_tiny(c, rank, a)) return SKN_OK;
  publish(c, rank, a);
  char acc[SKN_SMALL_ALLREDUCE];
  skn_coll_reduce_members(c->slots, a, c->size - 1, 0, a->scount, acc);
  if (a->sbuf != MPI_IN_PLACE) skn_dt_copy(a->rbuf, a->scount, a->st, acc, a->scount, a->st);
  barrier_wait(c); /* our input is no longer read by anyone */
  if (a->sbuf == MPI_IN_PLACE) skn_dt_copy(a->rbuf, a->scount, a->st, acc, a->scount, a->st);
  return SKN_OK;
}

/* Reduce / Allreduce: member i reduces chunk i of every input, in parallel. */
skn_status skn_coll_reduce(skn_comm *c, int rank, skn_coll_args *a, bool all) {
  if (all && skn_coll_room(a->scount, a->st) <= SKN_SMALL_ALLREDUCE) return allreduce_small(c, rank, a);
  publish(c, rank, a);
  size_t lo, hi;
  skn_coll_chunk(a->scount, c->size, rank, &lo, &hi);
  char stackbuf[512];
  size_t bytes = skn_coll_room(hi - lo, a->st);
  void *acc = bytes <= sizeof stackbuf ? stackbuf : malloc(bytes);
  skn_status st = acc ? SKN_OK : SKN_ERR_NOMEM;
  if (acc) skn_coll_reduce_members(c->slots, a, c->size - 1, lo, hi, acc);
  if (all) {
    /* Our chunk of our own input is read by us alone, so writing it now is safe. */
    if (acc && hi > lo) skn_dt_copy(skn_coll_at(a->rbuf, lo, a->st), hi - lo, a->st, acc, hi - lo, a->st);
    barrier_wait(c);
    for (int j = 0; j < c->size; j++) { /* gather the other chunks from their owners */
      if (j == rank) continue;
      size_t jl, jh;
      skn_coll_chunk(a->scount, c->size, j, &jl, &jh);
      if (jh > jl)
        skn_dt_copy(skn_coll_at(a->rbuf, jl, a->st), jh - jl, a->st, skn_coll_at(c->slots[j]->rbuf, jl, a->st),
                    jh - jl, a->st);
    }
  } else if (acc && hi > lo) {
    void *root_buf = c->slots[a->root]->rbuf;
    skn_dt_copy(skn_coll_at(root_buf, lo, a->st), hi - lo, a->st, acc, hi - lo, a->st);
  }
  barrier_wait(c);
  if (acc != stackbuf) free(acc);
  return st;
}

/* Reduce_scatter(_block): member i reduces its own block. rcounts NULL: blocks of rcount. */
skn_status skn_coll_reduce_scatter(skn_comm *c, int rank, skn_coll_args *a) {
  publish(c, rank, a);
  size_t lo = 0;
  for (int j = 0; j < rank; j++) lo += a->rcounts ? (size_t)a->rcounts[j] : a->rcount;
  size_t hi = lo + (a->rcounts ? (size_t)a->rcounts[rank] : a->rcount);
  size_t bytes = skn_coll_room(hi - lo, a->st);
  void *acc = malloc(bytes ? bytes : 1);
  if (acc) skn_coll_reduce_members(c->slots, a, c->size - 1, lo, hi, acc);
  barrier_wait(c); /* inputs (possibly our receive buffer) are no longer read */
  if (acc && hi > lo) skn_dt_copy(a->rbuf, hi - lo, a->st, acc, hi - lo, a->st);
  free(acc);
  return acc ? SKN_OK : SKN_ERR_NOMEM;
}

/* Scan / Exscan: member i reduces the inputs of members 0..i (0..i-1). */
skn_status skn_coll_scan(skn_comm *c, int rank, skn_coll_args *a, bool exclusive) {
  publish(c, rank, a);
  int last = exclusive ? rank - 1 : rank;
  size_t bytes = skn_coll_room(a->scount, a->st);
  void *acc = last >= 0 ? malloc(bytes ? bytes : 1) : NULL;
  if (acc) skn_coll_reduce_members(c->slots, a, last, 0, a->scount, acc);
  barrier_wait(c);
  if (acc && a->scount) skn_dt_copy(a->rbuf, a->scount, a->st, acc, a->scount, a->st);
  free(acc);
  return (last >= 0 && !acc) ? SKN_ERR_NOMEM : SKN_OK;
}

/* ------------------------------------------------------------------ the table */

static skn_status local_barrier(skn_comm *c, int rank, skn_coll_args *a) {
  (void)rank, (void)a;
  barrier_wait(c);
  return SKN_OK;
}
static skn_status local_bcast(skn_comm *c, int rank, skn_coll_args *a) {
  skn_coll_bcast(c, rank, a);
  return SKN_OK;
}
static skn_status local_gather(skn_comm *c, int rank, skn_coll_args *a) {
  skn_coll_gather(c, rank, a);
  return SKN_OK;
}
static skn_status local_scatter(skn_comm *c, int rank, skn_coll_args *a) {
  skn_coll_scatter(c, rank, a);
  return SKN_OK;
}
static skn_status local_allgather(skn_comm *c, int rank, skn_coll_args *a) {
  skn_coll_allgather(c, rank, a);
  return SKN_OK;
}
static skn_status local_alltoall(skn_comm *c, int rank, skn_coll_args *a) {
  skn_coll_alltoall(c, rank, a);
  return SKN_OK;
}
static skn_status local_reduce(skn_comm *c, int rank, skn_coll_args *a) { return skn_coll_reduce(c, rank, a, false); }
static skn_status local_allreduce(skn_comm *c, int rank, skn_coll_args *a) { return skn_coll_reduce(c, rank, a, true); }
static skn_status local_scan(skn_comm *c, int rank, skn_coll_args *a) { return skn_coll_scan(c, rank, a, false); }
static skn_status local_exscan(skn_comm *c, int rank, skn_coll_args *a) { return skn_coll_scan(c, rank, a, true); }

const skn_coll_ops skn_coll_local_ops = {
    .name = "local", .barrier = local_barrier, .bcast = local_bcast, .gather = local_gather,
    .scatter = local_scatter, .allgather = local_allgather, .alltoall = local_alltoall, .reduce = local_reduce,
    .allreduce = local_allreduce, .reduce_scatter = skn_coll_reduce_scatter, .scan = local_scan,
    .exscan = local_exscan, .neighbor_allgather = skn_coll_neighbor_allgather,
    .neighbor_alltoall = skn_coll_neighbor_alltoall};
