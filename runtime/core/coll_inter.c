/* Collectives on intercommunicators. Both groups publish their arguments on the bridge
 * (an intracommunicator of both groups) and each member then reads the other group's
 * buffers directly, as the intracommunicator collectives do; a last bridge barrier keeps
 * every published buffer alive until nobody reads it. Reductions are split: member k of
 * a group reduces chunk k of its own group's inputs and writes it where the other group
 * wants the result, so both groups work in parallel and data moves once. */
#include <stdlib.h>
#include <string.h>

#include "core.h"

/* ------------------------------------------------------------------ across processes
 * (skn_coll_inter_span_ops) When the bridge spans processes, data moves by point-to-point on the bridge's
 * collective context: bridge rank of local member j is bridge_off + j, of remote member j
 * remote_off + j. Reductions first combine each group's inputs in rank order at its rank
 * 0 (group_reduce); the two rank 0s swap results and hand them out. */

#define T_INTER 24 /* below SKN_XTAG_NEIGHBOR, apart from coll_span.c's tags */

static inline int local_b(const skn_comm *c, int j) { return c->bridge_off + j; }
static inline int remote_b(const skn_comm *c, int j) { return c->remote_off + j; }

static void *room_for(size_t count, const skn_dtype *t, int copies) {
  return skn_xcoll_scratch(skn_coll_room(count, t) * (size_t)copies);
}

static void x_bcast(skn_comm *c, int rank, skn_coll_args *a) {
  if (a->root == MPI_ROOT)
    for (int j = 0; j < c->rsize; j++) skn_xcoll_send(c->bridge, local_b(c, rank), remote_b(c, j), T_INTER, a->rbuf, a->rcount, a->rt);
  else if (a->root >= 0)
    skn_xcoll_recv(c->bridge, remote_b(c, a->root), T_INTER, a->rbuf, a->rcount, a->rt);
}

static void x_gather(skn_comm *c, int rank, skn_coll_args *a) {
  if (a->root >= 0) {
    skn_xcoll_send(c->bridge, local_b(c, rank), remote_b(c, a->root), T_INTER, a->sbuf, a->scount, a->st);
  } else if (a->root == MPI_ROOT) {
    skn_req *r = skn_xcoll_reqs(c->rsize);
    for (int j = 0; j < c->rsize; j++) {
      size_t off = a->rdispls ? (size_t)a->rdispls[j] : (size_t)j * a->rcount;
      size_t cnt = a->rcounts ? (size_t)a->rcounts[j] : a->rcount;
      skn_xcoll_recv_post(&r[j], c->bridge, remote_b(c, j), T_INTER, skn_coll_at(a->rbuf, off, a->rt), cnt, a->rt);
    }
    skn_xcoll_wait_all(r, c->rsize, -1);
    free(r);
  }
}

static void x_scatter(skn_comm *c, int rank, skn_coll_args *a) {
  if (a->root >= 0) {
    skn_xcoll_recv(c->bridge, remote_b(c, a->root), T_INTER, a->rbuf, a->rcount, a->rt);
  } else if (a->root == MPI_ROOT) {
    for (int j = 0; j < c->rsize; j++) {
      size_t off = a->sdispls ? (size_t)a->sdispls[j] : (size_t)j * a->scount;
      size_t cnt = a->scounts ? (size_t)a->scounts[j] : a->scount;
      skn_xcoll_send(c->bridge, local_b(c, rank), remote_b(c, j), T_INTER, skn_coll_at(a->sbuf, off, a->st), cnt, a->st);
    }
  }
}

static void x_allgather(skn_comm *c, int rank, skn_coll_args *a) {
  skn_req *r = skn_xcoll_reqs(c->rsize);
  for (int j = 0; j < c->rsize; j++) {
    size_t off = a->rdispls ? (size_t)a->rdispls[j] : (size_t)j * a->rcount;
    size_t cnt = a->rcounts ? (size_t)a->rcounts[j] : a->rcount;
    skn_xcoll_recv_post(&r[j], c->bridge, remote_b(c, j), T_INTER, skn_coll_at(a->rbuf, off, a->rt), cnt, a->rt);
  }
  for (int j = 0; j < c->rsize; j++)
    skn_xcoll_send(c->bridge, local_b(c, rank), remote_b(c, j), T_INTER, a->sbuf, a->scount, a->st);
  skn_xcoll_wait_all(r, c->rsize, -1);
  free(r);
}

