/* Virtual topologies: Dims_create (against a brute-force search for the most balanced
 * factorization), Cartesian (create, get, coords, rank with periodic wrap, shift, sub,
 * map, surplus ranks), graph (create, get, neighbours, map), distributed graph
 * (adjacent and general, weights), Topo_test, topology kept by Comm_dup; neighbourhood
 * collectives (allgather(v), alltoall(v,w)) on all three kinds, each block checked
 * against the neighbour it must come from; error classes under MPI_ERRORS_RETURN. */
#define TEST_NAME "topo"
#include "mpitest.h"

static void expect_class(int rc, int cls, const char *what) {
  int got = -1;
  CHECK(rc != MPI_SUCCESS, "%s: succeeded (expected error class %d)", what, cls);
  MPI_CHECK(MPI_Error_class(rc, &got));
  CHECK(got == cls, "%s: error class (expected %d got %d)", what, cls, got);
}

/* ------------------------------------------------------------------ Dims_create */

/* Smallest (first - last) over the non-increasing factorizations of n into k >= 1
 * factors, each <= cap, whose first factor is `first` (0: not chosen yet); by exhaustive
 * search. */
static int best_spread(int n, int k, int cap, int first) {
  int best = 1 << 30;
  for (int f = cap < n ? cap : n; f >= 1; f--) {
    if (n % f) continue;
    int fst = first ? first : f, s;
    if (k == 1)
      s = n == f ? fst - f : 1 << 30;
    else
      s = best_spread(n / f, k - 1, f, fst);
    if (s < best) best = s;
  }
  return best;
}

static void check_dims(int nnodes, int ndims, const int *given) {
  int dims[8], nfree = 0, prod = 1, fixed = 1;
  for (int d = 0; d < ndims; d++) {
    dims[d] = given[d];
    if (!given[d])
      nfree++;
    else
      fixed *= given[d];
  }
  MPI_CHECK(MPI_Dims_create(nnodes, ndims, dims));
  int prev = 1 << 30, lo = 1 << 30, hi = 0;
  for (int d = 0; d < ndims; d++) {
    prod *= dims[d];
    if (given[d]) {
      CHECK(dims[d] == given[d], "Dims_create(%d, %d): fixed dims[%d] changed to %d", nnodes, ndims, d, dims[d]);
      continue;
    }
    CHECK(dims[d] >= 1 && dims[d] <= prev, "Dims_create(%d, %d): dims[%d]=%d not positive and non-increasing",
          nnodes, ndims, d, dims[d]);
    prev = dims[d];
    if (dims[d] < lo) lo = dims[d];
    if (dims[d] > hi) hi = dims[d];
  }
  CHECK(prod == nnodes, "Dims_create(%d, %d): product (expected %d got %d)", nnodes, ndims, nnodes, prod);
  if (nfree > 0) {
    int want = best_spread(nnodes / fixed, nfree, nnodes / fixed, 0);
    CHECK(hi - lo == want, "Dims_create(%d, %d): spread of the free dims (expected %d got %d)", nnodes, ndims, want,
          hi - lo);
  }
}

/* ------------------------------------------------------------------ Cartesian helpers */

static void coords_of(int rank, int nd, const int *dims, int *c) {
  for (int d = nd - 1; d >= 0; d--) {
    c[d] = rank % dims[d];
    rank /= dims[d];
  }
}

static int rank_of(int nd, const int *dims, const int *c) {
  int r = 0;
  for (int d = 0; d < nd; d++) r = r * dims[d] + c[d];
  return r;
}

/* Neighbour of rank along d by disp, computed here; MPI_PROC_NULL off an open edge. */
static int shifted(int rank, int nd, const int *dims, const int *periods, int d, int disp) {
  int c[8];
  coords_of(rank, nd, dims, c);
  int x = c[d] + disp;
  if (x < 0 || x >= dims[d]) {
    if (!periods[d]) return MPI_PROC_NULL;
    x = ((x % dims[d]) + dims[d]) % dims[d];
  }
  c[d] = x;
  return rank_of(nd, dims, c);
}

