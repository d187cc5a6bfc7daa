/* Virtual topologies (Cartesian, graph, distributed graph) and neighbourhood collectives.
 *
 * A topology is shared by the members of its communicator (skn_comm.topo) and immutable:
 * the member that creates the communicator builds it before handing the communicator to
 * the others, so every later query reads it without locks. It counts the views that use
 * it (objects.h); MPI_Comm_dup adds the new views, MPI_Comm_free drops one.
 *
 * Neighbourhood collectives: this file turns the topology into the caller's edges
 * (skn_nbrs: which out-block of which member feeds each in-block, and where each
 * out-block goes) and checks the arguments; the data movement is the core's
 * (core/coll_neighbor.c), through the communicator's collective table, blocking or queued
 * on the nonblocking-collective engine. Which out-block of the source feeds which in-block
 * is precomputed once per topology (skn_topo.in_match; k-th edge j->i matches the k-th
 * occurrence of j among i's sources), or computed from the coordinates for Cartesian
 * topologies. */
#include <stdlib.h>
#include <string.h>

#include "objects.h"

/* ------------------------------------------------------------------ topology objects */

static void topo_free(skn_topo *t) {
  if (!t) return;
  free(t->dims);
  free(t->periods);
  free(t->index);
  free(t->edges);
  free(t->in_off);
  free(t->in);
  free(t->out_off);
  free(t->out);
  free(t->inw);
  free(t->outw);
  free(t->in_match);
  free(t->member_weighted);
  free(t);
}

skn_topo *skn_topo_ref(skn_topo *t, int n) {
  atomic_fetch_add(&t->refs, n);
  return t;
}

void skn_topo_release(skn_topo *t) {
  if (atomic_fetch_sub(&t->refs, 1) == 1) topo_free(t);
}

static skn_topo *topo_new(int kind, int size) {
  skn_topo *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->kind = kind;
  t->size = size;
  atomic_init(&t->refs, size);
  return t;
}

static int *int_dup(const int *src, int n) {
  int *p = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
  if (p && n > 0) memcpy(p, src, sizeof(int) * (size_t)n);
  return p;
}

/* ---- Cartesian helpers (row-major: the last dimension varies fastest) */

static void cart_coords_of(const skn_topo *t, int rank, int *coords) {
  for (int d = t->ndims - 1; d >= 0; d--) {
    coords[d] = rank % t->dims[d];
    rank /= t->dims[d];
  }
}

/* The rank displaced by disp along dimension d from `rank`, or MPI_PROC_NULL off a
 * non-periodic edge. */
static int cart_neighbor(const skn_topo *t, int rank, int d, long long disp) {
  int stride = 1;
  for (int e = t->ndims - 1; e > d; e--) stride *= t->dims[e];
  int n = t->dims[d], c = (rank / stride) % n;
  long long x = c + disp;
  if (x < 0 || x >= n) {
    if (!t->periods[d]) return MPI_PROC_NULL;
    x %= n;
    if (x < 0) x += n;
  }
  return rank + (int)(x - c) * stride;
}

/* ---- neighbour matching for graph topologies */

typedef struct edge_rec {
  int src, dst, seq, idx;
} edge_rec;

static int by_pair(const void *x, const void *y) {
  const edge_rec *a = x, *b = y;
  if (a->src != b->src) return a->src < b->src ? -1 : 1;
  if (a->dst != b->dst) return a->dst < b->dst ? -1 : 1;
  return (a->seq > b->seq) - (a->seq < b->seq);
}

/* Fills t->in_match from the in/out lists: edges j->d are paired in list order. */
static bool build_match(skn_topo *t) {
  int n = t->size, nin = t->in_off[n], nout = t->out_off[n];
  t->in_match = malloc(sizeof(int) * (size_t)(nin > 0 ? nin : 1));
  edge_rec *ie = malloc(sizeof *ie * (size_t)(nin > 0 ? nin : 1));
  edge_rec *oe = malloc(sizeof *oe * (size_t)(nout > 0 ? nout : 1));
  if (!t->in_match || !ie || !oe) {
    free(ie);
    free(oe);
    return false;
  }
  for (int d = 0; d < n; d++)
    for (int e = t->in_off[d]; e < t->in_off[d + 1]; e++) ie[e] = (edge_rec){t->in[e], d, e, e};
  for (int j = 0; j < n; j++)
    for (int e = t->out_off[j]; e < t->out_off[j + 1]; e++) oe[e] = (edge_rec){j, t->out[e], e, e - t->out_off[j]};
  qsort(ie, (size_t)nin, sizeof *ie, by_pair);
  qsort(oe, (size_t)nout, sizeof *oe, by_pair);
  for (int e = 0; e < nin; e++) t->in_match[e] = -1;
  for (int i = 0, o = 0; i < nin && o < nout;) {
    if (ie[i].src == oe[o].src && ie[i].dst == oe[o].dst) {
      t->in_match[ie[i].idx] = oe[o].idx;
      i++;
      o++;
    } else if (ie[i].src < oe[o].src || (ie[i].src == oe[o].src && ie[i].dst < oe[o].dst)) {
      i++;
    } else {
      o++;
    }
  }
  free(ie);
  free(oe);
  return true;
}

/* ------------------------------------------------------------------ argument checks */

typedef struct tctx {
  skn_rank *me;
  skn_comm_view *v;
  const skn_topo *t;
  const char *fn;
  MPI_Comm comm;
} tctx;

/* Checks comm; with kind != 0 also that it carries a topology of that kind (kind < 0:
 * any topology). */
/* Fills x from what the generated entry point checked (the calling rank, the communicator's
 * view) and checks the topology: kind 0 any or none, -1 any, else that kind. */
static int begin(tctx *x, skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, int kind) {
  x->fn = fn;
  x->comm = comm;
  x->me = me;
  x->v = v;
  x->t = x->v->comm->topo;
  if (kind != 0 && (!x->t || (kind > 0 && x->t->kind != kind))) {
    static const char *const names[] = {"", "graph ", "Cartesian ", "distributed graph "};
    return skn_api_error(x->me, comm, MPI_ERR_TOPOLOGY, fn, "the communicator has no %stopology",
                         kind > 0 ? names[kind] : "");
  }
  return MPI_SUCCESS;
}

#define ARG_ERR(x, ...) skn_api_error((x)->me, (x)->comm, MPI_ERR_ARG, (x)->fn, __VA_ARGS__)

/* ------------------------------------------------------------------ creating communicators */

/* Leader's part: a communicator of parent members sel[0..n) with topology t (which it
 * takes over). NULL when out of memory (t is freed then). */
static skn_comm *make_comm(skn_comm *c, int n, const int *sel, skn_topo *t) {
  skn_comm *nc = NULL;
  skn_rank **m = malloc(sizeof *m * (size_t)(n > 0 ? n : 1));
  if (m && t) {
    for (int i = 0; i < n; i++) m[i] = c->members[sel ? sel[i] : i];
    nc = skn_comm_create(n, m);
  }
  free(m);
  if (nc)
    nc->topo = t;
  else
    topo_free(t);
  return nc;
}

static int add_view(tctx *x, skn_comm *nc, int my_new, int errh, MPI_Comm *out) {
  return skn_api_comm_add(x->me, x->fn, x->comm, nc, my_new, errh, out);
}

/* Collective over x's communicator: members sel[0..n) (parent ranks, in new order; NULL
 * for 0..n-1) form a new communicator; my_new is the caller's new rank or -1. Several
 * disjoint member lists may be formed at once (Cart_sub). The leader of each list
 * (my_new == 0) passes the topology it built, or NULL if building it failed; on a
 * communicator spanning processes every member of a list passes one (its process's
 * creator keeps its own). */
/* A topology built by each member, for skn_comm_span_split's creator to keep. */
static skn_topo *keep_topo(void *arg, int holders) {
  skn_topo **tp = arg, *t = *tp;
  *tp = NULL;
  if (t) atomic_store(&t->refs, holders);
  return t;
}

