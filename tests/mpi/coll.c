/* Collectives: every result is checked against a value computed independently from
 * closed-form inputs (element k of rank r is a known function of r and k), for several
 * sizes, roots, MPI_IN_PLACE and a non-commutative user operation. */
#define TEST_NAME "coll"
#include "mpitest.h"

/* Ranks are threads under Skein: no mutable globals; ask MPI each time. */
static int world_rank(void) { int r; MPI_Comm_rank(MPI_COMM_WORLD, &r); return r; }
static int world_size(void) { int n; MPI_Comm_size(MPI_COMM_WORLD, &n); return n; }
#define RANK world_rank()
#define SIZE world_size()

static int val(int r, int k) { return (r + 1) * 1000 + k % 997; }

static void test_bcast(int n) {
  for (int root = 0; root < SIZE; root += (SIZE > 4 ? SIZE / 3 : 1)) {
    int *b = mt_malloc(sizeof(int) * (size_t)(n ? n : 1));
    for (int k = 0; k < n; k++) b[k] = RANK == root ? val(root, k) : -1;
    MPI_CHECK(MPI_Bcast(b, n, MPI_INT, root, MPI_COMM_WORLD));
    for (int k = 0; k < n; k++) CHECK(b[k] == val(root, k), "bcast n=%d root=%d: b[%d]=%d", n, root, k, b[k]);
    free(b);
  }
}

static void test_gather_scatter(int n) {
  int root = SIZE - 1;
  int *s = mt_malloc(sizeof(int) * (size_t)(n + 1)), *r = mt_malloc(sizeof(int) * (size_t)(n * SIZE + 1));
  for (int k = 0; k < n; k++) s[k] = val(RANK, k);
  MPI_CHECK(MPI_Gather(s, n, MPI_INT, r, n, MPI_INT, root, MPI_COMM_WORLD));
  if (RANK == root)
    for (int j = 0; j < SIZE; j++)
      for (int k = 0; k < n; k++) CHECK(r[j * n + k] == val(j, k), "gather n=%d from %d [%d]", n, j, k);
  /* allgather, in place */
  for (int k = 0; k < n; k++) r[RANK * n + k] = val(RANK, k);
  MPI_CHECK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, n, MPI_INT, MPI_COMM_WORLD));
  for (int j = 0; j < SIZE; j++)
    for (int k = 0; k < n; k++) CHECK(r[j * n + k] == val(j, k), "allgather in place n=%d from %d [%d]", n, j, k);
  /* scatter: block j of the root goes to RANK j */
  if (RANK == root)
    for (int j = 0; j < SIZE; j++)
      for (int k = 0; k < n; k++) r[j * n + k] = val(j + 50, k);
  MPI_CHECK(MPI_Scatter(r, n, MPI_INT, s, n, MPI_INT, root, MPI_COMM_WORLD));
  for (int k = 0; k < n; k++) CHECK(s[k] == val(RANK + 50, k), "scatter n=%d [%d]=%d", n, k, s[k]);
  free(s);
  free(r);
}

static void test_v_variants(void) {
  /* RANK j contributes j+1 elements, placed in reverse order of ranks */
  int *counts = mt_malloc(sizeof(int) * (size_t)SIZE), *displs = mt_malloc(sizeof(int) * (size_t)SIZE);
  int total = 0;
  for (int j = SIZE - 1; j >= 0; j--) {
    counts[j] = j + 1;
    displs[j] = total;
    total += j + 1;
  }
  int *s = mt_malloc(sizeof(int) * (size_t)(RANK + 1)), *r = mt_malloc(sizeof(int) * (size_t)total);
  for (int k = 0; k <= RANK; k++) s[k] = val(RANK, k);
  MPI_CHECK(MPI_Allgatherv(s, RANK + 1, MPI_INT, r, counts, displs, MPI_INT, MPI_COMM_WORLD));
  for (int j = 0; j < SIZE; j++)
    for (int k = 0; k <= j; k++) CHECK(r[displs[j] + k] == val(j, k), "allgatherv from %d [%d]", j, k);
  MPI_CHECK(MPI_Gatherv(s, RANK + 1, MPI_INT, r, counts, displs, MPI_INT, 0, MPI_COMM_WORLD));
  if (RANK == 0)
    for (int j = 0; j < SIZE; j++)
      for (int k = 0; k <= j; k++) CHECK(r[displs[j] + k] == val(j, k), "gatherv from %d [%d]", j, k);
  memset(s, 0, sizeof(int) * (size_t)(RANK + 1));
  MPI_CHECK(MPI_Scatterv(r, counts, displs, MPI_INT, s, RANK + 1, MPI_INT, 0, MPI_COMM_WORLD));
  for (int k = 0; k <= RANK; k++) CHECK(s[k] == val(RANK, k), "scatterv [%d]", k);
  free(counts);
  free(displs);
  free(s);
  free(r);
}

