/* Collectives on communicators whose members live in several processes.
 *
 * Barrier, bcast, reduce and allreduce are hierarchical: this process's members meet
 * through shared memory (core/coll_local.c on c->x->local), one representative per process
 * talks to the others over the transport, and the local members meet again. The
 * representative is the process's lowest comm rank, or the root itself in the root's
 * process, which saves a hop. The other collectives move data point-to-point, each rank
 * with each, which the matching engine routes locally or over the network alike.
 * Messages use the communicator's collective context (ctx + 1); a rank runs the
 * collectives of one communicator one at a time, so per-pair FIFO order keeps them apart.
 * Non-commutative reductions stay in rank order: hierarchically when every process holds
 * consecutive ranks (x->blocked), else everything goes to the root. */
#include <stdlib.h>
#include <string.h>

#include "core.h"

enum { T_BARRIER = 1, T_BCAST, T_REDUCE, T_ALLREDUCE, T_GATHER, T_SCATTER, T_ALLGATHER, T_ALLTOALL, T_SCAN };

#define BYTE_T (&skn_dt_predefined[MPI_BYTE & 0xffffff])

/* ------------------------------------------------------------------ point-to-point */

void skn_xcoll_send(skn_comm *c, int from, int to, int tag, const void *buf, size_t count, const skn_dtype *t) {
  skn_msg m = {.buf = buf, .count = count, .dt = t, .ctx = c->ctx + 1, .src = from, .tag = tag,
               .comm = MPI_COMM_WORLD, .peer = c->members[to], .mode = SKN_MODE_STANDARD};
  skn_p2p_send(skn_rank_self(), &m, NULL);
}

void skn_xcoll_recv_post(skn_req *r, skn_comm *c, int from, int tag, void *buf, size_t count, const skn_dtype *t) {
  memset(r, 0, offsetof(skn_req, cell));
  r->kind = SKN_REQ_RECV;
  r->buf = buf;
  r->count = count;
  r->dt = t;
  r->ctx = c->ctx + 1;
  r->src = from;
  r->tag = tag;
  r->comm = MPI_COMM_WORLD;
  skn_p2p_recv(skn_rank_self(), r);
}

void skn_xcoll_recv(skn_comm *c, int from, int tag, void *buf, size_t count, const skn_dtype *t) {
  skn_req r;
  skn_xcoll_recv_post(&r, c, from, tag, buf, count, t);
  skn_req_wait(&r);
}

skn_req *skn_xcoll_reqs(int n) {
  skn_req *r = aligned_alloc(SKN_CACHELINE, sizeof(skn_req) * (size_t)(n > 0 ? n : 1));
  if (!r) skn_fatal("out of memory for a collective over %d ranks", n);
  return r;
}

void skn_xcoll_wait_all(skn_req *r, int n, int skip) {
  for (int j = 0; j < n; j++)
    if (j != skip) skn_req_wait(&r[j]);
}

static inline bool is_local_leader(const skn_comm *c) { return skn_rank_self() == c->x->local->members[0]; }
static inline int local_rank(const skn_comm *c, int rank) { return c->x->local_of[rank]; }
/* The rank that speaks for process index p: the root in the root's process. */
static inline int rep_of(const skn_xcomm *x, int p, int root) {
  return root >= 0 && p == x->proc_index[root] ? root : x->leaders[p];
}

void *skn_xcoll_scratch(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) skn_fatal("out of memory for a collective (%zu bytes)", bytes);
  return p;
}

/* ------------------------------------------------------------------ barrier, bcast */

void skn_xcoll_barrier(skn_comm *c) {
  skn_xcomm *x = c->x;
  skn_coll_barrier(NULL, x->local);
  if (is_local_leader(c)) { /* dissemination among the processes */
    int n = x->nprocs, i = x->me, mine = x->leaders[i];
    for (int d = 1; d < n; d <<= 1) {
      skn_req r;
      skn_xcoll_recv_post(&r, c, x->leaders[(i - d + n) % n], T_BARRIER, NULL, 0, BYTE_T);
      skn_xcoll_send(c, mine, x->leaders[(i + d) % n], T_BARRIER, NULL, 0, BYTE_T);
      skn_req_wait(&r);
    }
  }
  skn_coll_barrier(NULL, x->local);
}

