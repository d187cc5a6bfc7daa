/* Arena selection: every rank has its own arena; blocks a rank allocates (from its ULT or
 * from a thread it created) land in that arena and nowhere else; the statistics see them. */
#define TEST_NAME "arena"
#include <pthread.h>

#include "alloctest.h"

#define BIG (4 << 20) /* large: counted in the arena at once (no tcache in between) */

static void *thread_alloc(void *arg) {
  void **out = arg;
  *out = malloc(BIG);
  memset(*out, 1, BIG);
  return NULL;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPIX_Heap_stats s = at_stats();
  CHECK(s.enabled == 1, "heap not enabled");
  CHECK(s.arena > 0, "arena %d: rank uses the default arena", s.arena);
  int *arenas = malloc(sizeof(int) * (size_t)size);
  MPI_Allgather(&s.arena, 1, MPI_INT, arenas, 1, MPI_INT, MPI_COMM_WORLD);
  for (int i = 0; i < size; i++)
    for (int j = i + 1; j < size; j++) CHECK(arenas[i] != arenas[j], "ranks %d and %d share arena %d", i, j, arenas[i]);
  free(arenas);

  /* One rank at a time (the first three and the last) allocates a big block, from its
   * ULT and from a thread it creates; only its own arena grows. */
  for (int turn = 0; turn < size; turn = turn < 3 || turn + 1 == size ? turn + 1 : size - 1) {
    MPIX_Heap_stats before = at_stats();
    MPI_Barrier(MPI_COMM_WORLD);
    void *a = NULL, *b = NULL;
    if (rank == turn) {
      a = malloc(BIG);
      memset(a, 2, BIG);
      pthread_t t;
      CHECK(pthread_create(&t, NULL, thread_alloc, &b) == 0, "pthread_create");
      pthread_join(t, NULL);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPIX_Heap_stats after = at_stats();
    long long grew = (long long)after.arena_allocated - (long long)before.arena_allocated;
    if (rank == turn) {
      CHECK(grew >= 2LL * BIG, "turn %d: own arena grew by %lld, expected >= %d", turn, grew, 2 * BIG);
      CHECK(after.nmalloc >= before.nmalloc + 2, "nmalloc %llu -> %llu", before.nmalloc, after.nmalloc);
      CHECK(after.in_use >= before.in_use + 2 * (size_t)BIG, "in_use %zu -> %zu", before.in_use, after.in_use);
    } else {
      CHECK(grew < BIG, "turn %d: arena of rank %d grew by %lld", turn, rank, grew);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(a);
    free(b);
  }
  at_pass();
  return 0;
}
