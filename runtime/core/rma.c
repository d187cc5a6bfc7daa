/* One-sided communication (see rma.h). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rma.h"

/* ------------------------------------------------------------------ wait queues */

void skn_rma_wait_until(skn_rma_wq *q, bool (*cond)(void *), void *arg) {
  if (cond(arg)) return;
  skn_unit *self = skn_sched_self();
  /* A short grace period first: the holder often runs on another worker and is about to
   * release; yielding lets ranks of this worker run meanwhile. */
  for (int i = 0; i < 16; i++) {
    skn_sched_yield();
    if (cond(arg)) return;
  }
  skn_rma_waiter node = {self, NULL};
  skn_spin_lock(&q->lock);
  node.next = q->head;
  q->head = &node;
  skn_spin_unlock(&q->lock);
  atomic_fetch_add(&q->n, 1); /* seq_cst: either the waker sees us or we see its change */
  for (;;) {
    skn_sched_prepare_wait(self);
    if (cond(arg)) break;
    skn_sched_wait(self);
  }
  skn_sched_done_waiting(self);
  skn_spin_lock(&q->lock);
  for (skn_rma_waiter **p = &q->head; *p; p = &(*p)->next)
    if (*p == &node) {
      *p = node.next;
      break;
    }
  skn_spin_unlock(&q->lock);
  atomic_fetch_sub(&q->n, 1);
}

void skn_rma_wake(skn_rma_wq *q) {
  if (atomic_load(&q->n) == 0) return;
  skn_spin_lock(&q->lock); /* nodes leave the list under this lock: they stay valid */
  for (skn_rma_waiter *w = q->head; w; w = w->next) skn_sched_wake(w->unit);
  skn_spin_unlock(&q->lock);
}

/* ------------------------------------------------------------------ windows */

/* The members' records and the PSCW post counters, one block (registered as one region
 * when the window spans processes: other processes' origins reach the words in it). */
static size_t elocks_offset(int n) {
  size_t b = sizeof(skn_win_target) * (size_t)n + sizeof(_Atomic(int)) * (size_t)n * (size_t)n;
  return (b + 7) & ~(size_t)7;
}

static size_t sync_block_size(int n, bool span) {
  size_t b = elocks_offset(n) + (span ? sizeof(_Atomic(uint64_t)) * SKN_WIN_STRIPES : 0);
  return (b + SKN_CACHELINE - 1) & ~(size_t)(SKN_CACHELINE - 1);
}

static skn_win *win_new(skn_comm *c, int flavor, bool span) {
  int n = c->size;
  skn_win *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  w->size = n;
  w->flavor = flavor;
  w->span = span;
  size_t bytes = sync_block_size(n, span);
  w->t = aligned_alloc(SKN_CACHELINE, bytes);
  if (w->t) {
    memset(w->t, 0, bytes);
    w->posts = (_Atomic(int) *)(void *)(w->t + n);
    if (span) w->elocks = (_Atomic(uint64_t) *)(void *)((char *)w->t + elocks_offset(n));
  }
  /* spanning: the private communicator needs a context id agreed on (skn_win_create) */
  if (!span) w->comm = skn_comm_create(n, c->members);
  if (!w->t || (!span && !w->comm)) {
    free(w->t);
    if (w->comm) {
      atomic_store(&w->comm->refs, 1);
      skn_comm_release(w->comm);
    }
    free(w);
    return NULL;
  }
  atomic_init(&w->refs, span ? c->x->local->size : n);
  return w;
}

static void *alloc_block(size_t size) {
  void *p = NULL;
  /* cache-line aligned; posix_memalign goes through the calling rank's heap */
  return posix_memalign(&p, SKN_CACHELINE, size ? size : 1) == 0 ? p : NULL;
}

enum { FLAVOR_CREATE = 1, FLAVOR_ALLOCATE = 2, FLAVOR_DYNAMIC = 3, FLAVOR_SHARED = 4 };

/* What each member tells the others when a window spans processes. */
#define RKEY_MAX 512
typedef struct span_rec {
  uint64_t base, size, sync_base;
  int32_t disp_unit, ctx; /* ctx: member 0's choice for the private communicator */
  uint32_t rkey_len, sync_rkey_len;
  char rkey[RKEY_MAX], sync_rkey[RKEY_MAX];
} span_rec;

/* A member's directory of attached regions (dynamic windows spanning processes): a
 * sequence lock (gen is odd while the member changes it; readers in other processes
 * read gen, the entries, gen again, and retry when they differ), then the entries. */
typedef struct dir_ent {
  uint64_t lo, hi, serial;
  uint32_t rkey_len, pad;
  char rkey[RKEY_MAX];
} dir_ent;
typedef struct win_dir {
  _Atomic(uint64_t) gen;
  uint64_t n;
  dir_ent e[SKN_WIN_DYN_MAX];
} win_dir;