/* Binomial tree over the processes' representatives, from the root's process. */
static void tree_bcast(skn_comm *c, int rank, int root, int tag, void *buf, size_t count, const skn_dtype *t) {
  skn_xcomm *x = c->x;
  int n = x->nprocs, rp = x->proc_index[root], v = (x->me - rp + n) % n, mask = 1;
  for (; mask < n; mask <<= 1)
    if (v & mask) {
      skn_xcoll_recv(c, rep_of(x, (v - mask + rp) % n, root), tag, buf, count, t);
      break;
    }
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (v + mask < n) skn_xcoll_send(c, rank, rep_of(x, (v + mask + rp) % n, root), tag, buf, count, t);
}

void skn_xcoll_bcast(skn_comm *c, int rank, skn_coll_args *a) {
  skn_xcomm *x = c->x;
  bool root_here = x->proc_index[a->root] == x->me;
  skn_coll_args la = *a;
  la.root = root_here ? local_rank(c, a->root) : 0;
  if (root_here) skn_coll_bcast(x->local, local_rank(c, rank), &la);
  if (rank == rep_of(x, x->me, a->root)) tree_bcast(c, rank, a->root, T_BCAST, a->rbuf, a->rcount, a->rt);
  if (!root_here) skn_coll_bcast(x->local, local_rank(c, rank), &la);
}

/* ------------------------------------------------------------------ reductions */

static inline const void *input_of(const skn_coll_args *a) { return a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf; }

void skn_coll_apply(const skn_coll_args *a, const void *in, void *inout, size_t count) {
  int len = (int)count, dth = a->dt_handle;
  if (a->user_fn) a->user_fn((void *)(uintptr_t)in, inout, &len, &dth);
  else skn_op_apply(a->op, dth & 0xffffff, in, inout, count);
}

static void apply(const skn_coll_args *a, const void *in, void *inout) { skn_coll_apply(a, in, inout, a->scount); }

char *skn_coll_reduce_in_order(const skn_coll_args *a, char *parts, size_t stride, int n, size_t count) {
  char *last = parts + (size_t)(n - 1) * stride;
  for (int j = n - 2; j >= 0; j--) skn_coll_apply(a, parts + (size_t)j * stride, last, count);
  return last;
}

/* Everything to the root, reduced there in rank order: non-commutative ops on
 * communicators whose processes interleave ranks. */
static void flat_reduce(skn_comm *c, int rank, const skn_coll_args *a, int root) {
  size_t span = skn_coll_room(a->scount, a->st); /* stride of the parts */
  if (rank != root) {
    skn_xcoll_send(c, rank, root, T_REDUCE, input_of(a), a->scount, a->st);
    return;
  }
  char *parts = skn_xcoll_scratch(span * (size_t)c->size);
  skn_req *r = skn_xcoll_reqs(c->size);
  for (int j = 0; j < c->size; j++)
    if (j != rank) skn_xcoll_recv_post(&r[j], c, j, T_REDUCE, parts + (size_t)j * span, a->scount, a->st);
  skn_dt_copy(parts + (size_t)rank * span, a->scount, a->st, input_of(a), a->scount, a->st);
  skn_xcoll_wait_all(r, c->size, rank);
  free(r);
  skn_coll_reduce_in_order(a, parts, span, c->size, a->scount);
  skn_dt_copy(a->rbuf, a->scount, a->st, parts + (size_t)(c->size - 1) * span, a->scount, a->st);
  free(parts);
}

/* Combines the representatives' partial results `acc` into the root's process's
 * representative. Commutative ops: binomial tree; others: all to it, in process order. */
