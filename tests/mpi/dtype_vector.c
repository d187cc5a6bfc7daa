/*
 * dtype_vector.c - strided derived datatypes between ranks.
 *
 * Around the ring (self with 1 rank), for columns of N x 7 row-major arrays of
 * doubles with N = 16 (128 bytes), 500 and 12000 rows (small, medium and large
 * messages): a vector column sent and received as contiguous doubles (Sendrecv),
 * received into a column of another array (Irecv/Isend, Issend/Recv; the rest of
 * the array must stay untouched), three consecutive columns with a resized
 * column type (count 3) received as contiguous, and a duplicate of the column
 * type freed while its Isend is still pending.  Then a subarray of a 3-D array
 * (C and Fortran order) received as contiguous, and a block-cyclic darray of a
 * 2-D global array on a process grid, checked against a hand computation of the
 * indices each rank owns; the darray sizes add up to the global size.
 */
#define TEST_NAME "dtype_vector"
#include "mpitest.h"

#define M 7

static double val(int owner, int r, int c) { return owner * 1e7 + r * 100.0 + c; }

static void column_tests(int rank, int size, int N, int step)
{
    const int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    double *A = mt_malloc((size_t)N * M * sizeof *A);
    double *B = mt_malloc((size_t)N * M * sizeof *B);
    double *got = mt_malloc(3 * (size_t)N * sizeof *got);
    for (int r = 0; r < N; r++)
        for (int c = 0; c < M; c++)
            A[r * M + c] = val(rank, r, c);

    MPI_Datatype col, colr, dup;
    MPI_CHECK(MPI_Type_vector(N, 1, M, MPI_DOUBLE, &col));
    MPI_CHECK(MPI_Type_commit(&col));
    int tsize;
    MPI_Aint lb, ext;
    MPI_CHECK(MPI_Type_size(col, &tsize));
    MPI_CHECK(MPI_Type_get_extent(col, &lb, &ext));
    CHECK(tsize == N * 8, "N=%d: MPI_Type_size of the column (expected %d got %d)", N, N * 8, tsize);
    CHECK(lb == 0 && ext == (MPI_Aint)((N - 1) * M + 1) * 8,
          "N=%d: extent of the column (expected 0,%ld got %ld,%ld)", N, (long)((N - 1) * M + 1) * 8, (long)lb,
          (long)ext);

    const int c = (rank + step) % M, cl = (left + step) % M;
    MPI_Status st;

    /* 1. column -> contiguous */
    for (int k = 0; k < N; k++) got[k] = -1;
    MPI_CHECK(MPI_Sendrecv(A + c, 1, col, right, 1, got, N, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &st));
    CHECK_STATUS(&st, MPI_DOUBLE, left, 1, N, "N=%d column -> contiguous", N);
    for (int r = 0; r < N; r++)
        CHECK(got[r] == val(left, r, cl), "N=%d column -> contiguous: row %d (expected %g got %g)", N, r,
              val(left, r, cl), got[r]);

    /* 2. column -> column of another array (posted first), then with Issend/Recv */
    for (int mode = 0; mode < 2; mode++) {
        for (int k = 0; k < N * M; k++) B[k] = -1;
        const int dc = (c + 1 + mode) % M;
        MPI_Request rq[2];
        if (mode == 0) {
            MPI_CHECK(MPI_Irecv(B + dc, 1, col, left, 2, MPI_COMM_WORLD, &rq[0]));
            MPI_CHECK(MPI_Isend(A + c, 1, col, right, 2, MPI_COMM_WORLD, &rq[1]));
            MPI_CHECK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        } else {
            MPI_CHECK(MPI_Issend(A + c, 1, col, right, 3, MPI_COMM_WORLD, &rq[1]));
            MPI_CHECK(MPI_Recv(B + dc, 1, col, left, 3, MPI_COMM_WORLD, &st));
            CHECK_STATUS(&st, col, left, 3, 1, "N=%d Issend/Recv of a column", N);
            MPI_CHECK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
        }
        for (int r = 0; r < N; r++)
            for (int k = 0; k < M; k++) {
                double want = k == dc ? val(left, r, cl) : -1;
                CHECK(B[r * M + k] == want, "N=%d mode %d column -> column: B[%d][%d] (expected %g got %g)", N,
                      mode, r, k, want, B[r * M + k]);
            }
    }

    /* 3. three consecutive columns with a resized column type */
    MPI_CHECK(MPI_Type_create_resized(col, 0, sizeof(double), &colr));
    MPI_CHECK(MPI_Type_commit(&colr));
    MPI_CHECK(MPI_Type_get_extent(colr, &lb, &ext));
    CHECK(lb == 0 && ext == 8, "resized extent (expected 0,8 got %ld,%ld)", (long)lb, (long)ext);
    MPI_CHECK(MPI_Sendrecv(A + 2, 3, colr, right, 4, got, 3 * N, MPI_DOUBLE, left, 4, MPI_COMM_WORLD, &st));
    CHECK_STATUS(&st, colr, left, 4, 3, "N=%d three columns", N);
    for (int k = 0; k < 3; k++)
        for (int r = 0; r < N; r++)
            CHECK(got[k * N + r] == val(left, r, 2 + k), "N=%d columns: [%d][%d] (expected %g got %g)", N, k, r,
                  val(left, r, 2 + k), got[k * N + r]);
    /* and back into columns: contiguous -> resized columns */
    for (int k = 0; k < N * M; k++) B[k] = -1;
    MPI_CHECK(MPI_Sendrecv(got, 3 * N, MPI_DOUBLE, rank, 5, B + 4, 3, colr, rank, 5, MPI_COMM_WORLD, &st));
    for (int r = 0; r < N; r++)
        for (int k = 0; k < M; k++) {
            double want = k >= 4 ? val(left, r, k - 2) : -1;
            CHECK(B[r * M + k] == want, "N=%d contiguous -> columns: B[%d][%d] (expected %g got %g)", N, r, k,
                  want, B[r * M + k]);
        }

    /* 4. a duplicate, freed while its send is pending */
    MPI_Request rq;
    MPI_CHECK(MPI_Type_dup(col, &dup));
    MPI_CHECK(MPI_Isend(A + c, 1, dup, right, 6, MPI_COMM_WORLD, &rq));
    MPI_CHECK(MPI_Type_free(&dup));
    CHECK(dup == MPI_DATATYPE_NULL, "MPI_Type_free must set the handle to MPI_DATATYPE_NULL");
    for (int k = 0; k < N; k++) got[k] = -1;
    MPI_CHECK(MPI_Recv(got, N, MPI_DOUBLE, left, 6, MPI_COMM_WORLD, &st));
    MPI_CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int r = 0; r < N; r++)
        CHECK(got[r] == val(left, r, cl), "N=%d freed duplicate: row %d (expected %g got %g)", N, r,
              val(left, r, cl), got[r]);

    MPI_CHECK(MPI_Type_free(&colr));
    MPI_CHECK(MPI_Type_free(&col));
    free(A);
    free(B);
    free(got);
}