static void test_alltoall(int n) {
  int *s = mt_malloc(sizeof(int) * (size_t)(n * SIZE + 1)), *r = mt_malloc(sizeof(int) * (size_t)(n * SIZE + 1));
  for (int j = 0; j < SIZE; j++)
    for (int k = 0; k < n; k++) s[j * n + k] = val(RANK * 100 + j, k); /* block for RANK j */
  MPI_CHECK(MPI_Alltoall(s, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD));
  for (int j = 0; j < SIZE; j++)
    for (int k = 0; k < n; k++) CHECK(r[j * n + k] == val(j * 100 + RANK, k), "alltoall n=%d from %d [%d]", n, j, k);
  MPI_CHECK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, s, n, MPI_INT, MPI_COMM_WORLD));
  for (int j = 0; j < SIZE; j++)
    for (int k = 0; k < n; k++) CHECK(s[j * n + k] == val(j * 100 + RANK, k), "alltoall in place from %d [%d]", j, k);
  /* alltoallv: RANK i sends (i+j)%3 elements to RANK j */
  int *sc = mt_malloc(sizeof(int) * (size_t)SIZE), *sd = mt_malloc(sizeof(int) * (size_t)SIZE);
  int *rc = mt_malloc(sizeof(int) * (size_t)SIZE), *rd = mt_malloc(sizeof(int) * (size_t)SIZE);
  int so = 0, ro = 0;
  for (int j = 0; j < SIZE; j++) {
    sc[j] = (RANK + j) % 3;
    sd[j] = so;
    so += sc[j];
    rc[j] = (j + RANK) % 3;
    rd[j] = ro;
    ro += rc[j];
  }
  int *sv = mt_malloc(sizeof(int) * (size_t)(so + 1)), *rv = mt_malloc(sizeof(int) * (size_t)(ro + 1));
  for (int j = 0; j < SIZE; j++)
    for (int k = 0; k < sc[j]; k++) sv[sd[j] + k] = val(RANK * 100 + j, k);
  MPI_CHECK(MPI_Alltoallv(sv, sc, sd, MPI_INT, rv, rc, rd, MPI_INT, MPI_COMM_WORLD));
  for (int j = 0; j < SIZE; j++)
    for (int k = 0; k < rc[j]; k++) CHECK(rv[rd[j] + k] == val(j * 100 + RANK, k), "alltoallv from %d [%d]: %d vs %d", j, k, rv[rd[j] + k], val(j * 100 + RANK, k));
  free(sc); free(sd); free(rc); free(rd); free(sv); free(rv);
  free(s);
  free(r);
}

/* Non-commutative: composition of affine maps t -> a*t + b (mod P) on MPI_2INT pairs;
 * x op y applies x first, then y. */
#define P 10007
typedef struct { int a, b; } affine;
static affine compose(affine x, affine y) {
  affine z = {(x.a * y.a) % P, (x.b * y.a + y.b) % P};
  return z;
}
static void compose_op(void *in, void *inout, int *len, MPI_Datatype *dt) {
  (void)dt;
  affine *x = in, *y = inout;
  for (int i = 0; i < *len; i++) y[i] = compose(x[i], y[i]); /* inout = in op inout */
}
static affine affine_of(int r, int k) { affine m = {(r * 7 + k + 2) % P, (r * 13 + 3 * k + 1) % P}; return m; }