static void reps_reduce(skn_comm *c, int rank, const skn_coll_args *a, int root, void *acc) {
  skn_xcomm *x = c->x;
  int n = x->nprocs, rp = x->proc_index[root];
  size_t span = skn_coll_room(a->scount, a->st); /* stride of the parts */
  if (!a->noncommute) {
    void *tmp = skn_xcoll_scratch(span);
    int v = (x->me - rp + n) % n;
    for (int mask = 1; mask < n; mask <<= 1) {
      if (v & mask) {
        skn_xcoll_send(c, rank, rep_of(x, (v - mask + rp) % n, root), T_REDUCE, acc, a->scount, a->st);
        break;
      }
      if (v + mask < n) {
        skn_xcoll_recv(c, rep_of(x, (v + mask + rp) % n, root), T_REDUCE, tmp, a->scount, a->st);
        apply(a, tmp, acc);
      }
    }
    free(tmp);
    return;
  }
  if (x->me != rp) {
    skn_xcoll_send(c, rank, rep_of(x, rp, root), T_REDUCE, acc, a->scount, a->st);
    return;
  }
  char *parts = skn_xcoll_scratch(span * (size_t)n);
  skn_req *r = skn_xcoll_reqs(n);
  for (int p = 0; p < n; p++)
    if (p != rp) skn_xcoll_recv_post(&r[p], c, rep_of(x, p, root), T_REDUCE, parts + (size_t)p * span, a->scount, a->st);
  skn_dt_copy(parts + (size_t)rp * span, a->scount, a->st, acc, a->scount, a->st);
  skn_xcoll_wait_all(r, n, rp);
  free(r);
  skn_coll_reduce_in_order(a, parts, span, n, a->scount);
  skn_dt_copy(acc, a->scount, a->st, parts + (size_t)(n - 1) * span, a->scount, a->st);
  free(parts);
}

/* Allreduce among the process leaders, in place in acc. Recursive doubling when the
 * op commutes and the process count is a power of two (every leader computes the same
 * pairs, so all get the same bits); otherwise reduce to the first and broadcast. */
static void leaders_allreduce(skn_comm *c, int rank, const skn_coll_args *a, void *acc) {
  skn_xcomm *x = c->x;
  int n = x->nprocs;
  if (!a->noncommute && (n & (n - 1)) == 0) {
    void *tmp = skn_xcoll_scratch(skn_coll_room(a->scount, a->st));
    for (int mask = 1; mask < n; mask <<= 1) {
      int partner = x->leaders[x->me ^ mask];
      skn_req r;
      skn_xcoll_recv_post(&r, c, partner, T_ALLREDUCE, tmp, a->scount, a->st);
      skn_xcoll_send(c, rank, partner, T_ALLREDUCE, acc, a->scount, a->st);
      skn_req_wait(&r);
      apply(a, tmp, acc);
    }
    free(tmp);
    return;
  }
  reps_reduce(c, rank, a, x->leaders[0], acc);
  tree_bcast(c, rank, x->leaders[0], T_ALLREDUCE, acc, a->scount, a->st);
}

skn_status skn_xcoll_reduce(skn_comm *c, int rank, skn_coll_args *a, bool all) {
  skn_xcomm *x = c->x;
  int root = all ? 0 : a->root;
  if (a->noncommute && !x->blocked) {
    flat_reduce(c, rank, a, root);
    if (all) {
      skn_coll_args b = {.rbuf = a->rbuf, .rcount = a->scount, .rt = a->st, .root = 0};
      skn_xcoll_bcast(c, rank, &b);
    }
    return SKN_OK;
  }
  /* Local phase: into the representative's accumulator (the root's or leader's receive
   * buffer, else a temporary). core/coll_local.c's reduce lets the root's input and output be
   * one buffer, as with MPI_IN_PLACE. */
  int rep = all ? x->leaders[x->me] : rep_of(x, x->me, root);
  void *tmp = NULL;
  skn_coll_args la = *a;
  la.sbuf = input_of(a);
  la.root = local_rank(c, rep);
  if (rank == rep && !all && rank != root) la.rbuf = tmp = skn_xcoll_scratch(skn_coll_room(a->scount, a->st));
  skn_status st = skn_coll_reduce(x->local, local_rank(c, rank), &la, false);
  if (rank == rep) {
    if (all) leaders_allreduce(c, rank, a, la.rbuf);
    else reps_reduce(c, rank, a, root, la.rbuf);
  }
  free(tmp);
  if (all) {
    skn_coll_args b = {.rbuf = a->rbuf, .rcount = a->scount, .rt = a->st, .root = 0};
    skn_coll_bcast(x->local, local_rank(c, rank), &b);
  }
  return st;
}