static void check_cart(MPI_Comm cart, int nd, const int *dims, const int *periods, const char *what) {
  int r, s, status = -1, n = -1, gd[8], gp[8], gc[8], c[8];
  MPI_CHECK(MPI_Comm_rank(cart, &r));
  MPI_CHECK(MPI_Comm_size(cart, &s));
  MPI_CHECK(MPI_Topo_test(cart, &status));
  CHECK(status == MPI_CART, "%s: Topo_test (expected MPI_CART=%d got %d)", what, MPI_CART, status);
  MPI_CHECK(MPI_Cartdim_get(cart, &n));
  CHECK(n == nd, "%s: Cartdim_get (expected %d got %d)", what, nd, n);
  MPI_CHECK(MPI_Cart_get(cart, nd, gd, gp, gc));
  coords_of(r, nd, dims, c);
  for (int d = 0; d < nd; d++) {
    CHECK(gd[d] == dims[d], "%s: Cart_get dims[%d] (expected %d got %d)", what, d, dims[d], gd[d]);
    CHECK(!!gp[d] == !!periods[d], "%s: Cart_get periods[%d] (expected %d got %d)", what, d, periods[d], gp[d]);
    CHECK(gc[d] == c[d], "%s: Cart_get coords[%d] (expected %d got %d)", what, d, c[d], gc[d]);
  }
  for (int p = 0; p < s; p++) {
    int pr = -1;
    MPI_CHECK(MPI_Cart_coords(cart, p, nd, gc));
    coords_of(p, nd, dims, c);
    for (int d = 0; d < nd; d++)
      CHECK(gc[d] == c[d], "%s: Cart_coords(%d)[%d] (expected %d got %d)", what, p, d, c[d], gc[d]);
    MPI_CHECK(MPI_Cart_rank(cart, c, &pr));
    CHECK(pr == p, "%s: Cart_rank of coords of %d (got %d)", what, p, pr);
    /* periodic dimensions wrap */
    for (int d = 0; d < nd; d++)
      if (periods[d]) {
        int w[8];
        memcpy(w, c, sizeof(int) * (size_t)nd);
        w[d] = c[d] - 3 * dims[d];
        MPI_CHECK(MPI_Cart_rank(cart, w, &pr));
        CHECK(pr == p, "%s: Cart_rank with coordinate %d wrapped in dim %d (expected %d got %d)", what, w[d], d, p, pr);
      }
  }
  for (int d = 0; d < nd; d++)
    for (int disp = -3; disp <= 3; disp++) {
      int src = -5, dst = -5;
      MPI_CHECK(MPI_Cart_shift(cart, d, disp, &src, &dst));
      int ws = shifted(r, nd, dims, periods, d, -disp), wd = shifted(r, nd, dims, periods, d, disp);
      CHECK(src == ws && dst == wd, "%s: Cart_shift(dim %d, disp %d) (expected %d/%d got %d/%d)", what, d, disp, ws,
            wd, src, dst);
    }
}

/* ------------------------------------------------------------------ neighbour collectives */

#define SENTINEL (-7)

/* Neighbour allgather / alltoall on a Cartesian communicator: block 2d comes from the
 * neighbour in the negative direction of d (its block 2d+1), block 2d+1 from the
 * positive one (its block 2d). */
static void cart_neighbor_colls(MPI_Comm cart, int nd, const int *dims, const int *periods, int alltoall,
                                const char *what) {
  int r, deg = 2 * nd;
  MPI_CHECK(MPI_Comm_rank(cart, &r));
  int *recv = mt_malloc(sizeof(int) * (size_t)(deg + 1)), *send = mt_malloc(sizeof(int) * (size_t)(deg + 1));
  for (int k = 0; k < deg; k++) recv[k] = SENTINEL;
  MPI_CHECK(MPI_Neighbor_allgather(&r, 1, MPI_INT, recv, 1, MPI_INT, cart));
  for (int k = 0; k < deg; k++) {
    int src = shifted(r, nd, dims, periods, k / 2, k % 2 ? 1 : -1);
    int want = src == MPI_PROC_NULL ? SENTINEL : src;
    CHECK(recv[k] == want, "%s: Neighbor_allgather block %d (expected %d got %d)", what, k, want, recv[k]);
  }
  if (alltoall) {
    for (int k = 0; k < deg; k++) {
      send[k] = 1000 * r + k;
      recv[k] = SENTINEL;
    }
    MPI_CHECK(MPI_Neighbor_alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, cart));
    for (int k = 0; k < deg; k++) {
      int d = k / 2, s = k % 2, src = shifted(r, nd, dims, periods, d, s ? 1 : -1);
      int want = src == MPI_PROC_NULL ? SENTINEL : 1000 * src + 2 * d + 1 - s;
      CHECK(recv[k] == want, "%s: Neighbor_alltoall block %d (expected %d got %d)", what, k, want, recv[k]);
    }
  }
  free(recv);
  free(send);
}

/* Value a rank sends to its out-neighbour m, element e. */
static int val(int from, int m, int e) { return 100000 * from + 100 * m + e; }

/* The adjacent distributed graph used below: i receives from i-1, i-2 and sends to
 * i+1, i+2 (mod size; duplicates and self-loops for 1 and 2 ranks). In-block k of i is
 * fed by out-block k of i-1-k. */
