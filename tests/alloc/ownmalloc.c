/* Policy for programs that bring their own allocator (here Debian's libjemalloc.so, on
 * the link line before Skein): it serves every request, Skein's heap stays off and says
 * so, and the job runs. */
#define TEST_NAME "ownmalloc"
#include <malloc.h>

#include "alloctest.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPIX_Heap_stats s = at_stats();
  CHECK(s.enabled == 0, "the heap must be off when the program has its own malloc");
  void *p[100];
  for (int i = 0; i < 100; i++) p[i] = malloc((size_t)i * 100 + 1);
  int sum = 0, one = 1;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(sum == size, "allreduce");
  for (int i = 0; i < 100; i++) free(p[i]);
  at_pass();
  return 0;
}
