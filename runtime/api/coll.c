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

static int check_root(coll_ctx *x, int root) {
  if (root < 0 || root >= x->v->comm->size)
    return skn_api_error(x->me, x->comm, MPI_ERR_ROOT, x->fn, "root=%d (communicator size %d)", root,
                         x->v->comm->size);
  return MPI_SUCCESS;
}

static int check_counts(coll_ctx *x, const char *what, const int *counts, const int *displs) {
  if (!counts || !displs) return skn_api_error(x->me, x->comm, MPI_ERR_ARG, x->fn, "%s counts or displs NULL", what);
  for (int i = 0; i < x->v->comm->size; i++)
    if (counts[i] < 0)
      return skn_api_error(x->me, x->comm, MPI_ERR_COUNT, x->fn, "%s[%d]=%d", what, i, counts[i]);
  return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ data movement */

int PMPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm) {
  coll_ctx x;
  const skn_dtype *t;
  int rc;
  if ((rc = begin(&x, "MPI_Bcast", comm)) || (rc = check_buf(&x, "", buf, count, dt, &t)) || (rc = check_root(&x, root)))
    return rc;
  skn_coll_args a = {.rbuf = buf, .rcount = (size_t)count, .rt = t, .root = root};
  enter(&x);
  skn_coll_bcast(x.v->comm, x.v->rank, &a);
  leave(&x);
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Bcast);

static int gather_common(const char *fn, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                         int rcount, const int *rcounts, const int *displs, MPI_Datatype rtype, int root,
                         MPI_Comm comm) {
  coll_ctx x;
  const skn_dtype *st = NULL, *rt = NULL;
  int rc;
  if ((rc = begin(&x, fn, comm)) || (rc = check_root(&x, root))) return rc;
  bool is_root = x.v->rank == root;
  if (IN_PLACE(sbuf) && !is_root)
    return skn_api_error(x.me, comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is for the root only");
  if (!IN_PLACE(sbuf) && (rc = check_buf(&x, "send", sbuf, scount, stype, &st))) return rc;
  if (is_root) {
    if (rcounts && (rc = check_counts(&x, "recvcounts", rcounts, displs))) return rc;
    if ((rc = check_buf(&x, "receive", rbuf, rcounts ? 0 : rcount, rtype, &rt))) return rc;
  }
  skn_coll_args a = {.sbuf = sbuf, .scount = (size_t)(scount > 0 ? scount : 0), .st = st, .rbuf = rbuf,
                     .rcount = (size_t)(rcount > 0 ? rcount : 0), .rt = rt, .rcounts = rcounts, .rdispls = displs,
                     .root = root};
  enter(&x);
  skn_coll_gather(x.v->comm, x.v->rank, &a);
  leave(&x);
  return MPI_SUCCESS;
}

int PMPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                int root, MPI_Comm comm) {
  return gather_common("MPI_Gather", sbuf, scount, stype, rbuf, rcount, NULL, NULL, rtype, root, comm);
}
SKN_WEAK_ALIAS(Gather);

int PMPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                 const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm) {
  return gather_common("MPI_Gatherv", sbuf, scount, stype, rbuf, 0, rcounts, displs, rtype, root, comm);
}
SKN_WEAK_ALIAS(Gatherv);

static int scatter_common(const char *fn, const void *sbuf, int scount, const int *scounts, const int *displs,
                          MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm) {
  coll_ctx x;
  const skn_dtype *st = NULL, *rt = NULL;
  int rc;
  if ((rc = begin(&x, fn, comm)) || (rc = check_root(&x, root))) return rc;
  bool is_root = x.v->rank == root;
  if (IN_PLACE(rbuf) && !is_root)
    return skn_api_error(x.me, comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is for the root only");
  if (is_root) {
    if (scounts && (rc = check_counts(&x, "sendcounts", scounts, displs))) return rc;
    if ((rc = check_buf(&x, "send", sbuf, scounts ? 0 : scount, stype, &st))) return rc;
  }
  if (!IN_PLACE(rbuf) && (rc = check_buf(&x, "receive", rbuf, rcount, rtype, &rt))) return rc;
  skn_coll_args a = {.sbuf = sbuf, .scount = (size_t)(scount > 0 ? scount : 0), .st = st, .scounts = scounts,
                     .sdispls = displs, .rbuf = rbuf, .rcount = (size_t)(rcount > 0 ? rcount : 0), .rt = rt,
                     .root = root};
  enter(&x);
  skn_coll_scatter(x.v->comm, x.v->rank, &a);
  leave(&x);
  return MPI_SUCCESS;
}

int PMPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                 int root, MPI_Comm comm) {
  return scatter_common("MPI_Scatter", sbuf, scount, NULL, NULL, stype, rbuf, rcount, rtype, root, comm);
}
SKN_WEAK_ALIAS(Scatter);

