/* Neighbourhood collectives, blocking and nonblocking (MPI_Neighbor_* and
 * MPI_Ineighbor_*: allgather, allgatherv, alltoall, alltoallv, alltoallw) on a 2-D
 * Cartesian topology (one periodic and one open dimension: edges to MPI_PROC_NULL), a
 * periodic 1-D ring (at 1 and 2 ranks both edges of a dimension go to one rank) and a
 * distributed graph with unequal degrees and repeated edges. Each receive buffer is
 * compared byte for byte with an image the test builds from the topology alone (blocks
 * from the neighbour they must come from, everything else untouched); then ten
 * nonblocking calls on two communicators in flight at once with a blocking one among them
 * (completed by Waitall and by a Testall loop); then bad arguments and their error
 * classes. */
#define TEST_NAME "neighbor"
#include "mpitest.h"

enum { ALLGATHER, ALLGATHERV, ALLTOALL, ALLTOALLV, ALLTOALLW, KINDS };
static const char *const kind_name[KINDS] = {"allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw"};

/* The caller's edges as the test derives them from the topology: in-block k receives
 * out-block srcblk[k] of rank src[k] (MPI_PROC_NULL: nothing). */
typedef struct edges {
  int indeg, outdeg;
  int *src, *srcblk;
} edges;

/* Element e of out-block m of rank s in a call of `kind` (allgather: m = 0). */
static int value(int kind, int s, int m, int e) { return 100000 * (kind + 1) + 1000 * s + 37 * m + e + 1; }
static int gv_count(int s) { return 1 + s % 2; }            /* allgatherv: what s sends */
static int v_count(int s, int m) { return (s + m) % 3; }    /* alltoallv: out-block m of s */
static int w_is_double(int m) { return m % 2; }             /* alltoallw: block type */
#define W_STRIDE 24                                         /* alltoallw: bytes per block */
#define SENTINEL 0xAB

/* One call's buffers and arguments; `want` is the receive buffer it must produce. */
typedef struct call {
  int kind;
  char *sbuf, *rbuf, *want;
  size_t slen, rlen;
  int scount, rcount;
  int *scounts, *sdispls, *rcounts, *rdispls;
  MPI_Aint *sdw, *rdw;
  MPI_Datatype *sts, *rts;
} call;

static void put_int(char *buf, size_t off, int v) { memcpy(buf + off, &v, sizeof v); }
static void put_double(char *buf, size_t off, double v) { memcpy(buf + off, &v, sizeof v); }