static void x_alltoall(skn_comm *c, int rank, skn_coll_args *a) {
  skn_req *r = skn_xcoll_reqs(c->rsize);
  size_t cnt;
  const skn_dtype *t;
  for (int j = 0; j < c->rsize; j++) {
    char *d = skn_coll_a2a_block(a->rbuf, a->rcount, a->rcounts, a->rdispls, a->rt, a->rts, j, &cnt, &t);
    skn_xcoll_recv_post(&r[j], c->bridge, remote_b(c, j), T_INTER, d, cnt, t);
  }
  for (int j = 0; j < c->rsize; j++) {
    char *src = skn_coll_a2a_block(a->sbuf, a->scount, a->scounts, a->sdispls, a->st, a->sts, j, &cnt, &t);
    skn_xcoll_send(c->bridge, local_b(c, rank), remote_b(c, j), T_INTER, src, cnt, t);
  }
  skn_xcoll_wait_all(r, c->rsize, -1);
  free(r);
}

/* This group's inputs (count elements each) combined in rank order into acc at rank 0. */
static void group_reduce(skn_comm *c, int rank, const skn_coll_args *a, size_t count, void *acc) {
  if (rank != 0) {
    skn_xcoll_send(c->bridge, local_b(c, rank), local_b(c, 0), T_INTER, a->sbuf, count, a->st);
    return;
  }
  size_t room = skn_coll_room(count, a->st);
  char *parts = room_for(count, a->st, c->size);
  skn_req *r = skn_xcoll_reqs(c->size);
  for (int j = 1; j < c->size; j++)
    skn_xcoll_recv_post(&r[j], c->bridge, local_b(c, j), T_INTER, parts + (size_t)j * room, count, a->st);
  skn_dt_copy(parts, count, a->st, a->sbuf, count, a->st);
  skn_xcoll_wait_all(r, c->size, 0);
  free(r);
  char *last = skn_coll_reduce_in_order(a, parts, room, c->size, count);
  skn_dt_copy(acc, count, a->st, last, count, a->st);
  free(parts);
}

/* Rank 0s swap their groups' results: ours in `mine`, theirs into `theirs`. */
static void swap_results(skn_comm *c, const skn_coll_args *a, size_t count, const void *mine, void *theirs) {
  skn_req r;
  skn_xcoll_recv_post(&r, c->bridge, remote_b(c, 0), T_INTER, theirs, count, a->st);
  skn_xcoll_send(c->bridge, local_b(c, 0), remote_b(c, 0), T_INTER, mine, count, a->st);
  skn_req_wait(&r);
}

static skn_status x_reduce(skn_comm *c, int rank, skn_coll_args *a, bool all) {
  if (!all && a->root == MPI_ROOT) {
    skn_xcoll_recv(c->bridge, remote_b(c, 0), T_INTER, a->rbuf, a->scount, a->st);
    return SKN_OK;
  }
  if (!all && a->root < 0) return SKN_OK; /* MPI_PROC_NULL */
  void *acc = rank == 0 ? room_for(a->scount, a->st, 1) : NULL;
  group_reduce(c, rank, a, a->scount, acc);
  if (!all) {
    if (rank == 0) skn_xcoll_send(c->bridge, local_b(c, 0), remote_b(c, a->root), T_INTER, acc, a->scount, a->st);
  } else if (rank == 0) {
    swap_results(c, a, a->scount, acc, a->rbuf);
    for (int j = 1; j < c->size; j++)
      skn_xcoll_send(c->bridge, local_b(c, 0), local_b(c, j), T_INTER, a->rbuf, a->scount, a->st);
  } else {
    skn_xcoll_recv(c->bridge, local_b(c, 0), T_INTER, a->rbuf, a->scount, a->st);
  }
  free(acc);
  return SKN_OK;
}

