/* Shared windows: MPI_Win_allocate_shared (contiguous by default, and with
 * alloc_shared_noncontig), MPI_Win_shared_query pointers to every member's part, direct
 * stores into a neighbour's part and loads of it, synchronized by MPI_Win_sync and a
 * barrier inside a lock_all epoch (the standard's unified-model pattern). */
#define TEST_NAME "rma_shared"
#include "mpitest.h"

#define N 32

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &rank);
    MPI_Comm_size(node, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int noncontig = 0; noncontig < 2; noncontig++) {
        MPI_Info info;
        MPI_Info_create(&info);
        if (noncontig) MPI_Info_set(info, "alloc_shared_noncontig", "true");
        int *mine;
        MPI_Win win;
        /* rank r has N + r ints: parts of different sizes */
        MPI_CHECK(MPI_Win_allocate_shared((N + rank) * sizeof(int), sizeof(int), info, node, &mine, &win));
        MPI_Info_free(&info);
        MPI_Aint sz;
        int du;
        int *rp, *first;
        MPI_CHECK(MPI_Win_shared_query(win, right, &sz, &du, &rp));
        CHECK(sz == (MPI_Aint)((N + right) * sizeof(int)) && du == (int)sizeof(int), "shared_query size/disp_unit");
        MPI_CHECK(MPI_Win_shared_query(win, 0, &sz, &du, &first));
        if (!noncontig) { /* contiguous: my part starts where the previous ones end */
            CHECK(mine == first + (rank * N + rank * (rank - 1) / 2), "contiguous layout: my part at offset %td",
                  mine - first);
        }
        MPI_CHECK(MPI_Win_lock_all(0, win));
        for (int i = 0; i < N + right; i++) rp[i] = rank * 1000 + i; /* direct stores */
        MPI_CHECK(MPI_Win_sync(win));
        MPI_CHECK(MPI_Barrier(node));
        MPI_CHECK(MPI_Win_sync(win));
        for (int i = 0; i < N + rank; i++)
            CHECK(mine[i] == left * 1000 + i, "mine[%d] (expected %d got %d)", i, left * 1000 + i, mine[i]);
        int v = 0;
        MPI_CHECK(MPI_Get(&v, 1, MPI_INT, right, N - 1, 1, MPI_INT, win));
        MPI_CHECK(MPI_Win_flush(right, win));
        CHECK(v == rank * 1000 + N - 1, "MPI_Get on a shared window");
        MPI_CHECK(MPI_Win_unlock_all(win));
        MPI_CHECK(MPI_Win_free(&win));
    }
    /* a window of another flavor: shared_query is MPI_ERR_RMA_FLAVOR */
    int *m;
    MPI_Win w2;
    MPI_CHECK(MPI_Win_allocate(64, 1, MPI_INFO_NULL, node, &m, &w2));
    MPI_Win_set_errhandler(w2, MPI_ERRORS_RETURN);
    MPI_Aint sz;
    int du, *p, cls = -1;
    MPI_Error_class(MPI_Win_shared_query(w2, 0, &sz, &du, &p), &cls);
    CHECK(cls == MPI_ERR_RMA_FLAVOR, "shared_query on an allocated window: class %d, expected MPI_ERR_RMA_FLAVOR", cls);
    MPI_CHECK(MPI_Win_free(&w2));
    MPI_Comm_free(&node);
    return mt_finish();
}
