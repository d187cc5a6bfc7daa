/* Cost of privatized globals: a stencil over global arrays and a loop dominated by scalar
 * global accesses, timed on rank 0 (median of repetitions). Build it plain (MPICH) and with
 * skeincc -fprivatize; apps/legacy/bench_globals.sh prints the table. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define NX 512
#define NY 512
double u[NX][NY], unew[NX][NY]; /* grids */
double cx = 0.1, cy = 0.1;      /* parameters */
long updates;                   /* counters */
double acc, decay = 0.999999, x0 = 1.0;
long steps;
int flag = 1;
long hist[64];

__attribute__((noinline)) void stencil(void) {
  for (int i = 1; i < NX - 1; i++)
    for (int j = 1; j < NY - 1; j++)
      unew[i][j] = u[i][j] + cx * (u[i - 1][j] - 2 * u[i][j] + u[i + 1][j]) + cy * (u[i][j - 1] - 2 * u[i][j] + u[i][j + 1]);
  for (int i = 1; i < NX - 1; i++)
    for (int j = 1; j < NY - 1; j++) u[i][j] = unew[i][j];
  updates += (NX - 2) * (NY - 2);
}

/* A loop dominated by scalar global accesses: with the accessor hoisted, the privatized
 * loop is the plain loop with another base register. */
__attribute__((noinline)) void scalar(long n) {
  for (long k = 0; k < n; k++) {
    acc = acc * decay + x0;
    steps++;
    if (flag && (steps & 1023) == 0) hist[(steps >> 10) & 63]++;
  }
}

/* The worst case: a tiny function that touches a global, called in the loop, pays for
 * the accessor on every call. */
__attribute__((noinline)) void tick(void) { steps++; }
__attribute__((noinline)) void calls(long n) {
  for (long k = 0; k < n; k++) tick();
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int reps = argc > 1 ? atoi(argv[1]) : 15;
  long n = argc > 2 ? atol(argv[2]) : 20000000;
  for (int i = 0; i < NX; i++) u[i][0] = u[i][NY - 1] = 1.0;
  double ts[64], tl[64], tc[64];
  if (reps > 64) reps = 64;
  for (int r = 0; r < reps; r++) {
    double t0 = MPI_Wtime();
    stencil();
    double t1 = MPI_Wtime();
    scalar(n / reps);
    double t2 = MPI_Wtime();
    calls(n / reps);
    double t3 = MPI_Wtime();
    ts[r] = t1 - t0;
    tl[r] = t2 - t1;
    tc[r] = t3 - t2;
  }
  qsort(ts, reps, sizeof(double), cmp);
  qsort(tl, reps, sizeof(double), cmp);
  qsort(tc, reps, sizeof(double), cmp);
  if (rank == 0)
    printf("stencil %.3f ms  scalar %.3f ns/iter  calls %.3f ns/call  (checks: %ld %ld %.3f %.6f %ld)\n",
           ts[reps / 2] * 1e3, tl[reps / 2] * 1e9 / (n / reps), tc[reps / 2] * 1e9 / (n / reps), updates, steps, acc,
           u[5][1], hist[3]);
  MPI_Finalize();
  return 0;
}