static void dist_neighbor_colls(MPI_Comm dg, int size, const char *what) {
  int r;
  MPI_CHECK(MPI_Comm_rank(dg, &r));
  /* alltoallv: block to out-neighbour m has 1 + (r + m) % 3 ints, at gapped offsets */
  int scounts[2], sdispls[2], rcounts[2], rdispls[2], sbuf[32], rbuf[32];
  int off = 0;
  for (int m = 0; m < 2; m++) {
    scounts[m] = 1 + (r + m) % 3;
    sdispls[m] = off;
    for (int e = 0; e < scounts[m]; e++) sbuf[off + e] = val(r, m, e);
    off += scounts[m] + 2;
  }
  off = 1;
  for (int k = 0; k < 2; k++) {
    int src = ((r - 1 - k) % size + size) % size;
    rcounts[k] = 1 + (src + k) % 3;
    rdispls[k] = off;
    off += rcounts[k] + 1;
  }
  for (int i = 0; i < 32; i++) rbuf[i] = SENTINEL;
  MPI_CHECK(MPI_Neighbor_alltoallv(sbuf, scounts, sdispls, MPI_INT, rbuf, rcounts, rdispls, MPI_INT, dg));
  for (int k = 0; k < 2; k++) {
    int src = ((r - 1 - k) % size + size) % size;
    for (int e = 0; e < rcounts[k]; e++)
      CHECK(rbuf[rdispls[k] + e] == val(src, k, e), "%s: Neighbor_alltoallv block %d elem %d (expected %d got %d)",
            what, k, e, val(src, k, e), rbuf[rdispls[k] + e]);
  }
  for (int i = 0; i < 32; i++) {
    int inside = 0;
    for (int k = 0; k < 2; k++)
      if (i >= rdispls[k] && i < rdispls[k] + rcounts[k]) inside = 1;
    CHECK(inside || rbuf[i] == SENTINEL, "%s: Neighbor_alltoallv wrote outside the blocks at %d", what, i);
  }
  /* alltoallw: the same with byte displacements and a double block */
  MPI_Aint sdw[2], rdw[2];
  MPI_Datatype sts[2] = {MPI_INT, MPI_DOUBLE}, rts[2] = {MPI_INT, MPI_DOUBLE};
  struct {
    int i[4];
    double d[4];
  } ws, wr;
  memset(&wr, 0, sizeof wr);
  int wsc[2] = {3, 2}, wrc[2] = {3, 2};
  for (int e = 0; e < 4; e++) {
    ws.i[e] = val(r, 0, e);
    ws.d[e] = val(r, 1, e) + 0.5;
    wr.i[e] = SENTINEL;
  }
  sdw[0] = (char *)&ws.i[1] - (char *)&ws;
  sdw[1] = (char *)&ws.d[0] - (char *)&ws;
  rdw[0] = (char *)&wr.i[0] - (char *)&wr;
  rdw[1] = (char *)&wr.d[2] - (char *)&wr;
  /* block k of every rank is typed like out-block k of its source (k-th matches k-th) */
  MPI_CHECK(MPI_Neighbor_alltoallw(&ws, wsc, sdw, sts, &wr, wrc, rdw, rts, dg));
  {
    int src0 = ((r - 1) % size + size) % size, src1 = ((r - 2) % size + size) % size;
    for (int e = 0; e < 3; e++)
      CHECK(wr.i[e] == val(src0, 0, e + 1), "%s: Neighbor_alltoallw int %d (expected %d got %d)", what, e,
            val(src0, 0, e + 1), wr.i[e]);
    CHECK(wr.i[3] == SENTINEL, "%s: Neighbor_alltoallw wrote past the int block", what);
    for (int e = 0; e < 2; e++)
      CHECK(wr.d[2 + e] == val(src1, 1, e) + 0.5, "%s: Neighbor_alltoallw double %d (expected %g got %g)", what, e,
            val(src1, 1, e) + 0.5, wr.d[2 + e]);
    CHECK(wr.d[0] == 0 && wr.d[1] == 0, "%s: Neighbor_alltoallw wrote before the double block", what);
  }
  /* allgatherv: every in-neighbour's 1 + r%2 ints */
  int mine[2] = {val(r, 9, 0), val(r, 9, 1)}, agc[2], agd[2];
  for (int i = 0; i < 32; i++) rbuf[i] = SENTINEL;
  for (int k = 0; k < 2; k++) {
    int src = ((r - 1 - k) % size + size) % size;
    agc[k] = 1 + src % 2;
    agd[k] = 3 * k + 1;
  }
  MPI_CHECK(MPI_Neighbor_allgatherv(mine, 1 + r % 2, MPI_INT, rbuf, agc, agd, MPI_INT, dg));
  for (int k = 0; k < 2; k++) {
    int src = ((r - 1 - k) % size + size) % size;
    for (int e = 0; e < agc[k]; e++)
      CHECK(rbuf[agd[k] + e] == val(src, 9, e), "%s: Neighbor_allgatherv block %d elem %d (expected %d got %d)", what,
            k, e, val(src, 9, e), rbuf[agd[k] + e]);
  }
  CHECK(rbuf[0] == SENTINEL, "%s: Neighbor_allgatherv wrote before block 0", what);
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

int main(int argc, char **argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  int rank, size;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  int status = -1;
  MPI_CHECK(MPI_Topo_test(MPI_COMM_WORLD, &status));
  CHECK(status == MPI_UNDEFINED, "Topo_test(world) (expected MPI_UNDEFINED got %d)", status);

  /* ---- Dims_create */
  if (rank == 0) {
    static const int extra[] = {72, 96, 120, 144, 210, 360, 1000, 1024, 4096, 30030};
    int zeros[4] = {0, 0, 0, 0};
    for (int nd = 1; nd <= 4; nd++) {
      for (int n = 1; n <= 64; n++) check_dims(n, nd, zeros);
      for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) check_dims(extra[i], nd, zeros);
    }
    int g1[3] = {0, 3, 0}, g2[3] = {2, 0, 0}, g3[2] = {4, 3};
    check_dims(6, 3, g1);
    check_dims(36, 3, g1);
    check_dims(64, 3, g2);
    check_dims(12, 2, g3);
  }

  /* ---- Cartesian: 2-D over all ranks, periodic in the first dimension */
  int dims2[2] = {0, 0}, per2[2] = {1, 0};
  MPI_CHECK(MPI_Dims_create(size, 2, dims2));
  MPI_Comm cart2;
  MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims2, per2, 0, &cart2));
  CHECK(cart2 != MPI_COMM_NULL, "Cart_create 2-D: MPI_COMM_NULL");
  check_cart(cart2, 2, dims2, per2, "cart 2-D");
  /* neighbour alltoall only where every periodic dimension has >= 3 processes: with 1 or
   * 2 the two directions lead to the same process and MPI-3.1 leaves the pairing open */
  cart_neighbor_colls(cart2, 2, dims2, per2, dims2[0] >= 3, "cart 2-D");
  int open2[2] = {0, 0};
  MPI_Comm cart2o;
  MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims2, open2, 1, &cart2o));
  cart_neighbor_colls(cart2o, 2, dims2, open2, 1, "cart 2-D non-periodic");
  MPI_CHECK(MPI_Comm_free(&cart2o));

  /* ---- Comm_dup keeps the topology */
  MPI_Comm dup;
  MPI_CHECK(MPI_Comm_dup(cart2, &dup));
  check_cart(dup, 2, dims2, per2, "dup of cart 2-D");
  MPI_CHECK(MPI_Comm_free(&cart2));
  check_cart(dup, 2, dims2, per2, "dup of cart 2-D after freeing the original");
  MPI_CHECK(MPI_Comm_free(&dup));

  /* ---- Cartesian with fewer processes than ranks: the last one gets MPI_COMM_NULL */
  if (size > 1) {
    int d1[1] = {size - 1}, p1[1] = {1};
    MPI_Comm c1;
    MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 1, d1, p1, 0, &c1));
    CHECK((rank == size - 1) == (c1 == MPI_COMM_NULL), "Cart_create(size-1): MPI_COMM_NULL on rank %d", rank);
    if (c1 != MPI_COMM_NULL) {
      check_cart(c1, 1, d1, p1, "cart 1-D of size-1");
      cart_neighbor_colls(c1, 1, d1, p1, 0, "cart 1-D of size-1");
      MPI_CHECK(MPI_Comm_free(&c1));
    }
    int newrank = -3;
    MPI_CHECK(MPI_Cart_map(MPI_COMM_WORLD, 1, d1, p1, &newrank));
    CHECK(rank == size - 1 ? newrank == MPI_UNDEFINED : (newrank >= 0 && newrank < size - 1),
          "Cart_map(size-1): newrank %d", newrank);
  }

  /* ---- 3-D, periodic in the middle dimension; Cart_sub keeping dims 0 and 2 */
  int dims3[3] = {0, 0, 0}, per3[3] = {0, 1, 0};
  MPI_CHECK(MPI_Dims_create(size, 3, dims3));
  MPI_Comm cart3, sub;
  MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 3, dims3, per3, 0, &cart3));
  check_cart(cart3, 3, dims3, per3, "cart 3-D");
  {
    int per3b[3] = {dims3[0] >= 3, dims3[1] >= 3, dims3[2] >= 3};
    MPI_Comm c3b;
    MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 3, dims3, per3b, 0, &c3b));
    cart_neighbor_colls(c3b, 3, dims3, per3b, 1, "cart 3-D periodic where >= 3");
    MPI_CHECK(MPI_Comm_free(&c3b));
  }
  int remain[3] = {1, 0, 1};
  MPI_CHECK(MPI_Cart_sub(cart3, remain, &sub));
  {
    int c[3], sd[2] = {dims3[0], dims3[2]}, sp[2] = {0, 0}, r = -1, s = -1;
    coords_of(rank, 3, dims3, c);
    MPI_CHECK(MPI_Comm_rank(sub, &r));
    MPI_CHECK(MPI_Comm_size(sub, &s));
    CHECK(s == dims3[0] * dims3[2], "Cart_sub size (expected %d got %d)", dims3[0] * dims3[2], s);
    CHECK(r == c[0] * dims3[2] + c[2], "Cart_sub rank (expected %d got %d)", c[0] * dims3[2] + c[2], r);
    check_cart(sub, 2, sd, sp, "Cart_sub(1,0,1)");
    int sum = -1, want = 0;
    for (int p = 0; p < size; p++) {
      int pc[3];
      coords_of(p, 3, dims3, pc);
      if (pc[1] == c[1]) want += p;
    }
    MPI_CHECK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, sub));
    CHECK(sum == want, "Cart_sub allreduce (expected %d got %d)", want, sum);
    MPI_CHECK(MPI_Comm_free(&sub));
  }
  int none[3] = {0, 0, 0};
  MPI_CHECK(MPI_Cart_sub(cart3, none, &sub));
  /* every process gets a zero-dimensional topology of its own (MPI-3.1 7.5.7); MPICH
   * before 4.2 gives one to rank 0 only */
  if (sub == MPI_COMM_NULL) {
    CHECK(mt_old_mpich() && rank != 0, "Cart_sub keeping no dimension: MPI_COMM_NULL");
  } else {
    int s = -1, nd = -1;
    MPI_CHECK(MPI_Comm_size(sub, &s));
    MPI_CHECK(MPI_Cartdim_get(sub, &nd));
    CHECK(s == 1 && nd == 0, "Cart_sub keeping no dimension: size %d ndims %d (expected 1, 0)", s, nd);
    MPI_CHECK(MPI_Comm_free(&sub));
  }
  MPI_CHECK(MPI_Comm_free(&cart3));

  /* ---- graph: a ring (i-1, i+1) plus an edge to (2i) % size, on all ranks */
  int *index = mt_malloc(sizeof(int) * (size_t)size), *edges = mt_malloc(sizeof(int) * (size_t)size * 3);
  int ne = 0;
  for (int i = 0; i < size; i++) {
    edges[ne++] = (i + 1) % size;
    edges[ne++] = (i + size - 1) % size;
    edges[ne++] = (2 * i) % size;
    index[i] = ne;
  }
  MPI_Comm graph;
  MPI_CHECK(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &graph));
  {
    int nn = -1, nedges = -1, *gi = mt_malloc(sizeof(int) * (size_t)size), *ge = mt_malloc(sizeof(int) * (size_t)ne);
    MPI_CHECK(MPI_Topo_test(graph, &status));
    CHECK(status == MPI_GRAPH, "Topo_test(graph) (expected MPI_GRAPH=%d got %d)", MPI_GRAPH, status);
    MPI_CHECK(MPI_Graphdims_get(graph, &nn, &nedges));
    CHECK(nn == size && nedges == ne, "Graphdims_get (expected %d/%d got %d/%d)", size, ne, nn, nedges);
    MPI_CHECK(MPI_Graph_get(graph, size, ne, gi, ge));
    for (int i = 0; i < size; i++) CHECK(gi[i] == index[i], "Graph_get index[%d] (expected %d got %d)", i, index[i], gi[i]);
    for (int e = 0; e < ne; e++) CHECK(ge[e] == edges[e], "Graph_get edges[%d] (expected %d got %d)", e, edges[e], ge[e]);
    for (int i = 0; i < size; i++) {
      int cnt = -1, nb[3];
      MPI_CHECK(MPI_Graph_neighbors_count(graph, i, &cnt));
      CHECK(cnt == 3, "Graph_neighbors_count(%d) (expected 3 got %d)", i, cnt);
      MPI_CHECK(MPI_Graph_neighbors(graph, i, 3, nb));
      for (int k = 0; k < 3; k++)
        CHECK(nb[k] == edges[3 * i + k], "Graph_neighbors(%d)[%d] (expected %d got %d)", i, k, edges[3 * i + k], nb[k]);
    }
    int newrank = -3;
    MPI_CHECK(MPI_Graph_map(MPI_COMM_WORLD, size, index, edges, &newrank));
    CHECK(newrank >= 0 && newrank < size, "Graph_map: newrank %d", newrank);
    free(gi);
    free(ge);
    MPI_Comm gdup;
    MPI_CHECK(MPI_Comm_dup(graph, &gdup));
    MPI_CHECK(MPI_Topo_test(gdup, &status));
    CHECK(status == MPI_GRAPH, "Topo_test(dup of graph) (expected MPI_GRAPH got %d)", status);
    MPI_CHECK(MPI_Comm_free(&gdup));
  }
  MPI_CHECK(MPI_Comm_free(&graph));
  /* neighbour collectives need a symmetric graph: the ring (i+1, i-1) */
  {
    ne = 0;
    for (int i = 0; i < size; i++) {
      edges[ne++] = (i + 1) % size;
      edges[ne++] = (i + size - 1) % size;
      index[i] = ne;
    }
    MPI_CHECK(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &graph));
    int recv[2] = {SENTINEL, SENTINEL};
    MPI_CHECK(MPI_Neighbor_allgather(&rank, 1, MPI_INT, recv, 1, MPI_INT, graph));
    for (int k = 0; k < 2; k++)
      CHECK(recv[k] == edges[2 * rank + k], "graph Neighbor_allgather block %d (expected %d got %d)", k,
            edges[2 * rank + k], recv[k]);
    if (size >= 3) { /* no repeated edges: block 0 comes from i+1, which sends to i through
                      * its block 1; block 1 from i-1 (its block 0) */
      int send[2] = {1000 * rank, 1000 * rank + 1};
      recv[0] = recv[1] = SENTINEL;
      MPI_CHECK(MPI_Neighbor_alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, graph));
      int w0 = 1000 * ((rank + 1) % size) + 1, w1 = 1000 * ((rank + size - 1) % size);
      CHECK(recv[0] == w0 && recv[1] == w1, "graph Neighbor_alltoall (expected %d,%d got %d,%d)", w0, w1, recv[0],
            recv[1]);
    }
    MPI_CHECK(MPI_Comm_free(&graph));
  }
  /* fewer nodes than ranks */
  if (size > 1) {
    int idx1[1] = {0};
    MPI_CHECK(MPI_Graph_create(MPI_COMM_WORLD, 1, idx1, edges, 0, &graph));
    CHECK((rank == 0) == (graph != MPI_COMM_NULL), "Graph_create(1 node): communicator on rank %d", rank);
    if (graph != MPI_COMM_NULL) MPI_CHECK(MPI_Comm_free(&graph));
  }

  /* ---- distributed graph, adjacent: from i-1, i-2; to i+1, i+2; weighted */
  MPI_Comm dg;
  {
    int src[2] = {(rank + size - 1) % size, (rank + 2 * size - 2) % size};
    int dst[2] = {(rank + 1) % size, (rank + 2) % size};
    int sw[2] = {10 + src[0], 20 + src[1]}, dw[2] = {10 + rank, 20 + rank};
    MPI_CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, sw, 2, dst, dw, MPI_INFO_NULL, 0, &dg));
    int in = -1, out = -1, weighted = -1, gs[2], gsw[2], gdst[2], gdw[2];
    MPI_CHECK(MPI_Topo_test(dg, &status));
    CHECK(status == MPI_DIST_GRAPH, "Topo_test(dist graph) (expected %d got %d)", MPI_DIST_GRAPH, status);
    MPI_CHECK(MPI_Dist_graph_neighbors_count(dg, &in, &out, &weighted));
    CHECK(in == 2 && out == 2 && weighted, "Dist_graph_neighbors_count (expected 2,2,1 got %d,%d,%d)", in, out,
          weighted);
    MPI_CHECK(MPI_Dist_graph_neighbors(dg, 2, gs, gsw, 2, gdst, gdw));
    for (int k = 0; k < 2; k++) {
      CHECK(gs[k] == src[k] && gsw[k] == sw[k], "adjacent sources[%d] (expected %d w%d got %d w%d)", k, src[k], sw[k],
            gs[k], gsw[k]);
      CHECK(gdst[k] == dst[k] && gdw[k] == dw[k], "adjacent destinations[%d] (expected %d w%d got %d w%d)", k, dst[k],
            dw[k], gdst[k], gdw[k]);
    }
    dist_neighbor_colls(dg, size, "adjacent dist graph");
    MPI_Comm dgdup;
    MPI_CHECK(MPI_Comm_dup(dg, &dgdup));
    dist_neighbor_colls(dgdup, size, "dup of adjacent dist graph");
    MPI_CHECK(MPI_Comm_free(&dgdup));
    MPI_CHECK(MPI_Comm_free(&dg));
  }

  /* ---- distributed graph, general: rank i declares i -> i+1 and i -> i+3; rank 0 also
   * declares j -> 2j for every j (unweighted) */
  {
    int n = rank == 0 ? 1 + size : 1;
    int *sources = mt_malloc(sizeof(int) * (size_t)n), *degrees = mt_malloc(sizeof(int) * (size_t)n);
    int *dests = mt_malloc(sizeof(int) * (size_t)(n + 2));
    sources[0] = rank;
    degrees[0] = 2;
    dests[0] = (rank + 1) % size;
    dests[1] = (rank + 3) % size;
    if (rank == 0)
      for (int j = 0; j < size; j++) {
        sources[1 + j] = j;
        degrees[1 + j] = 1;
        dests[2 + j] = (2 * j) % size;
      }
    MPI_CHECK(MPI_Dist_graph_create(MPI_COMM_WORLD, n, sources, degrees, dests, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg));
    /* expected neighbours of me, computed from the whole edge list */
    int *win = mt_malloc(sizeof(int) * (size_t)(3 * size + 3)), wout[3], nin = 0, nout = 0;
    for (int j = 0; j < size; j++) {
      int t[3] = {(j + 1) % size, (j + 3) % size, (2 * j) % size};
      for (int e = 0; e < 3; e++) {
        if (t[e] == rank) win[nin++] = j;
        if (j == rank) wout[nout++] = t[e];
      }
    }
    int in = -1, out = -1, weighted = -1;
    MPI_CHECK(MPI_Dist_graph_neighbors_count(dg, &in, &out, &weighted));
    CHECK(in == nin && out == nout && !weighted, "Dist_graph_neighbors_count (expected %d,%d,0 got %d,%d,%d)", nin,
          nout, in, out, weighted);
    int *gs = mt_malloc(sizeof(int) * (size_t)(nin + 1)), gd[3];
    MPI_CHECK(MPI_Dist_graph_neighbors(dg, in, gs, MPI_UNWEIGHTED, out, gd, MPI_UNWEIGHTED));
    int *sorted = mt_malloc(sizeof(int) * (size_t)(nin + 1));
    memcpy(sorted, gs, sizeof(int) * (size_t)nin);
    qsort(sorted, (size_t)nin, sizeof(int), cmp_int);
    qsort(win, (size_t)nin, sizeof(int), cmp_int);
    for (int k = 0; k < nin; k++) CHECK(sorted[k] == win[k], "general dist graph sources (sorted) [%d] (expected %d got %d)", k, win[k], sorted[k]);
    qsort(gd, (size_t)nout, sizeof(int), cmp_int);
    qsort(wout, (size_t)nout, sizeof(int), cmp_int);
    for (int k = 0; k < nout; k++) CHECK(gd[k] == wout[k], "general dist graph destinations (sorted) [%d] (expected %d got %d)", k, wout[k], gd[k]);
    /* neighbour allgather: block k comes from sources[k] as the topology lists them */
    int *recv = mt_malloc(sizeof(int) * (size_t)(nin + 1));
    for (int k = 0; k < nin; k++) recv[k] = SENTINEL;
    MPI_CHECK(MPI_Neighbor_allgather(&rank, 1, MPI_INT, recv, 1, MPI_INT, dg));
    for (int k = 0; k < nin; k++)
      CHECK(recv[k] == gs[k], "general dist graph Neighbor_allgather block %d (expected %d got %d)", k, gs[k], recv[k]);
    MPI_CHECK(MPI_Comm_free(&dg));
    free(gs);
    free(sorted);
    free(recv);
    free(win);
    free(sources);
    free(degrees);
    free(dests);
  }

  /* ---- bad arguments */
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN)); /* errors of no object (MPI-4.0) */
  MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims2, per2, 0, &cart2)); /* inherits MPI_ERRORS_RETURN */
  int c2[2] = {0, 0}, s, d, cnt, in, out, wtd, big[1] = {size + 1};
  expect_class(MPI_Cart_coords(MPI_COMM_WORLD, 0, 2, c2), MPI_ERR_TOPOLOGY, "Cart_coords(world)");
  expect_class(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &s, &d), MPI_ERR_TOPOLOGY, "Cart_shift(world)");
  expect_class(MPI_Cartdim_get(MPI_COMM_WORLD, &cnt), MPI_ERR_TOPOLOGY, "Cartdim_get(world)");
  expect_class(MPI_Graphdims_get(cart2, &cnt, &s), MPI_ERR_TOPOLOGY, "Graphdims_get(cart)");
  expect_class(MPI_Graph_neighbors_count(cart2, 0, &cnt), MPI_ERR_TOPOLOGY, "Graph_neighbors_count(cart)");
  expect_class(MPI_Dist_graph_neighbors_count(cart2, &in, &out, &wtd), MPI_ERR_TOPOLOGY,
               "Dist_graph_neighbors_count(cart)");
  expect_class(MPI_Neighbor_allgather(&rank, 1, MPI_INT, c2, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TOPOLOGY,
               "Neighbor_allgather(world)");
  expect_class(MPI_Topo_test(MPI_COMM_NULL, &status), MPI_ERR_COMM, "Topo_test(MPI_COMM_NULL)");
  expect_class(MPI_Cart_coords(cart2, size, 2, c2), MPI_ERR_RANK, "Cart_coords(rank == size)");
  expect_class(MPI_Cart_coords(cart2, 0, 1, c2), MPI_ERR_ARG, "Cart_coords(maxdims < ndims)");
  expect_class(MPI_Cart_shift(cart2, 2, 1, &s, &d), MPI_ERR_ARG, "Cart_shift(direction == ndims)");
  {
    int oc[2] = {0, dims2[1]}, rc = MPI_Cart_rank(cart2, oc, &s), cls = -1;
    /* out of range in the non-periodic dimension: MPI-3.1 names no class; Skein says
     * MPI_ERR_RANK, MPICH MPI_ERR_ARG */
    CHECK(rc != MPI_SUCCESS, "Cart_rank outside a non-periodic dimension succeeded");
    MPI_CHECK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_RANK || cls == MPI_ERR_ARG, "Cart_rank outside: class %d", cls);
  }
  expect_class(MPI_Cart_create(MPI_COMM_WORLD, 1, big, per2, 0, &dup), MPI_ERR_ARG, "Cart_create(dims > size)");
  expect_class(MPI_Cart_create(MPI_COMM_WORLD, -1, big, per2, 0, &dup), MPI_ERR_ARG, "Cart_create(ndims = -1)");
  int dd[2] = {0, 0}, bad7[2] = {2, 0}, neg[2] = {-1, 0};
  expect_class(MPI_Dims_create(7, 2, bad7), MPI_ERR_DIMS, "Dims_create(7, {2, 0})");
  expect_class(MPI_Dims_create(6, 2, neg), MPI_ERR_DIMS, "Dims_create(6, {-1, 0})");
  expect_class(MPI_Dims_create(6, -1, dd), MPI_ERR_ARG, "Dims_create(ndims = -1)");
  expect_class(MPI_Dims_create(-6, 2, dd), MPI_ERR_ARG, "Dims_create(nnodes = -6)");
  int gidx[1] = {1}, gedge[1] = {size + 5};
  expect_class(MPI_Graph_create(MPI_COMM_WORLD, 1, gidx, gedge, 0, &dup), MPI_ERR_ARG, "Graph_create(edge == nnodes)");
  expect_class(MPI_Graph_create(MPI_COMM_WORLD, size + 1, index, edges, 0, &dup), MPI_ERR_ARG,
               "Graph_create(nnodes > size)");
  expect_class(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, -1, c2, MPI_UNWEIGHTED, 0, c2, MPI_UNWEIGHTED,
                                              MPI_INFO_NULL, 0, &dup),
               MPI_ERR_ARG, "Dist_graph_create_adjacent(indegree = -1)");
  expect_class(MPI_Dist_graph_create(MPI_COMM_WORLD, -1, c2, c2, c2, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dup),
               MPI_ERR_ARG, "Dist_graph_create(n = -1)");
  /* graph queries with a bad rank */
  ne = 0;
  for (int i = 0; i < size; i++) {
    edges[ne++] = (i + 1) % size;
    index[i] = ne;
  }
  MPI_CHECK(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &graph));
  expect_class(MPI_Graph_neighbors_count(graph, size, &cnt), MPI_ERR_RANK, "Graph_neighbors_count(rank == size)");
  expect_class(MPI_Graph_neighbors(graph, -1, 1, c2), MPI_ERR_RANK, "Graph_neighbors(rank = -1)");
  expect_class(MPI_Cart_rank(graph, c2, &s), MPI_ERR_TOPOLOGY, "Cart_rank(graph)");
  MPI_CHECK(MPI_Comm_free(&graph));
  MPI_CHECK(MPI_Comm_free(&cart2));
  free(index);
  free(edges);
  return mt_finish();
}
