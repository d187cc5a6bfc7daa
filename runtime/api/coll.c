/* Collective calls and reduction operations: argument checks, then the core's
 * shared-address algorithms (core/coll.c). */
#include <stdlib.h>
#include <string.h>

#include "api.h"

#define IN_PLACE(p) ((const void *)(p) == MPI_IN_PLACE)

typedef struct coll_ctx {
  skn_rank *me;
  skn_comm_view *v;
  const char *fn;
  MPI_Comm comm;
} coll_ctx;

/* Common checks; on success fills ctx and marks the rank as inside `fn`. */
static int begin(coll_ctx *x, const char *fn, MPI_Comm comm) {
  x->fn = fn;
  x->comm = comm;
  x->me = skn_api_self(fn);
  x->v = skn_api_comm(x->me, comm);
  if (!x->v) return skn_api_error(x->me, comm, MPI_ERR_COMM, fn, "comm=%#x", (unsigned)comm);
  return MPI_SUCCESS;
}

static inline void enter(coll_ctx *x) { skn_api_enter(x->me, x->fn, NULL, MPI_UNDEFINED, MPI_UNDEFINED); }
static inline void leave(coll_ctx *x) { skn_api_leave(x->me); }

static int check_buf(coll_ctx *x, const char *what, const void *buf, int count, MPI_Datatype dt,
                     const skn_dtype **t) {
  *t = skn_api_dtype(x->me, dt);
  if (!*t) return skn_api_error(x->me, x->comm, MPI_ERR_TYPE, x->fn, "%s datatype=%#x", what, (unsigned)dt);
  if (count < 0) return skn_api_error(x->me, x->comm, MPI_ERR_COUNT, x->fn, "%s count=%d", what, count);
  if (!buf && count > 0 && (*t)->size > 0 && (*t)->true_lb == 0)
    return skn_api_error(x->me, x->comm, MPI_ERR_BUFFER, x->fn, "%s buffer=NULL with count=%d", what, count);
  return MPI_SUCCESS;
}

static inline bool is_inter(const coll_ctx *x) { return skn_comm_is_inter(x->v->comm); }

/* On an intercommunicator the root's group passes MPI_ROOT (the root) or MPI_PROC_NULL,
 * and the other group the root's rank in the root's group. */
static int check_root(coll_ctx *x, int root) {
  skn_comm *c = x->v->comm;
  if (skn_comm_is_inter(c)) {
    if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < c->rsize)) return MPI_SUCCESS;
    return skn_api_error(x->me, x->comm, MPI_ERR_ROOT, x->fn,
                         "root=%d (on an intercommunicator: MPI_ROOT, MPI_PROC_NULL or a rank of the remote group "
                         "of size %d)", root, c->rsize);
  }
  if (root < 0 || root >= x->v->comm->size)
    return skn_api_error(x->me, x->comm, MPI_ERR_ROOT, x->fn, "root=%d (communicator size %d)", root,
                         x->v->comm->size);
  return MPI_SUCCESS;
}

/* Intercommunicator collectives have no in-place form. */
static int no_in_place_inter(coll_ctx *x, const void *sbuf) {
  if (IN_PLACE(sbuf) && is_inter(x))
    return skn_api_error(x->me, x->comm, MPI_ERR_BUFFER, x->fn, "MPI_IN_PLACE on an intercommunicator");
  return MPI_SUCCESS;
}

