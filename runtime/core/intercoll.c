/* Collectives on intercommunicators. Both groups publish their arguments on the bridge
 * (an intracommunicator of both groups) and each member then reads the other group's
 * buffers directly, as the intracommunicator collectives do; a last bridge barrier keeps
 * every published buffer alive until nobody reads it. Reductions are split: member k of
 * a group reduces chunk k of its own group's inputs and writes it where the other group
 * wants the result, so both groups work in parallel and data moves once. */
#include <stdlib.h>
#include <string.h>

#include "core.h"

/* Publishes a; returns the remote group's slots. */
static skn_coll_args **publish(skn_comm *c, int rank, skn_coll_args *a) {
  skn_coll_publish(c->bridge, c->bridge_off + rank, a);
  return c->bridge->slots + c->remote_off;
}
static inline skn_coll_args **local_slots(skn_comm *c) { return c->bridge->slots + c->bridge_off; }
static inline void done(skn_comm *c) { skn_coll_barrier(NULL, c->bridge); }

void skn_icoll_barrier(skn_comm *c) { skn_coll_barrier(NULL, c->bridge); }

void skn_icoll_bcast(skn_comm *c, int rank, skn_coll_args *a) {
  skn_coll_args **remote = publish(c, rank, a);
  if (a->root >= 0) {
    const skn_coll_args *r = remote[a->root];
    skn_dt_copy(a->rbuf, a->rcount, a->rt, r->rbuf, r->rcount, r->rt);
  }
  done(c);
}

/* Gather(v): each member of the sending group copies its block into the root's buffer. */
void skn_icoll_gather(skn_comm *c, int rank, skn_coll_args *a) {
  skn_coll_args **remote = publish(c, rank, a);
  if (a->root >= 0) {
    const skn_coll_args *r = remote[a->root];
    size_t off = r->rdispls ? (size_t)r->rdispls[rank] : (size_t)rank * r->rcount;
    size_t cnt = r->rcounts ? (size_t)r->rcounts[rank] : r->rcount;
    skn_dt_copy(skn_coll_at(r->rbuf, off, r->rt), cnt, r->rt, a->sbuf, a->scount, a->st);
  }
  done(c);
}

void skn_icoll_scatter(skn_comm *c, int rank, skn_coll_args *a) {
  skn_coll_args **remote = publish(c, rank, a);
  if (a->root >= 0) {
    const skn_coll_args *r = remote[a->root];
    size_t off = r->sdispls ? (size_t)r->sdispls[rank] : (size_t)rank * r->scount;
    size_t cnt = r->scounts ? (size_t)r->scounts[rank] : r->scount;
    skn_dt_copy(a->rbuf, a->rcount, a->rt, skn_coll_at(r->sbuf, off, r->st), cnt, r->st);
  }
  done(c);
}

/* Allgather(v): every member collects the other group's contributions. */
void skn_icoll_allgather(skn_comm *c, int rank, skn_coll_args *a) {
  skn_coll_args **remote = publish(c, rank, a);
  for (int j = 0; j < c->rsize; j++) {
    const skn_coll_args *s = remote[j];
    size_t off = a->rdispls ? (size_t)a->rdispls[j] : (size_t)j * a->rcount;
    size_t cnt = a->rcounts ? (size_t)a->rcounts[j] : a->rcount;
    skn_dt_copy(skn_coll_at(a->rbuf, off, a->rt), cnt, a->rt, s->sbuf, s->scount, s->st);
  }
  done(c);
}

/* Alltoall(v,w): block j of my receive buffer comes from block `rank` of remote member
 * j's send buffer. The w variants give displacements in bytes. */
void skn_icoll_alltoall(skn_comm *c, int rank, skn_coll_args *a) {
  skn_coll_args **remote = publish(c, rank, a);
  for (int j = 0; j < c->rsize; j++) {
    const skn_coll_args *s = remote[j];
    const skn_dtype *st = s->sts ? s->sts[rank] : s->st;
    const char *src = s->sdispls ? (const char *)s->sbuf + (s->sts ? s->sdispls[rank] : s->sdispls[rank] * st->extent)
                                 : skn_coll_at(s->sbuf, (size_t)rank * s->scount, st);
    size_t scnt = s->scounts ? (size_t)s->scounts[rank] : s->scount;
    const skn_dtype *rt = a->rts ? a->rts[j] : a->rt;
    char *dst = a->rdispls ? (char *)a->rbuf + (a->rts ? a->rdispls[j] : a->rdispls[j] * rt->extent)
                           : skn_coll_at(a->rbuf, (size_t)j * a->rcount, rt);
    size_t rcnt = a->rcounts ? (size_t)a->rcounts[j] : a->rcount;
    skn_dt_copy(dst, rcnt, rt, src, scnt, st);
  }
  done(c);
}

/* My chunk [lo, hi) of the reduction of my group's inputs, in a buffer the caller frees. */
static void *reduce_my_chunk(skn_comm *c, int rank, const skn_coll_args *a, size_t total, size_t *lo, size_t *hi) {
  skn_coll_chunk(total, c->size, rank, lo, hi);
  size_t bytes = skn_coll_room(*hi - *lo, a->st);
  void *acc = malloc(bytes ? bytes : 1);
  if (acc) skn_coll_reduce_members(local_slots(c), a, c->size - 1, *lo, *hi, acc);
  return acc;
}

/* Reduce: the root receives the reduction of the other group's inputs.
 * Allreduce: each group receives the reduction of the other group's inputs. */
skn_status skn_icoll_reduce(skn_comm *c, int rank, skn_coll_args *a, bool all) {
  skn_coll_args **remote = publish(c, rank, a);
  bool contributes = all || a->root >= 0;
  skn_status st = SKN_OK;
  if (contributes) {
    size_t lo, hi;
    void *acc = reduce_my_chunk(c, rank, a, a->scount, &lo, &hi);
    if (!acc) st = SKN_ERR_NOMEM;
    else if (hi > lo)
      for (int j = all ? 0 : a->root; j < (all ? c->rsize : a->root + 1); j++)
        skn_dt_copy(skn_coll_at(remote[j]->rbuf, lo, a->st), hi - lo, a->st, acc, hi - lo, a->st);
    free(acc);
  }
  done(c);
  return st;
}

/* Reduce_scatter(_block): the reduction of my group's inputs is scattered over the other
 * group by that group's counts; my chunk goes to the remote blocks it overlaps. */
skn_status skn_icoll_reduce_scatter(skn_comm *c, int rank, skn_coll_args *a) {
  skn_coll_args **remote = publish(c, rank, a);
  size_t lo, hi;
  void *acc = reduce_my_chunk(c, rank, a, a->scount, &lo, &hi);
  size_t block_lo = 0;
  for (int j = 0; acc && j < c->rsize && block_lo < hi; j++) {
    const skn_coll_args *r = remote[j];
    size_t block_hi = block_lo + (r->rcounts ? (size_t)r->rcounts[j] : r->rcount);
    size_t from = lo > block_lo ? lo : block_lo, to = hi < block_hi ? hi : block_hi;
    if (to > from)
      skn_dt_copy(skn_coll_at(r->rbuf, from - block_lo, a->st), to - from, a->st, skn_coll_at(acc, from - lo, a->st),
                  to - from, a->st);
    block_lo = block_hi;
  }
  bool ok = acc != NULL;
  free(acc);
  done(c);
  return ok ? SKN_OK : SKN_ERR_NOMEM;
}