static skn_win *win_create_span(skn_rank *me, skn_comm *c, int rank, int flavor, void *base, size_t size,
                                int disp_unit) {
  skn_comm *lc = c->x->local;
  int lrank = c->x->local_of[rank], n = c->size;
  span_rec *mine = calloc(1, sizeof *mine), *all = calloc((size_t)n, sizeof *all);
  if (!mine || !all) skn_fatal("rank %d: out of memory creating a window of %d members", me->world_rank, n);
  /* The first member here creates the object and registers its synchronization block. */
  skn_coll_args a = {0};
  if (lrank == 0) {
    skn_win *nw = win_new(c, flavor, true);
    if (!nw) skn_fatal("rank %d: out of memory creating a window of %d members", me->world_rank, n);
    size_t len = RKEY_MAX;
    nw->lead = rank;
    if (!skn_remote_mem_map(nw->t, sync_block_size(n, true), &nw->sync_mem, mine->sync_rkey, &len))
      skn_fatal("rank %d: cannot register a window's synchronization words with the transport", me->world_rank);
    mine->sync_rkey_len = (uint32_t)len;
    a.result = nw;
  }
  skn_coll_publish(lc, lrank, &a);
  skn_win *w = lc->slots[0]->result;
  skn_coll_barrier(me, lc);
  skn_win_target *t = &w->t[rank];
  t->disp_unit = disp_unit;
  t->size = size;
  if (flavor == FLAVOR_ALLOCATE) {
    if (!(t->base = t->owned = alloc_block(size)))
      skn_fatal("rank %d: out of memory for a window of %zu bytes", me->world_rank, size);
  } else {
    t->base = base;
  }
  void *reg = t->base;
  if (flavor == FLAVOR_DYNAMIC) { /* no memory yet: the directory takes its place */
    if (!(t->dir = t->owned = alloc_block(sizeof(win_dir))))
      skn_fatal("rank %d: out of memory for a dynamic window", me->world_rank);
    memset(t->dir, 0, sizeof(win_dir));
    reg = t->dir;
    size = sizeof(win_dir);
  }
  if (size) {
    size_t len = RKEY_MAX;
    if (!skn_remote_mem_map(reg, size, &t->mem, mine->rkey, &len))
      skn_fatal("rank %d: cannot register %zu bytes of window memory with the transport", me->world_rank, size);
    mine->rkey_len = (uint32_t)len;
  }
  mine->base = (uintptr_t)reg;
  mine->size = t->size;
  mine->sync_base = (uintptr_t)w->t;
  mine->disp_unit = disp_unit;
  mine->ctx = rank == 0 ? skn_cid_alloc() : 0;
  skn_coll_args g = {.sbuf = mine, .scount = sizeof *mine, .st = &skn_dt_predefined[4], .rbuf = all,
                     .rcount = sizeof *mine, .rt = &skn_dt_predefined[4]}; /* MPI_BYTE */
  skn_xcoll_allgather(c, rank, &g);
  if (lrank == 0) {
    w->comm = skn_comm_create_ctx(all[0].ctx, n, c->members);
    if (!w->comm) skn_fatal("rank %d: out of memory creating a window of %d members", me->world_rank, n);
    for (int i = 0; i < n; i++) {
      skn_win_target *ti = &w->t[i];
      /* the synchronization words of every member, this process's included, are named
       * by (block address, key): the origin's transport to the member decides how */
      ti->sync_base = all[i].sync_base;
      if (c->x->proc_index[i] == c->x->me) continue; /* filled in by the member itself */
      skn_rank *r = c->members[i];
      ti->disp_unit = all[i].disp_unit;
      if (flavor == FLAVOR_DYNAMIC) {
        ti->dir_addr = all[i].base;
        ti->dir_rkey = skn_remote_rkey(r->proc, all[i].rkey, all[i].rkey_len);
      } else {
        ti->base = (char *)(uintptr_t)all[i].base;
        ti->size = (size_t)all[i].size;
        if (all[i].rkey_len) ti->rkey = skn_remote_rkey(r->proc, all[i].rkey, all[i].rkey_len);
      }
      /* the key of i's block travels with the first member of i's process only */
      int lead = c->x->leaders[c->x->proc_index[i]];
      ti->sync_rkey = skn_remote_rkey(r->proc, all[lead].sync_rkey, all[lead].sync_rkey_len);
    }
  }
  free(mine);
  free(all);
  skn_coll_barrier(me, lc); /* the object is complete */
  return w;
}

skn_win *skn_win_create(skn_rank *me, skn_comm *c, int rank, int flavor, void *base, size_t size, int disp_unit,
                        bool noncontig) {
  if (c->x) return win_create_span(me, c, rank, flavor, base, size, disp_unit);
  skn_coll_args a = {0};
  if (rank == 0) a.result = win_new(c, flavor, false);
  skn_coll_publish(c, rank, &a);
  skn_win *w = c->slots[0]->result;
  skn_coll_barrier(me, c); /* nobody reads the slots any more */
  if (!w) return NULL;
  skn_win_target *t = &w->t[rank];
  t->disp_unit = disp_unit;
  t->size = size;
  if (flavor == FLAVOR_ALLOCATE || (flavor == FLAVOR_SHARED && noncontig)) {
    t->base = t->owned = alloc_block(size);
    if (!t->owned) t->size = SIZE_MAX; /* tells the others */
  } else if (flavor == FLAVOR_CREATE) {
    t->base = base;
  }
  skn_coll_barrier(me, w->comm);
  if (flavor == FLAVOR_SHARED && !noncontig) {
    /* One block, members' parts back to back in rank order (the standard's contiguous
     * default), from the first member's heap. */
    if (rank == 0) {
      size_t total = 0;
      for (int i = 0; i < w->size; i++) total += w->t[i].size;
      char *p = alloc_block(total);
      t->owned = p;
      for (int i = 0; i < w->size; i++) {
        w->t[i].base = p ? p : NULL;
        if (p) p += w->t[i].size;
        else w->t[i].size = SIZE_MAX;
      }
    }
    skn_coll_barrier(me, w->comm);
  }
  bool failed = false;
  for (int i = 0; i < w->size; i++) failed |= w->t[i].size == SIZE_MAX;
  if (failed) { /* every member saw the same: all give up */
    skn_win_free(me, w);
    return NULL;
  }
  return w;
}

