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
 * NULL slots (scan, exscan and the neighbourhood collectives of intercommunicators,
 * which carry no topology) are refused by the MPI layer. */
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
  skn_coll_fn neighbor_allgather; /* (v); a->nbrs set (see skn_nbrs) */
  skn_coll_fn neighbor_alltoall;  /* (v, w) */
} skn_coll_ops;

SKN_INTERNAL extern const skn_coll_ops skn_coll_local_ops, skn_coll_span_ops, skn_coll_inter_ops,
    skn_coll_inter_span_ops;

/* Sets c->coll from c->x and c->bridge (core/rank.c calls it at each step of creation). */
SKN_INTERNAL void skn_coll_choose(skn_comm *c);

/* ---------------------------------------------------------------- neighbourhood collectives
 * (core/coll_neighbor.c) The core moves data along edges; which edges a member has is
 * the MPI layer's business (virtual topologies), which passes them in skn_coll_args.nbrs.
 * In-block k of the caller receives out-block src_block[k] of member src[k]; out-block k
 * goes to member dst[k]; a negative rank (MPI_PROC_NULL) is an edge without a peer, whose
 * block is left alone. The v variants set scounts/sdispls and rcounts/rdispls (in
 * elements, indexed by block); the w variants also sts/rts and sbytes/rbytes (byte
 * displacements) instead of sdispls/rdispls; allgather sends sbuf/scount/st to each
 * out-neighbour. */
typedef struct skn_nbrs {
  int indeg, outdeg;
  const int *src, *src_block; /* [indeg] */
  const int *dst;             /* [outdeg] */
} skn_nbrs;
SKN_INTERNAL skn_status skn_coll_neighbor_allgather(skn_comm *c, int rank, skn_coll_args *a);
SKN_INTERNAL skn_status skn_coll_neighbor_alltoall(skn_comm *c, int rank, skn_coll_args *a);
SKN_INTERNAL skn_status skn_xcoll_neighbor_allgather(skn_comm *c, int rank, skn_coll_args *a);
SKN_INTERNAL skn_status skn_xcoll_neighbor_alltoall(skn_comm *c, int rank, skn_coll_args *a);

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

/* ---------------------------------------------------------------- agreement
 * (core/agree.c) How the members of a new communicator agree on it. Each is collective
 * over the communicator named (all its members call it, after their pending nonblocking
 * collectives on it), except the rendezvous and skn_comm_from_leader's arguments. */

/* Comm_create_group's agreement without the parent's barrier: the group's first member
 * in this process creates this process's copy of the communicator (context id new_ctx,
 * or a fresh one when new_ctx < 0) and hands it to the others here through a
 * process-wide table keyed by (parent context, tag, member list); the others wait through
 * the scheduler. `members` are the group's ranks in group order (world ranks `wranks`);
 * `my` is the caller's group rank. `create`, when given, makes the communicator instead
 * (an intercommunicator: then `members` lists both groups). Returns the new communicator,
 * or NULL when it could not be created. */
SKN_INTERNAL skn_comm *skn_comm_rendezvous(int ctx, int tag, int n, skn_rank *const *members, const int *wranks,
                                           int my, int new_ctx, skn_comm *(*create)(void *arg), void *arg);
/* Comm_create_group, called by the group's members only: `members` (world ranks
 * `wranks`, ranks in c `cranks`), the caller being group rank `my`; context ids through c
 * when the group spans processes, then the rendezvous (tag: the user's). */
SKN_INTERNAL skn_comm *skn_comm_group_agree(skn_comm *c, int rank, int tag, int n, skn_rank *const *members,
                                            const int *wranks, const int *cranks, int my);
/* Within a process: member `leader` of c (negative: none) hands `made` and its error code *err to the
 * others; every member returns the leader's communicator and sets *err to its code. */
SKN_INTERNAL skn_comm *skn_comm_from_leader(skn_rank *me, skn_comm *c, int rank, int leader, skn_comm *made,
                                            int *err);
/* Comm_dup of any communicator: the new one (the caller keeps its rank; NULL when out of
 * memory), with the topology `topo` returns (given `holders`, the number of members
 * here), when given. */
struct skn_topo;
SKN_INTERNAL skn_comm *skn_comm_dup_shared(skn_rank *me, skn_comm *c, int rank,
                                           struct skn_topo *(*topo)(void *arg, int holders), void *arg);
/* Comm_split of any communicator (on an intercommunicator a color forms an
 * intercommunicator of its members in each group, none when one group has none). Returns
 * the caller's new communicator and *new_rank; NULL with *nomem false when the caller
 * gets none (MPI_UNDEFINED, or an empty remote group), with *nomem true when out of
 * memory. */
SKN_INTERNAL skn_comm *skn_comm_split_agree(skn_rank *me, skn_comm *c, int rank, int color, int key, int *new_rank,
                                            bool *nomem);
/* Intercomm_merge: the merged intracommunicator (the group with high false first, side 0
 * first on a tie) and the caller's *new_rank; *consistent false (and NULL) when the
 * members of one group passed different `high`. NULL otherwise: out of memory. */
SKN_INTERNAL skn_comm *skn_intercomm_merge(skn_rank *me, skn_comm *c, int rank, bool high, int *new_rank,
                                           bool *consistent);
/* Intercomm_create when the groups may live in several processes, after the two leaders
 * swapped cards (the MPI layer's part, over peer_comm): the leader of c fills the card
 * and `remote` (the other group's world ranks; others pass NULL); every member of c then
 * gets its side, or NULL with card->err (the leader's error code) set. */
typedef struct skn_leader_card {
  int err;            /* non-zero: the leaders could not agree (an MPI error code) */
  int rsize;          /* remote group's size */
  int side0;          /* this group is side 0 */
  int ctx, bridge_ctx; /* context ids of the new intercommunicator */
} skn_leader_card;
SKN_INTERNAL skn_comm *skn_intercomm_span_join(skn_rank *me, skn_comm *c, int rank, int leader, skn_leader_card *card,
                                               int *remote);

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
