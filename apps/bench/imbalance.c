/* imbalance.c — load imbalance between ranks, against the ideal.
 *
 * Each step every rank computes (a calibrated spin loop) and then synchronizes with an
 * MPI_Allreduce (or, with -x halo, a ring halo exchange); the per-rank work follows a
 * pattern:
 *   linear  rank r does r + 1 units (the busiest rank does size units)
 *   band    a band of 4 consecutive ranks does 8 units, the others 1; the band moves
 *           by 4 ranks every 20 steps (the shape of adaptive mesh refinement)
 *   random  each rank draws 1..8 units per step (same draws for every MPI)
 * The ideal time is the total work divided by the cores (-c, default: online CPUs),
 * from a calibration of one unit in the same run (rank 0 alone, before the others
 * start). Prints one line per pattern: wall time, ideal, ratio.
 *
 * usage: imbalance [-p linear|band|random|all] [-s steps] [-u unit_us] [-c cores] [-x allreduce|halo]
 * Plain MPI-3.1: builds against any MPI (apps/balance.sh runs it side by side).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"

/* One unit of work: a dependent chain the compiler cannot fold. */
static inline uint64_t spin(uint64_t iters, uint64_t x)
{
    for (uint64_t i = 0; i < iters; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}

/* xorshift, so that every MPI draws the same "random" loads. */
static inline uint32_t draw(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

static int units_of(const char *pattern, int rank, int size, int step, uint32_t *seed)
{
    if (!strcmp(pattern, "linear"))
        return rank + 1;
    if (!strcmp(pattern, "band")) {
        int band = (step / 20) * 4 % size;
        return (rank - band + size) % size < 4 ? 8 : 1;
    }
    return 1 + (int)(draw(seed) % 8);
}

static void exchange(const char *how, int rank, int size, double *v)
{
    if (!strcmp(how, "halo")) {
        double l = 0, r = 0;
        MPI_Sendrecv(v, 1, MPI_DOUBLE, (rank + 1) % size, 0, &l, 1, MPI_DOUBLE, (rank + size - 1) % size, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(v, 1, MPI_DOUBLE, (rank + size - 1) % size, 1, &r, 1, MPI_DOUBLE, (rank + 1) % size, 1,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        *v += 1e-9 * (l + r);
    } else {
        double s;
        MPI_Allreduce(v, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        *v = s * 1e-9;
    }
}

int main(int argc, char **argv)
{
    const char *patterns = "all", *how = "allreduce";
    int steps = 100, cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    double unit_us = 200;
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-p")) patterns = argv[i + 1];
        else if (!strcmp(argv[i], "-s")) steps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-u")) unit_us = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "-c")) cores = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-x")) how = argv[i + 1];
        else {
            if (rank == 0) fprintf(stderr, "imbalance: unknown option %s\n", argv[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (steps < 1 || unit_us <= 0 || cores < 1) {
        if (rank == 0) fprintf(stderr, "imbalance: bad -s, -u or -c\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    /* Calibrate on rank 0 while the others wait in a barrier (the minimum of 5 tries):
     * iterations per unit and the time of one unit alone on a core. */
    double iters_d = 0;
    if (rank == 0) {
        uint64_t n = 1 << 16, x = 1;
        double t;
        for (;;) {
            t = MPI_Wtime();
            x = spin(n, x);
            t = MPI_Wtime() - t;
            if (t > 2e-3) break;
            n *= 2;
        }
        double best = 1e30;
        for (int k = 0; k < 5; k++) {
            double t0 = MPI_Wtime();
            x = spin(n, x);
            double d = MPI_Wtime() - t0;
            if (d < best) best = d;
        }
        iters_d = (double)n * unit_us * 1e-6 / best;
        if (x == 42) printf("#"); /* keep x live */
    }
    MPI_Bcast(&iters_d, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    uint64_t iters = (uint64_t)iters_d;
    if (rank == 0)
        printf("# imbalance: %d ranks, %d cores, %d steps, unit %.0f us, %s\n", size, cores, steps, unit_us, how);

    const char *all[] = {"linear", "band", "random"};
    for (int p = 0; p < 3; p++) {
        if (strcmp(patterns, "all") && strcmp(patterns, all[p])) continue;
        uint32_t seed = 2463534242u + 977u * (uint32_t)rank;
        long total_units = 0; /* every rank's draws, replayed */
        for (int r = 0; r < size; r++) {
            uint32_t sd = 2463534242u + 977u * (uint32_t)r;
            for (int s = 0; s < steps; s++) total_units += units_of(all[p], r, size, s, &sd);
        }
        double v = rank, t0;
        uint64_t x = (uint64_t)rank + 1;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        for (int s = 0; s < steps; s++) {
            x = spin(iters * (uint64_t)units_of(all[p], rank, size, s, &seed), x);
            v += (double)(x & 1);
            exchange(how, rank, size, &v);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        double wall = MPI_Wtime() - t0;
        double ideal = (double)total_units * unit_us * 1e-6 / (cores < size ? cores : size);
        if (rank == 0)
            printf("%-8s wall %8.3f s  ideal %8.3f s  ratio %.3f\n", all[p], wall, ideal, wall / ideal);
        if (v == -1) printf("#");
    }
    MPI_Finalize();
    return 0;
}