void skn_win_free(skn_rank *me, skn_win *w) {
  skn_comm *c = w->comm;
  int rank = -1;
  for (int i = 0; i < c->size; i++)
    if (c->members[i] == me) rank = i;
  if (w->span) skn_win_flush(w, -1);
  skn_coll_barrier(me, c); /* nobody accesses any member's memory after this */
  if (rank >= 0) {
    skn_win_target *t = &w->t[rank];
    if (t->mem) skn_remote_mem_unmap(t->mem);
    free(t->owned);
    for (skn_win_region *r = t->regions, *next; r; r = next) {
      next = r->next;
      if (r->mem) skn_remote_mem_unmap(r->mem);
      free(r);
    }
    t->regions = NULL;
  }
  skn_comm_release(c);
  if (atomic_fetch_sub(&w->refs, 1) == 1) {
    if (w->span) {
      for (int i = 0; i < w->size; i++) {
        skn_win_target *t = &w->t[i];
        if (t->rkey) skn_remote_rkey_destroy(t->rkey);
        if (t->sync_rkey) skn_remote_rkey_destroy(t->sync_rkey);
        if (!t->dir_rkey) continue; /* the rest: another process's dynamic member */
        skn_remote_rkey_destroy(t->dir_rkey);
        for (int k = 0; k < 2; k++)
          for (skn_win_region *r = k ? t->retired : t->regions, *next; r; r = next) {
            next = r->next;
            skn_remote_rkey_destroy(r->rkey);
            free(r);
          }
      }
      skn_remote_mem_unmap(w->sync_mem);
    }
    free(w->t); /* and the posts: one block */
    free(w);
  }
}

void skn_win_flush(skn_win *w, int target) {
  if (target >= 0) {
    skn_rank *r = skn_win_member(w, target);
    skn_rank_tp(r)->flush(r);
    return;
  }
  /* each transport once, for every rank it reaches */
  const skn_transport *done[4];
  int nd = 0;
  for (int i = 0; i < w->size; i++) {
    const skn_transport *tp = skn_rank_tp(skn_win_member(w, i));
    bool seen = false;
    for (int k = 0; k < nd; k++) seen |= done[k] == tp;
    if (seen) continue;
    tp->flush(NULL);
    if (nd < 4) done[nd++] = tp;
  }
}

/* ------------------------------------------------------------------ the local transport's RMA slots */

int skn_rma_local_put(skn_rank *target, const skn_rma_loc *t, const void *obuf, size_t ocount, const skn_dtype *ot,
                      size_t tcount, const skn_dtype *tt) {
  (void)target;
  skn_dt_copy_inline(t->addr, tcount, tt, obuf, ocount, ot);
  return SKN_OK;
}

int skn_rma_local_get(skn_rank *target, const skn_rma_loc *t, void *obuf, size_t ocount, const skn_dtype *ot,
                      size_t tcount, const skn_dtype *tt) {
  (void)target;
  skn_dt_copy_inline(obuf, ocount, ot, t->addr, tcount, tt);
  return SKN_OK;
}

int skn_rma_local_accumulate(skn_rank *target, const skn_rma_loc *t, int op, int basic, const void *origin,
                             size_t ocount, const skn_dtype *ot, void *result, size_t rcount, const skn_dtype *rt,
                             size_t tcount, const skn_dtype *tt) {
  (void)target;
  if (t->w->span) skn_remote_tsan_release(); /* device.h */
  skn_rma_accumulate(t->w, op, basic, origin, ocount, ot, result, rcount, rt, t->addr, tcount, tt);
  if (t->w->span) skn_remote_tsan_acquire();
  return SKN_OK;
}

int skn_rma_local_cas(skn_rank *target, const skn_rma_loc *t, int basic, const void *origin, const void *compare,
                      void *result) {
  (void)target;
  if (t->w->span) skn_remote_tsan_release(); /* device.h */
  skn_rma_cas(t->w, basic, origin, compare, result, t->addr);
  if (t->w->span) skn_remote_tsan_acquire();
  return SKN_OK;
}

/* Complete at the target already: only what follows must not be seen first. */
int skn_rma_local_flush(skn_rank *target) {
  (void)target;
  atomic_thread_fence(memory_order_acq_rel);
  return SKN_OK;
}

/* ------------------------------------------------------------------ spanning windows' synchronization words
 * The words live in the target's process (its window object's block); origins of any
 * process change them with the target transport's atomics, so that local and remote
 * origins agree; the member's transport decides how (sync_loc names the word the same
 * way for every member). Waits on these words poll (a change made from another process
 * wakes nobody here), yielding to the other units of the worker and progressing the
 * transport between looks, so no change needs to wake a wait queue. */

enum { DT_INT = 8, DT_UINT64 = 25 };    /* skn_dt_predefined indices of MPI_INT, MPI_UINT64_T */
enum { ACC_SUM = 3, ACC_REPLACE = 13 }; /* op indices */

/* The word `word` (an address in this process's block) as it is in member i's process
 * (for a member of this process: the word itself, with no key). */
static skn_rma_loc sync_loc(skn_win *w, int i, const void *word) {
  uintptr_t off = (uintptr_t)word - (uintptr_t)w->t;
  return (skn_rma_loc){w, (char *)(uintptr_t)(w->t[i].sync_base + off), w->t[i].sync_rkey};
}

