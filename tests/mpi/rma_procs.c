/* Windows across processes: a window over MPI_COMM_WORLD spread over several processes
 * works (a fence epoch of puts to every member), and windows on the ranks of one
 * process keep working beside it. Windows Skein does not support across processes
 * (shared-memory ones) fail alike on every member, with MPI_ERR_UNSUPPORTED_OPERATION. */
#define TEST_NAME "rma_procs"
#include "mpitest.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int *mem = NULL, cls = -1;
    MPI_Win win = MPI_WIN_NULL;
    int rc = MPI_Win_allocate(size * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    MPI_Error_class(rc, &cls);
    int ok = rc == MPI_SUCCESS, all_ok = 0, any_ok = 0;
    MPI_CHECK(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Allreduce(&ok, &any_ok, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD));
    CHECK(all_ok == any_ok, "the members disagree on whether the window exists");
    CHECK(ok, "MPI_Win_allocate over MPI_COMM_WORLD failed (class %d)", cls);
    if (ok) {
        for (int i = 0; i < size; i++) mem[i] = -1;
        MPI_CHECK(MPI_Win_fence(0, win));
        for (int t = 0; t < size; t++) MPI_CHECK(MPI_Put(&rank, 1, MPI_INT, t, rank, 1, MPI_INT, win));
        MPI_CHECK(MPI_Win_fence(0, win));
        for (int i = 0; i < size; i++) CHECK(mem[i] == i, "mem[%d] = %d", i, mem[i]);
        MPI_CHECK(MPI_Win_free(&win));
    }
    /* a shared-memory window over every process: made, or refused by every member */
    int *shm = NULL;
    rc = MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &shm, &win);
    ok = rc == MPI_SUCCESS;
    MPI_CHECK(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Allreduce(&ok, &any_ok, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD));
    CHECK(all_ok == any_ok, "the members disagree on whether the shared window exists");
    if (ok) {
        MPI_CHECK(MPI_Win_free(&win));
    } else {
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_UNSUPPORTED_OPERATION, "class %d, expected MPI_ERR_UNSUPPORTED_OPERATION", cls);
        CHECK(win == MPI_WIN_NULL, "no window handle on failure");
    }
    /* the ranks of one node (one process under Skein) */
    MPI_Comm node;
    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int nr, ns;
    MPI_Comm_rank(node, &nr);
    MPI_Comm_size(node, &ns);
    MPI_CHECK(MPI_Win_allocate(ns * sizeof(int), sizeof(int), MPI_INFO_NULL, node, &mem, &win));
    MPI_CHECK(MPI_Win_lock_all(0, win));
    for (int t = 0; t < ns; t++) MPI_CHECK(MPI_Put(&nr, 1, MPI_INT, t, nr, 1, MPI_INT, win));
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Barrier(node));
    for (int i = 0; i < ns; i++) CHECK(mem[i] == i, "node window: mem[%d] = %d", i, mem[i]);
    MPI_CHECK(MPI_Win_free(&win));
    MPI_Comm_free(&node);
    return mt_finish();
}
