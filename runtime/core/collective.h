/* Collectives: the per-communicator table, the nonblocking-collective engine, and the
 * algorithm families behind them. Included by core.h.
 *
 * Every communicator holds a table of collective operations (skn_comm.coll), chosen when
 * it is created (skn_coll_choose, core/coll_table.c) from what it is:
 *   skn_coll_local_ops       all members in this process: shared-address algorithms
 *                            (core/coll_local.c; allreduce picks by size: cells / one
 *                            accumulator / chunked)
 *   skn_coll_span_ops        members in several processes (c->x): hierarchical or
 *                            point-to-point (core/coll_span.c)
 *   skn_coll_inter_ops       intercommunicator side whose bridge is in this process
 *   skn_coll_inter_span_ops  ... whose bridge spans processes (core/coll_inter.c)
 * The MPI layer checks arguments, fills skn_coll_args and calls c->coll->op(c, rank, &a);
 * the nonblocking variant queues the same slot on the NBC engine (core/nbc.c), so both run
 * one algorithm. A slot returns SKN_ERR_NOMEM when a temporary could not be allocated;
 * NULL slots (scan and exscan of intercommunicators) are refused by the MPI layer. */
#ifndef SKN_COLLECTIVE_H
#define SKN_COLLECTIVE_H

typedef skn_status (*skn_coll_fn)(skn_comm *c, int rank, skn_coll_args *a);

typedef struct skn_coll_ops {
  const char *name;
  skn_coll_fn barrier; /* a unused */
  skn_coll_fn bcast, gather, scatter, allgather; /* gather, scatter, allgather: (v) too */
  skn_coll_fn alltoall;                          /* (v, w) */
  skn_coll_fn reduce, allreduce, reduce_scatter; /* reduce_scatter: (block) too */
  skn_coll_fn scan, exscan;
} skn_coll_ops;

SKN_INTERNAL extern const skn_coll_ops skn_coll_local_ops, skn_coll_span_ops, skn_coll_inter_ops,
    skn_coll_inter_span_ops;

/* Sets c->coll from c->x and c->bridge (core/rank.c calls it at each step of creation). */
SKN_INTERNAL void skn_coll_choose(skn_comm *c);

/* ---------------------------------------------------------------- construction
 * (core/comm_build.c) Comm_split of a communicator spanning processes. The members
 * exchange (color, key, context id offer) through an allgather; each process builds its
 * own copy of every new communicator with members here (its first member here creates it,
 * with the topology `build` returns if given, holding `holders` references, and hands it
 * to the others through the parent's local part), with the context id offered by the new
 * rank 0. Returns the caller's new communicator (NULL for MPI_UNDEFINED, or when out of
 * memory) and its rank there. */
struct skn_topo;
SKN_INTERNAL skn_comm *skn_comm_span_split(skn_rank *me, skn_comm *c, int rank, int color, int key, int *new_rank,
                                           struct skn_topo *(*build)(void *arg, int holders), void *arg);

/* ---------------------------------------------------------------- nonblocking collectives
 * (core/nbc.c) One executor unit per (rank, communicator view) runs the view's queue in
 * issue order, so every member sees the same sequence of collectives, and it progresses
 * while the rank computes. A blocking collective first drains the queue (skn_nbc_order).
 *
 * skn_nbc_start queues run(v->comm, v->rank, a) — or, with run NULL, custom(me, v, arg) —
 * and returns a request that completes when it has run (NULL: out of memory). The task
 * holds the datatypes of *a and frees `owned` when done. `comm` and `fn` are the handle
 * and MPI function recorded in the request for error and deadlock reports. */
typedef void (*skn_nbc_custom_fn)(skn_rank *me, skn_comm_view *v, void *arg);
SKN_INTERNAL skn_req *skn_nbc_start(skn_rank *me, skn_comm_view *v, int comm, const char *fn, skn_coll_fn run,
                                    const skn_coll_args *a, void *owned, skn_nbc_custom_fn custom, void *arg);