/* word op= v in member i's process (op SUM or REPLACE); returns the old value. */
static uint64_t sync_add(skn_win *w, int i, const void *word, int basic, int op, uint64_t v) {
  skn_rank *r = skn_win_member(w, i);
  skn_rma_loc l = sync_loc(w, i, word);
  const skn_dtype *dt = &skn_dt_predefined[basic];
  uint64_t old = 0;
  int32_t v32 = (int32_t)v;
  const void *in = basic == DT_INT ? (const void *)&v32 : (const void *)&v;
  if (skn_rank_tp(r)->accumulate(r, &l, op, basic, in, 1, dt, &old, 1, dt, 1, dt) != SKN_OK)
    skn_fatal("the transport to rank %d cannot update a window's synchronization word", r->world_rank);
  return old;
}

static void poll_until(bool (*cond)(void *), void *arg) {
  for (unsigned i = 0; !cond(arg); i++) {
    skn_remote_poll();
    skn_sched_yield();
    if (i > 4096) { /* a long wait: leave the core to the others now and then */
      struct timespec ts = {0, 20000};
      nanosleep(&ts, NULL);
    }
  }
  skn_remote_tsan_acquire(); /* the word may have been changed by UCX for another process */
}

static bool span_try_lock(skn_win *w, int target, bool exclusive) {
  skn_rank *r = skn_win_member(w, target);
  const void *word = &w->t[target].lock;
  if (exclusive) {
    skn_rma_loc l = sync_loc(w, target, word);
    uint64_t x = SKN_WIN_LOCK_EXCL, cmp = 0, old = 1;
    if (skn_rank_tp(r)->cas(r, &l, DT_UINT64, &x, &cmp, &old) != SKN_OK)
      skn_fatal("the transport to rank %d cannot take a window lock", r->world_rank);
    return old == 0;
  }
  if (!(sync_add(w, target, word, DT_UINT64, ACC_SUM, 1) & SKN_WIN_LOCK_EXCL)) return true;
  sync_add(w, target, word, DT_UINT64, ACC_SUM, (uint64_t)-1);
  return false;
}

static int member_index(const skn_win *w, const skn_rank *member) {
  if (skn_win_member(w, w->lead) == member) return w->lead;
  for (int i = 0; i < w->size; i++)
    if (skn_win_member(w, i) == member) return i;
  skn_fatal("rank %d is no member of the window", member->world_rank);
}

typedef struct elem_try {
  skn_win *w;
  int i;
  const void *word;
} elem_try;

static bool elem_cond(void *arg) {
  elem_try *e = arg;
  skn_rank *r = skn_win_member(e->w, e->i);
  skn_rma_loc l = sync_loc(e->w, e->i, e->word);
  uint64_t one = 1, cmp = 0, old = 1;
  if (skn_rank_tp(r)->cas(r, &l, DT_UINT64, &one, &cmp, &old) != SKN_OK)
    skn_fatal("the transport to rank %d cannot take an accumulate lock", r->world_rank);
  return old == 0;
}

/* The holder keeps it for a few round trips at most: poll (and progress the transport,
 * which a holder in another process may need from us). */
void skn_win_elem_lock(skn_win *w, const skn_rank *member, const char *taddr) {
  elem_try e = {w, member_index(w, member), &w->elocks[((uintptr_t)taddr >> 6) % SKN_WIN_STRIPES]};
  poll_until(elem_cond, &e);
}

void skn_win_elem_unlock(skn_win *w, const skn_rank *member, const char *taddr) {
  sync_add(w, member_index(w, member), &w->elocks[((uintptr_t)taddr >> 6) % SKN_WIN_STRIPES], DT_UINT64,
           ACC_REPLACE, 0);
}

/* ------------------------------------------------------------------ passive target */

bool skn_win_try_lock(skn_win *w, int target, bool exclusive) {
  if (w->span) return span_try_lock(w, target, exclusive);
  _Atomic(uint64_t) *l = &w->t[target].lock;
  if (exclusive) {
    uint64_t free_word = 0;
    return atomic_compare_exchange_strong(l, &free_word, SKN_WIN_LOCK_EXCL);
  }
  if (!(atomic_fetch_add(l, 1) & SKN_WIN_LOCK_EXCL)) return true;
  atomic_fetch_sub(l, 1);
  skn_rma_wake(&w->t[target].wq); /* a writer may have seen our transient count */
  return false;
}

typedef struct lock_try {
  skn_win *w;
  int target;
  bool exclusive;
} lock_try;

static bool lock_cond(void *arg) {
  lock_try *t = arg;
  return skn_win_try_lock(t->w, t->target, t->exclusive);
}

void skn_win_lock(skn_win *w, int target, bool exclusive) {
  lock_try t = {w, target, exclusive};
  skn_win_dyn_forget(w, target);
  if (w->span) poll_until(lock_cond, &t);
  else skn_rma_wait_until(&w->t[target].wq, lock_cond, &t);
}

void skn_win_unlock(skn_win *w, int target, bool exclusive) {
  if (w->span) {
    skn_win_flush(w, target); /* the epoch's operations are at the target first */
    sync_add(w, target, &w->t[target].lock, DT_UINT64, exclusive ? ACC_REPLACE : ACC_SUM,
             exclusive ? 0 : (uint64_t)-1);
    return;
  }
  if (exclusive) atomic_store(&w->t[target].lock, 0);
  else atomic_fetch_sub(&w->t[target].lock, 1);
  skn_rma_wake(&w->t[target].wq);
}