/* Reduce the whole vector to rank 0, which hands out the blocks. */
skn_status skn_xcoll_reduce_scatter(skn_comm *c, int rank, skn_coll_args *a) {
  size_t total = 0, mine = 0, lo = 0;
  for (int j = 0; j < c->size; j++) {
    size_t cnt = a->rcounts ? (size_t)a->rcounts[j] : a->rcount;
    if (j < rank) lo += cnt;
    if (j == rank) mine = cnt;
    total += cnt;
  }
  skn_coll_args ra = *a;
  ra.sbuf = input_of(a);
  ra.scount = total;
  ra.root = 0;
  ra.rbuf = rank == 0 ? skn_xcoll_scratch(skn_coll_room(total, a->st)) : NULL;
  skn_status st = skn_xcoll_reduce(c, rank, &ra, false);
  if (rank != 0) {
    skn_xcoll_recv(c, 0, T_SCATTER, a->rbuf, mine, a->st);
    return st;
  }
  size_t off = mine;
  for (int j = 1; j < c->size; j++) {
    size_t cnt = a->rcounts ? (size_t)a->rcounts[j] : a->rcount;
    skn_xcoll_send(c, 0, j, T_SCATTER, skn_coll_at(ra.rbuf, off, a->st), cnt, a->st);
    off += cnt;
  }
  skn_dt_copy(a->rbuf, mine, a->st, skn_coll_at(ra.rbuf, lo, a->st), mine, a->st);
  free(ra.rbuf);
  return st;
}

/* A chain in rank order: rank r gets the prefix of 0..r-1 from r-1. */
skn_status skn_xcoll_scan(skn_comm *c, int rank, skn_coll_args *a, bool exclusive) {
  size_t span = skn_coll_room(a->scount, a->st); /* stride of the parts */
  char *acc = skn_xcoll_scratch(span), *prefix = rank > 0 ? skn_xcoll_scratch(span) : NULL;
  skn_dt_copy(acc, a->scount, a->st, input_of(a), a->scount, a->st);
  if (rank > 0) {
    skn_xcoll_recv(c, rank - 1, T_SCAN, prefix, a->scount, a->st);
    if (exclusive) skn_dt_copy(a->rbuf, a->scount, a->st, prefix, a->scount, a->st);
    apply(a, prefix, acc); /* prefix op ours */
  }
  if (!exclusive) skn_dt_copy(a->rbuf, a->scount, a->st, acc, a->scount, a->st);
  if (rank + 1 < c->size) skn_xcoll_send(c, rank, rank + 1, T_SCAN, acc, a->scount, a->st);
  free(acc);
  free(prefix);
  return SKN_OK;
}

/* ------------------------------------------------------------------ data movement */

/* Block j of a (v) receive layout. */
static char *rblock(const skn_coll_args *a, int j, size_t *cnt) {
  *cnt = a->rcounts ? (size_t)a->rcounts[j] : a->rcount;
  return skn_coll_at(a->rbuf, a->rdispls ? (size_t)a->rdispls[j] : (size_t)j * a->rcount, a->rt);
}