static int check_counts(coll_ctx *x, const char *what, const int *counts, const int *displs) {
  if (!counts || !displs) return skn_api_error(x->me, x->comm, MPI_ERR_ARG, x->fn, "%s counts or displs NULL", what);
  for (int i = 0; i < x->v->comm->rsize; i++) /* indexed by remote rank on an intercommunicator */
    if (counts[i] < 0)
      return skn_api_error(x->me, x->comm, MPI_ERR_COUNT, x->fn, "%s[%d]=%d", what, i, counts[i]);
  return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ running a collective
 * Blocking calls run the algorithm at once (after any nonblocking collective this rank
 * started earlier on the communicator). Nonblocking calls queue a task; one executor
 * unit per (rank, communicator) runs the queue in issue order, so every member sees the
 * same sequence of collectives, and it progresses while the rank computes. */

enum coll_kind { K_BARRIER, K_BCAST, K_GATHER, K_SCATTER, K_ALLGATHER, K_ALLTOALL, K_REDUCE, K_ALLREDUCE,
                 K_REDUCE_SCATTER, K_SCAN, K_EXSCAN, K_IDUP };

typedef struct skn_nbc {
  struct skn_nbc *next;
  enum coll_kind kind;
  skn_comm_view *v;
  skn_comm *comm;
  int rank;
  skn_req *req;
  skn_coll_args a;
  void *owned[2]; /* freed when the task completes */
  MPI_Comm handle; /* K_IDUP: the parent, and where the new handle goes */
  MPI_Comm *newcomm;
} skn_nbc;

static skn_status run_inter(enum coll_kind k, skn_comm *c, int rank, skn_coll_args *a) {
  switch (k) {
    case K_BARRIER: skn_icoll_barrier(c); return SKN_OK;
    case K_BCAST: skn_icoll_bcast(c, rank, a); return SKN_OK;
    case K_GATHER: skn_icoll_gather(c, rank, a); return SKN_OK;
    case K_SCATTER: skn_icoll_scatter(c, rank, a); return SKN_OK;
    case K_ALLGATHER: skn_icoll_allgather(c, rank, a); return SKN_OK;
    case K_ALLTOALL: skn_icoll_alltoall(c, rank, a); return SKN_OK;
    case K_REDUCE: return skn_icoll_reduce(c, rank, a, false);
    case K_ALLREDUCE: return skn_icoll_reduce(c, rank, a, true);
    case K_REDUCE_SCATTER: return skn_icoll_reduce_scatter(c, rank, a);
    case K_SCAN:
    case K_EXSCAN: /* refused by the API layer */
    case K_IDUP: break;
  }
  return SKN_OK;
}

static skn_status run_spanning(enum coll_kind k, skn_comm *c, int rank, skn_coll_args *a) {
  switch (k) {
    case K_BARRIER: skn_xcoll_barrier(c); return SKN_OK;
    case K_BCAST: skn_xcoll_bcast(c, rank, a); return SKN_OK;
    case K_GATHER: skn_xcoll_gather(c, rank, a); return SKN_OK;
    case K_SCATTER: skn_xcoll_scatter(c, rank, a); return SKN_OK;
    case K_ALLGATHER: skn_xcoll_allgather(c, rank, a); return SKN_OK;
    case K_ALLTOALL: return skn_xcoll_alltoall(c, rank, a);
    case K_REDUCE: return skn_xcoll_reduce(c, rank, a, false);
    case K_ALLREDUCE: return skn_xcoll_reduce(c, rank, a, true);
    case K_REDUCE_SCATTER: return skn_xcoll_reduce_scatter(c, rank, a);
    case K_SCAN: return skn_xcoll_scan(c, rank, a, false);
    case K_EXSCAN: return skn_xcoll_scan(c, rank, a, true);
    case K_IDUP: break;
  }
  return SKN_OK;
}

static skn_status run_kind(enum coll_kind k, skn_comm *c, int rank, skn_coll_args *a) {
  if (skn_comm_is_inter(c)) return run_inter(k, c, rank, a);
  if (SKN_UNLIKELY(c->x != NULL)) return run_spanning(k, c, rank, a);
  switch (k) {
    case K_BARRIER: skn_coll_barrier(NULL, c); return SKN_OK;
    case K_BCAST: skn_coll_bcast(c, rank, a); return SKN_OK;
    case K_GATHER: skn_coll_gather(c, rank, a); return SKN_OK;
    case K_SCATTER: skn_coll_scatter(c, rank, a); return SKN_OK;
    case K_ALLGATHER: skn_coll_allgather(c, rank, a); return SKN_OK;
    case K_ALLTOALL: skn_coll_alltoall(c, rank, a); return SKN_OK;
    case K_REDUCE: return skn_coll_reduce(c, rank, a, false);
    case K_ALLREDUCE: return skn_coll_reduce(c, rank, a, true);
    case K_REDUCE_SCATTER: return skn_coll_reduce_scatter(c, rank, a);
    case K_SCAN: return skn_coll_scan(c, rank, a, false);
    case K_EXSCAN: return skn_coll_scan(c, rank, a, true);
    case K_IDUP: break; /* run by the executor itself */
  }
  return SKN_OK;
}

/* A queued task keeps its derived datatypes alive even if the user frees them. */
static void nbc_types(skn_nbc *t, bool hold) {
  skn_rank *me = skn_rank_self();
  const skn_dtype *single[2] = {t->a.st, t->a.rt};
  for (int i = 0; i < 2; i++) {
    if (!single[i]) continue;
    if (hold) skn_dt_retain((skn_dtype *)single[i]);
    else skn_dt_release(me, (skn_dtype *)single[i]);
  }
  for (int side = 0; side < 2; side++) {
    const skn_dtype *const *arr = side ? t->a.rts : t->a.sts;
    for (int i = 0; arr && i < t->comm->rsize; i++) {
      if (hold) skn_dt_retain((skn_dtype *)arr[i]);
      else skn_dt_release(me, (skn_dtype *)arr[i]);
    }
  }
}

static void nbc_executor(void *arg) {
  skn_comm_view *v = arg;
  skn_rank *me = skn_rank_self();
  for (;;) {
    skn_rank_lock(me);
    skn_nbc *t = v->nbc_head;
    if (!t) {
      v->nbc_running = false;
      skn_unit *drainer = v->nbc_drainer;
      v->nbc_drainer = NULL;
      skn_rank_unlock(me);
      if (drainer) skn_sched_wake(drainer);
      return;
    }
    skn_rank_unlock(me);
    if (t->kind == K_IDUP) {
      if (skn_api_comm_dup_now(me, "MPI_Comm_idup", t->handle, v, t->newcomm) != MPI_SUCCESS)
        *t->newcomm = MPI_COMM_NULL;
    } else if (run_kind(t->kind, t->comm, t->rank, &t->a) != SKN_OK) {
      skn_log("rank %d: a nonblocking collective ran out of memory", me->world_rank);
    }
    skn_rank_lock(me);
    v->nbc_head = t->next;
    if (!v->nbc_head) v->nbc_tail = NULL;
    skn_rank_unlock(me);
    nbc_types(t, false);
    skn_req_complete(t->req);
    free(t->owned[0]);
    free(t->owned[1]);
    free(t);
  }
}

void skn_api_nbc_drain(skn_rank *me, skn_comm_view *v) {
  skn_unit *self = skn_sched_self();
  for (;;) {
    skn_sched_prepare_wait(self);
    skn_rank_lock(me);
    bool empty = v->nbc_head == NULL;
    if (!empty) v->nbc_drainer = self;
    skn_rank_unlock(me);
    if (empty) break;
    skn_sched_wait(self);
  }
  skn_sched_done_waiting(self);
}

/* Runs collective k now (req == NULL) or queues it and returns a request. */
static int dispatch_task(coll_ctx *x, enum coll_kind k, skn_coll_args *a, MPI_Request *req, void *owned,
                         MPI_Comm *newcomm);
static int dispatch(coll_ctx *x, enum coll_kind k, skn_coll_args *a, MPI_Request *req, void *owned) {
  return dispatch_task(x, k, a, req, owned, NULL);
}

static int dispatch_task(coll_ctx *x, enum coll_kind k, skn_coll_args *a, MPI_Request *req, void *owned,
                         MPI_Comm *newcomm) {
  if (!req) {
    skn_api_coll_order(x->me, x->v);
    enter(x);
    skn_status st = run_kind(k, x->v->comm, x->v->rank, a);
    leave(x);
    free(owned);
    return st == SKN_OK ? MPI_SUCCESS : skn_api_error(x->me, x->comm, MPI_ERR_NO_MEM, x->fn, "out of memory");
  }
  skn_nbc *t = calloc(1, sizeof *t);
  skn_req *r = t ? skn_req_alloc(x->me) : NULL;
  if (!r) {
    free(t);
    free(owned);
    return skn_api_error(x->me, x->comm, MPI_ERR_NO_MEM, x->fn, "out of memory for a request");
  }
  r->kind = SKN_REQ_SEND; /* completes without a message status */
  r->comm = x->comm;
  r->st_src = MPI_ANY_SOURCE;
  r->st_tag = MPI_ANY_TAG;
  r->origin = x->fn;
  r->origin_peer = MPI_UNDEFINED;
  r->handle_live = true;
  *t = (skn_nbc){.kind = k, .v = x->v, .comm = x->v->comm, .rank = x->v->rank, .req = r, .a = *a,
                 .owned = {owned, NULL}, .handle = x->comm, .newcomm = newcomm};
  nbc_types(t, true);
  skn_rank *me = x->me;
  skn_rank_lock(me);
  if (x->v->nbc_tail) x->v->nbc_tail->next = t;
  else x->v->nbc_head = t;
  x->v->nbc_tail = t;
  bool start = !x->v->nbc_running;
  x->v->nbc_running = true;
  skn_rank_unlock(me);
  if (start) {
    int w = me->unit->worker ? me->unit->worker->id : 0;
    if (!skn_sched_spawn_sized(w, nbc_executor, x->v, me, 256 << 10))
      skn_fatal("rank %d: %s: cannot start the collective executor", me->world_rank, x->fn);
  }
  *req = skn_req_handle(r);
  return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ data movement */

static int bcast_common(const char *fn, void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
                        MPI_Request *req) {
  coll_ctx x;
  const skn_dtype *t;
  int rc;
  if ((rc = begin(&x, fn, comm)) || (rc = check_root(&x, root))) return rc;
  if (is_inter(&x) && root == MPI_PROC_NULL) { /* takes part, moves no data */
    skn_coll_args a = {.root = root};
    return dispatch(&x, K_BCAST, &a, req, NULL);
  }
  if ((rc = check_buf(&x, "", buf, count, dt, &t))) return rc;
  skn_coll_args a = {.rbuf = buf, .rcount = (size_t)count, .rt = t, .root = root};
  return dispatch(&x, K_BCAST, &a, req, NULL);
}

int PMPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm) {
  return bcast_common("MPI_Bcast", buf, count, dt, root, comm, NULL);
}
SKN_WEAK_ALIAS(Bcast);

int PMPI_Ibcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Request *req) {
  return bcast_common("MPI_Ibcast", buf, count, dt, root, comm, req);
}
SKN_WEAK_ALIAS(Ibcast);