static void test_reductions(int n) {
  int *s = mt_malloc(sizeof(int) * (size_t)(n + 1)), *r = mt_malloc(sizeof(int) * (size_t)(n + 1));
  s[0] = r[0] = 0;
  for (int k = 0; k < n; k++) s[k] = val(RANK, k);
  MPI_CHECK(MPI_Allreduce(s, r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  for (int k = 0; k < n; k++) {
    long long want = 0;
    for (int j = 0; j < SIZE; j++) want += val(j, k);
    CHECK(r[k] == want, "allreduce sum n=%d [%d]: %d vs %lld", n, k, r[k], want);
  }
  for (int k = 0; k < n; k++) r[k] = val(RANK, k);
  MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, r, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
  for (int k = 0; k < n; k++) CHECK(r[k] == val(SIZE - 1, k), "allreduce max in place [%d]", k);
  for (int root = 0; root < SIZE; root += SIZE > 3 ? SIZE - 1 : 1) {
    double *ds = mt_malloc(sizeof(double) * (size_t)(n + 1)), *dr = mt_malloc(sizeof(double) * (size_t)(n + 1));
    for (int k = 0; k < n; k++) ds[k] = 0.5 * val(RANK, k);
    MPI_CHECK(MPI_Reduce(ds, dr, n, MPI_DOUBLE, MPI_MIN, root, MPI_COMM_WORLD));
    if (RANK == root)
      for (int k = 0; k < n; k++) CHECK(dr[k] == 0.5 * val(0, k), "reduce min root=%d [%d]", root, k);
    free(ds);
    free(dr);
  }
  /* MAXLOC on (double, int) pairs */
  struct { double v; int i; } p[3], q[3];
  for (int k = 0; k < 3; k++) { p[k].v = (k == 1) ? 7.0 : (double)((RANK * 7 + k) % 5); p[k].i = RANK; }
  MPI_CHECK(MPI_Allreduce(p, q, 3, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD));
  for (int k = 0; k < 3; k++) {
    double best = -1; int who = -1;
    for (int j = 0; j < SIZE; j++) {
      double v = (k == 1) ? 7.0 : (double)((j * 7 + k) % 5);
      if (v > best) { best = v; who = j; }
    }
    CHECK(q[k].v == best && q[k].i == who, "maxloc [%d]: (%g,%d) vs (%g,%d)", k, q[k].v, q[k].i, best, who);
  }
  /* bitwise and logical */
  unsigned u = 1u << (RANK % 32), ur;
  MPI_CHECK(MPI_Allreduce(&u, &ur, 1, MPI_UNSIGNED, MPI_BOR, MPI_COMM_WORLD));
  unsigned uw = 0;
  for (int j = 0; j < SIZE; j++) uw |= 1u << (j % 32);
  CHECK(ur == uw, "bor %x vs %x", ur, uw);
  int t = RANK != 1, tr;
  MPI_CHECK(MPI_Allreduce(&t, &tr, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD));
  CHECK(tr == (SIZE < 2), "land %d", tr);
  /* non-commutative user op: the composition must be in RANK order */
  MPI_Op op;
  int commute = 1;
  MPI_CHECK(MPI_Op_create(compose_op, 0, &op));
  MPI_CHECK(MPI_Op_commutative(op, &commute));
  CHECK(!commute, "Op_commutative says a non-commutative op commutes");
  affine ms[5], mr[5];
  for (int k = 0; k < 5; k++) ms[k] = affine_of(RANK, k);
  MPI_CHECK(MPI_Allreduce(ms, mr, 5, MPI_2INT, op, MPI_COMM_WORLD));
  for (int k = 0; k < 5; k++) {
    affine w = affine_of(0, k);
    for (int j = 1; j < SIZE; j++) w = compose(w, affine_of(j, k));
    CHECK(mr[k].a == w.a && mr[k].b == w.b, "user op order [%d]: (%d,%d) vs (%d,%d)", k, mr[k].a, mr[k].b, w.a, w.b);
  }
  MPI_CHECK(MPI_Scan(ms, mr, 5, MPI_2INT, op, MPI_COMM_WORLD));
  for (int k = 0; k < 5; k++) {
    affine w = affine_of(0, k);
    for (int j = 1; j <= RANK; j++) w = compose(w, affine_of(j, k));
    CHECK(mr[k].a == w.a && mr[k].b == w.b, "scan user op [%d]", k);
  }
  MPI_CHECK(MPI_Op_free(&op));
  /* scan / exscan with SUM */
  int x = RANK + 1, sx = 0, ex = -5;
  MPI_CHECK(MPI_Scan(&x, &sx, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  CHECK(sx == (RANK + 1) * (RANK + 2) / 2, "scan %d", sx);
  MPI_CHECK(MPI_Exscan(&x, &ex, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  if (RANK > 0) CHECK(ex == RANK * (RANK + 1) / 2, "exscan %d", ex);
  /* reduce_scatter_block and reduce_scatter */
  int *big = mt_malloc(sizeof(int) * (size_t)(2 * SIZE)), blk[2];
  for (int k = 0; k < 2 * SIZE; k++) big[k] = val(RANK, k);
  MPI_CHECK(MPI_Reduce_scatter_block(big, blk, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  for (int k = 0; k < 2; k++) {
    long long want = 0;
    for (int j = 0; j < SIZE; j++) want += val(j, RANK * 2 + k);
    CHECK(blk[k] == want, "reduce_scatter_block [%d]", k);
  }
  int *counts = mt_malloc(sizeof(int) * (size_t)SIZE), off = 0;
  for (int j = 0; j < SIZE; j++) counts[j] = j % 2 + 1;
  for (int j = 0; j < RANK; j++) off += counts[j];
  MPI_CHECK(MPI_Reduce_scatter(big, blk, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  for (int k = 0; k < counts[RANK]; k++) {
    long long want = 0;
    for (int j = 0; j < SIZE; j++) want += val(j, off + k);
    CHECK(blk[k] == want, "reduce_scatter [%d]", k);
  }
  int a = 3, b = 4;
  MPI_CHECK(MPI_Reduce_local(&a, &b, 1, MPI_INT, MPI_PROD));
  CHECK(b == 12, "reduce_local %d", b);
  free(counts);
  free(big);
  free(s);
  free(r);
}

static void test_errors(void) {
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN)); /* errors of no object (MPI-4.0) */
  int x = 1, y, cls;
  cls = -1;
  MPI_Error_class(MPI_Bcast(&x, 1, MPI_INT, SIZE, MPI_COMM_WORLD), &cls);
  CHECK(cls == MPI_ERR_ROOT, "bcast bad root gives class %d", cls);
  MPI_Error_class(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), &cls);
  CHECK(cls == MPI_ERR_OP, "allreduce MPI_OP_NULL gives class %d", cls);
  MPI_Error_class(MPI_Allreduce(&x, &y, 1, MPI_BYTE, MPI_SUM, MPI_COMM_WORLD), &cls);
  CHECK(cls == MPI_ERR_OP, "SUM on MPI_BYTE gives class %d", cls);
  MPI_Error_class(MPI_Allreduce(&x, &y, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), &cls);
  CHECK(cls == MPI_ERR_COUNT, "negative count gives class %d", cls);
  MPI_Error_class(MPI_Barrier(MPI_COMM_NULL), &cls);
  CHECK(cls == MPI_ERR_COMM, "barrier on MPI_COMM_NULL gives class %d", cls);
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL)); /* errors of no object (MPI-4.0) */
}

int main(int argc, char **argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  int size = SIZE;
  int sizes[] = {0, 1, 7, 1000, 65536};
  for (int i = 0; i < 5; i++) {
    int n = sizes[i];
    if (size > 16 && n > 1000) continue;
    test_bcast(n);
    test_gather_scatter(n);
    test_alltoall(n > 1000 ? 1000 : n);
    test_reductions(n);
  }
  test_v_variants();
#ifdef SKEIN_MPI /* Debian's MPICH crashes on some of these instead of returning the error */
  test_errors();
#endif
  return mt_finish();
}