void skn_xcoll_gather(skn_comm *c, int rank, skn_coll_args *a) {
  if (rank != a->root) {
    skn_xcoll_send(c, rank, a->root, T_GATHER, a->sbuf, a->scount, a->st);
    return;
  }
  skn_req *r = skn_xcoll_reqs(c->size);
  size_t cnt;
  for (int j = 0; j < c->size; j++)
    if (j != rank) {
      char *d = rblock(a, j, &cnt);
      skn_xcoll_recv_post(&r[j], c, j, T_GATHER, d, cnt, a->rt);
    }
  if (a->sbuf != MPI_IN_PLACE) {
    char *d = rblock(a, rank, &cnt);
    skn_dt_copy(d, cnt, a->rt, a->sbuf, a->scount, a->st);
  }
  skn_xcoll_wait_all(r, c->size, rank);
  free(r);
}

void skn_xcoll_scatter(skn_comm *c, int rank, skn_coll_args *a) {
  if (rank != a->root) {
    skn_xcoll_recv(c, a->root, T_SCATTER, a->rbuf, a->rcount, a->rt);
    return;
  }
  for (int k = 1; k < c->size; k++) { /* starting after the root spreads the load */
    int j = (rank + k) % c->size;
    size_t cnt = a->scounts ? (size_t)a->scounts[j] : a->scount;
    size_t off = a->sdispls ? (size_t)a->sdispls[j] : (size_t)j * a->scount;
    skn_xcoll_send(c, rank, j, T_SCATTER, skn_coll_at(a->sbuf, off, a->st), cnt, a->st);
  }
  if (a->rbuf != MPI_IN_PLACE) {
    size_t cnt = a->scounts ? (size_t)a->scounts[rank] : a->scount;
    size_t off = a->sdispls ? (size_t)a->sdispls[rank] : (size_t)rank * a->scount;
    skn_dt_copy(a->rbuf, a->rcount, a->rt, skn_coll_at(a->sbuf, off, a->st), cnt, a->st);
  }
}

void skn_xcoll_allgather(skn_comm *c, int rank, skn_coll_args *a) {
  skn_req *r = skn_xcoll_reqs(c->size);
  size_t cnt;
  for (int j = 0; j < c->size; j++)
    if (j != rank) {
      char *d = rblock(a, j, &cnt);
      skn_xcoll_recv_post(&r[j], c, j, T_ALLGATHER, d, cnt, a->rt);
    }
  char *own = rblock(a, rank, &cnt);
  const void *sbuf = a->sbuf == MPI_IN_PLACE ? own : a->sbuf;
  size_t scount = a->sbuf == MPI_IN_PLACE ? cnt : a->scount;
  const skn_dtype *st = a->sbuf == MPI_IN_PLACE ? a->rt : a->st;
  if (a->sbuf != MPI_IN_PLACE) skn_dt_copy(own, cnt, a->rt, a->sbuf, a->scount, a->st);
  for (int k = 1; k < c->size; k++) skn_xcoll_send(c, rank, (rank + k) % c->size, T_ALLGATHER, sbuf, scount, st);
  skn_xcoll_wait_all(r, c->size, rank);
  free(r);
}

char *skn_coll_a2a_block(const void *base, size_t count, const int *counts, const int *displs, const skn_dtype *t,
                         const skn_dtype *const *ts, int j, size_t *cnt, const skn_dtype **bt) {
  *bt = ts ? ts[j] : t;
  *cnt = counts ? (size_t)counts[j] : count;
  if (!displs) return skn_coll_at(base, (size_t)j * count, *bt);
  return (char *)(uintptr_t)base + (ts ? (ptrdiff_t)displs[j] : (ptrdiff_t)displs[j] * (*bt)->extent);
}