int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *req) {
  coll_ctx x;
  int rc = begin(&x, "MPI_Comm_idup", comm);
  if (rc) return rc;
  if (!newcomm || !req) return skn_api_error(x.me, comm, MPI_ERR_ARG, x.fn, "newcomm or request NULL");
  skn_coll_args a = {0};
  return dispatch_task(&x, K_IDUP, &a, req, NULL, newcomm);
}
SKN_WEAK_ALIAS(Comm_idup);

int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *req) {
  coll_ctx x;
  int rc = begin(&x, "MPI_Ibarrier", comm);
  if (rc) return rc;
  skn_coll_args a = {0};
  return dispatch(&x, K_BARRIER, &a, req, NULL);
}
SKN_WEAK_ALIAS(Ibarrier);

static int gather_common(const char *fn, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                         int rcount, const int *rcounts, const int *displs, MPI_Datatype rtype, int root,
                         MPI_Comm comm, MPI_Request *req) {
  coll_ctx x;
  const skn_dtype *st = NULL, *rt = NULL;
  int rc;
  if ((rc = begin(&x, fn, comm)) || (rc = check_root(&x, root))) return rc;
  bool inter = is_inter(&x), is_root = inter ? root == MPI_ROOT : x.v->rank == root;
  if (IN_PLACE(sbuf) && (inter || !is_root))
    return skn_api_error(x.me, comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is for the root of an intracommunicator only");
  if ((!inter || root >= 0) && !IN_PLACE(sbuf) && (rc = check_buf(&x, "send", sbuf, scount, stype, &st))) return rc;
  if (is_root) {
    if (rcounts && (rc = check_counts(&x, "recvcounts", rcounts, displs))) return rc;
    if ((rc = check_buf(&x, "receive", rbuf, rcounts ? 0 : rcount, rtype, &rt))) return rc;
  }
  skn_coll_args a = {.sbuf = sbuf, .scount = (size_t)(scount > 0 ? scount : 0), .st = st, .rbuf = rbuf,
                     .rcount = (size_t)(rcount > 0 ? rcount : 0), .rt = rt, .rcounts = rcounts, .rdispls = displs,
                     .root = root};
  return dispatch(&x, K_GATHER, &a, req, NULL);
}

int PMPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                int root, MPI_Comm comm) {
  return gather_common("MPI_Gather", sbuf, scount, stype, rbuf, rcount, NULL, NULL, rtype, root, comm, NULL);
}
SKN_WEAK_ALIAS(Gather);