/* Waits until every nonblocking collective this rank started on v has completed. */
SKN_INTERNAL void skn_nbc_drain(skn_rank *me, skn_comm_view *v);
static inline void skn_nbc_order(skn_rank *me, skn_comm_view *v) {
  if (SKN_UNLIKELY(v->nbc_head != NULL)) skn_nbc_drain(me, v);
}

/* The algorithm families, which the tables above are made of, and their helpers.
 * Within one process (core/coll_local.c): members publish their arguments, read each
 * other's buffers directly, and wait through the scheduler. `rank` is the caller's rank
 * in c. MPI_IN_PLACE follows the standard. Other core and I/O code calls a family member
 * directly only where it knows the communicator's kind (e.g. on skn_xcomm.local). */
/* Barrier of any intracommunicator or intercommunicator side, through its table (`me`
 * is unused, kept for callers). */
SKN_INTERNAL void skn_coll_barrier(skn_rank *me, skn_comm *c);
/* c->slots[rank] = a, then a barrier through c's table. */
SKN_INTERNAL void skn_coll_publish(skn_comm *c, int rank, skn_coll_args *a);
SKN_INTERNAL void skn_coll_bcast(skn_comm *c, int rank, skn_coll_args *a);
SKN_INTERNAL void skn_coll_gather(skn_comm *c, int rank, skn_coll_args *a);  /* (v) */
SKN_INTERNAL void skn_coll_scatter(skn_comm *c, int rank, skn_coll_args *a); /* (v) */
SKN_INTERNAL void skn_coll_allgather(skn_comm *c, int rank, skn_coll_args *a); /* (v) */
SKN_INTERNAL void skn_coll_alltoall(skn_comm *c, int rank, skn_coll_args *a);  /* (v, w) */
/* Reductions: returns SKN_ERR_NOMEM if a temporary could not be allocated. */
SKN_INTERNAL skn_status skn_coll_reduce(skn_comm *c, int rank, skn_coll_args *a, bool all);
SKN_INTERNAL skn_status skn_coll_reduce_scatter(skn_comm *c, int rank, skn_coll_args *a);
SKN_INTERNAL skn_status skn_coll_scan(skn_comm *c, int rank, skn_coll_args *a, bool exclusive);

/* The same on communicators spanning processes (c->x set; core/coll_span.c): hierarchical
 * barrier, bcast, reduce and allreduce; the others by point-to-point over c's collective
 * context. */
SKN_INTERNAL void skn_xcoll_barrier(skn_comm *c);
/* Point-to-point on c's collective context (ctx + 1), between comm ranks: sends block;
 * recv_post starts a receive into r (wait with skn_req_wait). Tags: coll_span.c's own are
 * below 32, neighborhood collectives use 32 + the sender's edge index, other agreements
 * negative numbers below MPI_ANY_TAG. */
#define SKN_XTAG_NEIGHBOR 32
SKN_INTERNAL void skn_xcoll_send(skn_comm *c, int from, int to, int tag, const void *buf, size_t count,
                                 const skn_dtype *t);
SKN_INTERNAL void skn_xcoll_recv_post(skn_req *r, skn_comm *c, int from, int tag, void *buf, size_t count,
                                      const skn_dtype *t);
SKN_INTERNAL void skn_xcoll_recv(skn_comm *c, int from, int tag, void *buf, size_t count, const skn_dtype *t);
/* n receive requests for skn_xcoll_recv_post (free them), waiting on all but `skip`
 * (-1: all), and a temporary; out of memory ends the job (a collective cannot back out). */
SKN_INTERNAL skn_req *skn_xcoll_reqs(int n);
SKN_INTERNAL void skn_xcoll_wait_all(skn_req *r, int n, int skip);
SKN_INTERNAL void *skn_xcoll_scratch(size_t bytes);
SKN_INTERNAL void skn_xcoll_bcast(skn_comm *c, int rank, skn_coll_args *a);
SKN_INTERNAL void skn_xcoll_gather(skn_comm *c, int rank, skn_coll_args *a);
SKN_INTERNAL void skn_xcoll_scatter(skn_comm *c, int rank, skn_coll_args *a);
SKN_INTERNAL void skn_xcoll_allgather(skn_comm *c, int rank, skn_coll_args *a);
SKN_INTERNAL skn_status skn_xcoll_alltoall(skn_comm *c, int rank, skn_coll_args *a);
SKN_INTERNAL skn_status skn_xcoll_reduce(skn_comm *c, int rank, skn_coll_args *a, bool all);
SKN_INTERNAL skn_status skn_xcoll_reduce_scatter(skn_comm *c, int rank, skn_coll_args *a);
SKN_INTERNAL skn_status skn_xcoll_scan(skn_comm *c, int rank, skn_coll_args *a, bool exclusive);