static void call_init(call *c, int kind, int me, const edges *g) {
  int in = g->indeg, out = g->outdeg;
  memset(c, 0, sizeof *c);
  c->kind = kind;
  c->scounts = mt_malloc(sizeof(int) * (size_t)(out + 1));
  c->sdispls = mt_malloc(sizeof(int) * (size_t)(out + 1));
  c->rcounts = mt_malloc(sizeof(int) * (size_t)(in + 1));
  c->rdispls = mt_malloc(sizeof(int) * (size_t)(in + 1));
  c->sdw = mt_malloc(sizeof(MPI_Aint) * (size_t)(out + 1));
  c->rdw = mt_malloc(sizeof(MPI_Aint) * (size_t)(in + 1));
  c->sts = mt_malloc(sizeof(MPI_Datatype) * (size_t)(out + 1));
  c->rts = mt_malloc(sizeof(MPI_Datatype) * (size_t)(in + 1));
  const size_t I = sizeof(int);
  switch (kind) {
  case ALLGATHER:
  case ALLTOALL:
    c->scount = c->rcount = 2;
    c->slen = I * 2 * (size_t)(kind == ALLTOALL ? out : 1);
    c->rlen = I * 2 * (size_t)in;
    break;
  case ALLGATHERV:
    c->scount = gv_count(me);
    c->slen = I * 2;
    c->rlen = I * (3 * (size_t)in + 1);
    break;
  case ALLTOALLV:
    c->slen = I * (4 * (size_t)out + 1);
    c->rlen = I * (4 * (size_t)in + 2);
    break;
  default:
    c->slen = W_STRIDE * (size_t)out;
    c->rlen = W_STRIDE * (size_t)in + 8;
  }
  c->sbuf = mt_malloc(c->slen + 1);
  c->rbuf = mt_malloc(c->rlen + 1);
  c->want = mt_malloc(c->rlen + 1);
  memset(c->sbuf, 0x5C, c->slen + 1);
  memset(c->rbuf, SENTINEL, c->rlen + 1);
  memset(c->want, SENTINEL, c->rlen + 1);
  /* send side */
  if (kind == ALLGATHER || kind == ALLGATHERV)
    for (int e = 0; e < 2; e++) put_int(c->sbuf, I * (size_t)e, value(kind, me, 0, e));
  for (int m = 0; m < out; m++) {
    if (kind == ALLTOALL)
      for (int e = 0; e < 2; e++) put_int(c->sbuf, I * (size_t)(2 * m + e), value(kind, me, m, e));
    if (kind == ALLTOALLV) {
      c->scounts[m] = v_count(me, m);
      c->sdispls[m] = 4 * m + 1;
      for (int e = 0; e < c->scounts[m]; e++) put_int(c->sbuf, I * (size_t)(4 * m + 1 + e), value(kind, me, m, e));
    }
    if (kind == ALLTOALLW) {
      c->scounts[m] = 2;
      c->sdw[m] = (MPI_Aint)W_STRIDE * m;
      c->sts[m] = w_is_double(m) ? MPI_DOUBLE : MPI_INT;
      for (int e = 0; e < 2; e++) {
        if (w_is_double(m)) put_double(c->sbuf, (size_t)c->sdw[m] + 8 * (size_t)e, value(kind, me, m, e) + 0.5);
        else put_int(c->sbuf, (size_t)c->sdw[m] + I * (size_t)e, value(kind, me, m, e));
      }
    }
  }
  /* receive side and the image it must become */
  for (int k = 0; k < in; k++) {
    int j = g->src[k], m = g->srcblk[k];
    size_t at = 0;
    int n = 0;
    switch (kind) {
    case ALLGATHER:
    case ALLTOALL:
      at = I * 2 * (size_t)k;
      n = 2;
      break;
    case ALLGATHERV:
      c->rcounts[k] = j >= 0 ? gv_count(j) : 2;
      c->rdispls[k] = 3 * k + 1;
      at = I * (size_t)c->rdispls[k];
      n = c->rcounts[k];
      break;
    case ALLTOALLV:
      c->rcounts[k] = j >= 0 ? v_count(j, m) : 1;
      c->rdispls[k] = 4 * k + 2;
      at = I * (size_t)c->rdispls[k];
      n = c->rcounts[k];
      break;
    default:
      c->rcounts[k] = 2;
      c->rdw[k] = (MPI_Aint)W_STRIDE * k + 8;
      c->rts[k] = w_is_double(m) ? MPI_DOUBLE : MPI_INT;
      at = (size_t)c->rdw[k];
      n = 2;
    }
    if (j < 0) continue;
    for (int e = 0; e < n; e++) {
      int mm = kind == ALLGATHER || kind == ALLGATHERV ? 0 : m;
      if (kind == ALLTOALLW && w_is_double(m)) put_double(c->want, at + 8 * (size_t)e, value(kind, j, mm, e) + 0.5);
      else put_int(c->want, at + I * (size_t)e, value(kind, j, mm, e));
    }
  }
}

static void call_free(call *c) {
  free(c->sbuf);
  free(c->rbuf);
  free(c->want);
  free(c->scounts);
  free(c->sdispls);
  free(c->rcounts);
  free(c->rdispls);
  free(c->sdw);
  free(c->rdw);
  free(c->sts);
  free(c->rts);
}