/* derive() on a communicator spanning processes: a split (color: the new communicator's
 * first member) where each process's creator keeps the topology it built. */
static int derive_spanning(tctx *x, const int *sel, int my_new, skn_topo *t, MPI_Comm *out) {
  int new_rank = -1, color = my_new >= 0 ? (sel ? sel[0] : 0) : MPI_UNDEFINED;
  skn_api_coll_order(x->me, x->v);
  skn_api_enter(x->me, x->fn, NULL, MPI_UNDEFINED, MPI_UNDEFINED);
  skn_comm *nc = skn_comm_span_split(x->me, x->v->comm, x->v->rank, color, my_new, &new_rank, keep_topo, &t);
  skn_api_leave(x->me);
  if (t) topo_free(t); /* another member's copy was kept */
  if (my_new < 0) {
    *out = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  return add_view(x, nc, my_new, x->v->api->errhandler, out);
}

static int derive(tctx *x, int n, const int *sel, int my_new, skn_topo *t, MPI_Comm *out) {
  skn_comm *c = x->v->comm;
  int rank = x->v->rank, errh = x->v->api->errhandler;
  if (c->x) return derive_spanning(x, sel, my_new, t, out);
  skn_coll_args a = {0};
  if (my_new == 0) a.result = make_comm(c, n, sel, t);
  skn_api_coll_order(x->me, x->v); /* after this rank's pending nonblocking collectives */
  skn_api_enter(x->me, x->fn, NULL, MPI_UNDEFINED, MPI_UNDEFINED);
  skn_coll_publish(c, rank, &a);
  skn_comm *nc = my_new >= 0 ? c->slots[sel ? sel[0] : 0]->result : NULL;
  skn_coll_barrier(x->me, c);
  skn_api_leave(x->me);
  if (my_new < 0) {
    *out = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  return add_view(x, nc, my_new, errh, out);
}

/* ------------------------------------------------------------------ Cartesian */

/* Checks ndims/dims/periods; *prod gets the number of processes they describe. */
static int check_cart(tctx *x, int ndims, const int dims[], const int periods[], bool need_periods, int *prod) {
  if (ndims < 0) return ARG_ERR(x, "ndims=%d", ndims);
  if (ndims > 0 && (!dims || (need_periods && !periods))) return ARG_ERR(x, "dims or periods NULL");
  long long p = 1;
  for (int d = 0; d < ndims; d++) {
    if (dims[d] <= 0)
      return skn_api_error(x->me, x->comm, MPI_ERR_DIMS, x->fn, "dims[%d]=%d (must be positive)", d, dims[d]);
    p *= dims[d];
    if (p > x->v->comm->size)
      return ARG_ERR(x, "the grid has more processes than the communicator (%d)", x->v->comm->size);
  }
  *prod = (int)p;
  return MPI_SUCCESS;
}

static skn_topo *cart_topo(int ndims, const int *dims, const int *periods, int size) {
  skn_topo *t = topo_new(MPI_CART, size);
  if (!t) return NULL;
  t->ndims = ndims;
  t->dims = int_dup(dims, ndims);
  t->periods = malloc(sizeof(int) * (size_t)(ndims > 0 ? ndims : 1));
  if (!t->dims || !t->periods) {
    topo_free(t);
    return NULL;
  }
  for (int d = 0; d < ndims; d++) t->periods[d] = periods[d] != 0;
  return t;
}

static int impl_Cart_create(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, int ndims, const int dims[],
                            const int periods[], int reorder, MPI_Comm *comm_cart) {
  (void)reorder; /* every rank of a process is as close to every other: keep the order */
  tctx x;
  int rc, n = 0;
  if ((rc = begin(&x, me, fn, comm, v, 0)) || (rc = skn_api_intra_only(x.me, x.v, x.comm, x.fn)) ||
      (rc = check_cart(&x, ndims, dims, periods, true, &n)))
    return rc;
  int rank = x.v->rank;
  bool builds = rank == 0 || (x.v->comm->x && rank < n);
  skn_topo *t = builds ? cart_topo(ndims, dims, periods, n) : NULL;
  return derive(&x, n, NULL, rank < n ? rank : -1, t, comm_cart);
}

/* MPI_Dims_create gives MPICH's answers by following MPICH's algorithm (since 3.2, after
 * Traeff and Luebbe, "Specification guideline violations by MPI_Dims_create", EuroMPI'15):
 * primes above the square root of what is left take dimensions of their own; a few
 * shapes have a direct answer; otherwise a pruned search over the divisors, smallest
 * dimension first, keeps the last candidate whose spread is no worse than the best so
 * far. Its answers are not always the smallest spread's smallest sum (590520 in 4 is
 * 38 x 37 x 21 x 20, not 37 x 30 x 28 x 19), and the pruning keeps it fast (the whole
 * table of tests/mpi/topo_dims.c in milliseconds). The quirks that decide ties are kept
 * on purpose: the bound a level prunes with is the best spread when it was entered, and
 * a spread is measured from the smallest dimension tried. */
typedef struct dims_pf {
  int val, cnt;
} dims_pf;

/* Prime factors of n in increasing order; *nall: their number with multiplicity. */
static int dims_factor(int n, dims_pf *f, int *nall) {
  int nf = 0;
  *nall = 0;
  for (int p = 2; (long long)p * p <= n; p += p == 2 ? 1 : 2)
    if (n % p == 0) {
      int c = 0;
      while (n % p == 0) n /= p, c++;
      f[nf++] = (dims_pf){p, c};
      *nall += c;
    }
  if (n > 1) {
    f[nf++] = (dims_pf){n, 1};
    ++*nall;
  }
  return nf;
}

static int int_cmp(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

typedef struct dims_bal {
  int nd;       /* dimensions balanced */
  int *trydims; /* the candidate, filled from the last (smallest) dimension up */
  int *opt;     /* the best so far */
  int bal;      /* its spread */
} dims_bal;

/* Fills dimensions idx..0 with a factorization of n taken from divs (ascending divisors of
 * n). Every bound below is the algorithm's own, including the stale `bal`. */
static bool dims_balance(dims_bal *b, int n, int idx, const int *divs, int ndivs) {
  const int min = b->trydims[b->nd - 1], bal = b->bal;
  if (idx == 0) {
    if (n - min <= bal) {
      memcpy(b->opt + 1, b->trydims + 1, sizeof(int) * (size_t)(b->nd - 1));
      b->opt[0] = n;
      b->bal = n - min;
    }
    return true;
  }
  if (idx == 1) { /* the last two: the pair closest to sqrt(n) */
    int k = 1;
    while (k < ndivs && n / divs[k] >= divs[k]) k++;
    int f = divs[k - 1], q = n / f;
    if (q < f) return true;
    if ((b->nd == 2 ? q - f : q - min) <= bal) {
      memcpy(b->opt + 2, b->trydims + 2, sizeof(int) * (size_t)(b->nd - 2));
      b->opt[0] = q;
      b->opt[1] = f;
      b->bal = q - min;
    }
    return true;
  }
  int *sub = malloc(sizeof(int) * (size_t)ndivs);
  if (!sub) return false;
  bool ok = true;
  for (int k = 0; k < ndivs && ok; k++) {
    int f = divs[k];
    if (idx < b->nd - 1 && f - min > bal) break; /* every later dimension is at least f */
    int q = n / f, nsub = 0, sf;
    if (q % f == 0) sub[nsub++] = sf = f;
    else if (k + 1 < ndivs) sf = divs[k + 1];
    else break;
    if (idx < b->nd - 1 && sf - min > bal) break;
    /* the idx dimensions left are each at least sf: sf^idx must not exceed q */
    long long pw = sf;
    int i = 1;
    while (i < idx && pw * sf <= q) pw *= sf, i++;
    if (i < idx) break;
    b->trydims[idx] = f;
    for (int kk = k + 1; kk < ndivs && (long long)divs[kk] * divs[kk] <= q; kk++)
      if (q % divs[kk] == 0) sub[nsub++] = divs[kk];
    if (nsub) ok = dims_balance(b, q, idx - 1, sub, nsub);
  }
  free(sub);
  return ok;
}

/* Factors R into k dimensions (k >= 2) the way MPICH does; false when out of memory. */
static bool dims_mpich(int R, int k, int *out) {
  dims_pf f[16];
  int nall, nf = dims_factor(R, f, &nall), next = 0;
  /* primes above the square root of what is left (never the smallest); MPICH squares in
   * int, so a prime above 46340 is taken only when its square wraps above R: kept, as it
   * decides answers such as 610181712 in 5 (86477 x 14 x 9 x 8 x 7) */
  for (int j = nf - 1; j > 0 && next < k - 1; j--) {
    if (f[j].cnt != 1 || (int32_t)((uint32_t)f[j].val * (uint32_t)f[j].val) <= R) break;
    out[next++] = f[j].val;
    R /= f[j].val;
    nf--;
    nall--;
  }
  int left = k - next;
  if (nall + next <= k) { /* one prime per dimension, largest first, then 1s */
    int i = next + nall;
    for (int j = 0; j < nf; j++)
      for (int c = 0; c < f[j].cnt; c++) out[--i] = f[j].val;
    for (i = next + nall; i < k; i++) out[i] = 1;
    return true;
  }
  if (left == 1) {
    out[next] = R;
    return true;
  }
  if (nf == 1) { /* a power of one prime, dealt round robin */
    for (int i = next; i < k; i++) out[i] = 1;
    for (int c = 0, i = next; c < f[0].cnt; c++, i = i + 1 < k ? i + 1 : next) out[i] *= f[0].val;
    return true;
  }
  bool even = true; /* every exponent a multiple of the dimensions left: all equal */
  for (int j = 0; j < nf; j++) even = even && f[j].cnt % left == 0;
  if (even) {
    int v = 1;
    for (int j = 0; j < nf; j++)
      for (int c = 0; c < f[j].cnt / left; c++) v *= f[j].val;
    for (int i = next; i < k; i++) out[i] = v;
    return true;
  }
  /* the divisors of R but 1 and R, ascending */
  int ndivs = 1;
  for (int j = 0; j < nf; j++) ndivs *= f[j].cnt + 1;
  int *divs = malloc(sizeof(int) * (size_t)ndivs), *try = malloc(sizeof(int) * (size_t)left);
  if (!divs || !try) {
    free(divs);
    free(try);
    return false;
  }
  int nd = 1;
  divs[0] = 1;
  for (int j = 0; j < nf; j++) {
    int base = nd;
    for (int c = 1, pw = f[j].val; c <= f[j].cnt; c++) {
      for (int i = 0; i < base; i++) divs[nd++] = divs[i] * pw;
      if (c < f[j].cnt) pw *= f[j].val; /* not past the last power: it may not fit an int */
    }
  }
  qsort(divs, (size_t)nd, sizeof *divs, int_cmp);
  /* first guess: one prime per dimension from the largest, each further prime to the
   * last dimension it keeps no larger than the one before it (else the first) */
  int *opt = out + next;
  for (int i = 0; i < left; i++) opt[i] = 1;
  for (int j = nf - 1, i = 0; j >= 0; j--)
    for (int c = 0; c < f[j].cnt; c++) {
      if (i < left) {
        opt[i++] = f[j].val;
        continue;
      }
      int kk = left - 1;
      while (kk > 0 && (long long)opt[kk] * f[j].val > opt[kk - 1]) kk--;
      opt[kk] *= f[j].val;
    }
  dims_bal b = {left, try, opt, out[0] - out[k - 1]};
  try[left - 1] = divs[1];
  bool ok = dims_balance(&b, R, left - 1, divs + 1, nd - 2);
  free(divs);
  free(try);
  return ok;
}

static int impl_Dims_create(skn_rank *me, const char *fn, int nnodes, int ndims, int dims[]) {
  if (ndims < 0) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "ndims=%d", ndims);
  if (nnodes <= 0) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "nnodes=%d", nnodes);
  if (ndims > 0 && !dims) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "dims=NULL");
  long long fixed = 1;
  int nfree = 0;
  for (int d = 0; d < ndims; d++) {
    if (dims[d] < 0) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_DIMS, fn, "dims[%d]=%d", d, dims[d]);
    if (dims[d] == 0)
      nfree++;
    else if ((fixed *= dims[d]) > nnodes)
      break;
  }
  if (nnodes % fixed || (nfree == 0 && fixed != nnodes))
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_DIMS, fn,
                         "nnodes=%d is not a multiple of the product of the given dimensions", nnodes);
  if (nfree == 0) return MPI_SUCCESS;
  int R = (int)(nnodes / fixed);
  int *best = malloc(sizeof(int) * (size_t)nfree);
  if (!best || (nfree == 1 ? (best[0] = R, false) : !dims_mpich(R, nfree, best))) {
    free(best);
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_NO_MEM, fn, "out of memory");
  }
  for (int d = 0, j = 0; d < ndims; d++)
    if (dims[d] == 0) dims[d] = best[j++];
  free(best);
  return MPI_SUCCESS;
}