int PMPI_Igather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                 int root, MPI_Comm comm, MPI_Request *req) {
  return gather_common("MPI_Igather", sbuf, scount, stype, rbuf, rcount, NULL, NULL, rtype, root, comm, req);
}
SKN_WEAK_ALIAS(Igather);

int PMPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                 const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm) {
  return gather_common("MPI_Gatherv", sbuf, scount, stype, rbuf, 0, rcounts, displs, rtype, root, comm, NULL);
}
SKN_WEAK_ALIAS(Gatherv);

int PMPI_Igatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                  const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req) {
  return gather_common("MPI_Igatherv", sbuf, scount, stype, rbuf, 0, rcounts, displs, rtype, root, comm, req);
}
SKN_WEAK_ALIAS(Igatherv);

static int scatter_common(const char *fn, const void *sbuf, int scount, const int *scounts, const int *displs,
                          MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm,
                          MPI_Request *req) {
  coll_ctx x;
  const skn_dtype *st = NULL, *rt = NULL;
  int rc;
  if ((rc = begin(&x, fn, comm)) || (rc = check_root(&x, root))) return rc;
  bool inter = is_inter(&x), is_root = inter ? root == MPI_ROOT : x.v->rank == root;
  if (IN_PLACE(rbuf) && (inter || !is_root))
    return skn_api_error(x.me, comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is for the root of an intracommunicator only");
  if (is_root) {
    if (scounts && (rc = check_counts(&x, "sendcounts", scounts, displs))) return rc;
    if ((rc = check_buf(&x, "send", sbuf, scounts ? 0 : scount, stype, &st))) return rc;
  }
  if ((!inter || root >= 0) && !IN_PLACE(rbuf) && (rc = check_buf(&x, "receive", rbuf, rcount, rtype, &rt)))
    return rc;
  skn_coll_args a = {.sbuf = sbuf, .scount = (size_t)(scount > 0 ? scount : 0), .st = st, .scounts = scounts,
                     .sdispls = displs, .rbuf = rbuf, .rcount = (size_t)(rcount > 0 ? rcount : 0), .rt = rt,
                     .root = root};
  return dispatch(&x, K_SCATTER, &a, req, NULL);
}

int PMPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                 int root, MPI_Comm comm) {
  return scatter_common("MPI_Scatter", sbuf, scount, NULL, NULL, stype, rbuf, rcount, rtype, root, comm, NULL);
}
SKN_WEAK_ALIAS(Scatter);

int PMPI_Iscatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                  int root, MPI_Comm comm, MPI_Request *req) {
  return scatter_common("MPI_Iscatter", sbuf, scount, NULL, NULL, stype, rbuf, rcount, rtype, root, comm, req);
}
SKN_WEAK_ALIAS(Iscatter);

int PMPI_Scatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype, void *rbuf,
                  int rcount, MPI_Datatype rtype, int root, MPI_Comm comm) {
  return scatter_common("MPI_Scatterv", sbuf, 0, scounts, displs, stype, rbuf, rcount, rtype, root, comm, NULL);
}
SKN_WEAK_ALIAS(Scatterv);