static void subarray_tests(int rank, int size)
{
    const int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    const int sizes[3] = {4, 5, 6}, sub[3] = {2, 3, 4}, starts[3] = {1, 2, 1};
    int a[4 * 5 * 6], got[24];
    for (int i = 0; i < 120; i++)
        a[i] = rank * 1000 + i;
    for (int order = 0; order < 2; order++) {
        MPI_Datatype t;
        MPI_CHECK(MPI_Type_create_subarray(3, sizes, sub, starts, order ? MPI_ORDER_FORTRAN : MPI_ORDER_C,
                                           MPI_INT, &t));
        MPI_CHECK(MPI_Type_commit(&t));
        MPI_Aint lb, ext;
        MPI_CHECK(MPI_Type_get_extent(t, &lb, &ext));
        CHECK(lb == 0 && ext == 120 * 4, "subarray extent (expected 0,480 got %ld,%ld)", (long)lb, (long)ext);
        MPI_CHECK(MPI_Sendrecv(a, 1, t, right, 7, got, 24, MPI_INT, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        int k = 0;
        if (!order) {
            for (int i = starts[0]; i < starts[0] + sub[0]; i++)
                for (int j = starts[1]; j < starts[1] + sub[1]; j++)
                    for (int l = starts[2]; l < starts[2] + sub[2]; l++, k++) {
                        int want = left * 1000 + (i * sizes[1] + j) * sizes[2] + l;
                        CHECK(got[k] == want, "C subarray element %d (expected %d got %d)", k, want, got[k]);
                    }
        } else { /* Fortran: index 0 fastest, element (i,j,l) at i + 4 (j + 5 l) */
            for (int l = starts[2]; l < starts[2] + sub[2]; l++)
                for (int j = starts[1]; j < starts[1] + sub[1]; j++)
                    for (int i = starts[0]; i < starts[0] + sub[0]; i++, k++) {
                        int want = left * 1000 + i + sizes[0] * (j + sizes[1] * l);
                        CHECK(got[k] == want, "Fortran subarray element %d (expected %d got %d)", k, want, got[k]);
                    }
        }
        MPI_CHECK(MPI_Type_free(&t));
    }
}

static void darray_tests(int rank, int size)
{
    /* global 10 x 9 ints; rows cyclic(2) over p0 processes, columns block over p1 */
    enum { GX = 10, GY = 9 };
    const int p1 = size % 2 == 0 ? 2 : 1, p0 = size / p1;
    const int gsizes[2] = {GX, GY}, distribs[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK};
    const int dargs[2] = {2, MPI_DISTRIBUTE_DFLT_DARG}, psizes[2] = {p0, p1};
    int g[GX * GY], local[GX * GY];
    for (int i = 0; i < GX * GY; i++)
        g[i] = i;
    MPI_Datatype t;
    MPI_CHECK(MPI_Type_create_darray(size, rank, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_INT, &t));
    MPI_CHECK(MPI_Type_commit(&t));
    /* what this rank owns, by hand: coordinates in a row-major process grid */
    const int r0 = rank / p1, r1 = rank % p1, bcol = (GY + p1 - 1) / p1;
    int want[GX * GY], n = 0;
    for (int i = 0; i < GX; i++) {
        if ((i / 2) % p0 != r0)
            continue;
        for (int j = r1 * bcol; j < (r1 + 1) * bcol && j < GY; j++)
            want[n++] = i * GY + j;
    }
    int tsize;
    MPI_CHECK(MPI_Type_size(t, &tsize));
    CHECK(tsize == n * 4, "darray size (expected %d got %d)", n * 4, tsize);
    MPI_Aint lb, ext;
    MPI_CHECK(MPI_Type_get_extent(t, &lb, &ext));
    CHECK(lb == 0 && ext == GX * GY * 4, "darray extent (expected 0,%d got %ld,%ld)", GX * GY * 4, (long)lb,
          (long)ext);
    MPI_Status st;
    MPI_CHECK(MPI_Sendrecv(g, 1, t, rank, 8, local, GX * GY, MPI_INT, rank, 8, MPI_COMM_WORLD, &st));
    CHECK_STATUS(&st, MPI_INT, rank, 8, n, "darray to self");
    for (int k = 0; k < n; k++)
        CHECK(local[k] == want[k], "darray element %d (expected %d got %d)", k, want[k], local[k]);
    int total = 0;
    MPI_CHECK(MPI_Allreduce(&tsize, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(total == GX * GY * 4, "darray pieces add up (expected %d got %d)", GX * GY * 4, total);
    MPI_CHECK(MPI_Type_free(&t));
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const int rows[3] = {16, 500, 12000};
    for (int i = 0; i < 3; i++)
        for (int step = 0; step < 2; step++)
            column_tests(rank, size, rows[i], step);
    subarray_tests(rank, size);
    darray_tests(rank, size);
    return mt_finish();
}
