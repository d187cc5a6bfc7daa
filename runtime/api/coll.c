/* Collective calls and reduction operations: argument checks, then the algorithm the
 * communicator's collective table names (core/collective.h). The entry points are
 * generated (entries_coll.h): they check the communicator, the root and that a
 * nonblocking call has somewhere to put its request; the checks that depend on the
 * caller's role (which buffers, counts and types are significant) are made here. */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "objects.h"

#define IN_PLACE(p) ((const void *)(p) == MPI_IN_PLACE)

typedef struct coll_ctx {
  skn_rank *me;
  skn_comm_view *v;
  const char *fn;
  MPI_Comm comm;
} coll_ctx;


static inline void enter(coll_ctx *x) { skn_api_enter(x->me, x->fn, NULL, MPI_UNDEFINED, MPI_UNDEFINED); }
static inline void leave(coll_ctx *x) { skn_api_leave(x->me); }

static int check_buf(coll_ctx *x, const char *what, const void *buf, int count, MPI_Datatype dt,
                     const skn_dtype **t) {
  *t = skn_api_dtype(x->me, dt);
  if (!*t)
    return skn_api_error(x->me, x->comm, MPI_ERR_TYPE, x->fn, "%s datatype=%#x %s", what, (unsigned)dt,
                         skn_api_dtype_fault(x->me, dt));
  if (count < 0) return skn_api_error(x->me, x->comm, MPI_ERR_COUNT, x->fn, "%s count=%d", what, count);
  if (!buf && count > 0 && (*t)->size > 0 && (*t)->true_lb == 0)
    return skn_api_error(x->me, x->comm, MPI_ERR_BUFFER, x->fn, "%s buffer=NULL with count=%d", what, count);
  return MPI_SUCCESS;
}

static inline bool is_inter(const coll_ctx *x) { return skn_comm_is_inter(x->v->comm); }

/* The bytes `count` elements of t at buf touch, [*lo, *hi); false when none. */
static inline bool span_of(const void *buf, size_t count, const skn_dtype *t, uintptr_t *lo, uintptr_t *hi) {
  if (!count || !t->size) return false;
  ptrdiff_t last = (ptrdiff_t)(count - 1) * t->extent;
  *lo = (uintptr_t)buf + (uintptr_t)(t->true_lb + (last < 0 ? last : 0));
  *hi = (uintptr_t)buf + (uintptr_t)(t->true_lb + t->true_extent + (last > 0 ? last : 0));
  return true;
}

/* Send and receive buffers that share a byte, MPI_IN_PLACE aside, are MPI_ERR_BUFFER (MPICH
 * rejects the same pointer; MPI forbids any overlap): one compare of two ranges. */
static int check_alias(coll_ctx *x, const void *sbuf, size_t scount, const skn_dtype *st, const void *rbuf,
                       size_t rcount, const skn_dtype *rt) {
  uintptr_t s0, s1, r0, r1;
  if (IN_PLACE(sbuf) || IN_PLACE(rbuf) || !st || !rt || !span_of(sbuf, scount, st, &s0, &s1) ||
      !span_of(rbuf, rcount, rt, &r0, &r1) || s0 >= r1 || r0 >= s1)
    return MPI_SUCCESS;
  return skn_api_error(x->me, x->comm, MPI_ERR_BUFFER, x->fn,
                       "the send buffer [%#tx, %#tx) and the receive buffer [%#tx, %#tx) overlap (use MPI_IN_PLACE)",
                       (ptrdiff_t)s0, (ptrdiff_t)s1, (ptrdiff_t)r0, (ptrdiff_t)r1);
}