int PMPI_Iscatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype, void *rbuf,
                   int rcount, MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req) {
  return scatter_common("MPI_Iscatterv", sbuf, 0, scounts, displs, stype, rbuf, rcount, rtype, root, comm, req);
}
SKN_WEAK_ALIAS(Iscatterv);

static int allgather_common(const char *fn, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                            int rcount, const int *rcounts, const int *displs, MPI_Datatype rtype, MPI_Comm comm,
                            MPI_Request *req) {
  coll_ctx x;
  const skn_dtype *st = NULL, *rt = NULL;
  int rc;
  if ((rc = begin(&x, fn, comm)) || (rc = no_in_place_inter(&x, sbuf))) return rc;
  if (!IN_PLACE(sbuf) && (rc = check_buf(&x, "send", sbuf, scount, stype, &st))) return rc;
  if (rcounts && (rc = check_counts(&x, "recvcounts", rcounts, displs))) return rc;
  if ((rc = check_buf(&x, "receive", rbuf, rcounts ? 0 : rcount, rtype, &rt))) return rc;
  skn_coll_args a = {.sbuf = sbuf, .scount = (size_t)(scount > 0 ? scount : 0), .st = st, .rbuf = rbuf,
                     .rcount = (size_t)(rcount > 0 ? rcount : 0), .rt = rt, .rcounts = rcounts, .rdispls = displs};
  return dispatch(&x, K_ALLGATHER, &a, req, NULL);
}

int PMPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                   MPI_Comm comm) {
  return allgather_common("MPI_Allgather", sbuf, scount, stype, rbuf, rcount, NULL, NULL, rtype, comm, NULL);
}
SKN_WEAK_ALIAS(Allgather);

int PMPI_Iallgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                    MPI_Comm comm, MPI_Request *req) {
  return allgather_common("MPI_Iallgather", sbuf, scount, stype, rbuf, rcount, NULL, NULL, rtype, comm, req);
}
SKN_WEAK_ALIAS(Iallgather);

int PMPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                    const int displs[], MPI_Datatype rtype, MPI_Comm comm) {
  return allgather_common("MPI_Allgatherv", sbuf, scount, stype, rbuf, 0, rcounts, displs, rtype, comm, NULL);
}
SKN_WEAK_ALIAS(Allgatherv);

int PMPI_Iallgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                     const int displs[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req) {
  return allgather_common("MPI_Iallgatherv", sbuf, scount, stype, rbuf, 0, rcounts, displs, rtype, comm, req);
}
SKN_WEAK_ALIAS(Iallgatherv);

static int alltoall_common(const char *fn, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                           MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req) {
  coll_ctx x;
  const skn_dtype *st = NULL, *rt = NULL;
  int rc;
  if ((rc = begin(&x, fn, comm)) || (rc = no_in_place_inter(&x, sbuf))) return rc;
  if (!IN_PLACE(sbuf) && (rc = check_buf(&x, "send", sbuf, scount, stype, &st))) return rc;
  if ((rc = check_buf(&x, "receive", rbuf, rcount, rtype, &rt))) return rc;
  skn_coll_args a = {.sbuf = sbuf, .scount = (size_t)(scount > 0 ? scount : 0), .st = st, .rbuf = rbuf,
                     .rcount = (size_t)rcount, .rt = rt};
  return dispatch(&x, K_ALLTOALL, &a, req, NULL);
}

int PMPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                  MPI_Comm comm) {
  return alltoall_common("MPI_Alltoall", sbuf, scount, stype, rbuf, rcount, rtype, comm, NULL);
}
SKN_WEAK_ALIAS(Alltoall);

int PMPI_Ialltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                   MPI_Comm comm, MPI_Request *req) {
  return alltoall_common("MPI_Ialltoall", sbuf, scount, stype, rbuf, rcount, rtype, comm, req);
}
SKN_WEAK_ALIAS(Ialltoall);

static int alltoallv_common(const char *fn, const void *sbuf, const int scounts[], const int sdispls[],
                            MPI_Datatype stype, void *rbuf, const int rcounts[], const int rdispls[],
                            MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req) {
  coll_ctx x;
  const skn_dtype *st = NULL, *rt = NULL;
  int rc;
  if ((rc = begin(&x, fn, comm)) || (rc = no_in_place_inter(&x, sbuf))) return rc;
  if (!IN_PLACE(sbuf) && ((rc = check_counts(&x, "sendcounts", scounts, sdispls)) ||
                          (rc = check_buf(&x, "send", sbuf, 0, stype, &st))))
    return rc;
  if ((rc = check_counts(&x, "recvcounts", rcounts, rdispls)) || (rc = check_buf(&x, "receive", rbuf, 0, rtype, &rt)))
    return rc;
  skn_coll_args a = {.sbuf = sbuf, .st = st, .scounts = scounts, .sdispls = sdispls, .rbuf = rbuf, .rt = rt,
                     .rcounts = rcounts, .rdispls = rdispls};
  return dispatch(&x, K_ALLTOALL, &a, req, NULL);
}

int PMPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void *rbuf,
                   const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm) {
  return alltoallv_common("MPI_Alltoallv", sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm, NULL);
}
SKN_WEAK_ALIAS(Alltoallv);

int PMPI_Ialltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void *rbuf,
                    const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req) {
  return alltoallv_common("MPI_Ialltoallv", sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm, req);
}
SKN_WEAK_ALIAS(Ialltoallv);

static int alltoallw_common(const char *fn, const void *sbuf, const int scounts[], const int sdispls[],
                            const MPI_Datatype stypes[], void *rbuf, const int rcounts[], const int rdispls[],
                            const MPI_Datatype rtypes[], MPI_Comm comm, MPI_Request *req) {
  coll_ctx x;
  int rc;
  if ((rc = begin(&x, fn, comm)) || (rc = no_in_place_inter(&x, sbuf))) return rc;
  int n = x.v->comm->rsize;
  /* one block holds both type arrays; the task frees it when done */
  const skn_dtype **types = calloc(2 * (size_t)n, sizeof *types);
  if (!types) return skn_api_error(x.me, comm, MPI_ERR_NO_MEM, x.fn, "out of memory");
  const skn_dtype **sts = types, **rts = types + n;
  if (!IN_PLACE(sbuf)) rc = check_counts(&x, "sendcounts", scounts, sdispls);
  if (!rc) rc = check_counts(&x, "recvcounts", rcounts, rdispls);
  for (int i = 0; i < n && !rc; i++) {
    if (!IN_PLACE(sbuf)) rc = check_buf(&x, "send", sbuf, 0, stypes[i], &sts[i]);
    if (!rc) rc = check_buf(&x, "receive", rbuf, 0, rtypes[i], &rts[i]);
  }
  if (rc) {
    free(types);
    return rc;
  }
  skn_coll_args a = {.sbuf = sbuf, .scounts = scounts, .sdispls = sdispls, .sts = IN_PLACE(sbuf) ? NULL : sts,
                     .st = IN_PLACE(sbuf) ? NULL : sts[0], .rbuf = rbuf, .rcounts = rcounts, .rdispls = rdispls,
                     .rts = rts, .rt = rts[0]};
  return dispatch(&x, K_ALLTOALL, &a, req, types);
}

int PMPI_Alltoallw(const void *sbuf, const int scounts[], const int sdispls[], const MPI_Datatype stypes[],
                   void *rbuf, const int rcounts[], const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm) {
  return alltoallw_common("MPI_Alltoallw", sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm,
                          NULL);
}
SKN_WEAK_ALIAS(Alltoallw);

int PMPI_Ialltoallw(const void *sbuf, const int scounts[], const int sdispls[], const MPI_Datatype stypes[],
                    void *rbuf, const int rcounts[], const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
                    MPI_Request *req) {
  return alltoallw_common("MPI_Ialltoallw", sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm,
                          req);
}
SKN_WEAK_ALIAS(Ialltoallw);

/* ------------------------------------------------------------------ operations */

static int op_lookup(coll_ctx *x, MPI_Op op, MPI_Datatype dt, const skn_dtype *t, skn_coll_args *a) {
  unsigned idx = (unsigned)op & 0xffffffu;
  if (((unsigned)op >> 24) != SKN_KIND_OP || idx == 0)
    return skn_api_error(x->me, x->comm, MPI_ERR_OP, x->fn, "op=%#x", (unsigned)op);
  a->dt_handle = dt;
  a->st = a->rt = t;
  if (idx < SKN_OP_PREDEFINED_COUNT) {
    unsigned ti = (unsigned)dt & 0xffffffu;
    bool predefined_type = ((unsigned)dt >> 24) == SKN_KIND_DATATYPE && ti > 0 && ti < SKN_DT_PREDEFINED_COUNT;
    if (!predefined_type || !skn_op_defined((int)idx, (int)ti))
      return skn_api_error(x->me, x->comm, MPI_ERR_OP, x->fn, "op %u is not defined for datatype %s", idx,
                           predefined_type ? skn_dt_predefined[ti].name : "(derived)");
    a->op = (int)idx;
    return MPI_SUCCESS;
  }
  idx -= SKN_OP_PREDEFINED_COUNT;
  if (idx >= (unsigned)x->me->nops || !x->me->ops[idx].fn)
    return skn_api_error(x->me, x->comm, MPI_ERR_OP, x->fn, "op=%#x is not a valid operation", (unsigned)op);
  a->user_fn = (void (*)(void *, void *, int *, int *))x->me->ops[idx].fn;
  a->noncommute = !x->me->ops[idx].commute;
  return MPI_SUCCESS;
}