static int impl_Cart_coords(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, int rank, int maxdims,
                            int coords[]) {
  tctx x;
  int rc;
  if ((rc = begin(&x, me, fn, comm, v, MPI_CART))) return rc;
  if (rank < 0 || rank >= x.v->comm->size)
    return skn_api_error(x.me, comm, MPI_ERR_RANK, x.fn, "rank=%d (communicator size %d)", rank, x.v->comm->size);
  if (maxdims < x.t->ndims) return ARG_ERR(&x, "maxdims=%d (the topology has %d dimensions)", maxdims, x.t->ndims);
  if (x.t->ndims > 0 && !coords) return ARG_ERR(&x, "coords=NULL");
  cart_coords_of(x.t, rank, coords);
  return MPI_SUCCESS;
}

static int impl_Cart_rank(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, const int coords[],
                          int *rank) {
  tctx x;
  int rc;
  if ((rc = begin(&x, me, fn, comm, v, MPI_CART))) return rc;
  if (x.t->ndims > 0 && !coords) return ARG_ERR(&x, "coords=NULL");
  int r = 0;
  for (int d = 0; d < x.t->ndims; d++) {
    int n = x.t->dims[d], c = coords[d];
    if (c < 0 || c >= n) {
      if (!x.t->periods[d])
        return skn_api_error(x.me, comm, MPI_ERR_RANK, x.fn,
                             "coords[%d]=%d is outside the non-periodic dimension of size %d", d, c, n);
      c %= n;
      if (c < 0) c += n;
    }
    r = r * n + c;
  }
  *rank = r;
  return MPI_SUCCESS;
}

static int impl_Cart_shift(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, int direction, int disp,
                           int *rank_source, int *rank_dest) {
  tctx x;
  int rc;
  if ((rc = begin(&x, me, fn, comm, v, MPI_CART))) return rc;
  if (direction < 0 || direction >= x.t->ndims)
    return ARG_ERR(&x, "direction=%d (the topology has %d dimensions)", direction, x.t->ndims);
  int my = x.v->rank;
  *rank_source = cart_neighbor(x.t, my, direction, -(long long)disp);
  *rank_dest = cart_neighbor(x.t, my, direction, disp);
  return MPI_SUCCESS;
}