/* The v and w forms: the same pointer, as MPICH checks (their blocks are scattered). */
static int check_same(coll_ctx *x, const void *sbuf, const void *rbuf) {
  if (sbuf != rbuf || IN_PLACE(sbuf) || sbuf == MPI_BOTTOM) return MPI_SUCCESS;
  return skn_api_error(x->me, x->comm, MPI_ERR_BUFFER, x->fn, "sendbuf and recvbuf are the same (use MPI_IN_PLACE)");
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
 * The communicator's table (core/collective.h) names the algorithm; a blocking call runs
 * it at once (after any nonblocking collective this rank started earlier on the
 * communicator), a nonblocking one queues the same slot on the core's NBC engine. */

#define OPS(x) ((x)->v->comm->coll)

static int dispatch(coll_ctx *x, skn_coll_fn run, skn_coll_args *a, MPI_Request *req, void *owned) {
  if (!req) {
    skn_nbc_order(x->me, x->v);
    enter(x);
    skn_status st = run(x->v->comm, x->v->rank, a);
    leave(x);
    free(owned);
    return st == SKN_OK ? MPI_SUCCESS : skn_api_error(x->me, x->comm, MPI_ERR_NO_MEM, x->fn, "out of memory");
  }
  skn_req *r = skn_nbc_start(x->me, x->v, x->comm, x->fn, run, a, owned, NULL, NULL);
  if (!r) return skn_api_error(x->me, x->comm, MPI_ERR_NO_MEM, x->fn, "out of memory for a request");
  *req = skn_req_handle(r);
  return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ data movement */

static int bcast_common(skn_rank *me, skn_comm_view *v, const char *fn, void *buf, int count, MPI_Datatype dt, int root,
                        MPI_Comm comm, MPI_Request *req) {
  coll_ctx x = {me, v, fn, comm};
  const skn_dtype *t;
  int rc;
  if (is_inter(&x) && root == MPI_PROC_NULL) { /* takes part, moves no data */
    skn_coll_args a = {.root = root};
    return dispatch(&x, OPS(&x)->bcast, &a, req, NULL);
  }
  if ((rc = check_buf(&x, "", buf, count, dt, &t))) return rc;
  skn_coll_args a = {.rbuf = buf, .rcount = (size_t)count, .rt = t, .root = root};
  return dispatch(&x, OPS(&x)->bcast, &a, req, NULL);
}

static int impl_Bcast(skn_rank *me, const char *fn, void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
                      skn_comm_view *v) {
  return bcast_common(me, v, fn, buf, count, dt, root, comm, NULL);
}

static int impl_Ibcast(skn_rank *me, const char *fn, void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
                       skn_comm_view *v, MPI_Request *req) {
  return bcast_common(me, v, fn, buf, count, dt, root, comm, req);
}

typedef struct idup_task {
  MPI_Comm parent;
  MPI_Comm *newcomm;
} idup_task;

/* Run by the NBC engine in its turn: duplicating is itself collective over the parent. */
static void idup_run(skn_rank *me, skn_comm_view *v, void *arg) {
  idup_task *t = arg;
  if (skn_api_comm_dup_now(me, "MPI_Comm_idup", t->parent, v, t->newcomm) != MPI_SUCCESS) *t->newcomm = MPI_COMM_NULL;
}

static int impl_Comm_idup(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, MPI_Comm *newcomm,
                          MPI_Request *req) {
  idup_task *t = malloc(sizeof *t);
  if (!t) return skn_api_error(me, comm, MPI_ERR_NO_MEM, fn, "out of memory for a request");
  *t = (idup_task){comm, newcomm};
  skn_req *r = skn_nbc_start(me, v, comm, fn, NULL, NULL, t, idup_run, t);
  if (!r) return skn_api_error(me, comm, MPI_ERR_NO_MEM, fn, "out of memory for a request");
  *req = skn_req_handle(r);
  return MPI_SUCCESS;
}

static int impl_Comm_idup_with_info(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, MPI_Info info,
                                    MPI_Comm *newcomm, MPI_Request *req) {
  skn_info *copy;
  int rc = skn_info_copy_handle(me, fn, info, &copy); /* checks the argument */
  skn_info_destroy(copy); /* hints may be ignored: the new one has comm's, as after Comm_idup */
  return rc != MPI_SUCCESS ? rc : impl_Comm_idup(me, fn, comm, v, newcomm, req);
}

static int impl_Ibarrier(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, MPI_Request *req) {
  coll_ctx x = {me, v, fn, comm};
  skn_coll_args a = {0};
  return dispatch(&x, OPS(&x)->barrier, &a, req, NULL);
}

static int gather_common(skn_rank *me, skn_comm_view *v, const char *fn, const void *sbuf, int scount,
                         MPI_Datatype stype, void *rbuf, int rcount, const int *rcounts, const int *displs,
                         MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req) {
  coll_ctx x = {me, v, fn, comm};
  const skn_dtype *st = NULL, *rt = NULL;
  int rc;
  bool inter = is_inter(&x), is_root = inter ? root == MPI_ROOT : x.v->rank == root;
  if (IN_PLACE(sbuf) && (inter || !is_root))
    return skn_api_error(x.me, comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is for the root of an intracommunicator only");
  if ((!inter || root >= 0) && !IN_PLACE(sbuf) && (rc = check_buf(&x, "send", sbuf, scount, stype, &st))) return rc;
  if (is_root) {
    if (rcounts && (rc = check_counts(&x, "recvcounts", rcounts, displs))) return rc;
    if ((rc = check_buf(&x, "receive", rbuf, rcounts ? 0 : rcount, rtype, &rt))) return rc;
    if (!inter && (rc = rcounts ? check_same(&x, sbuf, rbuf)
                                : check_alias(&x, sbuf, (size_t)scount, st, rbuf, (size_t)rcount * (size_t)x.v->comm->size, rt)))
      return rc;
  }
  skn_coll_args a = {.sbuf = sbuf, .scount = (size_t)(scount > 0 ? scount : 0), .st = st, .rbuf = rbuf,
                     .rcount = (size_t)(rcount > 0 ? rcount : 0), .rt = rt, .rcounts = rcounts, .rdispls = displs,
                     .root = root};
  return dispatch(&x, OPS(&x)->gather, &a, req, NULL);
}

static int impl_Gather(skn_rank *me, const char *fn, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                       int rcount, MPI_Datatype rtype, int root, MPI_Comm comm, skn_comm_view *v) {
  return gather_common(me, v, fn, sbuf, scount, stype, rbuf, rcount, NULL, NULL, rtype, root, comm, NULL);
}

static int impl_Igather(skn_rank *me, const char *fn, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                        int rcount, MPI_Datatype rtype, int root, MPI_Comm comm, skn_comm_view *v, MPI_Request *req) {
  return gather_common(me, v, fn, sbuf, scount, stype, rbuf, rcount, NULL, NULL, rtype, root, comm, req);
}

static int impl_Gatherv(skn_rank *me, const char *fn, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                        const int rcounts[], const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm,
                        skn_comm_view *v) {
  return gather_common(me, v, fn, sbuf, scount, stype, rbuf, 0, rcounts, displs, rtype, root, comm, NULL);
}

static int impl_Igatherv(skn_rank *me, const char *fn, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                         const int rcounts[], const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm,
                         skn_comm_view *v, MPI_Request *req) {
  return gather_common(me, v, fn, sbuf, scount, stype, rbuf, 0, rcounts, displs, rtype, root, comm, req);
}

static int scatter_common(skn_rank *me, skn_comm_view *v, const char *fn, const void *sbuf, int scount,
                          const int *scounts, const int *displs, MPI_Datatype stype, void *rbuf, int rcount,
                          MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req) {
  coll_ctx x = {me, v, fn, comm};
  const skn_dtype *st = NULL, *rt = NULL;
  int rc;
  bool inter = is_inter(&x), is_root = inter ? root == MPI_ROOT : x.v->rank == root;
  if (IN_PLACE(rbuf) && (inter || !is_root))
    return skn_api_error(x.me, comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is for the root of an intracommunicator only");
  if (is_root) {
    if (scounts && (rc = check_counts(&x, "sendcounts", scounts, displs))) return rc;
    if ((rc = check_buf(&x, "send", sbuf, scounts ? 0 : scount, stype, &st))) return rc;
  }
  if ((!inter || root >= 0) && !IN_PLACE(rbuf) && (rc = check_buf(&x, "receive", rbuf, rcount, rtype, &rt)))
    return rc;
  if (is_root && !inter &&
      (rc = scounts ? check_same(&x, sbuf, rbuf)
                    : check_alias(&x, sbuf, (size_t)scount * (size_t)x.v->comm->size, st, rbuf, (size_t)rcount, rt)))
    return rc;
  skn_coll_args a = {.sbuf = sbuf, .scount = (size_t)(scount > 0 ? scount : 0), .st = st, .scounts = scounts,
                     .sdispls = displs, .rbuf = rbuf, .rcount = (size_t)(rcount > 0 ? rcount : 0), .rt = rt,
                     .root = root};
  return dispatch(&x, OPS(&x)->scatter, &a, req, NULL);
}

static int impl_Scatter(skn_rank *me, const char *fn, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                        int rcount, MPI_Datatype rtype, int root, MPI_Comm comm, skn_comm_view *v) {
  return scatter_common(me, v, fn, sbuf, scount, NULL, NULL, stype, rbuf, rcount, rtype, root, comm, NULL);
}

static int impl_Iscatter(skn_rank *me, const char *fn, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                         int rcount, MPI_Datatype rtype, int root, MPI_Comm comm, skn_comm_view *v, MPI_Request *req) {
  return scatter_common(me, v, fn, sbuf, scount, NULL, NULL, stype, rbuf, rcount, rtype, root, comm, req);
}

static int impl_Scatterv(skn_rank *me, const char *fn, const void *sbuf, const int scounts[], const int displs[],
                         MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm,
                         skn_comm_view *v) {
  return scatter_common(me, v, fn, sbuf, 0, scounts, displs, stype, rbuf, rcount, rtype, root, comm, NULL);
}

static int impl_Iscatterv(skn_rank *me, const char *fn, const void *sbuf, const int scounts[], const int displs[],
                          MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm,
                          skn_comm_view *v, MPI_Request *req) {
  return scatter_common(me, v, fn, sbuf, 0, scounts, displs, stype, rbuf, rcount, rtype, root, comm, req);
}

static int allgather_common(skn_rank *me, skn_comm_view *v, const char *fn, const void *sbuf, int scount,
                            MPI_Datatype stype, void *rbuf, int rcount, const int *rcounts, const int *displs,
                            MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req) {
  coll_ctx x = {me, v, fn, comm};
  const skn_dtype *st = NULL, *rt = NULL;
  int rc;
  if ((rc = no_in_place_inter(&x, sbuf))) return rc;
  if (!IN_PLACE(sbuf) && (rc = check_buf(&x, "send", sbuf, scount, stype, &st))) return rc;
  if (rcounts && (rc = check_counts(&x, "recvcounts", rcounts, displs))) return rc;
  if ((rc = check_buf(&x, "receive", rbuf, rcounts ? 0 : rcount, rtype, &rt))) return rc;
  if ((rc = rcounts ? check_same(&x, sbuf, rbuf)
                    : check_alias(&x, sbuf, (size_t)scount, st, rbuf, (size_t)rcount * (size_t)x.v->comm->rsize, rt)))
    return rc;
  skn_coll_args a = {.sbuf = sbuf, .scount = (size_t)(scount > 0 ? scount : 0), .st = st, .rbuf = rbuf,
                     .rcount = (size_t)(rcount > 0 ? rcount : 0), .rt = rt, .rcounts = rcounts, .rdispls = displs};
  return dispatch(&x, OPS(&x)->allgather, &a, req, NULL);
}

static int impl_Allgather(skn_rank *me, const char *fn, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                          int rcount, MPI_Datatype rtype, MPI_Comm comm, skn_comm_view *v) {
  return allgather_common(me, v, fn, sbuf, scount, stype, rbuf, rcount, NULL, NULL, rtype, comm, NULL);
}

static int impl_Iallgather(skn_rank *me, const char *fn, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                           int rcount, MPI_Datatype rtype, MPI_Comm comm, skn_comm_view *v, MPI_Request *req) {
  return allgather_common(me, v, fn, sbuf, scount, stype, rbuf, rcount, NULL, NULL, rtype, comm, req);
}

static int impl_Allgatherv(skn_rank *me, const char *fn, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                           const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm,
                           skn_comm_view *v) {
  return allgather_common(me, v, fn, sbuf, scount, stype, rbuf, 0, rcounts, displs, rtype, comm, NULL);
}

static int impl_Iallgatherv(skn_rank *me, const char *fn, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                            const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm,
                            skn_comm_view *v, MPI_Request *req) {
  return allgather_common(me, v, fn, sbuf, scount, stype, rbuf, 0, rcounts, displs, rtype, comm, req);
}

static int alltoall_common(skn_rank *me, skn_comm_view *v, const char *fn, const void *sbuf, int scount,
                           MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, MPI_Comm comm,
                           MPI_Request *req) {
  coll_ctx x = {me, v, fn, comm};
  const skn_dtype *st = NULL, *rt = NULL;
  int rc;
  if ((rc = no_in_place_inter(&x, sbuf))) return rc;
  if (!IN_PLACE(sbuf) && (rc = check_buf(&x, "send", sbuf, scount, stype, &st))) return rc;
  if ((rc = check_buf(&x, "receive", rbuf, rcount, rtype, &rt))) return rc;
  size_t n = (size_t)x.v->comm->rsize;
  if ((rc = check_alias(&x, sbuf, (size_t)scount * n, st, rbuf, (size_t)rcount * n, rt))) return rc;
  skn_coll_args a = {.sbuf = sbuf, .scount = (size_t)(scount > 0 ? scount : 0), .st = st, .rbuf = rbuf,
                     .rcount = (size_t)rcount, .rt = rt};
  return dispatch(&x, OPS(&x)->alltoall, &a, req, NULL);
}

static int impl_Alltoall(skn_rank *me, const char *fn, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                         int rcount, MPI_Datatype rtype, MPI_Comm comm, skn_comm_view *v) {
  return alltoall_common(me, v, fn, sbuf, scount, stype, rbuf, rcount, rtype, comm, NULL);
}

static int impl_Ialltoall(skn_rank *me, const char *fn, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                          int rcount, MPI_Datatype rtype, MPI_Comm comm, skn_comm_view *v, MPI_Request *req) {
  return alltoall_common(me, v, fn, sbuf, scount, stype, rbuf, rcount, rtype, comm, req);
}

static int alltoallv_common(skn_rank *me, skn_comm_view *v, const char *fn, const void *sbuf, const int scounts[],
                            const int sdispls[], MPI_Datatype stype, void *rbuf, const int rcounts[],
                            const int rdispls[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req) {
  coll_ctx x = {me, v, fn, comm};
  const skn_dtype *st = NULL, *rt = NULL;
  int rc;
  if ((rc = no_in_place_inter(&x, sbuf))) return rc;
  if (!IN_PLACE(sbuf) && ((rc = check_counts(&x, "sendcounts", scounts, sdispls)) ||
                          (rc = check_buf(&x, "send", sbuf, 0, stype, &st))))
    return rc;
  if ((rc = check_counts(&x, "recvcounts", rcounts, rdispls)) || (rc = check_buf(&x, "receive", rbuf, 0, rtype, &rt)) ||
      (rc = check_same(&x, sbuf, rbuf)))
    return rc;
  skn_coll_args a = {.sbuf = sbuf, .st = st, .scounts = scounts, .sdispls = sdispls, .rbuf = rbuf, .rt = rt,
                     .rcounts = rcounts, .rdispls = rdispls};
  return dispatch(&x, OPS(&x)->alltoall, &a, req, NULL);
}

static int impl_Alltoallv(skn_rank *me, const char *fn, const void *sbuf, const int scounts[], const int sdispls[],
                          MPI_Datatype stype, void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype,
                          MPI_Comm comm, skn_comm_view *v) {
  return alltoallv_common(me, v, fn, sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm, NULL);
}

static int impl_Ialltoallv(skn_rank *me, const char *fn, const void *sbuf, const int scounts[], const int sdispls[],
                           MPI_Datatype stype, void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype,
                           MPI_Comm comm, skn_comm_view *v, MPI_Request *req) {
  return alltoallv_common(me, v, fn, sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm, req);
}

static int alltoallw_common(skn_rank *me, skn_comm_view *v, const char *fn, const void *sbuf, const int scounts[],
                            const int sdispls[], const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                            const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm, MPI_Request *req) {
  coll_ctx x = {me, v, fn, comm};
  int rc;
  if ((rc = no_in_place_inter(&x, sbuf))) return rc;
  int n = x.v->comm->rsize;
  /* one block holds both type arrays; the task frees it when done */
  const skn_dtype **types = calloc(2 * (size_t)n, sizeof *types);
  if (!types) return skn_api_error(x.me, comm, MPI_ERR_NO_MEM, x.fn, "out of memory");
  const skn_dtype **sts = types, **rts = types + n;
  if (!IN_PLACE(sbuf)) rc = check_counts(&x, "sendcounts", scounts, sdispls);
  if (!rc) rc = check_counts(&x, "recvcounts", rcounts, rdispls);
  if (!rc) rc = check_same(&x, sbuf, rbuf);
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
  return dispatch(&x, OPS(&x)->alltoall, &a, req, types);
}

static int impl_Alltoallw(skn_rank *me, const char *fn, const void *sbuf, const int scounts[], const int sdispls[],
                          const MPI_Datatype stypes[], void *rbuf, const int rcounts[], const int rdispls[],
                          const MPI_Datatype rtypes[], MPI_Comm comm, skn_comm_view *v) {
  return alltoallw_common(me, v, fn, sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm,
                          NULL);
}

static int impl_Ialltoallw(skn_rank *me, const char *fn, const void *sbuf, const int scounts[], const int sdispls[],
                           const MPI_Datatype stypes[], void *rbuf, const int rcounts[], const int rdispls[],
                           const MPI_Datatype rtypes[], MPI_Comm comm, skn_comm_view *v, MPI_Request *req) {
  return alltoallw_common(me, v, fn, sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm,
                          req);
}

/* ------------------------------------------------------------------ operations */

static int op_lookup(coll_ctx *x, MPI_Op op, MPI_Datatype dt, const skn_dtype *t, skn_coll_args *a) {
  skn_api_rank *api = skn_api_of(x->me);
  unsigned idx = (unsigned)op & 0xffffffu;
  if (((unsigned)op >> 24) != SKN_KIND_OP || idx == 0)
    return skn_api_error(x->me, x->comm, MPI_ERR_OP, x->fn, "op=%#x", (unsigned)op);
  a->dt_handle = dt;
  a->st = a->rt = t;
  if (idx < SKN_OP_PREDEFINED_COUNT) {
    unsigned ti = (unsigned)dt & 0xffffffu;
    const skn_dtype *f90 = skn_dt_f90_base(t); /* predefined too (MPI-3.1 17.1.9) */
    if (f90) ti = (unsigned)(f90 - skn_dt_predefined);
    bool predefined_type = f90 || (((unsigned)dt >> 24) == SKN_KIND_DATATYPE && ti > 0 && ti < SKN_DT_PREDEFINED_COUNT);
    if (!predefined_type || !skn_op_defined((int)idx, (int)ti))
      return skn_api_error(x->me, x->comm, MPI_ERR_OP, x->fn, "op %u is not defined for datatype %s", idx,
                           predefined_type ? skn_dt_predefined[ti].name : "(derived)");
    a->op = (int)idx;
    if (f90) a->dt_handle = SKN_DT((int)ti); /* what the core applies the operation to */
    return MPI_SUCCESS;
  }
  idx -= SKN_OP_PREDEFINED_COUNT;
  if (idx >= (unsigned)api->nops || !api->ops[idx].fn)
    return skn_api_error(x->me, x->comm, MPI_ERR_OP, x->fn, "op=%#x is not a valid operation", (unsigned)op);
  a->user_fn = (void (*)(void *, void *, int *, int *))api->ops[idx].fn;
  a->noncommute = !api->ops[idx].commute;
  return MPI_SUCCESS;
}

static int reduce_common(skn_rank *me, skn_comm_view *v, const char *fn, const void *sbuf, void *rbuf, int count,
                         MPI_Datatype dt, MPI_Op op, int root, bool all, MPI_Comm comm, MPI_Request *req) {
  coll_ctx x = {me, v, fn, comm};
  const skn_dtype *t;
  int rc;
  if ((rc = no_in_place_inter(&x, sbuf))) return rc;
  bool inter = is_inter(&x);
  bool is_root = all || (inter ? root == MPI_ROOT : x.v->rank == root);
  bool sends = all || !inter || root >= 0;
  if (IN_PLACE(sbuf) && !is_root)
    return skn_api_error(x.me, comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is for the root only");
  if (!sends && !is_root) { /* MPI_PROC_NULL in the root's group: only takes part */
    skn_coll_args a = {.root = root};
    return dispatch(&x, OPS(&x)->reduce, &a, req, NULL);
  }
  if (sends && (rc = check_buf(&x, "send", IN_PLACE(sbuf) ? rbuf : sbuf, count, dt, &t))) return rc;
  if (is_root && (rc = check_buf(&x, "receive", rbuf, count, dt, &t))) return rc;
  if (sends && is_root && (rc = check_alias(&x, sbuf, (size_t)count, t, rbuf, (size_t)count, t))) return rc;
  skn_coll_args a = {.sbuf = sbuf, .rbuf = rbuf, .scount = (size_t)count, .rcount = (size_t)count, .root = root};
  if ((rc = op_lookup(&x, op, dt, t, &a))) return rc;
  return dispatch(&x, all ? OPS(&x)->allreduce : OPS(&x)->reduce, &a, req, NULL);
}

static int impl_Reduce(skn_rank *me, const char *fn, const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                       MPI_Op op, int root, MPI_Comm comm, skn_comm_view *v) {
  return reduce_common(me, v, fn, sbuf, rbuf, count, dt, op, root, false, comm, NULL);
}

static int impl_Ireduce(skn_rank *me, const char *fn, const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                        MPI_Op op, int root, MPI_Comm comm, skn_comm_view *v, MPI_Request *req) {
  return reduce_common(me, v, fn, sbuf, rbuf, count, dt, op, root, false, comm, req);
}

static int impl_Allreduce(skn_rank *me, const char *fn, const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                          MPI_Op op, MPI_Comm comm, skn_comm_view *v) {
  return reduce_common(me, v, fn, sbuf, rbuf, count, dt, op, 0, true, comm, NULL);
}

static int impl_Iallreduce(skn_rank *me, const char *fn, const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                           MPI_Op op, MPI_Comm comm, skn_comm_view *v, MPI_Request *req) {
  return reduce_common(me, v, fn, sbuf, rbuf, count, dt, op, 0, true, comm, req);
}

static int reduce_scatter_common(skn_rank *me, skn_comm_view *v, const char *fn, const void *sbuf, void *rbuf,
                                 int rcount, const int *rcounts, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                                 MPI_Request *req) {
  coll_ctx x = {me, v, fn, comm};
  const skn_dtype *t;
  int rc;
  if ((rc = no_in_place_inter(&x, sbuf))) return rc;
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
  if ((rc = check_alias(&x, sbuf, (size_t)total, t, rbuf, (size_t)(rcounts ? rcounts[x.v->rank] : rcount), t)))
    return rc;
  skn_coll_args a = {.sbuf = sbuf, .rbuf = rbuf, .scount = (size_t)total, .rcount = (size_t)(rcount > 0 ? rcount : 0),
                     .rcounts = rcounts};
  if ((rc = op_lookup(&x, op, dt, t, &a))) return rc;
  return dispatch(&x, OPS(&x)->reduce_scatter, &a, req, NULL);
}

static int impl_Reduce_scatter_block(skn_rank *me, const char *fn, const void *sbuf, void *rbuf, int rcount,
                                     MPI_Datatype dt, MPI_Op op, MPI_Comm comm, skn_comm_view *v) {
  return reduce_scatter_common(me, v, fn, sbuf, rbuf, rcount, NULL, dt, op, comm, NULL);
}

static int impl_Ireduce_scatter_block(skn_rank *me, const char *fn, const void *sbuf, void *rbuf, int rcount,
                                      MPI_Datatype dt, MPI_Op op, MPI_Comm comm, skn_comm_view *v, MPI_Request *req) {
  return reduce_scatter_common(me, v, fn, sbuf, rbuf, rcount, NULL, dt, op, comm, req);
}

static int reduce_scatter_v(skn_rank *me, skn_comm_view *v, const char *fn, const void *sbuf, void *rbuf,
                            const int rcounts[], MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *req) {
  if (!rcounts) return skn_api_error(me, comm, MPI_ERR_ARG, fn, "recvcounts=NULL");
  return reduce_scatter_common(me, v, fn, sbuf, rbuf, 0, rcounts, dt, op, comm, req);
}

static int impl_Reduce_scatter(skn_rank *me, const char *fn, const void *sbuf, void *rbuf, const int rcounts[],
                               MPI_Datatype dt, MPI_Op op, MPI_Comm comm, skn_comm_view *v) {
  return reduce_scatter_v(me, v, fn, sbuf, rbuf, rcounts, dt, op, comm, NULL);
}

static int impl_Ireduce_scatter(skn_rank *me, const char *fn, const void *sbuf, void *rbuf, const int rcounts[],
                                MPI_Datatype dt, MPI_Op op, MPI_Comm comm, skn_comm_view *v, MPI_Request *req) {
  return reduce_scatter_v(me, v, fn, sbuf, rbuf, rcounts, dt, op, comm, req);
}

static int scan_common(skn_rank *me, skn_comm_view *v, const char *fn, const void *sbuf, void *rbuf, int count,
                       MPI_Datatype dt, MPI_Op op, bool exclusive, MPI_Comm comm, MPI_Request *req) {
  coll_ctx x = {me, v, fn, comm};
  const skn_dtype *t;
  int rc;
  if ((rc = skn_api_intra_only(x.me, x.v, comm, fn))) return rc;
  if ((rc = check_buf(&x, "send", IN_PLACE(sbuf) ? rbuf : sbuf, count, dt, &t))) return rc;
  if ((rc = check_alias(&x, sbuf, (size_t)count, t, rbuf, (size_t)count, t))) return rc;
  skn_coll_args a = {.sbuf = sbuf, .rbuf = rbuf, .scount = (size_t)count, .rcount = (size_t)count};
  if ((rc = op_lookup(&x, op, dt, t, &a))) return rc;
  return dispatch(&x, exclusive ? OPS(&x)->exscan : OPS(&x)->scan, &a, req, NULL);
}

static int impl_Scan(skn_rank *me, const char *fn, const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                     MPI_Comm comm, skn_comm_view *v) {
  return scan_common(me, v, fn, sbuf, rbuf, count, dt, op, false, comm, NULL);
}

static int impl_Iscan(skn_rank *me, const char *fn, const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                      MPI_Comm comm, skn_comm_view *v, MPI_Request *req) {
  return scan_common(me, v, fn, sbuf, rbuf, count, dt, op, false, comm, req);
}

static int impl_Exscan(skn_rank *me, const char *fn, const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                       MPI_Op op, MPI_Comm comm, skn_comm_view *v) {
  return scan_common(me, v, fn, sbuf, rbuf, count, dt, op, true, comm, NULL);
}

static int impl_Iexscan(skn_rank *me, const char *fn, const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                        MPI_Op op, MPI_Comm comm, skn_comm_view *v, MPI_Request *req) {
  return scan_common(me, v, fn, sbuf, rbuf, count, dt, op, true, comm, req);
}

/* Not collective and associated with no object: errors go to MPI_COMM_SELF (SKN_API_NOOBJ). */
static int impl_Reduce_local(skn_rank *me, const char *fn, const void *inbuf, void *inoutbuf, int count,
                             MPI_Datatype dt, MPI_Op op) {
  coll_ctx x = {me, skn_api_comm(me, SKN_API_NOOBJ), fn, SKN_API_NOOBJ};
  const skn_dtype *t;
  int rc;
  if ((rc = check_buf(&x, "in", inbuf, count, dt, &t)) || (rc = check_buf(&x, "inout", inoutbuf, count, dt, &t)))
    return rc;
  skn_coll_args a = {0};
  if ((rc = op_lookup(&x, op, dt, t, &a))) return rc;
  if (a.user_fn) {
    int len = count, h = dt;
    a.user_fn((void *)(uintptr_t)inbuf, inoutbuf, &len, &h);
  } else {
    skn_op_apply(a.op, (int)((unsigned)a.dt_handle & 0xffffffu), inbuf, inoutbuf, (size_t)count);
  }
  return MPI_SUCCESS;
}

static int impl_Op_create(skn_rank *me, const char *fn, MPI_User_function *user_fn, int commute, MPI_Op *op) {
  skn_api_rank *api = skn_api_of(me);
  if (!user_fn) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "user_fn=NULL");
  skn_rank_lock(me);
  int idx = api->nops;
  for (int i = 0; i < api->nops; i++)
    if (!api->ops[i].fn) {
      idx = i;
      break;
    }
  if (idx == api->nops) {
    skn_user_op *n = realloc(api->ops, sizeof *n * (size_t)(api->nops + 1));
    if (!n) {
      skn_rank_unlock(me);
      return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    api->ops = n;
    api->nops++;
  }
  api->ops[idx] = (skn_user_op){user_fn, commute != 0};
  skn_rank_unlock(me);
  *op = SKN_HANDLE(SKN_KIND_OP, SKN_OP_PREDEFINED_COUNT + idx);
  return MPI_SUCCESS;
}

static skn_user_op *user_op(skn_rank *me, MPI_Op op) {
  skn_api_rank *api = skn_api_of(me);
  unsigned idx = (unsigned)op & 0xffffffu;
  if (((unsigned)op >> 24) != SKN_KIND_OP || idx < SKN_OP_PREDEFINED_COUNT) return NULL;
  idx -= SKN_OP_PREDEFINED_COUNT;
  return idx < (unsigned)api->nops && api->ops[idx].fn ? &api->ops[idx] : NULL;
}

static int impl_Op_free(skn_rank *me, const char *fn, MPI_Op *op) {
  skn_user_op *u = user_op(me, *op);
  if (!u) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_OP, fn, "not a user-defined operation");
  u->fn = NULL;
  *op = MPI_OP_NULL;
  return MPI_SUCCESS;
}

static int impl_Op_commutative(skn_rank *me, const char *fn, MPI_Op op, int *commute) {
  unsigned idx = (unsigned)op & 0xffffffu;
  if (((unsigned)op >> 24) == SKN_KIND_OP && idx > 0 && idx < SKN_OP_PREDEFINED_COUNT) {
    *commute = 1;
    return MPI_SUCCESS;
  }
  skn_user_op *u = user_op(me, op);
  if (!u) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_OP, fn, "op=%#x", (unsigned)op);
  *commute = u->commute;
  return MPI_SUCCESS;
}

#include "entries_coll.h"