/* ------------------------------------------------------------------ PSCW */

void skn_win_post(skn_win *w, int me_rank, const int *origins, int n) {
  for (int i = 0; i < n; i++) {
    int o = origins[i];
    _Atomic(int) *p = &w->posts[(size_t)o * (size_t)w->size + (size_t)me_rank];
    if (w->span) {
      sync_add(w, o, p, DT_INT, ACC_SUM, 1);
      continue;
    }
    atomic_fetch_add(p, 1);
    skn_rma_wake(&w->t[o].wq);
  }
}

typedef struct start_wait {
  skn_win *w;
  int me;
  const int *targets;
  int n, next; /* targets[0 .. next) consumed */
} start_wait;

static bool posts_arrived(void *arg) {
  start_wait *s = arg;
  while (s->next < s->n) {
    _Atomic(int) *p = &s->w->posts[(size_t)s->me * (size_t)s->w->size + (size_t)s->targets[s->next]];
    int v = atomic_load(p);
    if (v <= 0) return false;
    if (atomic_compare_exchange_strong(p, &v, v - 1)) s->next++;
  }
  return true;
}

void skn_win_start(skn_win *w, int me_rank, const int *targets, int n) {
  start_wait s = {w, me_rank, targets, n, 0};
  for (int i = 0; i < n; i++) skn_win_dyn_forget(w, targets[i]);
  if (w->span) poll_until(posts_arrived, &s);
  else skn_rma_wait_until(&w->t[me_rank].wq, posts_arrived, &s);
}

void skn_win_complete(skn_win *w, const int *targets, int n) {
  for (int i = 0; i < n; i++) {
    if (w->span) {
      skn_win_flush(w, targets[i]);
      sync_add(w, targets[i], &w->t[targets[i]].completes, DT_INT, ACC_SUM, 1);
      continue;
    }
    atomic_fetch_add(&w->t[targets[i]].completes, 1); /* seq_cst: publishes our writes */
    skn_rma_wake(&w->t[targets[i]].wq);
  }
}

typedef struct done_wait {
  _Atomic(int) *completes;
  int n;
} done_wait;

static bool completes_arrived(void *arg) {
  done_wait *d = arg;
  int v = atomic_load(d->completes);
  while (v >= d->n)
    if (atomic_compare_exchange_strong(d->completes, &v, v - d->n)) return true;
  return false;
}

void skn_win_wait(skn_win *w, int me_rank, int n) {
  done_wait d = {&w->t[me_rank].completes, n};
  if (w->span) poll_until(completes_arrived, &d);
  else skn_rma_wait_until(&w->t[me_rank].wq, completes_arrived, &d);
}

bool skn_win_test(skn_win *w, int me_rank, int n) {
  done_wait d = {&w->t[me_rank].completes, n};
  if (!completes_arrived(&d)) return false;
  if (w->span) skn_remote_tsan_acquire(); /* see poll_until */
  return true;
}

/* ------------------------------------------------------------------ dynamic windows */

/* The member changes its own directory only (one writer): other processes' readers
 * retry around it. */
static void dir_begin(win_dir *d) {
  atomic_fetch_add(&d->gen, 1);
  atomic_thread_fence(memory_order_seq_cst);
}
static void dir_end(win_dir *d) {
  atomic_thread_fence(memory_order_seq_cst);
  atomic_fetch_add(&d->gen, 1);
}

int skn_win_attach(skn_win *w, int me_rank, void *base, size_t size) {
  skn_win_target *t = &w->t[me_rank];
  uintptr_t lo = (uintptr_t)base, hi = lo + size;
  skn_win_region *r = calloc(1, sizeof *r);
  if (!r) return SKN_ERR_NOMEM;
  skn_spin_lock(&t->regions_lock);
  for (skn_win_region *q = t->regions; q; q = q->next)
    if (lo < q->hi && q->lo < hi) {
      skn_spin_unlock(&t->regions_lock);
      free(r);
      return SKN_ERR_NOT_FOUND;
    }
  skn_spin_unlock(&t->regions_lock);
  *r = (skn_win_region){lo, hi, NULL, 0, NULL, NULL};
  win_dir *d = t->dir;
  if (d && size) { /* spanning processes: register and publish it (only this rank writes t's list) */
    if (d->n == SKN_WIN_DYN_MAX) {
      free(r);
      return SKN_ERR_NOMEM;
    }
    dir_ent *e = &d->e[d->n];
    size_t len = RKEY_MAX;
    if (!skn_remote_mem_map(base, size, &r->mem, e->rkey, &len)) {
      free(r);
      return SKN_ERR_NOMEM;
    }
    r->serial = ++t->serial;
    dir_begin(d);
    e->lo = lo;
    e->hi = hi;
    e->serial = r->serial;
    e->rkey_len = (uint32_t)len;
    d->n++;
    dir_end(d);
  }
  skn_spin_lock(&t->regions_lock);
  r->next = t->regions;
  t->regions = r;
  skn_spin_unlock(&t->regions_lock);
  return SKN_OK;
}