/* Intercommunicator collectives (core/coll_inter.c): c is the caller's side, rank its
 * rank in the local group. Roots follow the standard: MPI_ROOT at the root, MPI_PROC_NULL
 * elsewhere in its group, the root's rank in the other group. Counts and displacement
 * arrays are indexed by remote rank, except reduce_scatter's (local group). */
SKN_INTERNAL void skn_icoll_barrier(skn_comm *c);
SKN_INTERNAL void skn_icoll_bcast(skn_comm *c, int rank, skn_coll_args *a);
SKN_INTERNAL void skn_icoll_gather(skn_comm *c, int rank, skn_coll_args *a);
SKN_INTERNAL void skn_icoll_scatter(skn_comm *c, int rank, skn_coll_args *a);
SKN_INTERNAL void skn_icoll_allgather(skn_comm *c, int rank, skn_coll_args *a);
SKN_INTERNAL void skn_icoll_alltoall(skn_comm *c, int rank, skn_coll_args *a);
SKN_INTERNAL skn_status skn_icoll_reduce(skn_comm *c, int rank, skn_coll_args *a, bool all);
SKN_INTERNAL skn_status skn_icoll_reduce_scatter(skn_comm *c, int rank, skn_coll_args *a);
/* Shared by coll_local.c and coll_inter.c: acc = input(0) op ... op input(last), elements
 * [lo, hi), where input(k) reads slots[k] of `slots`. */
SKN_INTERNAL void skn_coll_reduce_members(skn_coll_args *const *slots, const skn_coll_args *a, int last, size_t lo,
                                          size_t hi, void *acc);
/* inout = in op inout, count elements of a->st (a's operation). */
SKN_INTERNAL void skn_coll_apply(const skn_coll_args *a, const void *in, void *inout, size_t count);
/* parts[0] op ... op parts[n-1] (count elements each, `stride` bytes apart) in rank order,
 * built right to left into the last part, which it returns. */
SKN_INTERNAL char *skn_coll_reduce_in_order(const skn_coll_args *a, char *parts, size_t stride, int n, size_t count);
/* Block j of an alltoall(v,w) layout: w variants (ts) give byte displacements and a type
 * per block, the others element displacements; *cnt and *bt describe the block. */
SKN_INTERNAL char *skn_coll_a2a_block(const void *base, size_t count, const int *counts, const int *displs,
                                      const skn_dtype *t, const skn_dtype *const *ts, int j, size_t *cnt,
                                      const skn_dtype **bt);
/* Element `elems` of a typed buffer. */
static inline char *skn_coll_at(const void *buf, size_t elems, const skn_dtype *t) {
  return (char *)(uintptr_t)buf + (ptrdiff_t)elems * t->extent;
}
/* Part i of `parts` near-equal parts of [0, count). */
static inline void skn_coll_chunk(size_t count, int parts, int i, size_t *lo, size_t *hi) {
  *lo = count * (size_t)i / (size_t)parts;
  *hi = count * (size_t)(i + 1) / (size_t)parts;
}
SKN_INTERNAL size_t skn_coll_span(size_t n, const skn_dtype *t);
/* Bytes for a temporary of n elements that reduction kernels write as whole C objects
 * (MPI_LONG_DOUBLE_INT's last element reaches past the span into its padding). */
static inline size_t skn_coll_room(size_t n, const skn_dtype *t) {
  size_t span = skn_coll_span(n, t), whole = n * (size_t)(t->extent > 0 ? t->extent : 0);
  return span > whole ? span : whole;
}

#endif
