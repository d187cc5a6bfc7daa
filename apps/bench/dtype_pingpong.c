/*
 * dtype_pingpong.c - what a derived datatype costs a message: ping-pong between ranks 0
 * and 1 of the same payload sent as contiguous doubles and as a strided vector (every
 * other double of a buffer twice as large), for a few sizes. Prints, per size and layout,
 * the median half round trip over 9 batches and the payload bandwidth. Plain MPI: builds
 * with any MPI's mpicc.
 *
 *   dtype_pingpong [--sizes BYTES,...]   (payload bytes, default 65536,1048576,4194304)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median seconds per round trip over 9 batches of `iters`. */
static double time_pingpong(int rank, void *buf, int count, MPI_Datatype t, int iters)
{
    double batch[9];
    for (int b = 0; b < 9; b++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            if (rank == 0) {
                MPI_Send(buf, count, t, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(buf, count, t, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(buf, count, t, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, count, t, 0, 0, MPI_COMM_WORLD);
            }
        }
        batch[b] = (MPI_Wtime() - t0) / iters;
    }
    qsort(batch, 9, sizeof batch[0], cmp_double);
    return batch[4];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        if (rank == 0) fprintf(stderr, "dtype_pingpong: needs 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    long sizes[16] = {65536, 1048576, 4194304};
    int nsizes = 3;
    if (argc > 2 && !strcmp(argv[1], "--sizes")) {
        nsizes = 0;
        for (char *tok = strtok(argv[2], ","); tok && nsizes < 16; tok = strtok(NULL, ","))
            sizes[nsizes++] = atol(tok);
    }
    if (rank == 0) printf("# dtype_pingpong: half round trip (median of 9 batches), payload MB/s (1 MB = 1e6 B)\n");
    for (int s = 0; s < nsizes; s++) {
        int n = (int)(sizes[s] / (long)sizeof(double));
        double *buf = calloc(2 * (size_t)n + 1, sizeof(double));
        MPI_Datatype vec;
        MPI_Type_vector(n, 1, 2, MPI_DOUBLE, &vec);
        MPI_Type_commit(&vec);
        int iters = sizes[s] >= (1 << 20) ? 20 : 200;
        double tc = time_pingpong(rank, buf, n, MPI_DOUBLE, iters);
        double tv = time_pingpong(rank, buf, 1, vec, iters);
        if (rank == 0) {
            printf("bytes=%ld layout=contiguous usec=%.2f MBps=%.0f\n", sizes[s], tc / 2 * 1e6, sizes[s] / (tc / 2) / 1e6);
            printf("bytes=%ld layout=vector usec=%.2f MBps=%.0f ratio=%.2f\n", sizes[s], tv / 2 * 1e6,
                   sizes[s] / (tv / 2) / 1e6, tv / tc);
        }
        MPI_Type_free(&vec);
        free(buf);
    }
    MPI_Finalize();
    return 0;
}