/* Runs c: blocking when req is NULL. */
static int call_start(call *c, MPI_Comm comm, MPI_Request *req) {
  switch (c->kind) {
  case ALLGATHER:
    return req ? MPI_Ineighbor_allgather(c->sbuf, c->scount, MPI_INT, c->rbuf, c->rcount, MPI_INT, comm, req)
               : MPI_Neighbor_allgather(c->sbuf, c->scount, MPI_INT, c->rbuf, c->rcount, MPI_INT, comm);
  case ALLGATHERV:
    return req ? MPI_Ineighbor_allgatherv(c->sbuf, c->scount, MPI_INT, c->rbuf, c->rcounts, c->rdispls, MPI_INT,
                                          comm, req)
               : MPI_Neighbor_allgatherv(c->sbuf, c->scount, MPI_INT, c->rbuf, c->rcounts, c->rdispls, MPI_INT, comm);
  case ALLTOALL:
    return req ? MPI_Ineighbor_alltoall(c->sbuf, c->scount, MPI_INT, c->rbuf, c->rcount, MPI_INT, comm, req)
               : MPI_Neighbor_alltoall(c->sbuf, c->scount, MPI_INT, c->rbuf, c->rcount, MPI_INT, comm);
  case ALLTOALLV:
    return req ? MPI_Ineighbor_alltoallv(c->sbuf, c->scounts, c->sdispls, MPI_INT, c->rbuf, c->rcounts, c->rdispls,
                                         MPI_INT, comm, req)
               : MPI_Neighbor_alltoallv(c->sbuf, c->scounts, c->sdispls, MPI_INT, c->rbuf, c->rcounts, c->rdispls,
                                        MPI_INT, comm);
  default:
    return req ? MPI_Ineighbor_alltoallw(c->sbuf, c->scounts, c->sdw, c->sts, c->rbuf, c->rcounts, c->rdw, c->rts,
                                         comm, req)
               : MPI_Neighbor_alltoallw(c->sbuf, c->scounts, c->sdw, c->sts, c->rbuf, c->rcounts, c->rdw, c->rts,
                                        comm);
  }
}

static void call_check(const call *c, const char *topo, const char *how) {
  for (size_t i = 0; i <= c->rlen; i++)
    CHECK(c->rbuf[i] == c->want[i], "%s %s %s: receive byte %zu of %zu (expected %#x got %#x)", topo, how,
          kind_name[c->kind], i, c->rlen, (unsigned)(unsigned char)c->want[i], (unsigned)(unsigned char)c->rbuf[i]);
}

/* Every kind, blocking then nonblocking, one at a time. */
static void run_each(MPI_Comm comm, int me, const edges *g, const char *topo) {
  for (int nb = 0; nb < 2; nb++)
    for (int kind = 0; kind < KINDS; kind++) {
      call c;
      call_init(&c, kind, me, g);
      MPI_Request req = MPI_REQUEST_NULL;
      MPI_CHECK(call_start(&c, comm, nb ? &req : NULL));
      if (nb) {
        MPI_Status st;
        MPI_CHECK(MPI_Wait(&req, &st));
        CHECK(req == MPI_REQUEST_NULL, "%s: Wait left the request", topo);
      }
      call_check(&c, topo, nb ? "nonblocking" : "blocking");
      call_free(&c);
    }
}

/* ------------------------------------------------------------------ topologies */

static void cart_edges(MPI_Comm cart, int nd, edges *g) {
  g->indeg = g->outdeg = 2 * nd;
  g->src = mt_malloc(sizeof(int) * (size_t)(2 * nd));
  g->srcblk = mt_malloc(sizeof(int) * (size_t)(2 * nd));
  for (int d = 0; d < nd; d++) {
    int lo, hi;
    MPI_CHECK(MPI_Cart_shift(cart, d, 1, &lo, &hi));
    /* block 2d from the neighbour below (its block 2d+1), block 2d+1 from the one above */
    g->src[2 * d] = lo;
    g->srcblk[2 * d] = 2 * d + 1;
    g->src[2 * d + 1] = hi;
    g->srcblk[2 * d + 1] = 2 * d;
  }
}

/* Distributed graph: rank r has (r % 4 == 3 ? 0 : r % 4 + 1) out-edges, edge e to
 * (r + e * e + 1) % n, so small n repeat edges between one pair. */
static int graph_outdeg(int r) { return r % 4 == 3 ? 0 : r % 4 + 1; }
static int graph_dst(int r, int e, int n) { return (r + e * e + 1) % n; }