static int impl_Cart_sub(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, const int remain_dims[],
                         MPI_Comm *newcomm) {
  tctx x;
  int rc;
  if ((rc = begin(&x, me, fn, comm, v, MPI_CART))) return rc;
  const skn_topo *t = x.t;
  if (t->ndims > 0 && !remain_dims) return ARG_ERR(&x, "remain_dims=NULL");
  int n = t->size, nd = t->ndims, my = x.v->rank;
  int *cme = malloc(sizeof(int) * (size_t)(nd + 1)), *cp = malloc(sizeof(int) * (size_t)(nd + 1));
  int *sel = malloc(sizeof(int) * (size_t)n);
  if (!cme || !cp || !sel) {
    free(cme);
    free(cp);
    free(sel);
    return skn_api_error(x.me, comm, MPI_ERR_NO_MEM, x.fn, "out of memory");
  }
  /* my sub-grid: the ranks whose coordinates in the dropped dimensions equal mine, in
   * rank order (which is row-major order over the kept dimensions) */
  cart_coords_of(t, my, cme);
  int m = 0, my_new = -1;
  for (int p = 0; p < n; p++) {
    cart_coords_of(t, p, cp);
    bool same = true;
    for (int d = 0; d < nd && same; d++)
      if (!remain_dims[d] && cp[d] != cme[d]) same = false;
    if (!same) continue;
    if (p == my) my_new = m;
    sel[m++] = p;
  }
  skn_topo *nt = NULL;
  if (my_new == 0 || (x.v->comm->x && my_new >= 0)) {
    int kd = 0;
    for (int d = 0; d < nd; d++)
      if (remain_dims[d]) {
        cme[kd] = t->dims[d];
        cp[kd++] = t->periods[d];
      }
    nt = cart_topo(kd, cme, cp, m);
  }
  rc = derive(&x, m, sel, my_new, nt, newcomm);
  free(cme);
  free(cp);
  free(sel);
  return rc;
}

static int impl_Cart_get(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, int maxdims, int dims[],
                         int periods[], int coords[]) {
  tctx x;
  int rc;
  if ((rc = begin(&x, me, fn, comm, v, MPI_CART))) return rc;
  if (maxdims < 0) return ARG_ERR(&x, "maxdims=%d", maxdims);
  int nd = x.t->ndims < maxdims ? x.t->ndims : maxdims;
  if (nd > 0 && (!dims || !periods || !coords)) return ARG_ERR(&x, "dims, periods or coords NULL");
  int c[nd > 0 ? x.t->ndims : 1];
  if (nd > 0) cart_coords_of(x.t, x.v->rank, c);
  for (int d = 0; d < nd; d++) {
    dims[d] = x.t->dims[d];
    periods[d] = x.t->periods[d];
    coords[d] = c[d];
  }
  return MPI_SUCCESS;
}

static int impl_Cartdim_get(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, int *ndims) {
  tctx x;
  int rc;
  if ((rc = begin(&x, me, fn, comm, v, MPI_CART))) return rc;
  *ndims = x.t->ndims;
  return MPI_SUCCESS;
}