bool skn_win_detach(skn_win *w, int me_rank, const void *base) {
  skn_win_target *t = &w->t[me_rank];
  skn_win_region *found = NULL;
  skn_spin_lock(&t->regions_lock);
  for (skn_win_region **p = &t->regions; *p; p = &(*p)->next)
    if ((*p)->lo == (uintptr_t)base) {
      found = *p;
      *p = found->next;
      break;
    }
  skn_spin_unlock(&t->regions_lock);
  if (found && found->mem) {
    win_dir *d = t->dir;
    dir_begin(d);
    for (uint64_t k = 0; k < d->n; k++)
      if (d->e[k].serial == found->serial) {
        d->e[k] = d->e[--d->n];
        break;
      }
    dir_end(d);
    skn_remote_mem_unmap(found->mem);
  }
  free(found);
  return found != NULL;
}

/* Reads member i's directory (another process's member) and makes it the regions cached
 * here: those still attached keep their keys, the others are retired. */
static void dyn_fetch(skn_win *w, int i) {
  skn_rank *r = skn_win_member(w, i);
  skn_win_target *t = &w->t[i];
  const skn_dtype *byte = &skn_dt_predefined[4]; /* MPI_BYTE */
  win_dir *d = malloc(sizeof *d);
  if (!d) skn_fatal("out of memory reading the regions attached at rank %d", r->world_rank);
  for (;;) {
    uint64_t head[2], gen2;
    skn_rma_loc l = {w, (char *)(uintptr_t)t->dir_addr, t->dir_rkey};
    skn_rank_tp(r)->get(r, &l, head, sizeof head, byte, sizeof head, byte);
    uint64_t n = head[1] < SKN_WIN_DYN_MAX ? head[1] : SKN_WIN_DYN_MAX;
    if (head[0] & 1) { /* the member is changing it */
      skn_remote_poll();
      skn_sched_yield();
      continue;
    }
    l.addr = (char *)(uintptr_t)(t->dir_addr + offsetof(win_dir, e));
    if (n) skn_rank_tp(r)->get(r, &l, d->e, n * sizeof(dir_ent), byte, n * sizeof(dir_ent), byte);
    l.addr = (char *)(uintptr_t)t->dir_addr;
    skn_rank_tp(r)->get(r, &l, &gen2, sizeof gen2, byte, sizeof gen2, byte);
    d->n = n;
    if (gen2 == head[0]) break;
  }
  skn_spin_lock(&t->regions_lock);
  skn_win_region *old = t->regions, *fresh = NULL;
  for (uint64_t k = 0; k < d->n; k++) {
    skn_win_region *q = NULL;
    for (skn_win_region **p = &old; *p; p = &(*p)->next)
      if ((*p)->serial == d->e[k].serial) {
        q = *p;
        *p = q->next;
        break;
      }
    if (!q) {
      if (!(q = calloc(1, sizeof *q))) skn_fatal("out of memory caching the regions of rank %d", r->world_rank);
      q->lo = d->e[k].lo;
      q->hi = d->e[k].hi;
      q->serial = d->e[k].serial;
      q->rkey = skn_remote_rkey(r->proc, d->e[k].rkey, d->e[k].rkey_len);
    }
    q->next = fresh;
    fresh = q;
  }
  t->regions = fresh;
  while (old) { /* detached: another rank here may be using the key right now */
    skn_win_region *next = old->next;
    old->next = t->retired;
    t->retired = old;
    old = next;
  }
  t->dir_stale = false;
  skn_spin_unlock(&t->regions_lock);
  free(d);
}

/* How many attached regions it takes to cover [lo, hi): 1, 2 for more than one (they
 * never overlap, so each step of the walk takes the region holding the next byte), 0
 * when a byte is in none. */
static int regions_covering(skn_win_target *t, uintptr_t lo, uintptr_t hi) {
  int n = 0;
  for (uintptr_t at = lo; at < hi; n = n < 2 ? n + 1 : 2) {
    const skn_win_region *q = t->regions;
    while (q && !(at >= q->lo && at < q->hi)) q = q->next;
    if (!q) return 0;
    at = q->hi;
  }
  return n;
}

int skn_win_dynamic_covers(skn_win *w, int target, uintptr_t lo, uintptr_t hi) {
  skn_win_target *t = &w->t[target];
  skn_spin_lock(&t->regions_lock);
  int n = (!t->dir_rkey || !t->dir_stale) ? regions_covering(t, lo, hi) : 0;
  skn_spin_unlock(&t->regions_lock);
  if (!n && t->dir_rkey) {
    dyn_fetch(w, target);
    skn_spin_lock(&t->regions_lock);
    n = regions_covering(t, lo, hi);
    skn_spin_unlock(&t->regions_lock);
  }
  return n == 0 ? SKN_WIN_OUTSIDE : n == 1 || !t->dir_rkey ? SKN_WIN_COVERED : SKN_WIN_SPLIT;
}

void *skn_win_dyn_rkey(skn_win *w, int target, const char *addr) {
  skn_win_target *t = &w->t[target];
  if (!t->dir_rkey) return NULL; /* a member of this process */
  /* the API checked the bytes touched (skn_win_dynamic_covers); addr is where the
   * target datatype's origin falls: the region holding it, or the nearest above it */
  uintptr_t a = (uintptr_t)addr;
  void *rk = NULL;
  uintptr_t best = UINTPTR_MAX;
  skn_spin_lock(&t->regions_lock);
  for (skn_win_region *q = t->regions; q; q = q->next) {
    if (a >= q->lo && a < q->hi) {
      rk = q->rkey;
      break;
    }
    uintptr_t dist = q->lo > a ? q->lo - a : a - q->hi + ((uintptr_t)1 << 62);
    if (dist < best) {
      best = dist;
      rk = q->rkey;
    }
  }
  skn_spin_unlock(&t->regions_lock);
  return rk;
}

