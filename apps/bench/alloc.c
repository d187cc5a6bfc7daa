/* alloc.c — allocation throughput of the per-rank heap against glibc's malloc, in the
 * same run, with the same ranks and threads.
 *
 *   mpiexec -n 16 ./alloc [--mode churn|prodcons|relay|all] [--reps R] [--scale S]
 *
 * Every figure is measured twice: through malloc/free (under Skein: the rank's own
 * jemalloc arena; elsewhere: whatever malloc the program has) and through glibc's
 * __libc_malloc/__libc_free, which bypass any interposed malloc.
 *   churn     each rank allocates 64 blocks of 16..512 bytes and frees them in another
 *             order, many times: small-object churn. Figure: million malloc+free pairs
 *             per second, all ranks together (median of R batches).
 *   prodcons  ranks in pairs: the even rank allocates 512 blocks of 32..256 bytes,
 *             sends the pointers, the odd rank frees them (frees across ranks). Needs
 *             one address space: Skein only. Figure: million blocks per second.
 *   relay     one rank after another allocates 16 MiB in 256 KiB blocks, touches them
 *             and frees them: pages one rank frees, the next needs. Figure: ms per
 *             rank; under Skein also the pool's mmap count (MPIX_Heap_get_pool_stats).
 * Output: one line per figure, key=value. No mutable global variables (ranks may be
 * threads of one process). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

#ifdef __GLIBC__
extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
#define HAVE_LIBC 1
#else
#define HAVE_LIBC 0
#endif

typedef struct {
  const char *name;
  void *(*alloc)(size_t);
  void (*free)(void *);
} allocator;

static void *sys_malloc(size_t n) { return malloc(n); }
static void sys_free(void *p) { free(p); }

static inline uint32_t lcg(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return *s >> 8;
}

#define CHURN_N 64
static double churn(const allocator *a, long rounds, int rank) {
  void *p[CHURN_N];
  uint32_t seed = 12345u + (uint32_t)rank;
  double t0 = MPI_Wtime();
  for (long r = 0; r < rounds; r++) {
    for (int i = 0; i < CHURN_N; i++) {
      size_t n = 16 + lcg(&seed) % 497;
      p[i] = a->alloc(n);
      if (!p[i]) {
        fprintf(stderr, "alloc: rank %d: out of memory\n", rank);
        exit(2);
      }
      *(volatile char *)p[i] = (char)i;
    }
    for (int i = 0; i < CHURN_N; i++) a->free(p[(i * 37) % CHURN_N]); /* 37 is prime to 64 */
  }
  return MPI_Wtime() - t0;
}

