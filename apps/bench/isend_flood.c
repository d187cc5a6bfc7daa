/* isend_flood.c - many small nonblocking sends to one rank (issue 17: 200,000 Isends of
 * 8 bytes to a rank of another process over tcp took 13 s, 0.6 s within one process).
 *
 * usage: mpiexec -n 2 ./isend_flood [N [BYTES [MODE]]]   (defaults 200000, 8, late)
 * Rank 0 posts N MPI_Isend of BYTES to rank 1, then MPI_Waitall. Rank 1 receives them in
 * order with MPI_Recv, after a barrier that follows rank 0's posting in MODE late (so every
 * message is unexpected first, the probe's shape), or with N preposted MPI_Irecv in MODE
 * early. Every message carries its index, checked by the receiver. Rank 0 prints
 *   isend_flood n=N bytes=B mode=M post_s=... wait_s=... total_s=...
 * where post_s is the time of the Isend loop, wait_s of the Waitall and total_s both plus
 * the receiver's end (a final zero-byte message back); post_cpu_s is the CPU time of the
 * kernel thread that ran the Isend loop (getrusage RUSAGE_THREAD: under Skein the worker
 * of rank 0, which runs nothing else while rank 0 posts) and proc_cpu_s that of rank 0's
 * whole process over the run (other ranks of the process included): wall times are noisy
 * on a loaded machine, CPU times much less. Extra ranks idle. Exit 1 on a wrong
 * message. No mutable globals: runs on Skein without the privatizer. */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <mpi.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>

static double cpu_s(int who)
{
    struct rusage ru;
    getrusage(who, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
           1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long n = argc > 1 ? atol(argv[1]) : 200000;
    int bytes = argc > 2 ? atoi(argv[2]) : 8;
    int early = argc > 3 && strcmp(argv[3], "early") == 0;
    if (size < 2 || n < 1 || bytes < (int)sizeof(long)) {
        if (rank == 0) fprintf(stderr, "usage: mpiexec -n 2 isend_flood [N [BYTES>=8 [late|early]]]\n");
        MPI_Finalize();
        return 2;
    }
    char *buf = malloc((size_t)n * (size_t)bytes);
    MPI_Request *req = malloc((size_t)n * sizeof *req);
    if (!buf || !req) {
        fprintf(stderr, "out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int bad = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        double c0 = cpu_s(RUSAGE_THREAD), p0 = cpu_s(RUSAGE_SELF);
        double t0 = MPI_Wtime();
        for (long i = 0; i < n; i++) {
            char *b = buf + i * bytes;
            memset(b, 0, (size_t)bytes);
            memcpy(b, &i, sizeof i);
            MPI_Isend(b, bytes, MPI_BYTE, 1, 7, MPI_COMM_WORLD, &req[i]);
        }
        double t1 = MPI_Wtime(), c1 = cpu_s(RUSAGE_THREAD);
        if (!early) MPI_Barrier(MPI_COMM_WORLD);
        MPI_Waitall((int)n, req, MPI_STATUSES_IGNORE);
        double t2 = MPI_Wtime();
        MPI_Recv(NULL, 0, MPI_BYTE, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double t3 = MPI_Wtime(), p3 = cpu_s(RUSAGE_SELF);
        printf("isend_flood n=%ld bytes=%d mode=%s post_s=%.3f wait_s=%.3f total_s=%.3f post_cpu_s=%.3f "
               "proc_cpu_s=%.3f\n",
               n, bytes, early ? "early" : "late", t1 - t0, t2 - t1, t3 - t0, c1 - c0, p3 - p0);
    } else if (rank == 1) {
        if (early) {
            for (long i = 0; i < n; i++)
                MPI_Irecv(buf + i * bytes, bytes, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &req[i]);
            MPI_Waitall((int)n, req, MPI_STATUSES_IGNORE);
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
            for (long i = 0; i < n; i++)
                MPI_Recv(buf + i * bytes, bytes, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        for (long i = 0; i < n && !bad; i++) {
            long v;
            memcpy(&v, buf + i * bytes, sizeof v);
            if (v != i) {
                fprintf(stderr, "ERROR message %ld carries %ld\n", i, v);
                bad = 1;
            }
        }
        MPI_Send(NULL, 0, MPI_BYTE, 0, 8, MPI_COMM_WORLD);
    } else if (!early) {
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    free(buf);
    free(req);
    MPI_Finalize();
    return bad;
}
