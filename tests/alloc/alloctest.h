/* Helpers of the per-rank heap tests (tests/alloc). No mutable globals: ranks are threads
 * of one process. Success: rank 0 prints "PASS <name>" after MPI_Finalize. Failure: a
 * line "FAIL <name>: rank R: <what> [file:line]", then MPI_Abort (or exit outside MPI). */
#ifndef SKEIN_TESTS_ALLOCTEST_H
#define SKEIN_TESTS_ALLOCTEST_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TEST_NAME
#error "define TEST_NAME before including alloctest.h"
#endif

static inline int at_rank(void) {
  int init = 0, fin = 0, r = -1;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (init && !fin) MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

#define CHECK(cond, ...)                                                                  \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      char at_msg_[256];                                                                  \
      snprintf(at_msg_, sizeof at_msg_, __VA_ARGS__);                                     \
      printf("FAIL " TEST_NAME ": rank %d: %s [%s:%d]\n", at_rank(), at_msg_, __FILE__, __LINE__); \
      fflush(stdout);                                                                     \
      if (at_rank() >= 0) MPI_Abort(MPI_COMM_WORLD, 1);                                   \
      exit(1);                                                                            \
    }                                                                                     \
  } while (0)

static inline MPIX_Heap_stats at_stats(void) {
  MPIX_Heap_stats s;
  CHECK(MPIX_Heap_get_stats(&s) == MPI_SUCCESS, "MPIX_Heap_get_stats failed");
  return s;
}

/* Fills / checks a block with a pattern derived from a seed. */
static inline void at_fill(void *p, size_t n, unsigned seed) {
  unsigned char *c = p;
  for (size_t i = 0; i < n; i++) c[i] = (unsigned char)(seed * 31u + i * 7u);
}
static inline int at_check(const void *p, size_t n, unsigned seed) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++)
    if (c[i] != (unsigned char)(seed * 31u + i * 7u)) return 0;
  return 1;
}

static inline void at_pass(void) {
  int r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Finalize();
  if (r == 0) printf("PASS " TEST_NAME "\n");
}

#endif