/* The remote group's reduced vector reaches our rank 0, which hands out our blocks. */
static skn_status x_reduce_scatter(skn_comm *c, int rank, skn_coll_args *a) {
  size_t total = a->scount, mine = a->rcounts ? (size_t)a->rcounts[rank] : a->rcount;
  if (rank != 0) {
    group_reduce(c, rank, a, total, NULL);
    skn_xcoll_recv(c->bridge, local_b(c, 0), T_INTER, a->rbuf, mine, a->st);
    return SKN_OK;
  }
  char *acc = room_for(total, a->st, 1), *theirs = room_for(total, a->st, 1);
  group_reduce(c, rank, a, total, acc);
  swap_results(c, a, total, acc, theirs);
  size_t off = mine;
  for (int j = 1; j < c->size; j++) {
    size_t cnt = a->rcounts ? (size_t)a->rcounts[j] : a->rcount;
    skn_xcoll_send(c->bridge, local_b(c, 0), local_b(c, j), T_INTER, skn_coll_at(theirs, off, a->st), cnt, a->st);
    off += cnt;
  }
  skn_dt_copy(a->rbuf, mine, a->st, theirs, mine, a->st);
  free(acc);
  free(theirs);
  return SKN_OK;
}

/* ------------------------------------------------------------------ within one process
 * (skn_coll_inter_ops) */

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

/* ------------------------------------------------------------------ the tables
 * Scan and exscan are not defined on intercommunicators (the MPI layer refuses them). */

static skn_status inter_barrier(skn_comm *c, int rank, skn_coll_args *a) {
  (void)rank, (void)a;
  skn_coll_barrier(NULL, c->bridge);
  return SKN_OK;
}
#define VOID_SLOT(name, fn)                                              \
  static skn_status name(skn_comm *c, int rank, skn_coll_args *a) {     \
    fn(c, rank, a);                                                      \
    return SKN_OK;                                                       \
  }
VOID_SLOT(inter_bcast, skn_icoll_bcast)
VOID_SLOT(inter_gather, skn_icoll_gather)
VOID_SLOT(inter_scatter, skn_icoll_scatter)
VOID_SLOT(inter_allgather, skn_icoll_allgather)
VOID_SLOT(inter_alltoall, skn_icoll_alltoall)
VOID_SLOT(ispan_bcast, x_bcast)
VOID_SLOT(ispan_gather, x_gather)
VOID_SLOT(ispan_scatter, x_scatter)
VOID_SLOT(ispan_allgather, x_allgather)
VOID_SLOT(ispan_alltoall, x_alltoall)
#undef VOID_SLOT
static skn_status inter_reduce(skn_comm *c, int rank, skn_coll_args *a) { return skn_icoll_reduce(c, rank, a, false); }
static skn_status inter_allreduce(skn_comm *c, int rank, skn_coll_args *a) { return skn_icoll_reduce(c, rank, a, true); }
static skn_status ispan_reduce(skn_comm *c, int rank, skn_coll_args *a) { return x_reduce(c, rank, a, false); }
static skn_status ispan_allreduce(skn_comm *c, int rank, skn_coll_args *a) { return x_reduce(c, rank, a, true); }

const skn_coll_ops skn_coll_inter_ops = {
    .name = "inter", .barrier = inter_barrier, .bcast = inter_bcast, .gather = inter_gather,
    .scatter = inter_scatter, .allgather = inter_allgather, .alltoall = inter_alltoall, .reduce = inter_reduce,
    .allreduce = inter_allreduce, .reduce_scatter = skn_icoll_reduce_scatter};

const skn_coll_ops skn_coll_inter_span_ops = {
    .name = "inter-spanning", .barrier = inter_barrier, .bcast = ispan_bcast, .gather = ispan_gather,
    .scatter = ispan_scatter, .allgather = ispan_allgather, .alltoall = ispan_alltoall, .reduce = ispan_reduce,
    .allreduce = ispan_allreduce, .reduce_scatter = x_reduce_scatter};