static int impl_Cart_map(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, int ndims, const int dims[],
                         const int periods[], int *newrank) {
  tctx x;
  int rc, n = 0;
  if ((rc = begin(&x, me, fn, comm, v, 0)) || (rc = check_cart(&x, ndims, dims, periods, false, &n))) return rc;
  *newrank = x.v->rank < n ? x.v->rank : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ graphs */

static int check_graph(tctx *x, int nnodes, const int index[], const int edges[]) {
  if (nnodes < 0 || nnodes > x->v->comm->size)
    return ARG_ERR(x, "nnodes=%d (communicator size %d)", nnodes, x->v->comm->size);
  if (nnodes > 0 && !index) return ARG_ERR(x, "index=NULL");
  for (int i = 0; i < nnodes; i++)
    if (index[i] < (i ? index[i - 1] : 0)) return ARG_ERR(x, "index[%d]=%d is not a valid running total", i, index[i]);
  int ne = nnodes > 0 ? index[nnodes - 1] : 0;
  if (ne > 0 && !edges) return ARG_ERR(x, "edges=NULL");
  for (int e = 0; e < ne; e++)
    if (edges[e] < 0 || edges[e] >= nnodes) return ARG_ERR(x, "edges[%d]=%d (nnodes %d)", e, edges[e], nnodes);
  return MPI_SUCCESS;
}

static skn_topo *graph_topo(int nnodes, const int *index, const int *edges) {
  skn_topo *t = topo_new(MPI_GRAPH, nnodes);
  if (!t) return NULL;
  int ne = index[nnodes - 1];
  t->nnodes = nnodes;
  t->index = int_dup(index, nnodes);
  t->edges = int_dup(edges, ne);
  t->in_off = malloc(sizeof(int) * (size_t)(nnodes + 1));
  t->out_off = malloc(sizeof(int) * (size_t)(nnodes + 1));
  t->in = int_dup(edges, ne);
  t->out = int_dup(edges, ne);
  if (!t->index || !t->edges || !t->in_off || !t->out_off || !t->in || !t->out) goto fail;
  t->in_off[0] = t->out_off[0] = 0;
  for (int i = 0; i < nnodes; i++) t->in_off[i + 1] = t->out_off[i + 1] = index[i];
  if (!build_match(t)) goto fail;
  return t;
fail:
  topo_free(t);
  return NULL;
}

static int impl_Graph_create(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, int nnodes,
                             const int index[], const int edges[], int reorder, MPI_Comm *comm_graph) {
  (void)reorder;
  tctx x;
  int rc;
  if ((rc = begin(&x, me, fn, comm, v, 0)) || (rc = skn_api_intra_only(x.me, x.v, x.comm, x.fn)) ||
      (rc = check_graph(&x, nnodes, index, edges)))
    return rc;
  if (nnodes == 0) { /* an empty graph: MPI_COMM_NULL everywhere, nothing to agree on */
    *comm_graph = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  int rank = x.v->rank;
  bool builds = rank == 0 || (x.v->comm->x && rank < nnodes);
  skn_topo *t = builds ? graph_topo(nnodes, index, edges) : NULL;
  return derive(&x, nnodes, NULL, rank < nnodes ? rank : -1, t, comm_graph);
}

static int impl_Graph_get(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, int maxindex, int maxedges,
                          int index[], int edges[]) {
  tctx x;
  int rc;
  if ((rc = begin(&x, me, fn, comm, v, MPI_GRAPH))) return rc;
  if (maxindex < 0 || maxedges < 0) return ARG_ERR(&x, "maxindex=%d maxedges=%d", maxindex, maxedges);
  int ni = x.t->nnodes < maxindex ? x.t->nnodes : maxindex, ne0 = x.t->index[x.t->nnodes - 1];
  int ne = ne0 < maxedges ? ne0 : maxedges;
  if ((ni > 0 && !index) || (ne > 0 && !edges)) return ARG_ERR(&x, "index or edges NULL");
  if (ni > 0) memcpy(index, x.t->index, sizeof(int) * (size_t)ni);
  if (ne > 0) memcpy(edges, x.t->edges, sizeof(int) * (size_t)ne);
  return MPI_SUCCESS;
}

static int impl_Graphdims_get(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, int *nnodes,
                              int *nedges) {
  tctx x;
  int rc;
  if ((rc = begin(&x, me, fn, comm, v, MPI_GRAPH))) return rc;
  *nnodes = x.t->nnodes;
  *nedges = x.t->index[x.t->nnodes - 1];
  return MPI_SUCCESS;
}

static int graph_rank(tctx *x, int rank) {
  if (rank < 0 || rank >= x->t->nnodes)
    return skn_api_error(x->me, x->comm, MPI_ERR_RANK, x->fn, "rank=%d (nnodes %d)", rank, x->t->nnodes);
  return MPI_SUCCESS;
}

static int impl_Graph_neighbors_count(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, int rank,
                                      int *nneighbors) {
  tctx x;
  int rc;
  if ((rc = begin(&x, me, fn, comm, v, MPI_GRAPH)) || (rc = graph_rank(&x, rank))) return rc;
  *nneighbors = x.t->out_off[rank + 1] - x.t->out_off[rank];
  return MPI_SUCCESS;
}

static int impl_Graph_neighbors(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, int rank,
                                int maxneighbors, int neighbors[]) {
  tctx x;
  int rc;
  if ((rc = begin(&x, me, fn, comm, v, MPI_GRAPH)) || (rc = graph_rank(&x, rank))) return rc;
  if (maxneighbors < 0) return ARG_ERR(&x, "maxneighbors=%d", maxneighbors);
  int deg = x.t->out_off[rank + 1] - x.t->out_off[rank], n = deg < maxneighbors ? deg : maxneighbors;
  if (n > 0 && !neighbors) return ARG_ERR(&x, "neighbors=NULL");
  if (n > 0) memcpy(neighbors, x.t->out + x.t->out_off[rank], sizeof(int) * (size_t)n);
  return MPI_SUCCESS;
}

static int impl_Graph_map(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, int nnodes, const int index[],
                          const int edges[], int *newrank) {
  tctx x;
  int rc;
  if ((rc = begin(&x, me, fn, comm, v, 0)) || (rc = check_graph(&x, nnodes, index, edges))) return rc;
  *newrank = x.v->rank < nnodes ? x.v->rank : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ distributed graphs */

const int MPIX_WEIGHT_SENTINELS[2] = {0, 0};

/* A contribution is weighted unless it says MPI_UNWEIGHTED: NULL with no edges and
 * MPI_WEIGHTS_EMPTY are "weighted, no edges" (MPI-3.1 7.5.4; MPICH answers the same).
 * Each member's MPI_Dist_graph_neighbors_count reports what it gave itself. */
static bool has_weights(const int *w) { return w != MPI_UNWEIGHTED; }
static bool readable_weights(const int *w) { return w && w != MPI_UNWEIGHTED && w != MPI_WEIGHTS_EMPTY; }

/* What each member contributes, published through its collective slot (sbuf). */
typedef struct dg_args {
  bool adjacent;
  /* adjacent */
  int indeg, outdeg;
  const int *sources, *sw, *dests, *dw;
  /* general */
  int n;
  const int *srcs, *degrees, *targets, *weights;
} dg_args;

static int check_ranks_list(tctx *x, const char *what, int n, const int *list) {
  if (n > 0 && !list) return ARG_ERR(x, "%s=NULL", what);
  for (int i = 0; i < n; i++)
    if (list[i] < 0 || list[i] >= x->v->comm->size)
      return skn_api_error(x->me, x->comm, MPI_ERR_RANK, x->fn, "%s[%d]=%d (communicator size %d)", what, i, list[i],
                           x->v->comm->size);
  return MPI_SUCCESS;
}

/* Builds the topology from every member's contribution (gs[j]: member j's). */
static skn_topo *dist_topo(int n, const dg_args *const *gs) {
  skn_topo *t = topo_new(MPI_DIST_GRAPH, n);
  if (!t) return NULL;
  bool weighted = false;
  t->member_weighted = calloc((size_t)n, sizeof(bool));
  if (!t->member_weighted) goto fail;
  for (int j = 0; j < n; j++) {
    const dg_args *g = gs[j];
    t->member_weighted[j] = g->adjacent ? has_weights(g->sw) || has_weights(g->dw) : has_weights(g->weights);
    if (t->member_weighted[j]) weighted = true;
  }
  t->weighted = weighted;
  t->in_off = calloc((size_t)n + 1, sizeof(int));
  t->out_off = calloc((size_t)n + 1, sizeof(int));
  if (!t->in_off || !t->out_off) goto fail;
  /* count */
  for (int j = 0; j < n; j++) {
    const dg_args *g = gs[j];
    if (g->adjacent) {
      t->in_off[j + 1] += g->indeg;
      t->out_off[j + 1] += g->outdeg;
    } else {
      for (int i = 0, k = 0; i < g->n; k += g->degrees[i++])
        for (int e = 0; e < g->degrees[i]; e++) {
          t->out_off[g->srcs[i] + 1]++;
          t->in_off[g->targets[k + e] + 1]++;
        }
    }
  }
  for (int j = 0; j < n; j++) {
    t->in_off[j + 1] += t->in_off[j];
    t->out_off[j + 1] += t->out_off[j];
  }
  int nin = t->in_off[n], nout = t->out_off[n];
  t->in = malloc(sizeof(int) * (size_t)(nin ? nin : 1));
  t->out = malloc(sizeof(int) * (size_t)(nout ? nout : 1));
  if (!t->in || !t->out) goto fail;
  if (weighted) {
    t->inw = malloc(sizeof(int) * (size_t)(nin ? nin : 1));
    t->outw = malloc(sizeof(int) * (size_t)(nout ? nout : 1));
    if (!t->inw || !t->outw) goto fail;
  }
  /* fill, in contribution order */
  int *fin = malloc(sizeof(int) * (size_t)n), *fout = malloc(sizeof(int) * (size_t)n);
  if (!fin || !fout) {
    free(fin);
    free(fout);
    goto fail;
  }
  memcpy(fin, t->in_off, sizeof(int) * (size_t)n);
  memcpy(fout, t->out_off, sizeof(int) * (size_t)n);
  for (int j = 0; j < n; j++) {
    const dg_args *g = gs[j];
    if (g->adjacent) {
      for (int i = 0; i < g->indeg; i++) {
        if (weighted) t->inw[fin[j]] = readable_weights(g->sw) ? g->sw[i] : 1;
        t->in[fin[j]++] = g->sources[i];
      }
      for (int i = 0; i < g->outdeg; i++) {
        if (weighted) t->outw[fout[j]] = readable_weights(g->dw) ? g->dw[i] : 1;
        t->out[fout[j]++] = g->dests[i];
      }
    } else {
      for (int i = 0, k = 0; i < g->n; k += g->degrees[i++])
        for (int e = 0; e < g->degrees[i]; e++) {
          int s = g->srcs[i], d = g->targets[k + e];
          int w = weighted && readable_weights(g->weights) ? g->weights[k + e] : 1;
          if (weighted) {
            t->outw[fout[s]] = w;
            t->inw[fin[d]] = w;
          }
          t->out[fout[s]++] = d;
          t->in[fin[d]++] = s;
        }
    }
  }
  free(fin);
  free(fout);
  if (!build_match(t)) goto fail;
  return t;
fail:
  topo_free(t);
  return NULL;
}

/* ---- contributions as ints, for communicators spanning processes:
 *   adjacent: 1, indeg, outdeg, sources[indeg], sw, dests[outdeg], dw
 *   general:  0, n, srcs[n], degrees[n], targets[ne], weights
 * where a weight list is a code (NULL, MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY, list) followed
 * by the values for a list. */
enum { W_NULL, W_UNWEIGHTED, W_EMPTY, W_LIST };

static int dg_put_weights(int *out, int k, const int *w, int n) {
  int code = !w ? W_NULL : w == MPI_UNWEIGHTED ? W_UNWEIGHTED : w == MPI_WEIGHTS_EMPTY ? W_EMPTY : W_LIST;
  if (out) out[k] = code;
  k++;
  for (int i = 0; code == W_LIST && i < n; i++, k++)
    if (out) out[k] = w[i];
  return k;
}

static int dg_put(int *out, int k, const int *v, int n) {
  for (int i = 0; i < n; i++, k++)
    if (out) out[k] = v[i];
  return k;
}

/* Writes g into out (when not NULL); returns the number of ints. */
static int dg_pack(const dg_args *g, int *out) {
  int k = 3;
  if (out) {
    out[0] = g->adjacent;
    out[1] = g->adjacent ? g->indeg : g->n;
    out[2] = g->adjacent ? g->outdeg : 0;
  }
  if (g->adjacent) {
    k = dg_put(out, k, g->sources, g->indeg);
    k = dg_put_weights(out, k, g->sw, g->indeg);
    k = dg_put(out, k, g->dests, g->outdeg);
    return dg_put_weights(out, k, g->dw, g->outdeg);
  }
  int ne = 0;
  for (int i = 0; i < g->n; i++) ne += g->degrees[i];
  k = dg_put(out, k, g->srcs, g->n);
  k = dg_put(out, k, g->degrees, g->n);
  k = dg_put(out, k, g->targets, ne);
  return dg_put_weights(out, k, g->weights, ne);
}

static const int *dg_get_weights(const int *in, int *k, int n) {
  int code = in[(*k)++];
  const int *w = code == W_NULL ? NULL : code == W_UNWEIGHTED ? MPI_UNWEIGHTED : code == W_EMPTY ? MPI_WEIGHTS_EMPTY : in + *k;
  if (code == W_LIST) *k += n;
  return w;
}

static void dg_unpack(const int *in, dg_args *g) {
  int k = 3;
  *g = (dg_args){.adjacent = in[0] != 0};
  if (g->adjacent) {
    g->indeg = in[1];
    g->outdeg = in[2];
    g->sources = in + k;
    k += g->indeg;
    g->sw = dg_get_weights(in, &k, g->indeg);
    g->dests = in + k;
    k += g->outdeg;
    g->dw = dg_get_weights(in, &k, g->outdeg);
    return;
  }
  g->n = in[1];
  g->srcs = in + k;
  g->degrees = in + k + g->n;
  k += 2 * g->n;
  int ne = 0;
  for (int i = 0; i < g->n; i++) ne += g->degrees[i];
  g->targets = in + k;
  k += ne;
  g->weights = dg_get_weights(in, &k, ne);
}

static void *xalloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) skn_fatal("out of memory creating a distributed graph (%zu bytes)", bytes);
  return p;
}

typedef struct dist_build {
  int n;
  const dg_args *const *gs;
} dist_build;

static skn_topo *build_dist(void *arg, int holders) {
  const dist_build *b = arg;
  skn_topo *t = dist_topo(b->n, b->gs);
  if (t) atomic_store(&t->refs, holders);
  return t;
}

/* dist_create on a communicator spanning processes: every member gets every contribution
 * (allgather of the packed ints), each process's creator builds the topology. */
static int dist_create_spanning(tctx *x, const dg_args *mine, MPI_Comm *out) {
  skn_comm *c = x->v->comm;
  int n = c->size, rank = x->v->rank, cnt = dg_pack(mine, NULL), total = 0, new_rank = -1;
  const skn_dtype *int_t = skn_api_dtype(x->me, MPI_INT);
  int *packed = xalloc(sizeof(int) * (size_t)cnt), *counts = xalloc(sizeof(int) * (size_t)n);
  int *displs = xalloc(sizeof(int) * (size_t)n);
  dg_pack(mine, packed);
  skn_api_coll_order(x->me, x->v);
  skn_api_enter(x->me, x->fn, NULL, MPI_UNDEFINED, MPI_UNDEFINED);
  skn_coll_args a = {.sbuf = &cnt, .scount = 1, .st = int_t, .rbuf = counts, .rcount = 1, .rt = int_t};
  skn_xcoll_allgather(c, rank, &a);
  for (int j = 0; j < n; j++) {
    displs[j] = total;
    total += counts[j];
  }
  int *all = xalloc(sizeof(int) * (size_t)total);
  a = (skn_coll_args){.sbuf = packed, .scount = (size_t)cnt, .st = int_t, .rbuf = all, .rcounts = counts,
                      .rdispls = displs, .rt = int_t};
  skn_xcoll_allgather(c, rank, &a);
  dg_args *gs = xalloc(sizeof *gs * (size_t)n);
  const dg_args **gp = xalloc(sizeof *gp * (size_t)n);
  for (int j = 0; j < n; j++) {
    dg_unpack(all + displs[j], &gs[j]);
    gp[j] = &gs[j];
  }
  dist_build b = {n, gp};
  skn_comm *nc = skn_comm_span_split(x->me, c, rank, 0, rank, &new_rank, build_dist, &b);
  skn_api_leave(x->me);
  free(packed);
  free(counts);
  free(displs);
  free(all);
  free(gs);
  free(gp);
  return add_view(x, nc, rank, x->v->api->errhandler, out);
}

/* Rank 0 of the parent builds the topology from the members' published contributions. */
static skn_topo *dist_topo_from_slots(skn_comm *c) {
  const dg_args **gs = malloc(sizeof *gs * (size_t)c->size);
  if (!gs) return NULL;
  for (int j = 0; j < c->size; j++) gs[j] = c->slots[j]->sbuf;
  skn_topo *t = dist_topo(c->size, gs);
  free(gs);
  return t;
}

/* Collective over x's communicator: gathers every member's contribution (published in
 * the slots), rank 0 builds the topology and the communicator, everyone picks it up. */
static int dist_create(tctx *x, dg_args *mine, MPI_Comm *out) {
  skn_comm *c = x->v->comm;
  int rank = x->v->rank, errh = x->v->api->errhandler;
  if (c->x) return dist_create_spanning(x, mine, out);
  skn_coll_args a = {.sbuf = mine};
  skn_api_coll_order(x->me, x->v); /* after this rank's pending nonblocking collectives */
  skn_api_enter(x->me, x->fn, NULL, MPI_UNDEFINED, MPI_UNDEFINED);
  skn_coll_publish(c, rank, &a);
  if (rank == 0) a.result = make_comm(c, c->size, NULL, dist_topo_from_slots(c));
  skn_coll_barrier(x->me, c); /* rank 0 has built it; the contributions are no longer read */
  skn_comm *nc = c->slots[0]->result;
  skn_coll_barrier(x->me, c); /* rank 0's slot is no longer read */
  skn_api_leave(x->me);
  return add_view(x, nc, rank, errh, out);
}

static int impl_Dist_graph_create_adjacent(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, int indegree,
                                           const int sources[], const int sourceweights[], int outdegree,
                                           const int destinations[], const int destweights[], MPI_Info info,
                                           int reorder, MPI_Comm *comm_dist_graph) {
  (void)info;
  (void)reorder;
  tctx x;
  int rc;
  if ((rc = begin(&x, me, fn, comm, v, 0)) || (rc = skn_api_intra_only(x.me, x.v, x.comm, x.fn)))
    return rc;
  if (indegree < 0 || outdegree < 0) return ARG_ERR(&x, "indegree=%d outdegree=%d", indegree, outdegree);
  if ((rc = check_ranks_list(&x, "sources", indegree, sources)) ||
      (rc = check_ranks_list(&x, "destinations", outdegree, destinations)))
    return rc;
  if ((indegree > 0 && !sourceweights) || (outdegree > 0 && !destweights))
    return ARG_ERR(&x, "weights NULL (use MPI_UNWEIGHTED)");
  if ((indegree > 0 && sourceweights == MPI_WEIGHTS_EMPTY) || (outdegree > 0 && destweights == MPI_WEIGHTS_EMPTY))
    return ARG_ERR(&x, "MPI_WEIGHTS_EMPTY with a nonzero degree");
  dg_args g = {.adjacent = true, .indeg = indegree, .outdeg = outdegree, .sources = sources,
               .sw = sourceweights, .dests = destinations, .dw = destweights};
  return dist_create(&x, &g, comm_dist_graph);
}

static int impl_Dist_graph_create(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, int n,
                                  const int sources[], const int degrees[], const int destinations[],
                                  const int weights[], MPI_Info info, int reorder, MPI_Comm *comm_dist_graph) {
  (void)info;
  (void)reorder;
  tctx x;
  int rc;
  if ((rc = begin(&x, me, fn, comm, v, 0)) || (rc = skn_api_intra_only(x.me, x.v, x.comm, x.fn)))
    return rc;
  if (n < 0) return ARG_ERR(&x, "n=%d", n);
  if (n > 0 && !degrees) return ARG_ERR(&x, "degrees=NULL");
  if ((rc = check_ranks_list(&x, "sources", n, sources))) return rc;
  long long ne = 0;
  for (int i = 0; i < n; i++) {
    if (degrees[i] < 0) return ARG_ERR(&x, "degrees[%d]=%d", i, degrees[i]);
    ne += degrees[i];
  }
  if (ne > 0x7fffffff) return ARG_ERR(&x, "too many edges");
  if ((rc = check_ranks_list(&x, "destinations", (int)ne, destinations))) return rc;
  if (ne > 0 && (!weights || weights == MPI_WEIGHTS_EMPTY)) return ARG_ERR(&x, "weights NULL or MPI_WEIGHTS_EMPTY");
  dg_args g = {.adjacent = false, .n = n, .srcs = sources, .degrees = degrees, .targets = destinations,
               .weights = weights};
  return dist_create(&x, &g, comm_dist_graph);
}

static int impl_Dist_graph_neighbors_count(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, int *indegree,
                                           int *outdegree, int *weighted) {
  tctx x;
  int rc;
  if ((rc = begin(&x, me, fn, comm, v, MPI_DIST_GRAPH))) return rc;
  int r = x.v->rank;
  *indegree = x.t->in_off[r + 1] - x.t->in_off[r];
  *outdegree = x.t->out_off[r + 1] - x.t->out_off[r];
  *weighted = x.t->member_weighted[r];
  return MPI_SUCCESS;
}

static int impl_Dist_graph_neighbors(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, int maxindegree,
                                     int sources[], int sourceweights[], int maxoutdegree, int destinations[],
                                     int destweights[]) {
  tctx x;
  int rc;
  if ((rc = begin(&x, me, fn, comm, v, MPI_DIST_GRAPH))) return rc;
  if (maxindegree < 0 || maxoutdegree < 0) return ARG_ERR(&x, "maxindegree=%d maxoutdegree=%d", maxindegree, maxoutdegree);
  const skn_topo *t = x.t;
  int r = x.v->rank;
  int nin = t->in_off[r + 1] - t->in_off[r], nout = t->out_off[r + 1] - t->out_off[r];
  if (nin > maxindegree) nin = maxindegree;
  if (nout > maxoutdegree) nout = maxoutdegree;
  if ((nin > 0 && !sources) || (nout > 0 && !destinations)) return ARG_ERR(&x, "sources or destinations NULL");
  for (int i = 0; i < nin; i++) {
    sources[i] = t->in[t->in_off[r] + i];
    if (t->weighted && readable_weights(sourceweights)) sourceweights[i] = t->inw[t->in_off[r] + i];
  }
  for (int i = 0; i < nout; i++) {
    destinations[i] = t->out[t->out_off[r] + i];
    if (t->weighted && readable_weights(destweights)) destweights[i] = t->outw[t->out_off[r] + i];
  }
  return MPI_SUCCESS;
}

static int impl_Topo_test(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, int *status) {
  tctx x;
  int rc;
  if ((rc = begin(&x, me, fn, comm, v, 0))) return rc;
  *status = x.t ? x.t->kind : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ neighbourhood collectives
 * The topology gives the caller's edges (skn_nbrs); the core moves the data
 * (core/coll_neighbor.c, the communicator's neighbor_* slots), blocking or queued on the
 * nonblocking-collective engine like the other collectives. */

static int in_degree(const skn_topo *t, int rank) {
  return t->kind == MPI_CART ? 2 * t->ndims : t->in_off[rank + 1] - t->in_off[rank];
}
static int out_degree(const skn_topo *t, int rank) {
  return t->kind == MPI_CART ? 2 * t->ndims : t->out_off[rank + 1] - t->out_off[rank];
}

/* In-neighbour k of rank: its rank (negative: none) and the index of its out-block
 * that feeds block k. For Cartesian topologies block 2d receives what the neighbour in
 * the negative direction of dimension d sends in its block 2d+1, and vice versa (as
 * MPI-4 specifies for periodic dimensions of size 1 or 2). */
static int in_source(const skn_topo *t, int rank, int k, int *m) {
  if (t->kind == MPI_CART) {
    int d = k / 2, s = k % 2;
    *m = 2 * d + 1 - s;
    return cart_neighbor(t, rank, d, s ? 1 : -1);
  }
  int e = t->in_off[rank] + k;
  *m = t->in_match[e];
  return *m < 0 ? -1 : t->in[e];
}

/* The out-neighbour of rank behind its out-block k (negative: none). */
static int out_target(const skn_topo *t, int rank, int k) {
  if (t->kind == MPI_CART) return cart_neighbor(t, rank, k / 2, k % 2 ? 1 : -1);
  return t->out[t->out_off[rank] + k];
}

/* What one call owns until it completes: the caller's edges and, for the w variants,
 * the datatypes of its blocks (`types`: outdeg send types, then indeg receive types;
 * the edge arrays follow them). One allocation, freed by the collective's end. */
typedef struct nb_call {
  skn_nbrs nbrs;
  const skn_dtype *types[];
} nb_call;

static nb_call *nb_call_new(const tctx *x, bool typed) {
  const skn_topo *t = x->t;
  int rank = x->v->rank, indeg = in_degree(t, rank), outdeg = out_degree(t, rank);
  size_t ntypes = typed ? (size_t)(indeg + outdeg) : 0;
  nb_call *n = malloc(sizeof *n + sizeof(n->types[0]) * ntypes + sizeof(int) * (size_t)(2 * indeg + outdeg));
  if (!n) return NULL;
  int *src = (int *)(n->types + ntypes), *src_block = src + indeg, *dst = src_block + indeg;
  for (int k = 0; k < indeg; k++) src[k] = in_source(t, rank, k, &src_block[k]);
  for (int k = 0; k < outdeg; k++) dst[k] = out_target(t, rank, k);
  n->nbrs = (skn_nbrs){.indeg = indeg, .outdeg = outdeg, .src = src, .src_block = src_block, .dst = dst};
  return n;
}

/* Runs the slot now (req NULL: after this rank's pending nonblocking collectives on the
 * communicator) or queues it; `n` is freed when it has run. */
static int nb_dispatch(tctx *x, skn_coll_fn run, skn_coll_args *a, nb_call *n, MPI_Request *req) {
  a->nbrs = &n->nbrs;
  if (!req) {
    skn_api_coll_order(x->me, x->v);
    skn_api_enter(x->me, x->fn, NULL, MPI_UNDEFINED, MPI_UNDEFINED);
    skn_status st = run(x->v->comm, x->v->rank, a);
    skn_api_leave(x->me);
    free(n);
    return st == SKN_OK ? MPI_SUCCESS : skn_api_error(x->me, x->comm, MPI_ERR_NO_MEM, x->fn, "out of memory");
  }
  skn_req *r = skn_nbc_start(x->me, x->v, x->comm, x->fn, run, a, n, NULL, NULL);
  if (!r) return skn_api_error(x->me, x->comm, MPI_ERR_NO_MEM, x->fn, "out of memory for a request");
  *req = skn_req_handle(r);
  return MPI_SUCCESS;
}

/* Common checks: a topology, no MPI_IN_PLACE. req is the caller's for the nonblocking
 * variants (its generated entry point refused NULL), NULL for the blocking ones. */
static int nb_begin(tctx *x, skn_rank *me, skn_comm_view *v, const char *fn, MPI_Comm comm, const void *sendbuf) {
  int rc = begin(x, me, fn, comm, v, -1);
  if (rc) return rc;
  if (sendbuf == MPI_IN_PLACE)
    return skn_api_error(x->me, x->comm, MPI_ERR_BUFFER, x->fn, "MPI_IN_PLACE is not allowed here");
  return MPI_SUCCESS;
}

static int nb_type(tctx *x, const char *what, MPI_Datatype dt, const skn_dtype **t) {
  *t = skn_api_dtype(x->me, dt);
  if (!*t) return skn_api_error(x->me, x->comm, MPI_ERR_TYPE, x->fn, "%s=%#x", what, (unsigned)dt);
  return MPI_SUCCESS;
}

static int nb_count(tctx *x, const char *what, int count) {
  if (count < 0) return skn_api_error(x->me, x->comm, MPI_ERR_COUNT, x->fn, "%s=%d", what, count);
  return MPI_SUCCESS;
}

static int nb_counts(tctx *x, const char *what, int n, const int *counts, const void *displs) {
  if (n > 0 && (!counts || !displs)) return ARG_ERR(x, "%s counts or displacements NULL", what);
  for (int i = 0; i < n; i++)
    if (counts[i] < 0) return skn_api_error(x->me, x->comm, MPI_ERR_COUNT, x->fn, "%s[%d]=%d", what, i, counts[i]);
  return MPI_SUCCESS;
}

/* Neighbor_allgather and Neighbor_alltoall (a2a), blocking (req NULL) or not. */
static int nb_uniform(skn_rank *me, skn_comm_view *v, const char *fn, bool a2a, const void *sendbuf, int sendcount,
                      MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                      MPI_Request *req) {
  tctx x;
  const skn_dtype *st, *rt;
  int rc;
  if ((rc = nb_begin(&x, me, v, fn, comm, sendbuf)) || (rc = nb_count(&x, "sendcount", sendcount)) ||
      (rc = nb_count(&x, "recvcount", recvcount)) || (rc = nb_type(&x, "sendtype", sendtype, &st)) ||
      (rc = nb_type(&x, "recvtype", recvtype, &rt)))
    return rc;
  nb_call *n = nb_call_new(&x, false);
  if (!n) return skn_api_error(x.me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
  skn_coll_args a = {.sbuf = sendbuf, .scount = (size_t)sendcount, .st = st, .rbuf = recvbuf,
                     .rcount = (size_t)recvcount, .rt = rt};
  const skn_coll_ops *ops = x.v->comm->coll;
  return nb_dispatch(&x, a2a ? ops->neighbor_alltoall : ops->neighbor_allgather, &a, n, req);
}

static int allgatherv_common(skn_rank *me, skn_comm_view *v, const char *fn, const void *sendbuf, int sendcount,
                             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req) {
  tctx x;
  const skn_dtype *st, *rt;
  int rc;
  if ((rc = nb_begin(&x, me, v, fn, comm, sendbuf)) || (rc = nb_count(&x, "sendcount", sendcount)) ||
      (rc = nb_counts(&x, "recvcounts", in_degree(x.t, x.v->rank), recvcounts, displs)) ||
      (rc = nb_type(&x, "sendtype", sendtype, &st)) || (rc = nb_type(&x, "recvtype", recvtype, &rt)))
    return rc;
  nb_call *n = nb_call_new(&x, false);
  if (!n) return skn_api_error(x.me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
  skn_coll_args a = {.sbuf = sendbuf, .scount = (size_t)sendcount, .st = st, .rbuf = recvbuf,
                     .rcounts = recvcounts, .rdispls = displs, .rt = rt};
  return nb_dispatch(&x, x.v->comm->coll->neighbor_allgather, &a, n, req);
}

static int alltoallv_common(skn_rank *me, skn_comm_view *v, const char *fn, const void *sendbuf, const int sendcounts[],
                            const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req) {
  tctx x;
  const skn_dtype *st, *rt;
  int rc;
  if ((rc = nb_begin(&x, me, v, fn, comm, sendbuf)) ||
      (rc = nb_counts(&x, "sendcounts", out_degree(x.t, x.v->rank), sendcounts, sdispls)) ||
      (rc = nb_counts(&x, "recvcounts", in_degree(x.t, x.v->rank), recvcounts, rdispls)) ||
      (rc = nb_type(&x, "sendtype", sendtype, &st)) || (rc = nb_type(&x, "recvtype", recvtype, &rt)))
    return rc;
  nb_call *n = nb_call_new(&x, false);
  if (!n) return skn_api_error(x.me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
  skn_coll_args a = {.sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls, .st = st, .rbuf = recvbuf,
                     .rcounts = recvcounts, .rdispls = rdispls, .rt = rt};
  return nb_dispatch(&x, x.v->comm->coll->neighbor_alltoall, &a, n, req);
}

static int alltoallw_common(skn_rank *me, skn_comm_view *v, const char *fn, const void *sendbuf, const int sendcounts[],
                            const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
                            const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                            MPI_Comm comm, MPI_Request *req) {
  tctx x;
  int rc;
  if ((rc = nb_begin(&x, me, v, fn, comm, sendbuf))) return rc;
  int outdeg = out_degree(x.t, x.v->rank), indeg = in_degree(x.t, x.v->rank);
  if ((rc = nb_counts(&x, "sendcounts", outdeg, sendcounts, sdispls)) ||
      (rc = nb_counts(&x, "recvcounts", indeg, recvcounts, rdispls)))
    return rc;
  if ((outdeg > 0 && !sendtypes) || (indeg > 0 && !recvtypes)) return ARG_ERR(&x, "sendtypes or recvtypes NULL");
  nb_call *n = nb_call_new(&x, true);
  if (!n) return skn_api_error(x.me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
  const skn_dtype **sts = n->types, **rts = n->types + outdeg;
  for (int i = 0; i < outdeg && rc == MPI_SUCCESS; i++) rc = nb_type(&x, "sendtypes[i]", sendtypes[i], &sts[i]);
  for (int i = 0; i < indeg && rc == MPI_SUCCESS; i++) rc = nb_type(&x, "recvtypes[i]", recvtypes[i], &rts[i]);
  if (rc != MPI_SUCCESS) {
    free(n);
    return rc;
  }
  skn_coll_args a = {.sbuf = sendbuf, .scounts = sendcounts, .sbytes = sdispls, .sts = sts, .rbuf = recvbuf,
                     .rcounts = recvcounts, .rbytes = rdispls, .rts = rts};
  return nb_dispatch(&x, x.v->comm->coll->neighbor_alltoall, &a, n, req);
}

static int impl_Neighbor_allgather(skn_rank *me, const char *fn, const void *sendbuf, int sendcount,
                                   MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                   MPI_Comm comm, skn_comm_view *v) {
  return nb_uniform(me, v, fn, false, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                    comm, NULL);
}

static int impl_Ineighbor_allgather(skn_rank *me, const char *fn, const void *sendbuf, int sendcount,
                                    MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                    MPI_Comm comm, skn_comm_view *v, MPI_Request *request) {
  return nb_uniform(me, v, fn, false, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                    comm, request);
}

static int impl_Neighbor_allgatherv(skn_rank *me, const char *fn, const void *sendbuf, int sendcount,
                                    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[],
                                    MPI_Datatype recvtype, MPI_Comm comm, skn_comm_view *v) {
  return allgatherv_common(me, v, fn, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                           recvtype, comm, NULL);
}

static int impl_Ineighbor_allgatherv(skn_rank *me, const char *fn, const void *sendbuf, int sendcount,
                                     MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[],
                                     MPI_Datatype recvtype, MPI_Comm comm, skn_comm_view *v, MPI_Request *request) {
  return allgatherv_common(me, v, fn, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                           recvtype, comm, request);
}

static int impl_Neighbor_alltoall(skn_rank *me, const char *fn, const void *sendbuf, int sendcount,
                                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                  MPI_Comm comm, skn_comm_view *v) {
  return nb_uniform(me, v, fn, true, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, NULL);
}

static int impl_Ineighbor_alltoall(skn_rank *me, const char *fn, const void *sendbuf, int sendcount,
                                   MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                   MPI_Comm comm, skn_comm_view *v, MPI_Request *request) {
  return nb_uniform(me, v, fn, true, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}

static int impl_Neighbor_alltoallv(skn_rank *me, const char *fn, const void *sendbuf, const int sendcounts[],
                                   const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, skn_comm_view *v) {
  return alltoallv_common(me, v, fn, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                          rdispls, recvtype, comm, NULL);
}

static int impl_Ineighbor_alltoallv(skn_rank *me, const char *fn, const void *sendbuf, const int sendcounts[],
                                    const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, skn_comm_view *v,
                                    MPI_Request *request) {
  return alltoallv_common(me, v, fn, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                          rdispls, recvtype, comm, request);
}

static int impl_Neighbor_alltoallw(skn_rank *me, const char *fn, const void *sendbuf, const int sendcounts[],
                                   const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
                                   const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                   MPI_Comm comm, skn_comm_view *v) {
  return alltoallw_common(me, v, fn, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                          rdispls, recvtypes, comm, NULL);
}

static int impl_Ineighbor_alltoallw(skn_rank *me, const char *fn, const void *sendbuf, const int sendcounts[],
                                    const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
                                    const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                    MPI_Comm comm, skn_comm_view *v, MPI_Request *request) {
  return alltoallw_common(me, v, fn, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                          rdispls, recvtypes, comm, request);
}

#include "entries_topo.h"