#define PC_BATCH 512
static double prodcons(const allocator *a, long rounds, int rank, int size) {
  void *p[PC_BATCH];
  uint32_t seed = 777u + (uint32_t)rank;
  int peer = rank ^ 1;
  if (peer >= size) return 0;
  double t0 = MPI_Wtime();
  for (long r = 0; r < rounds; r++) {
    if (rank % 2 == 0) {
      for (int i = 0; i < PC_BATCH; i++) {
        p[i] = a->alloc(32 + lcg(&seed) % 225);
        if (!p[i]) exit(2);
        *(volatile char *)p[i] = 1;
      }
      MPI_Send(p, (int)sizeof p, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
    } else {
      MPI_Recv(p, (int)sizeof p, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      for (int i = 0; i < PC_BATCH; i++) {
        if (*(volatile char *)p[i] != 1) {
          printf("ERROR prodcons: bad block from rank %d\n", peer);
          exit(1);
        }
        a->free(p[i]);
      }
    }
  }
  return MPI_Wtime() - t0;
}

#define RELAY_BLOCK (256 << 10)
#define RELAY_BLOCKS 64
static double relay(const allocator *a, int rank, int size) {
  void *p[RELAY_BLOCKS];
  int token = 0;
  if (rank > 0) MPI_Recv(&token, 1, MPI_INT, rank - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  double t0 = MPI_Wtime();
  for (int i = 0; i < RELAY_BLOCKS; i++) {
    p[i] = a->alloc(RELAY_BLOCK);
    if (!p[i]) exit(2);
    for (size_t off = 0; off < RELAY_BLOCK; off += 4096) ((volatile char *)p[i])[off] = 1;
  }
  for (int i = 0; i < RELAY_BLOCKS; i++) a->free(p[i]);
  double t = MPI_Wtime() - t0;
  if (rank + 1 < size) MPI_Send(&token, 1, MPI_INT, rank + 1, 1, MPI_COMM_WORLD);
  return t;
}

/* Slowest rank's time for one batch. */
static double max_time(double t) {
  double m;
  MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return m;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *mode = "all";
  int reps = 5;
  long scale = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--mode") && i + 1 < argc) mode = argv[++i];
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--scale") && i + 1 < argc) scale = atol(argv[++i]);
    else {
      if (rank == 0) fprintf(stderr, "usage: alloc [--mode churn|prodcons|relay|all] [--reps R] [--scale S]\n");
      MPI_Finalize();
      return 2;
    }
  }
  if (reps < 1 || reps > BENCH_MAX_REPS || scale < 1) {
    if (rank == 0) fprintf(stderr, "alloc: bad --reps or --scale\n");
    MPI_Finalize();
    return 2;
  }
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  int len;
  MPI_Get_library_version(lib, &len);
  int shared = strncmp(lib, "Skein", 5) == 0; /* one address space: pointers may travel */
  allocator al[2] = {{"malloc", sys_malloc, sys_free}};
  int nal = 1;
#if HAVE_LIBC
  al[nal++] = (allocator){"glibc", __libc_malloc, __libc_free};
#endif
  int all = !strcmp(mode, "all");
  if (rank == 0) printf("# alloc: %d ranks, %s\n", size, lib);

  if (all || !strcmp(mode, "churn")) {
    long rounds = 2000 * scale;
    for (int k = 0; k < nal; k++) {
      double v[BENCH_MAX_REPS];
      churn(&al[k], rounds / 10, rank); /* warm up */
      for (int r = 0; r < reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        v[r] = max_time(churn(&al[k], rounds, rank));
      }
      double t = bench_median(v, reps);
      if (rank == 0)
        printf("churn alloc=%s ranks=%d Mpairs_per_s=%.2f ns_per_pair=%.1f\n", al[k].name, size,
               (double)rounds * CHURN_N * size / t / 1e6, t / ((double)rounds * CHURN_N) * 1e9);
    }
  }
  if ((all || !strcmp(mode, "prodcons")) && shared && size >= 2) {
    long rounds = 200 * scale;
    for (int k = 0; k < nal; k++) {
      double v[BENCH_MAX_REPS];
      prodcons(&al[k], rounds / 10, rank, size);
      for (int r = 0; r < reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        v[r] = max_time(prodcons(&al[k], rounds, rank, size));
      }
      double t = bench_median(v, reps);
      if (rank == 0)
        printf("prodcons alloc=%s ranks=%d Mblocks_per_s=%.2f ns_per_block=%.1f\n", al[k].name, size,
               (double)rounds * PC_BATCH * (size / 2) / t / 1e6, t / ((double)rounds * PC_BATCH) * 1e9);
    }
  }
  if (all || !strcmp(mode, "relay")) {
    for (int k = 0; k < nal; k++) {
      MPI_Barrier(MPI_COMM_WORLD);
#ifdef SKEIN_MPI
      MPIX_Heap_pool_stats before, after;
      MPIX_Heap_get_pool_stats(&before);
#endif
      double t = relay(&al[k], rank, size), sum;
      MPI_Reduce(&t, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
      MPI_Barrier(MPI_COMM_WORLD);
#ifdef SKEIN_MPI
      MPIX_Heap_get_pool_stats(&after);
      if (rank == 0)
        printf("relay alloc=%s ranks=%d ms_per_rank=%.3f pool_maps=%llu pool_unmaps=%llu reused_MiB=%.1f recycling=%d\n",
               al[k].name, size, sum / size * 1e3, after.maps - before.maps, after.unmaps - before.unmaps,
               (double)(after.reused_bytes - before.reused_bytes) / (1 << 20), after.recycling);
#else
      if (rank == 0) printf("relay alloc=%s ranks=%d ms_per_rank=%.3f\n", al[k].name, size, sum / size * 1e3);
#endif
    }
  }
  MPI_Finalize();
  return 0;
}
