/* Dynamic windows whose group spans processes (run with procs=2..3): every rank attaches
 * two regions and publishes their addresses; every rank puts into, gets from and
 * accumulates into every other rank's regions (fence and passive target); an address in
 * no attached region is MPI_ERR_RMA_RANGE; a region detached and another attached in its
 * place (after a fence) are seen as such; Win_allocate_shared across processes is a
 * clear error. */
#define TEST_NAME "rma_dynspan"
#include "mpitest.h"

#define N 16

static int expect_class(int rc, int cls) {
    int c = -1;
    if (rc == MPI_SUCCESS) return 0;
    MPI_Error_class(rc, &c);
    return c == cls;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Win win;
    MPI_CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    int flavor = 0, *fp, flag = 0;
    MPI_CHECK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &fp, &flag));
    if (flag) flavor = *fp;
    CHECK(flag && flavor == MPI_WIN_FLAVOR_DYNAMIC, "flavor %d", flavor);

    /* a: one slot of N ints per origin; b: N ints to read; c: a counter */
    int *a = malloc(sizeof(int) * N * (size_t)size), *b = malloc(sizeof(int) * N);
    long long *c = malloc(sizeof *c);
    for (int i = 0; i < N * size; i++) a[i] = -1;
    for (int k = 0; k < N; k++) b[k] = rank * 1000 + k;
    *c = 0;
    MPI_CHECK(MPI_Win_attach(win, a, (MPI_Aint)sizeof(int) * N * size));
    MPI_CHECK(MPI_Win_attach(win, b, (MPI_Aint)sizeof(int) * N));
    MPI_CHECK(MPI_Win_attach(win, c, (MPI_Aint)sizeof *c));
    MPI_Aint mine[3], *addr = malloc(sizeof(MPI_Aint) * 3 * (size_t)size);
    MPI_CHECK(MPI_Get_address(a, &mine[0]));
    MPI_CHECK(MPI_Get_address(b, &mine[1]));
    MPI_CHECK(MPI_Get_address(c, &mine[2]));
    MPI_CHECK(MPI_Allgather(mine, 3, MPI_AINT, addr, 3, MPI_AINT, MPI_COMM_WORLD));

    /* fence: put my slot into everyone's a, get everyone's b */
    int src[N], *back = malloc(sizeof(int) * N * (size_t)size);
    for (int k = 0; k < N; k++) src[k] = rank * 100 + k;
    MPI_CHECK(MPI_Win_fence(0, win));
    for (int t = 0; t < size; t++) {
        MPI_CHECK(MPI_Put(src, N, MPI_INT, t, addr[3 * t] + (MPI_Aint)sizeof(int) * N * rank, N, MPI_INT, win));
        MPI_CHECK(MPI_Get(back + N * t, N, MPI_INT, t, addr[3 * t + 1], N, MPI_INT, win));
    }
    MPI_CHECK(MPI_Win_fence(0, win));
    for (int r = 0; r < size; r++)
        for (int k = 0; k < N; k++) {
            CHECK(a[r * N + k] == r * 100 + k, "fence put: a[%d][%d] = %d", r, k, a[r * N + k]);
            CHECK(back[r * N + k] == r * 1000 + k, "fence get from %d: [%d] = %d", r, k, back[r * N + k]);
        }

    /* passive target: a contended counter on every rank, and an address outside every
     * region (the byte after c) */
    int iters = 20;
    MPI_CHECK(MPI_Win_lock_all(0, win));
    for (int it = 0; it < iters; it++)
        for (int t = 0; t < size; t++) {
            long long one = 1, old = -1;
            MPI_CHECK(MPI_Fetch_and_op(&one, &old, MPI_LONG_LONG, t, addr[3 * t + 2], MPI_SUM, win));
            MPI_CHECK(MPI_Win_flush(t, win));
            CHECK(old >= 0 && old < (long long)size * iters, "Fetch_and_op old %lld", old);
        }
    for (int t = 0; t < size; t++) {
        int x = 1;
        CHECK(expect_class(MPI_Put(&x, 1, MPI_INT, t, addr[3 * t + 2] + (MPI_Aint)sizeof(long long), 1, MPI_INT, win),
                           MPI_ERR_RMA_RANGE),
              "put past the attached counter of %d: no MPI_ERR_RMA_RANGE", t);
        CHECK(expect_class(MPI_Put(&x, 1, MPI_INT, t, addr[3 * t + 1] - (MPI_Aint)sizeof(int), 2, MPI_INT, win),
                           MPI_ERR_RMA_RANGE),
              "put straddling the start of b at %d: no MPI_ERR_RMA_RANGE", t);
    }
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(*c == (long long)size * iters, "counter = %lld, expected %d", *c, size * iters);

    /* detach b, attach d instead; after a fence the others reach d and not b */
    MPI_CHECK(MPI_Win_fence(0, win));
    MPI_CHECK(MPI_Win_detach(win, b));
    int *d = malloc(sizeof(int) * N);
    for (int k = 0; k < N; k++) d[k] = -rank - 1;
    MPI_CHECK(MPI_Win_attach(win, d, (MPI_Aint)sizeof(int) * N));
    MPI_Aint daddr, *dall = malloc(sizeof(MPI_Aint) * (size_t)size);
    MPI_CHECK(MPI_Get_address(d, &daddr));
    MPI_CHECK(MPI_Allgather(&daddr, 1, MPI_AINT, dall, 1, MPI_AINT, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Win_fence(0, win));
    int peer = (rank + 1) % size;
    MPI_CHECK(MPI_Accumulate(&rank, 1, MPI_INT, peer, dall[peer] + (MPI_Aint)sizeof(int) * 3, 1, MPI_INT, MPI_REPLACE, win));
    int x = 7;
    if (dall[peer] != addr[3 * peer + 1]) /* b's memory was not reused for d */
        CHECK(expect_class(MPI_Put(&x, 1, MPI_INT, peer, addr[3 * peer + 1], 1, MPI_INT, win), MPI_ERR_RMA_RANGE),
              "put into the detached region of %d: no MPI_ERR_RMA_RANGE", peer);
    MPI_CHECK(MPI_Win_fence(0, win));
    int from = (rank + size - 1) % size;
    CHECK(d[3] == from, "d[3] = %d, expected %d", d[3], from);
    CHECK(d[0] == -rank - 1 && d[4] == -rank - 1, "d's other elements changed: %d %d", d[0], d[4]);

    MPI_CHECK(MPI_Win_detach(win, a));
    MPI_CHECK(MPI_Win_detach(win, c));
    MPI_CHECK(MPI_Win_detach(win, d));
    MPI_CHECK(MPI_Win_free(&win));

    /* shared-memory windows across processes: a clear error (not a hang); within one
     * process (procs=1) they work */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int *sh = NULL;
    MPI_Win swin;
    int rc = MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &sh, &swin);
    if (rc == MPI_SUCCESS) MPI_CHECK(MPI_Win_free(&swin));
    else CHECK(expect_class(rc, MPI_ERR_UNSUPPORTED_OPERATION), "Win_allocate_shared: error class not UNSUPPORTED_OPERATION");

    free(a);
    free(b);
    free(c);
    free(d);
    free(addr);
    free(back);
    free(dall);
    if (rank == 0) printf("PASS %s\n", TEST_NAME);
    MPI_Finalize();
    return 0;
}