static void graph_edges(int me, int n, edges *g, int **out) {
  int cap = 4 * n + 4;
  g->src = mt_malloc(sizeof(int) * (size_t)cap);
  g->srcblk = mt_malloc(sizeof(int) * (size_t)cap);
  g->indeg = 0;
  /* in-edges in order of source and then of the source's out-block: the k-th edge j->me
   * is the k-th occurrence of j among me's sources, as MPI matches them */
  for (int j = 0; j < n; j++)
    for (int e = 0; e < graph_outdeg(j); e++)
      if (graph_dst(j, e, n) == me) {
        g->src[g->indeg] = j;
        g->srcblk[g->indeg++] = e;
      }
  g->outdeg = graph_outdeg(me);
  *out = mt_malloc(sizeof(int) * (size_t)(g->outdeg + 1));
  for (int e = 0; e < g->outdeg; e++) (*out)[e] = graph_dst(me, e, n);
}

static void expect_class(int rc, int cls, const char *what) {
  int got = -1;
  CHECK(rc != MPI_SUCCESS, "%s: succeeded (expected error class %d)", what, cls);
  MPI_CHECK(MPI_Error_class(rc, &got));
  CHECK(got == cls, "%s: error class (expected %d got %d)", what, cls, got);
}

static void bad_arguments(MPI_Comm cart, const edges *g) {
  int buf[64] = {0}, counts[16], displs[16];
  MPI_Aint bd[16];
  MPI_Datatype types[16];
  MPI_Request req;
  for (int i = 0; i < 16; i++) {
    counts[i] = 1;
    displs[i] = i;
    bd[i] = (MPI_Aint)(sizeof(int) * (size_t)i);
    types[i] = MPI_INT;
  }
  expect_class(MPI_Ineighbor_allgather(buf, 1, MPI_INT, buf + 32, 1, MPI_INT, MPI_COMM_WORLD, &req), MPI_ERR_TOPOLOGY,
               "Ineighbor_allgather on a communicator without topology");
  expect_class(MPI_Neighbor_alltoall(buf, 1, MPI_INT, buf + 32, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TOPOLOGY,
               "Neighbor_alltoall on a communicator without topology");
  expect_class(MPI_Ineighbor_alltoall(buf, 1, MPI_INT, buf + 32, 1, MPI_INT, MPI_COMM_NULL, &req), MPI_ERR_COMM,
               "Ineighbor_alltoall on MPI_COMM_NULL");
  expect_class(MPI_Ineighbor_allgather(buf, -1, MPI_INT, buf + 32, 1, MPI_INT, cart, &req), MPI_ERR_COUNT,
               "Ineighbor_allgather sendcount=-1");
  expect_class(MPI_Ineighbor_alltoall(buf, 1, MPI_INT, buf + 32, -2, MPI_INT, cart, &req), MPI_ERR_COUNT,
               "Ineighbor_alltoall recvcount=-2");
  expect_class(MPI_Ineighbor_alltoall(buf, 1, MPI_DATATYPE_NULL, buf + 32, 1, MPI_INT, cart, &req), MPI_ERR_TYPE,
               "Ineighbor_alltoall sendtype=MPI_DATATYPE_NULL");
  expect_class(MPI_Ineighbor_allgatherv(MPI_IN_PLACE, 1, MPI_INT, buf + 32, counts, displs, MPI_INT, cart, &req),
               MPI_ERR_BUFFER, "Ineighbor_allgatherv sendbuf=MPI_IN_PLACE");
  expect_class(MPI_Ineighbor_allgather(buf, 1, MPI_INT, buf + 32, 1, MPI_INT, cart, NULL), MPI_ERR_ARG,
               "Ineighbor_allgather request=NULL");
  expect_class(MPI_Ineighbor_alltoallv(buf, counts, displs, MPI_INT, buf + 32, NULL, displs, MPI_INT, cart, &req),
               MPI_ERR_ARG, "Ineighbor_alltoallv recvcounts=NULL");
  counts[g->indeg - 1] = -1;
  expect_class(MPI_Ineighbor_alltoallv(buf, counts + 8, displs, MPI_INT, buf + 32, counts, displs, MPI_INT, cart, &req),
               MPI_ERR_COUNT, "Ineighbor_alltoallv recvcounts[last]=-1");
  counts[g->indeg - 1] = 1;
  types[g->outdeg - 1] = MPI_DATATYPE_NULL;
  expect_class(MPI_Ineighbor_alltoallw(buf, counts, bd, types, buf + 32, counts, bd, types + 8, cart, &req),
               MPI_ERR_TYPE, "Ineighbor_alltoallw sendtypes[last]=MPI_DATATYPE_NULL");
  expect_class(MPI_Neighbor_alltoallw(buf, counts, bd, types, buf + 32, counts, bd, types + 8, cart), MPI_ERR_TYPE,
               "Neighbor_alltoallw sendtypes[last]=MPI_DATATYPE_NULL");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN); /* errors of no object (MPI-4.0) */

  /* 2-D, periodic in dimension 0 only */
  int dims[2] = {0, 0}, periods[2] = {1, 0};
  MPI_CHECK(MPI_Dims_create(n, 2, dims));
  MPI_Comm cart, ring, graph;
  MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
  MPI_CHECK(MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN));
  int cme;
  MPI_CHECK(MPI_Comm_rank(cart, &cme));
  edges gc;
  cart_edges(cart, 2, &gc);
  run_each(cart, cme, &gc, "cart 2-D");

  int rdims[1] = {n}, rper[1] = {1};
  MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 1, rdims, rper, 0, &ring));
  int rme;
  MPI_CHECK(MPI_Comm_rank(ring, &rme));
  edges gr;
  cart_edges(ring, 1, &gr);
  run_each(ring, rme, &gr, "ring");

  edges gg;
  int *out;
  graph_edges(me, n, &gg, &out);
  MPI_CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, gg.indeg, gg.src, MPI_UNWEIGHTED, gg.outdeg, out,
                                           MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph));
  int ind, outd, wtd;
  MPI_CHECK(MPI_Dist_graph_neighbors_count(graph, &ind, &outd, &wtd));
  CHECK(ind == gg.indeg && outd == gg.outdeg, "graph degrees (expected %d,%d got %d,%d)", gg.indeg, gg.outdeg, ind,
        outd);
  run_each(graph, me, &gg, "dist graph");

  /* Ten in flight on two communicators, a blocking one on cart among them (it runs after
   * the cart ones started before it); cart's completed by Waitall, graph's by Testall. */
  call cc[KINDS], gcall[KINDS], mid;
  MPI_Request creq[KINDS], greq[KINDS];
  for (int k = 0; k < KINDS; k++) {
    call_init(&cc[k], k, cme, &gc);
    call_init(&gcall[k], k, me, &gg);
    MPI_CHECK(call_start(&cc[k], cart, &creq[k]));
    MPI_CHECK(call_start(&gcall[k], graph, &greq[k]));
    if (k == ALLTOALL) {
      call_init(&mid, ALLTOALLW, cme, &gc);
      MPI_CHECK(call_start(&mid, cart, NULL));
      call_check(&mid, "cart 2-D", "blocking among nonblocking");
      call_free(&mid);
    }
  }
  MPI_CHECK(MPI_Waitall(KINDS, creq, MPI_STATUSES_IGNORE));
  for (int flag = 0; !flag;) MPI_CHECK(MPI_Testall(KINDS, greq, &flag, MPI_STATUSES_IGNORE));
  for (int k = 0; k < KINDS; k++) {
    call_check(&cc[k], "cart 2-D", "in flight");
    call_check(&gcall[k], "dist graph", "in flight");
    call_free(&cc[k]);
    call_free(&gcall[k]);
  }

  bad_arguments(cart, &gc);

  free(gc.src);
  free(gc.srcblk);
  free(gr.src);
  free(gr.srcblk);
  free(gg.src);
  free(gg.srcblk);
  free(out);
  MPI_CHECK(MPI_Comm_free(&cart));
  MPI_CHECK(MPI_Comm_free(&ring));
  MPI_CHECK(MPI_Comm_free(&graph));
  return mt_finish();
}