void skn_win_dyn_forget(skn_win *w, int target) {
  if (!w->span || w->flavor != FLAVOR_DYNAMIC) return;
  for (int i = target < 0 ? 0 : target; i < (target < 0 ? w->size : target + 1); i++) {
    skn_win_target *t = &w->t[i];
    if (!t->dir_rkey) continue;
    skn_spin_lock(&t->regions_lock);
    t->dir_stale = true;
    skn_spin_unlock(&t->regions_lock);
  }
}

/* ------------------------------------------------------------------ accumulates */

int skn_rma_basic(const skn_dtype *t) {
  if (t >= skn_dt_predefined && t < skn_dt_predefined + SKN_DT_PREDEFINED_COUNT)
    return (int)(t - skn_dt_predefined);
  const skn_dtype *f90 = skn_dt_f90_base(t);
  if (f90) return skn_rma_basic(f90);
  int ni, na, nd;
  const int *ints;
  const ptrdiff_t *aints;
  skn_dtype *const *types;
  skn_dt_contents(t, &ni, &ints, &na, &aints, &nd, &types);
  int basic = -1;
  for (int i = 0; i < nd; i++) {
    int b = skn_rma_basic(types[i]);
    if (b < 0 || (basic >= 0 && b != basic)) return -1;
    basic = b;
  }
  return basic;
}

enum { OP_MAX = 1, OP_MIN, OP_SUM, OP_PROD, OP_LAND, OP_BAND, OP_LOR, OP_BOR, OP_LXOR, OP_BXOR, OP_MINLOC,
       OP_MAXLOC, OP_REPLACE, OP_NO_OP };

/* Width of the hardware atomics used for every element of this type (whatever the op,
 * so that all accumulates on one element agree), or 0: striped locks. */
static int hw_width(int basic) {
  const skn_dtype *b = &skn_dt_predefined[basic];
  if ((ptrdiff_t)b->size != b->extent) return 0;
  return b->size == 1 || b->size == 2 || b->size == 4 || b->size == 8 ? (int)b->size : 0;
}

static bool is_integer(int basic) {
  const skn_dtype *b = &skn_dt_predefined[basic];
  return b->nsig == 1 && b->sig[0].code >= SKN_SIG_I1 && b->sig[0].code <= SKN_SIG_I8;
}

#define HW_ELEM(T)                                                                        \
  do {                                                                                    \
    T *p = (T *)tgt, v, x;                                                                \
    if (op != OP_NO_OP) __builtin_memcpy(&x, in, sizeof x);                               \
    if (op == OP_NO_OP) v = __atomic_load_n(p, __ATOMIC_SEQ_CST);                         \
    else if (op == OP_REPLACE) v = __atomic_exchange_n(p, x, __ATOMIC_SEQ_CST);           \
    else if (op == OP_SUM && integer) v = __atomic_fetch_add(p, x, __ATOMIC_SEQ_CST);     \
    else if (op == OP_BAND && integer) v = __atomic_fetch_and(p, x, __ATOMIC_SEQ_CST);    \
    else if (op == OP_BOR && integer) v = __atomic_fetch_or(p, x, __ATOMIC_SEQ_CST);      \
    else if (op == OP_BXOR && integer) v = __atomic_fetch_xor(p, x, __ATOMIC_SEQ_CST);    \
    else {                                                                                \
      v = __atomic_load_n(p, __ATOMIC_RELAXED);                                           \
      T nv;                                                                               \
      do {                                                                                \
        nv = v;                                                                           \
        skn_op_apply(op, basic, &x, &nv, 1);                                              \
      } while (!__atomic_compare_exchange_n(p, &v, nv, true, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)); \
    }                                                                                     \
    if (old) __builtin_memcpy(old, &v, sizeof v);                                         \
  } while (0)

/* (UBSan found the misaligned loads: a short in rma_xacc.) */
void skn_rma_apply(int op, int basic, const void *in, bool in_packed, void *tgt) {
  const skn_dtype *bt = &skn_dt_predefined[basic];
  size_t n = (size_t)bt->extent;
  _Alignas(max_align_t) char a[64], t[64];
  if (n > sizeof a) skn_fatal("accumulate on %s: %zu-byte elements", bt->name, n);
  if (in_packed) skn_dt_unpack(a, bt, in, bt->size);
  else memcpy(a, in, n);
  memcpy(t, tgt, n);
  skn_op_apply(op, basic, a, t, 1);
  memcpy(tgt, t, n);
}

/* One element: old (if wanted) = *tgt; *tgt = in op *tgt. `in` and `old` are in the
 * basic type's native layout. */
static inline void acc_elem(skn_win *w, int op, int basic, int hw, bool integer, const void *in, void *old,
                            char *tgt) {
  if (hw && ((uintptr_t)tgt & (uintptr_t)(hw - 1)) == 0) {
    switch (hw) {
    case 1: HW_ELEM(uint8_t); return;
    case 2: HW_ELEM(uint16_t); return;
    case 4: HW_ELEM(uint32_t); return;
    default: HW_ELEM(uint64_t); return;
    }
  }
  if (w->span) { /* origins in other processes update the element too */
    skn_rank *lead = skn_win_member(w, w->lead);
    skn_win_elem_lock(w, lead, tgt);
    if (old) memcpy(old, tgt, (size_t)skn_dt_predefined[basic].extent);
    if (op != OP_NO_OP) skn_rma_apply(op, basic, in, false, tgt);
    skn_win_elem_unlock(w, lead, tgt);
    return;
  }
  skn_spinlock *l = &w->stripes[((uintptr_t)tgt >> 6) % SKN_WIN_STRIPES];
  skn_spin_lock(l);
  if (old) memcpy(old, tgt, (size_t)skn_dt_predefined[basic].extent);
  if (op != OP_NO_OP) skn_rma_apply(op, basic, in, false, tgt);
  skn_spin_unlock(l);
}