static int reduce_common(const char *fn, const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                         int root, bool all, MPI_Comm comm, MPI_Request *req) {
  coll_ctx x;
  const skn_dtype *t;
  int rc;
  if ((rc = begin(&x, fn, comm)) || (rc = no_in_place_inter(&x, sbuf))) return rc;
  if (!all && (rc = check_root(&x, root))) return rc;
  bool inter = is_inter(&x);
  bool is_root = all || (inter ? root == MPI_ROOT : x.v->rank == root);
  bool sends = all || !inter || root >= 0;
  if (IN_PLACE(sbuf) && !is_root)
    return skn_api_error(x.me, comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is for the root only");
  if (!sends && !is_root) { /* MPI_PROC_NULL in the root's group: only takes part */
    skn_coll_args a = {.root = root};
    return dispatch(&x, K_REDUCE, &a, req, NULL);
  }
  if (sends && (rc = check_buf(&x, "send", IN_PLACE(sbuf) ? rbuf : sbuf, count, dt, &t))) return rc;
  if (is_root && (rc = check_buf(&x, "receive", rbuf, count, dt, &t))) return rc;
  skn_coll_args a = {.sbuf = sbuf, .rbuf = rbuf, .scount = (size_t)count, .rcount = (size_t)count, .root = root};
  if ((rc = op_lookup(&x, op, dt, t, &a))) return rc;
  return dispatch(&x, all ? K_ALLREDUCE : K_REDUCE, &a, req, NULL);
}

int PMPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm) {
  return reduce_common("MPI_Reduce", sbuf, rbuf, count, dt, op, root, false, comm, NULL);
}
SKN_WEAK_ALIAS(Reduce);

int PMPI_Ireduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm,
                 MPI_Request *req) {
  return reduce_common("MPI_Ireduce", sbuf, rbuf, count, dt, op, root, false, comm, req);
}
SKN_WEAK_ALIAS(Ireduce);

int PMPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
  return reduce_common("MPI_Allreduce", sbuf, rbuf, count, dt, op, 0, true, comm, NULL);
}
SKN_WEAK_ALIAS(Allreduce);

int PMPI_Iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                    MPI_Request *req) {
  return reduce_common("MPI_Iallreduce", sbuf, rbuf, count, dt, op, 0, true, comm, req);
}
SKN_WEAK_ALIAS(Iallreduce);

static int reduce_scatter_common(const char *fn, const void *sbuf, void *rbuf, int rcount, const int *rcounts,
                                 MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *req) {
  coll_ctx x;
  const skn_dtype *t;
  int rc;
  if ((rc = begin(&x, fn, comm)) || (rc = no_in_place_inter(&x, sbuf))) return rc;
  int n = x.v->comm->size; /* counts are per local rank, intercommunicator or not */
  long long total = 0;
  if (rcounts) {
    for (int i = 0; i < n; i++) {
      if (rcounts[i] < 0) return skn_api_error(x.me, comm, MPI_ERR_COUNT, fn, "recvcounts[%d]=%d", i, rcounts[i]);
      total += rcounts[i];
    }
  } else {
    if (rcount < 0) return skn_api_error(x.me, comm, MPI_ERR_COUNT, fn, "recvcount=%d", rcount);
    total = (long long)rcount * n;
  }
  if ((rc = check_buf(&x, "send", IN_PLACE(sbuf) ? rbuf : sbuf, (int)total, dt, &t))) return rc;
  skn_coll_args a = {.sbuf = sbuf, .rbuf = rbuf, .scount = (size_t)total, .rcount = (size_t)(rcount > 0 ? rcount : 0),
                     .rcounts = rcounts};
  if ((rc = op_lookup(&x, op, dt, t, &a))) return rc;
  return dispatch(&x, K_REDUCE_SCATTER, &a, req, NULL);
}

int PMPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
  return reduce_scatter_common("MPI_Reduce_scatter_block", sbuf, rbuf, rcount, NULL, dt, op, comm, NULL);
}
SKN_WEAK_ALIAS(Reduce_scatter_block);

int PMPI_Ireduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                               MPI_Request *req) {
  return reduce_scatter_common("MPI_Ireduce_scatter_block", sbuf, rbuf, rcount, NULL, dt, op, comm, req);
}
SKN_WEAK_ALIAS(Ireduce_scatter_block);

static int reduce_scatter_v(const char *fn, const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype dt,
                            MPI_Op op, MPI_Comm comm, MPI_Request *req) {
  if (!rcounts) {
    skn_rank *me = skn_api_self(fn);
    return skn_api_error(me, comm, MPI_ERR_ARG, fn, "recvcounts=NULL");
  }
  return reduce_scatter_common(fn, sbuf, rbuf, 0, rcounts, dt, op, comm, req);
}

int PMPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype dt, MPI_Op op,
                        MPI_Comm comm) {
  return reduce_scatter_v("MPI_Reduce_scatter", sbuf, rbuf, rcounts, dt, op, comm, NULL);
}
SKN_WEAK_ALIAS(Reduce_scatter);

int PMPI_Ireduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype dt, MPI_Op op,
                         MPI_Comm comm, MPI_Request *req) {
  return reduce_scatter_v("MPI_Ireduce_scatter", sbuf, rbuf, rcounts, dt, op, comm, req);
}
SKN_WEAK_ALIAS(Ireduce_scatter);

