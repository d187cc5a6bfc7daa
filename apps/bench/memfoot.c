/* memfoot.c — a program whose memory footprint apps/memory.sh measures: it runs one of
 * three small workloads, then holds still at a barrier while the script sums the PSS of
 * every process of the job.
 *
 *   MEMFOOT_DIR=DIR mpiexec -n N ./memfoot pingpong|allreduce|miniapp
 *
 *   pingpong   ranks in pairs exchange 8 B and 64 KiB messages (eager and rendezvous)
 *   allreduce  allreduce of 1 double and of 64 Ki doubles (512 KiB)
 *   miniapp    Jacobi iterations on a 256 x 256 grid of doubles per rank, rows split
 *              across ranks: halo rows with MPI_Sendrecv, a residual with MPI_Allreduce
 * When the work is done: barrier; rank 0 creates DIR/ready (the buffers are still
 * allocated), waits for DIR/go (at most 10 minutes), barrier, end. Without MEMFOOT_DIR
 * it does not wait. Rank 0 prints "memfoot prog=… ranks=… own_bytes=…": the bytes the
 * program itself allocates per rank. Plain MPI-3.1, no mutable global variables. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NX 256
#define NY 256

static void *xalloc(size_t n) {
  void *p = malloc(n);
  if (!p) {
    fprintf(stderr, "memfoot: out of memory\n");
    exit(2);
  }
  memset(p, 0, n);
  return p;
}

static size_t pingpong(int rank, int size, void **keep) {
  size_t big = 64 << 10;
  char *buf = xalloc(big);
  *keep = buf;
  int peer = rank ^ 1;
  if (peer >= size) return big;
  for (int i = 0; i < 100; i++) {
    size_t n = i % 2 ? big : 8;
    if (rank % 2 == 0) {
      MPI_Send(buf, (int)n, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
      MPI_Recv(buf, (int)n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf, (int)n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, (int)n, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
    }
  }
  return big;
}

static size_t allreduce(int rank, void **keep) {
  size_t n = 64 << 10;
  double *in = xalloc(2 * n * sizeof(double)), *out = in + n;
  *keep = in;
  double a = rank, b;
  for (int i = 0; i < 20; i++) MPI_Allreduce(&a, &b, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  for (size_t i = 0; i < n; i++) in[i] = (double)i;
  for (int i = 0; i < 5; i++) MPI_Allreduce(in, out, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return 2 * n * sizeof(double);
}

static size_t miniapp(int rank, int size, void **keep) {
  size_t bytes = 2 * (size_t)(NX + 2) * NY * sizeof(double);
  double *u = xalloc(bytes), *v = u + (NX + 2) * NY;
  *keep = u;
  for (int j = 0; j < NY; j++) u[(size_t)(rank == 0 ? 0 : 1) * NY + j] = 1.0; /* a hot edge */
  int up = rank > 0 ? rank - 1 : MPI_PROC_NULL, down = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
  for (int it = 0; it < 20; it++) {
    MPI_Sendrecv(&u[1 * NY], NY, MPI_DOUBLE, up, 0, &u[(size_t)(NX + 1) * NY], NY, MPI_DOUBLE, down, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&u[(size_t)NX * NY], NY, MPI_DOUBLE, down, 1, &u[0], NY, MPI_DOUBLE, up, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    double res = 0;
    for (int i = 1; i <= NX; i++)
      for (int j = 1; j < NY - 1; j++) {
        size_t k = (size_t)i * NY + j;
        v[k] = 0.25 * (u[k - NY] + u[k + NY] + u[k - 1] + u[k + 1]);
        res += (v[k] - u[k]) * (v[k] - u[k]);
      }
    double *t = u;
    u = v;
    v = t;
    if (it % 5 == 4) {
      double all;
      MPI_Allreduce(&res, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
  }
  return bytes;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 2) {
    if (rank == 0) fprintf(stderr, "usage: memfoot pingpong|allreduce|miniapp\n");
    MPI_Finalize();
    return 2;
  }
  void *keep = NULL;
  size_t own;
  if (!strcmp(argv[1], "pingpong")) own = pingpong(rank, size, &keep);
  else if (!strcmp(argv[1], "allreduce")) own = allreduce(rank, &keep);
  else if (!strcmp(argv[1], "miniapp")) own = miniapp(rank, size, &keep);
  else {
    if (rank == 0) fprintf(stderr, "memfoot: unknown program '%s'\n", argv[1]);
    MPI_Finalize();
    return 2;
  }
  MPI_Barrier(MPI_COMM_WORLD);
#ifdef SKEIN_MPI
  /* Skein's view at the same point: resident bytes of the rank arenas, bytes the program
   * holds (all ranks together), and free pages the pool keeps resident */
  MPIX_Heap_stats hs;
  MPIX_Heap_pool_stats ps;
  MPIX_Heap_get_stats(&hs);
  MPIX_Heap_get_pool_stats(&ps);
  double mine[2] = {(double)hs.arena_resident, (double)hs.in_use}, sum[2];
  MPI_Reduce(mine, sum, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("memfoot_skein arenas_resident=%.0f in_use=%.0f pool_resident_free=%zu\n", sum[0], sum[1],
           ps.resident_free_bytes);
#endif
  const char *dir = getenv("MEMFOOT_DIR");
  if (rank == 0) {
    printf("memfoot prog=%s ranks=%d own_bytes=%zu\n", argv[1], size, own);
    fflush(stdout);
    if (dir) {
      char path[4096];
      snprintf(path, sizeof path, "%s/ready", dir);
      FILE *f = fopen(path, "w");
      if (f) fclose(f);
      snprintf(path, sizeof path, "%s/go", dir);
      for (int i = 0; i < 60000 && access(path, F_OK) != 0; i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
      }
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  free(keep);
  MPI_Finalize();
  return 0;
}
