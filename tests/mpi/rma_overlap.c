/* Truly one-sided: rank 0 computes for COMPUTE seconds without any MPI call while every
 * other rank runs 1000 lock/put/flush/unlock epochs on its window and reads back. The
 * origins must finish long before the target's compute ends (an MPI that needs the
 * target's progress for passive target cannot), and the data must be in place when the
 * target looks. Needs the target on a core of its own: run it with as many workers as
 * ranks. */
#define TEST_NAME "rma_overlap"
#include "mpitest.h"

#define COMPUTE 1.0
#define EPOCHS 1000

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2, "needs 2 ranks or more");
    int *mem;
    MPI_Win win;
    MPI_CHECK(MPI_Win_allocate(size * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    for (int i = 0; i < size; i++) mem[i] = -1;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double origin_time = 0, compute_time = 0;
    if (rank == 0) {
        double t0 = MPI_Wtime();
        volatile double x = 0; /* no MPI call in here */
        while (MPI_Wtime() - t0 < COMPUTE)
            for (int i = 0; i < 1000; i++) x += i * 1e-9;
        compute_time = MPI_Wtime() - t0;
    } else {
        double t0 = MPI_Wtime();
        for (int e = 0; e < EPOCHS; e++) {
            int v = rank * 10000 + e, back = -1;
            MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
            MPI_CHECK(MPI_Put(&v, 1, MPI_INT, 0, rank, 1, MPI_INT, win));
            MPI_CHECK(MPI_Win_flush(0, win));
            MPI_CHECK(MPI_Get(&back, 1, MPI_INT, 0, rank, 1, MPI_INT, win));
            MPI_CHECK(MPI_Win_unlock(0, win));
            CHECK(back == v, "read back %d after putting %d", back, v);
        }
        origin_time = MPI_Wtime() - t0;
    }
    double worst = 0;
    MPI_CHECK(MPI_Reduce(&origin_time, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
    if (rank == 0) {
        for (int r = 1; r < size; r++)
            CHECK(mem[r] == r * 10000 + EPOCHS - 1, "slot %d (expected %d got %d)", r, r * 10000 + EPOCHS - 1, mem[r]);
        printf("target computed %.3f s; slowest origin finished %d epochs in %.4f s\n", compute_time, EPOCHS, worst);
        CHECK(worst < compute_time / 2, "origins took %.3f s while the target computed %.3f s: not one-sided", worst,
              compute_time);
    }
    MPI_CHECK(MPI_Win_free(&win));
    return mt_finish();
}
