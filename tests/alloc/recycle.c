/* Recycling: ranks one after another allocate and free 32 MiB; with the pool, only the
 * first needs new address space and the others reuse the pages the previous one freed.
 *   recycle on M  pool on: later ranks map nothing new, and reuse at least M MiB of
 *                 still-resident pages each (the pool keeps SKEIN_HEAP_KEEP of them)
 *   recycle off   SKEIN_HEAP_RECYCLE=0: every rank's arena maps its own extents */
#define TEST_NAME "recycle"
#include "alloctest.h"

#define BLOCK (1 << 20)
#define NB 32

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(argc >= 2 && (!strcmp(argv[1], "on") || !strcmp(argv[1], "off")), "usage: recycle on|off");
  int on = strcmp(argv[1], "on") == 0;
  unsigned long long min_reused = (on && argc > 2 ? strtoull(argv[2], NULL, 10) : 0) << 20;
  MPIX_Heap_pool_stats p0, p1;
  CHECK(MPIX_Heap_get_pool_stats(&p0) == MPI_SUCCESS, "pool stats");
  CHECK(p0.recycling == on, "recycling is %d", p0.recycling);
  unsigned long long maps_later = 0;
  for (int turn = 0; turn < size; turn++) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != turn) continue;
    MPIX_Heap_get_pool_stats(&p0);
    void *b[NB];
    for (int i = 0; i < NB; i++) {
      b[i] = malloc(BLOCK);
      memset(b[i], turn, BLOCK);
    }
    for (int i = 0; i < NB; i++) free(b[i]);
    MPIX_Heap_get_pool_stats(&p1);
    if (turn > 0) maps_later = p1.maps - p0.maps;
    if (on && turn > 0) {
      CHECK(p1.maps == p0.maps, "turn %d mapped %llu new chunks instead of reusing", turn, p1.maps - p0.maps);
      CHECK(p1.reused_bytes - p0.reused_bytes >= min_reused, "turn %d reused only %llu bytes", turn,
            p1.reused_bytes - p0.reused_bytes);
    }
  }
  unsigned long long total;
  MPI_Reduce(&maps_later, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0 && !on) CHECK(total >= (unsigned long long)(size - 1), "without recycling later ranks mapped only %llu", total);
  at_pass();
  return 0;
}
