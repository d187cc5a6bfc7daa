/* Allocation before start-up (a constructor), in a rank before MPI_Init, after
 * MPI_Finalize, and after the job (a destructor); blocks cross those boundaries: the
 * constructor's block is freed by rank 0 (its address travels in the environment, as
 * the test may have no global variables). */
#define TEST_NAME "lifecycle"
#include <malloc.h>

#include "alloctest.h"

__attribute__((constructor)) static void before_start(void) {
  char *p = malloc(1000);
  CHECK(p && malloc_usable_size(p) >= 1000, "malloc in a constructor");
  strcpy(p, "from the constructor");
  char buf[32];
  snprintf(buf, sizeof buf, "%p", (void *)p);
  setenv("ALLOC_LIFECYCLE_PTR", buf, 1);
  void *q = calloc(10, 10);
  free(q);
}

__attribute__((destructor)) static void after_end(void) {
  void *p = malloc(12345);
  p = realloc(p, 123456);
  CHECK(p != NULL, "realloc in a destructor");
  free(p);
}

int main(int argc, char **argv) {
  char *early = malloc(5000);
  strcpy(early, "before MPI_Init");
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPIX_Heap_stats s = at_stats();
  CHECK(s.enabled && s.nmalloc >= 1, "allocation before MPI_Init not counted (nmalloc %llu)", s.nmalloc);
  if (rank == 0) {
    void *p = NULL;
    CHECK(sscanf(getenv("ALLOC_LIFECYCLE_PTR"), "%p", &p) == 1, "no pointer from the constructor");
    CHECK(strcmp(p, "from the constructor") == 0, "constructor's block corrupted");
    free(p); /* a default-arena block freed by a rank */
  }
  int r = rank;
  MPI_Finalize();
  CHECK(strcmp(early, "before MPI_Init") == 0, "block from before MPI_Init corrupted");
  free(early);
  char *late = malloc(100000);
  memset(late, 1, 100000);
  late = realloc(late, 10);
  CHECK(late && late[9] == 1, "realloc after MPI_Finalize");
  free(late);
  if (r == 0) printf("PASS " TEST_NAME "\n");
  return 0;
}
