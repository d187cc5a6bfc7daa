/* Statistics against known allocation patterns: counts, bytes in use (usable sizes),
 * peak, from the rank's ULT and from a thread it creates; the arena's own figures. */
#define TEST_NAME "stats"
#include <malloc.h>
#include <pthread.h>

#include "alloctest.h"

#define N 100

typedef struct {
  void *p[N];
  size_t usable;
} batch;

static void alloc_batch(batch *b, size_t n) {
  b->usable = 0;
  for (int i = 0; i < N; i++) {
    b->p[i] = malloc(n);
    b->usable += malloc_usable_size(b->p[i]);
  }
}
static void free_batch(batch *b) {
  for (int i = 0; i < N; i++) free(b->p[i]);
}
static void *thread_main(void *arg) {
  batch *b = arg;
  alloc_batch(b, 3000);
  return NULL;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  size_t sizes[] = {1, 24, 1000, 5000, 100000};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    batch *b = malloc(sizeof *b);
    MPIX_Heap_stats s0 = at_stats();
    alloc_batch(b, sizes[k] + (size_t)rank);
    MPIX_Heap_stats s1 = at_stats();
    CHECK(s1.nmalloc - s0.nmalloc == N, "size %zu: %llu mallocs counted, expected %d", sizes[k],
          s1.nmalloc - s0.nmalloc, N);
    CHECK(s1.in_use - s0.in_use == b->usable, "size %zu: in_use grew by %zu, expected %zu", sizes[k],
          s1.in_use - s0.in_use, b->usable);
    CHECK(s1.peak >= s1.in_use, "peak %zu below in_use %zu", s1.peak, s1.in_use);
    CHECK(s1.arena_allocated >= b->usable, "arena_allocated %zu below %zu", s1.arena_allocated, b->usable);
    CHECK(s1.arena_resident >= s1.arena_metadata && s1.arena_metadata > 0, "resident %zu, metadata %zu",
          s1.arena_resident, s1.arena_metadata);
    CHECK(s1.overhead == (s1.arena_resident > s1.arena_allocated ? s1.arena_resident - s1.arena_allocated : 0),
          "overhead %zu", s1.overhead);
    free_batch(b);
    MPIX_Heap_stats s2 = at_stats();
    CHECK(s2.nfree - s1.nfree == N, "size %zu: %llu frees counted", sizes[k], s2.nfree - s1.nfree);
    CHECK(s2.in_use == s0.in_use, "size %zu: in_use %zu after freeing, was %zu", sizes[k], s2.in_use, s0.in_use);
    CHECK(s2.peak >= s0.in_use + b->usable, "size %zu: peak %zu, expected >= %zu", sizes[k], s2.peak,
          s0.in_use + b->usable);
    free(b);
  }
  /* a thread of the rank counts for the rank */
  batch *b = malloc(sizeof *b);
  MPIX_Heap_stats s0 = at_stats();
  pthread_t t;
  CHECK(pthread_create(&t, NULL, thread_main, b) == 0, "pthread_create");
  pthread_join(t, NULL);
  MPIX_Heap_stats s1 = at_stats();
  CHECK(s1.nmalloc - s0.nmalloc >= N, "thread: %llu mallocs counted", s1.nmalloc - s0.nmalloc);
  /* Slack for glibc's thread bookkeeping: another rank's pthread_create that reuses the
   * cached stack of this rank's ended thread frees its DTV (this rank's memory) meanwhile,
   * once a rank waiting in pthread_join lets the other ranks of its worker run. */
  CHECK(s1.in_use - s0.in_use + 4096 >= b->usable, "thread: in_use grew by %zu, expected %zu",
        s1.in_use - s0.in_use, b->usable);
  free_batch(b);
  MPIX_Heap_stats s2 = at_stats();
  CHECK(s2.in_use <= s1.in_use - b->usable, "thread blocks freed by the rank: in_use %zu", s2.in_use);
  free(b);
  CHECK(MPIX_Heap_get_stats(NULL) == MPI_ERR_ARG, "NULL must give MPI_ERR_ARG");
  at_pass();
  return 0;
}