int PMPI_Scatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype, void *rbuf,
                  int rcount, MPI_Datatype rtype, int root, MPI_Comm comm) {
  return scatter_common("MPI_Scatterv", sbuf, 0, scounts, displs, stype, rbuf, rcount, rtype, root, comm);
}
SKN_WEAK_ALIAS(Scatterv);

static int allgather_common(const char *fn, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                            int rcount, const int *rcounts, const int *displs, MPI_Datatype rtype, MPI_Comm comm) {
  coll_ctx x;
  const skn_dtype *st = NULL, *rt = NULL;
  int rc;
  if ((rc = begin(&x, fn, comm))) return rc;
  if (!IN_PLACE(sbuf) && (rc = check_buf(&x, "send", sbuf, scount, stype, &st))) return rc;
  if (rcounts && (rc = check_counts(&x, "recvcounts", rcounts, displs))) return rc;
  if ((rc = check_buf(&x, "receive", rbuf, rcounts ? 0 : rcount, rtype, &rt))) return rc;
  skn_coll_args a = {.sbuf = sbuf, .scount = (size_t)(scount > 0 ? scount : 0), .st = st, .rbuf = rbuf,
                     .rcount = (size_t)(rcount > 0 ? rcount : 0), .rt = rt, .rcounts = rcounts, .rdispls = displs};
  enter(&x);
  skn_coll_allgather(x.v->comm, x.v->rank, &a);
  leave(&x);
  return MPI_SUCCESS;
}

int PMPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                   MPI_Comm comm) {
  return allgather_common("MPI_Allgather", sbuf, scount, stype, rbuf, rcount, NULL, NULL, rtype, comm);
}
SKN_WEAK_ALIAS(Allgather);

int PMPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                    const int displs[], MPI_Datatype rtype, MPI_Comm comm) {
  return allgather_common("MPI_Allgatherv", sbuf, scount, stype, rbuf, 0, rcounts, displs, rtype, comm);
}
SKN_WEAK_ALIAS(Allgatherv);

int PMPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                  MPI_Comm comm) {
  coll_ctx x;
  const skn_dtype *st = NULL, *rt = NULL;
  int rc;
  if ((rc = begin(&x, "MPI_Alltoall", comm))) return rc;
  if (!IN_PLACE(sbuf) && (rc = check_buf(&x, "send", sbuf, scount, stype, &st))) return rc;
  if ((rc = check_buf(&x, "receive", rbuf, rcount, rtype, &rt))) return rc;
  skn_coll_args a = {.sbuf = sbuf, .scount = (size_t)(scount > 0 ? scount : 0), .st = st, .rbuf = rbuf,
                     .rcount = (size_t)rcount, .rt = rt};
  enter(&x);
  skn_coll_alltoall(x.v->comm, x.v->rank, &a);
  leave(&x);
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Alltoall);

int PMPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void *rbuf,
                   const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm) {
  coll_ctx x;
  const skn_dtype *st = NULL, *rt = NULL;
  int rc;
  if ((rc = begin(&x, "MPI_Alltoallv", comm))) return rc;
  if (!IN_PLACE(sbuf) && ((rc = check_counts(&x, "sendcounts", scounts, sdispls)) ||
                          (rc = check_buf(&x, "send", sbuf, 0, stype, &st))))
    return rc;
  if ((rc = check_counts(&x, "recvcounts", rcounts, rdispls)) || (rc = check_buf(&x, "receive", rbuf, 0, rtype, &rt)))
    return rc;
  skn_coll_args a = {.sbuf = sbuf, .st = st, .scounts = scounts, .sdispls = sdispls, .rbuf = rbuf, .rt = rt,
                     .rcounts = rcounts, .rdispls = rdispls};
  enter(&x);
  skn_coll_alltoall(x.v->comm, x.v->rank, &a);
  leave(&x);
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Alltoallv);

int PMPI_Alltoallw(const void *sbuf, const int scounts[], const int sdispls[], const MPI_Datatype stypes[],
                   void *rbuf, const int rcounts[], const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm) {
  coll_ctx x;
  int rc;
  if ((rc = begin(&x, "MPI_Alltoallw", comm))) return rc;
  int n = x.v->comm->size;
  const skn_dtype **sts = calloc((size_t)n, sizeof *sts), **rts = calloc((size_t)n, sizeof *rts);
  if (!sts || !rts) {
    free(sts);
    free(rts);
    return skn_api_error(x.me, comm, MPI_ERR_NO_MEM, x.fn, "out of memory");
  }
  if (!IN_PLACE(sbuf)) rc = check_counts(&x, "sendcounts", scounts, sdispls);
  if (!rc) rc = check_counts(&x, "recvcounts", rcounts, rdispls);
  for (int i = 0; i < n && !rc; i++) {
    if (!IN_PLACE(sbuf)) rc = check_buf(&x, "send", sbuf, 0, stypes[i], &sts[i]);
    if (!rc) rc = check_buf(&x, "receive", rbuf, 0, rtypes[i], &rts[i]);
  }
  if (!rc) {
    skn_coll_args a = {.sbuf = sbuf, .scounts = scounts, .sdispls = sdispls, .sts = IN_PLACE(sbuf) ? NULL : sts,
                       .st = IN_PLACE(sbuf) ? NULL : sts[0], .rbuf = rbuf, .rcounts = rcounts, .rdispls = rdispls,
                       .rts = rts, .rt = rts[0]};
    enter(&x);
    skn_coll_alltoall(x.v->comm, x.v->rank, &a);
    leave(&x);
  }
  free(sts);
  free(rts);
  return rc;
}
SKN_WEAK_ALIAS(Alltoallw);

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
  return MPI_SUCCESS;
}