char *skn_rma_elem(skn_rma_pos *p, size_t bs) {
  const skn_dtype *t = p->t;
  while (p->k == t->blocks[p->b].len) {
    p->k = 0;
    if (++p->b == t->nblocks) {
      p->b = 0;
      p->i++;
    }
  }
  char *addr = p->base + (ptrdiff_t)p->i * t->extent + t->blocks[p->b].off + (ptrdiff_t)p->k;
  for (size_t left = bs;;) {
    size_t room = t->blocks[p->b].len - p->k, s = room < left ? room : left;
    p->k += s;
    left -= s;
    if (!left) break;
    p->k = 0;
    if (++p->b == t->nblocks) {
      p->b = 0;
      p->i++;
    }
  }
  return addr;
}

#define ACC_CHUNK 4096

void skn_rma_accumulate(skn_win *w, int op, int basic, const void *origin, size_t ocount, const skn_dtype *ot,
                        void *result, size_t rcount, const skn_dtype *rt, char *taddr, size_t tcount,
                        const skn_dtype *tt) {
  const skn_dtype *bt = &skn_dt_predefined[basic];
  size_t bs = bt->size, total = tcount * tt->size;
  if (!bs || !total) return;
  int hw = hw_width(basic);
  bool integer = is_integer(basic), native = (ptrdiff_t)bs == bt->extent; /* packed == native layout */
  /* One element, contiguous everywhere (Fetch_and_op-like): no staging. */
  if (total == bs && native && tt->contig && (op == OP_NO_OP || ot->contig) && (!result || rt->contig)) {
    acc_elem(w, op, basic, hw, integer, origin, result, taddr);
    return;
  }
  _Alignas(64) char inbuf[ACC_CHUNK], oldbuf[ACC_CHUNK];
  _Alignas(64) char in_el[64], old_el[64]; /* one element in native layout (pair types) */
  size_t chunk = ACC_CHUNK / bs * bs;
  bool in_direct = op == OP_NO_OP || (ot->contig && native), res_direct = !result || (rt->contig && native);
  skn_rma_pos tp = {tt, taddr, 0, 0, 0};
  for (size_t s0 = 0; s0 < total; s0 += chunk) {
    size_t n = total - s0 < chunk ? total - s0 : chunk;
    if (op != OP_NO_OP && ocount * ot->size < s0 + n) break; /* the API checks sizes; stay in bounds anyway */
    if (!in_direct) skn_dt_pack_at(inbuf, origin, ot, s0, n);
    for (size_t s = 0; s < n; s += bs) {
      char *tgt = tt->contig ? taddr + s0 + s : skn_rma_elem(&tp, bs);
      const void *in = NULL;
      if (op != OP_NO_OP) {
        const char *packed = in_direct ? (const char *)origin + s0 + s : inbuf + s;
        if (native) in = packed;
        else {
          skn_dt_unpack(in_el, bt, packed, bs);
          in = in_el;
        }
      }
      void *old = NULL;
      if (result) old = native ? (res_direct ? (char *)result + s0 + s : oldbuf + s) : old_el;
      acc_elem(w, op, basic, hw, integer, in, old, tgt);
      if (result && !native) skn_dt_pack(oldbuf + s, old_el, bt, bs);
    }
    if (result && !res_direct && rcount * rt->size >= s0 + n) skn_dt_unpack_at(result, rt, s0, oldbuf, n);
  }
}

#define HW_CAS(T)                                                                          \
  do {                                                                                     \
    T x, c;                                                                                \
    __builtin_memcpy(&x, origin, sizeof x);                                                \
    __builtin_memcpy(&c, compare, sizeof c);                                               \
    __atomic_compare_exchange_n((T *)taddr, &c, x, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
    __builtin_memcpy(result, &c, sizeof c); /* the old value either way */                 \
  } while (0)

void skn_rma_cas(skn_win *w, int basic, const void *origin, const void *compare, void *result, char *taddr) {
  int hw = hw_width(basic);
  if (hw && ((uintptr_t)taddr & (uintptr_t)(hw - 1)) == 0) {
    switch (hw) {
    case 1: HW_CAS(uint8_t); return;
    case 2: HW_CAS(uint16_t); return;
    case 4: HW_CAS(uint32_t); return;
    default: HW_CAS(uint64_t); return;
    }
  }
  size_t bs = skn_dt_predefined[basic].size;
  _Alignas(64) char old[64];
  if (w->span) {
    skn_rank *lead = skn_win_member(w, w->lead);
    skn_win_elem_lock(w, lead, taddr);
    memcpy(old, taddr, bs);
    if (!memcmp(old, compare, bs)) memcpy(taddr, origin, bs);
    skn_win_elem_unlock(w, lead, taddr);
    memcpy(result, old, bs);
    return;
  }
  skn_spinlock *l = &w->stripes[((uintptr_t)taddr >> 6) % SKN_WIN_STRIPES];
  skn_spin_lock(l);
  memcpy(old, taddr, bs);
  if (!memcmp(old, compare, bs)) memcpy(taddr, origin, bs);
  skn_spin_unlock(l);
  memcpy(result, old, bs);
}
