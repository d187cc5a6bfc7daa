/* Dynamic windows: each rank attaches two buffers, publishes their addresses, and its
 * right neighbour puts into and gets from them under lock_all; detached memory and
 * memory never attached are out of range; overlapping attaches are refused. */
#define TEST_NAME "rma_dynamic"
#include "mpitest.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Win win;
    MPI_CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    int flavor = 0, flag = 0, *fp;
    MPI_CHECK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &fp, &flag));
    CHECK(flag && *fp == MPI_WIN_FLAVOR_DYNAMIC, "flavor attribute");
    (void)flavor;
    int *a = mt_malloc(16 * sizeof(int)), *b = mt_malloc(8 * sizeof(int));
    for (int i = 0; i < 16; i++) a[i] = -1;
    for (int i = 0; i < 8; i++) b[i] = -1;
    MPI_CHECK(MPI_Win_attach(win, a, 16 * sizeof(int)));
    MPI_CHECK(MPI_Win_attach(win, b, 8 * sizeof(int)));
    int rc = MPI_Win_attach(win, a + 4, 4 * sizeof(int)), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RMA_ATTACH, "overlapping attach: class %d, expected MPI_ERR_RMA_ATTACH", cls);
    MPI_Aint mine[2], theirs[2 * 64];
    MPI_Get_address(a, &mine[0]);
    MPI_Get_address(b, &mine[1]);
    MPI_Aint *all = mt_malloc(2 * size * sizeof(MPI_Aint));
    MPI_CHECK(MPI_Allgather(mine, 2, MPI_AINT, all, 2, MPI_AINT, MPI_COMM_WORLD));
    (void)theirs;
    MPI_CHECK(MPI_Win_lock_all(0, win));
    int v[16];
    for (int i = 0; i < 16; i++) v[i] = rank * 100 + i;
    MPI_CHECK(MPI_Put(v, 16, MPI_INT, right, all[2 * right], 16, MPI_INT, win));
    MPI_CHECK(MPI_Put(v, 8, MPI_INT, right, all[2 * right + 1], 8, MPI_INT, win));
    /* one int past b: not attached */
    rc = MPI_Put(v, 9, MPI_INT, right, all[2 * right + 1], 9, MPI_INT, win);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RMA_RANGE, "put past an attached region: class %d, expected MPI_ERR_RMA_RANGE", cls);
    MPI_CHECK(MPI_Win_flush_all(win));
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < 16; i++) CHECK(a[i] == left * 100 + i, "a[%d] (expected %d got %d)", i, left * 100 + i, a[i]);
    for (int i = 0; i < 8; i++) CHECK(b[i] == left * 100 + i, "b[%d] (expected %d got %d)", i, left * 100 + i, b[i]);
    MPI_CHECK(MPI_Win_detach(win, b));
    rc = MPI_Win_detach(win, b);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RMA_ATTACH, "detaching twice: class %d, expected MPI_ERR_RMA_ATTACH", cls);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    int got[16];
    MPI_CHECK(MPI_Get(got, 16, MPI_INT, right, all[2 * right], 16, MPI_INT, win));
    rc = MPI_Get(got, 1, MPI_INT, right, all[2 * right + 1], 1, MPI_INT, win);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RMA_RANGE, "get from detached memory: class %d, expected MPI_ERR_RMA_RANGE", cls);
    MPI_CHECK(MPI_Win_unlock(right, win));
    for (int i = 0; i < 16; i++) CHECK(got[i] == rank * 100 + i, "got[%d]", i);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Win_detach(win, a));
    MPI_CHECK(MPI_Win_free(&win));
    free(a);
    free(b);
    free(all);
    return mt_finish();
}