static int nomem(coll_ctx *x, skn_status st) {
  return st == SKN_OK ? MPI_SUCCESS : skn_api_error(x->me, x->comm, MPI_ERR_NO_MEM, x->fn, "out of memory");
}

static int reduce_common(const char *fn, const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                         int root, bool all, MPI_Comm comm) {
  coll_ctx x;
  const skn_dtype *t;
  int rc;
  if ((rc = begin(&x, fn, comm))) return rc;
  if (!all && (rc = check_root(&x, root))) return rc;
  bool is_root = all || x.v->rank == root;
  if (IN_PLACE(sbuf) && !is_root)
    return skn_api_error(x.me, comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is for the root only");
  if ((rc = check_buf(&x, "send", IN_PLACE(sbuf) ? rbuf : sbuf, count, dt, &t))) return rc;
  if (is_root && (rc = check_buf(&x, "receive", rbuf, count, dt, &t))) return rc;
  skn_coll_args a = {.sbuf = sbuf, .rbuf = rbuf, .scount = (size_t)count, .rcount = (size_t)count, .root = root};
  if ((rc = op_lookup(&x, op, dt, t, &a))) return rc;
  enter(&x);
  skn_status st = skn_coll_reduce(x.v->comm, x.v->rank, &a, all);
  leave(&x);
  return nomem(&x, st);
}

int PMPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm) {
  return reduce_common("MPI_Reduce", sbuf, rbuf, count, dt, op, root, false, comm);
}
SKN_WEAK_ALIAS(Reduce);

int PMPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
  return reduce_common("MPI_Allreduce", sbuf, rbuf, count, dt, op, 0, true, comm);
}
SKN_WEAK_ALIAS(Allreduce);

static int reduce_scatter_common(const char *fn, const void *sbuf, void *rbuf, int rcount, const int *rcounts,
                                 MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
  coll_ctx x;
  const skn_dtype *t;
  int rc;
  if ((rc = begin(&x, fn, comm))) return rc;
  int n = x.v->comm->size;
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
  enter(&x);
  skn_status st = skn_coll_reduce_scatter(x.v->comm, x.v->rank, &a);
  leave(&x);
  return nomem(&x, st);
}

int PMPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
  return reduce_scatter_common("MPI_Reduce_scatter_block", sbuf, rbuf, rcount, NULL, dt, op, comm);
}
SKN_WEAK_ALIAS(Reduce_scatter_block);

int PMPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype dt, MPI_Op op,
                        MPI_Comm comm) {
  if (!rcounts) {
    skn_rank *me = skn_api_self("MPI_Reduce_scatter");
    return skn_api_error(me, comm, MPI_ERR_ARG, "MPI_Reduce_scatter", "recvcounts=NULL");
  }
  return reduce_scatter_common("MPI_Reduce_scatter", sbuf, rbuf, 0, rcounts, dt, op, comm);
}
SKN_WEAK_ALIAS(Reduce_scatter);

static int scan_common(const char *fn, const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                       bool exclusive, MPI_Comm comm) {
  coll_ctx x;
  const skn_dtype *t;
  int rc;
  if ((rc = begin(&x, fn, comm))) return rc;
  if ((rc = check_buf(&x, "send", IN_PLACE(sbuf) ? rbuf : sbuf, count, dt, &t))) return rc;
  skn_coll_args a = {.sbuf = sbuf, .rbuf = rbuf, .scount = (size_t)count, .rcount = (size_t)count};
  if ((rc = op_lookup(&x, op, dt, t, &a))) return rc;
  enter(&x);
  skn_status st = skn_coll_scan(x.v->comm, x.v->rank, &a, exclusive);
  leave(&x);
  return nomem(&x, st);
}

int PMPI_Scan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
  return scan_common("MPI_Scan", sbuf, rbuf, count, dt, op, false, comm);
}
SKN_WEAK_ALIAS(Scan);

int PMPI_Exscan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
  return scan_common("MPI_Exscan", sbuf, rbuf, count, dt, op, true, comm);
}
SKN_WEAK_ALIAS(Exscan);

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