skn_status skn_xcoll_alltoall(skn_comm *c, int rank, skn_coll_args *a) {
  bool in_place = a->sbuf == MPI_IN_PLACE;
  const void *sbase = a->sbuf;
  void *copy = NULL;
  if (in_place) { /* the send blocks are in the receive buffer we are about to overwrite */
    size_t span = 0, cnt;
    const skn_dtype *t;
    for (int j = 0; j < c->size; j++) {
      char *b = skn_coll_a2a_block(a->rbuf, a->rcount, a->rcounts, a->rdispls, a->rt, a->rts, j, &cnt, &t);
      size_t end = (size_t)(b - (char *)a->rbuf) + skn_coll_span(cnt, t);
      if (end > span) span = end;
    }
    copy = skn_xcoll_scratch(span);
    memcpy(copy, a->rbuf, span);
    sbase = copy;
  }
  const int *scounts = in_place ? a->rcounts : a->scounts, *sdispls = in_place ? a->rdispls : a->sdispls;
  const skn_dtype *st = in_place ? a->rt : a->st, *const *sts = in_place ? a->rts : a->sts;
  size_t scount = in_place ? a->rcount : a->scount;
  skn_req *r = skn_xcoll_reqs(c->size);
  size_t rc, sc;
  const skn_dtype *rt, *bt;
  for (int j = 0; j < c->size; j++)
    if (j != rank) {
      char *d = skn_coll_a2a_block(a->rbuf, a->rcount, a->rcounts, a->rdispls, a->rt, a->rts, j, &rc, &rt);
      skn_xcoll_recv_post(&r[j], c, j, T_ALLTOALL, d, rc, rt);
    }
  for (int k = 1; k < c->size; k++) {
    int j = (rank + k) % c->size;
    char *s = skn_coll_a2a_block(sbase, scount, scounts, sdispls, st, sts, j, &sc, &bt);
    skn_xcoll_send(c, rank, j, T_ALLTOALL, s, sc, bt);
  }
  char *d = skn_coll_a2a_block(a->rbuf, a->rcount, a->rcounts, a->rdispls, a->rt, a->rts, rank, &rc, &rt);
  char *s = skn_coll_a2a_block(sbase, scount, scounts, sdispls, st, sts, rank, &sc, &bt);
  skn_dt_copy(d, rc, rt, s, sc, bt);
  skn_xcoll_wait_all(r, c->size, rank);
  free(r);
  free(copy);
  return SKN_OK;
}

/* ------------------------------------------------------------------ the table */

static skn_status span_barrier(skn_comm *c, int rank, skn_coll_args *a) {
  (void)rank, (void)a;
  skn_xcoll_barrier(c);
  return SKN_OK;
}
static skn_status span_bcast(skn_comm *c, int rank, skn_coll_args *a) {
  skn_xcoll_bcast(c, rank, a);
  return SKN_OK;
}
static skn_status span_gather(skn_comm *c, int rank, skn_coll_args *a) {
  skn_xcoll_gather(c, rank, a);
  return SKN_OK;
}
static skn_status span_scatter(skn_comm *c, int rank, skn_coll_args *a) {
  skn_xcoll_scatter(c, rank, a);
  return SKN_OK;
}
static skn_status span_allgather(skn_comm *c, int rank, skn_coll_args *a) {
  skn_xcoll_allgather(c, rank, a);
  return SKN_OK;
}
static skn_status span_reduce(skn_comm *c, int rank, skn_coll_args *a) { return skn_xcoll_reduce(c, rank, a, false); }
static skn_status span_allreduce(skn_comm *c, int rank, skn_coll_args *a) { return skn_xcoll_reduce(c, rank, a, true); }
static skn_status span_scan(skn_comm *c, int rank, skn_coll_args *a) { return skn_xcoll_scan(c, rank, a, false); }
static skn_status span_exscan(skn_comm *c, int rank, skn_coll_args *a) { return skn_xcoll_scan(c, rank, a, true); }

const skn_coll_ops skn_coll_span_ops = {
    .name = "spanning", .barrier = span_barrier, .bcast = span_bcast, .gather = span_gather,
    .scatter = span_scatter, .allgather = span_allgather, .alltoall = skn_xcoll_alltoall, .reduce = span_reduce,
    .allreduce = span_allreduce, .reduce_scatter = skn_xcoll_reduce_scatter, .scan = span_scan,
    .exscan = span_exscan, .neighbor_allgather = skn_xcoll_neighbor_allgather,
    .neighbor_alltoall = skn_xcoll_neighbor_alltoall};
