/* io.c — collective (and independent) write and read of a 2-D block-distributed array
 * of doubles through a subarray file view: the classic checkpoint pattern.
 *
 * usage: io [-d DIR] [-n N] [-r REPS] [-m coll|indep|both] [-c CB_NODES]
 *   -d DIR   directory of the scratch file (default /tmp); use a tmpfs and a disk
 *   -n N     global array N x N doubles (default 4096: 128 MiB)
 *   -r REPS  timed repetitions; figures are medians (default 5)
 *   -m MODE  collective (write_all/read_all), independent (write/read, same view) or both
 *   -c N     hint cb_nodes=N (aggregators), default: the MPI's own choice
 *
 * Prints per mode: bandwidth in MB/s (10^6 B/s) of the slowest rank, and the file
 * blocks per rank (rows of its local block), so that `strace -c -f` counts of pwrite can
 * be set against ranks x blocks. Plain MPI-3.1: the same source builds with Skein,
 * MPICH (ROMIO) and Open MPI (OMPIO); apps/bench/io_compare.sh runs all three. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"

static double run(MPI_File fh, int write, int coll, double *buf, int n)
{
    MPI_Status st;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int rc;
    if (write)
        rc = coll ? MPI_File_write_at_all(fh, 0, buf, n, MPI_DOUBLE, &st) : MPI_File_write_at(fh, 0, buf, n, MPI_DOUBLE, &st);
    else
        rc = coll ? MPI_File_read_at_all(fh, 0, buf, n, MPI_DOUBLE, &st) : MPI_File_read_at(fh, 0, buf, n, MPI_DOUBLE, &st);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "io: %s failed (%d)\n", write ? "write" : "read", rc);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    double t = MPI_Wtime() - t0, tmax;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return tmax;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *dir = "/tmp", *mode = "both";
    int n = 4096, reps = 5;
    MPI_Info info;
    MPI_Info_create(&info);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-d")) dir = argv[i + 1];
        else if (!strcmp(argv[i], "-n")) n = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-r")) reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-m")) mode = argv[i + 1];
        else if (!strcmp(argv[i], "-c")) MPI_Info_set(info, "cb_nodes", argv[i + 1]);
    }
    if (reps < 1) reps = 1;
    if (reps > BENCH_MAX_REPS) reps = BENCH_MAX_REPS;
    int dims[2] = {0, 0}, periods[2] = {0, 0}, coords[2];
    MPI_Dims_create(size, 2, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Cart_coords(cart, rank, 2, coords);
    int gs[2] = {n, n}, sub[2], start[2];
    for (int d = 0; d < 2; d++) {
        int q = n / dims[d], r = n % dims[d];
        sub[d] = q + (coords[d] < r);
        start[d] = coords[d] * q + (coords[d] < r ? coords[d] : r);
    }
    MPI_Datatype ft;
    MPI_Type_create_subarray(2, gs, sub, start, MPI_ORDER_C, MPI_DOUBLE, &ft);
    MPI_Type_commit(&ft);
    int nloc = sub[0] * sub[1];
    double *buf = bench_xalloc((size_t)nloc * sizeof(double), "io", rank);
    for (int i = 0; i < sub[0]; i++)
        for (int j = 0; j < sub[1]; j++) buf[(size_t)i * sub[1] + j] = (double)(start[0] + i) * n + start[1] + j;
    long pid = (long)getpid();
    MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    char path[1024];
    snprintf(path, sizeof path, "%s/bench-io-%ld.dat", dir, pid);
    double bytes = (double)n * n * sizeof(double);
    if (rank == 0)
        printf("# io: %d ranks (%d x %d grid), %d x %d doubles (%.0f MiB) in %s, %d blocks per rank, %d reps\n", size,
               dims[0], dims[1], n, n, bytes / 1048576, dir, sub[0], reps);
    for (int coll = 1; coll >= 0; coll--) {
        if ((coll && !strcmp(mode, "indep")) || (!coll && !strcmp(mode, "coll"))) continue;
        MPI_File fh;
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, info, &fh);
        MPI_File_set_view(fh, 0, MPI_DOUBLE, ft, "native", MPI_INFO_NULL);
        double tw[BENCH_MAX_REPS], tr[BENCH_MAX_REPS];
        for (int r = 0; r < reps; r++) tw[r] = run(fh, 1, coll, buf, nloc);
        for (int r = 0; r < reps; r++) tr[r] = run(fh, 0, coll, buf, nloc);
        for (int i = 0; i < sub[0]; i++)
            for (int j = 0; j < sub[1]; j++)
                if (buf[(size_t)i * sub[1] + j] != (double)(start[0] + i) * n + start[1] + j) {
                    fprintf(stderr, "io: rank %d: wrong data read back at (%d, %d)\n", rank, i, j);
                    MPI_Abort(MPI_COMM_WORLD, 3);
                }
        MPI_File_close(&fh);
        double w = bench_median(tw, reps), rd = bench_median(tr, reps);
        if (rank == 0)
            printf("%-5s write %8.1f MB/s  read %8.1f MB/s  (median of %d; write %.4f s, read %.4f s)\n",
                   coll ? "coll" : "indep", bytes / w / 1e6, bytes / rd / 1e6, reps, w, rd);
    }
    MPI_Type_free(&ft);
    MPI_Info_free(&info);
    MPI_Comm_free(&cart);
    free(buf);
    MPI_Finalize();
    return 0;
}