static int scan_common(const char *fn, const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                       bool exclusive, MPI_Comm comm, MPI_Request *req) {
  coll_ctx x;
  const skn_dtype *t;
  int rc;
  if ((rc = begin(&x, fn, comm))) return rc;
  if ((rc = skn_api_intra_only(x.me, x.v, comm, fn))) return rc;
  if ((rc = check_buf(&x, "send", IN_PLACE(sbuf) ? rbuf : sbuf, count, dt, &t))) return rc;
  skn_coll_args a = {.sbuf = sbuf, .rbuf = rbuf, .scount = (size_t)count, .rcount = (size_t)count};
  if ((rc = op_lookup(&x, op, dt, t, &a))) return rc;
  return dispatch(&x, exclusive ? K_EXSCAN : K_SCAN, &a, req, NULL);
}

int PMPI_Scan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
  return scan_common("MPI_Scan", sbuf, rbuf, count, dt, op, false, comm, NULL);
}
SKN_WEAK_ALIAS(Scan);

int PMPI_Iscan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *req) {
  return scan_common("MPI_Iscan", sbuf, rbuf, count, dt, op, false, comm, req);
}
SKN_WEAK_ALIAS(Iscan);

int PMPI_Exscan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
  return scan_common("MPI_Exscan", sbuf, rbuf, count, dt, op, true, comm, NULL);
}
SKN_WEAK_ALIAS(Exscan);

int PMPI_Iexscan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                 MPI_Request *req) {
  return scan_common("MPI_Iexscan", sbuf, rbuf, count, dt, op, true, comm, req);
}
SKN_WEAK_ALIAS(Iexscan);

int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype dt, MPI_Op op) {
  coll_ctx x;
  const skn_dtype *t;
  int rc;
  x.fn = "MPI_Reduce_local";
  x.comm = MPI_COMM_SELF;
  x.me = skn_api_self(x.fn);
  x.v = skn_api_comm(x.me, MPI_COMM_SELF);
  if ((rc = check_buf(&x, "in", inbuf, count, dt, &t)) || (rc = check_buf(&x, "inout", inoutbuf, count, dt, &t)))
    return rc;
  skn_coll_args a = {0};
  if ((rc = op_lookup(&x, op, dt, t, &a))) return rc;
  if (a.user_fn) {
    int len = count, h = dt;
    a.user_fn((void *)(uintptr_t)inbuf, inoutbuf, &len, &h);
  } else {
    skn_op_apply(a.op, (int)((unsigned)dt & 0xffffffu), inbuf, inoutbuf, (size_t)count);
  }
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Reduce_local);

int PMPI_Op_create(MPI_User_function *fn, int commute, MPI_Op *op) {
  skn_rank *me = skn_api_self("MPI_Op_create");
  if (!fn || !op) return skn_api_error(me, MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Op_create", "function or op NULL");
  skn_rank_lock(me);
  int idx = me->nops;
  for (int i = 0; i < me->nops; i++)
    if (!me->ops[i].fn) {
      idx = i;
      break;
    }
  if (idx == me->nops) {
    skn_user_op *n = realloc(me->ops, sizeof *n * (size_t)(me->nops + 1));
    if (!n) {
      skn_rank_unlock(me);
      return skn_api_error(me, MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Op_create", "out of memory");
    }
    me->ops = n;
    me->nops++;
  }
  me->ops[idx] = (skn_user_op){fn, commute != 0};
  skn_rank_unlock(me);
  *op = SKN_HANDLE(SKN_KIND_OP, SKN_OP_PREDEFINED_COUNT + idx);
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Op_create);

static skn_user_op *user_op(skn_rank *me, MPI_Op op) {
  unsigned idx = (unsigned)op & 0xffffffu;
  if (((unsigned)op >> 24) != SKN_KIND_OP || idx < SKN_OP_PREDEFINED_COUNT) return NULL;
  idx -= SKN_OP_PREDEFINED_COUNT;
  return idx < (unsigned)me->nops && me->ops[idx].fn ? &me->ops[idx] : NULL;
}

int PMPI_Op_free(MPI_Op *op) {
  skn_rank *me = skn_api_self("MPI_Op_free");
  skn_user_op *u = op ? user_op(me, *op) : NULL;
  if (!u) return skn_api_error(me, MPI_COMM_WORLD, MPI_ERR_OP, "MPI_Op_free", "not a user-defined operation");
  u->fn = NULL;
  *op = MPI_OP_NULL;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Op_free);

int PMPI_Op_commutative(MPI_Op op, int *commute) {
  skn_rank *me = skn_api_self("MPI_Op_commutative");
  unsigned idx = (unsigned)op & 0xffffffu;
  if (((unsigned)op >> 24) == SKN_KIND_OP && idx > 0 && idx < SKN_OP_PREDEFINED_COUNT) {
    *commute = 1;
    return MPI_SUCCESS;
  }
  skn_user_op *u = user_op(me, op);
  if (!u) return skn_api_error(me, MPI_COMM_WORLD, MPI_ERR_OP, "MPI_Op_commutative", "op=%#x", (unsigned)op);
  *commute = u->commute;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Op_commutative);
