/* MPIX_Heap_get_stats / MPIX_Heap_get_pool_stats: the heap's statistics for programs. */
#include <string.h>

#include "mpi.h"
#include "sched/sched.h"
#include "heap.h"
#include "pool.h"

int MPIX_Heap_get_stats(MPIX_Heap_stats *st) {
  if (!st) return MPI_ERR_ARG;
  memset(st, 0, sizeof *st);
  st->numa_node = -1;
  skn_unit *u = skn_sched_self();
  if (!u || !u->owner) return MPI_ERR_OTHER; /* not called by a rank */
  skn_heap *h = skn_heap_of_owner(u->owner);
  if (!h) return MPI_SUCCESS;
  skn_heap_snap s;
  /* the explicit tcache belongs to the rank's ULTs: only they may flush it */
  skn_heap_snapshot(h, u->kind == SKN_UNIT_ULT, &s);
  *st = (MPIX_Heap_stats){.enabled = 1, .numa_node = h->node, .arena = (int)h->arena, .nmalloc = s.nmalloc,
                          .nfree = s.nfree, .in_use = s.in_use, .peak = s.peak,
                          .arena_allocated = s.arena_allocated, .arena_resident = s.arena_resident,
                          .arena_metadata = s.arena_metadata, .overhead = s.overhead};
  return MPI_SUCCESS;
}

int MPIX_Heap_get_pool_stats(MPIX_Heap_pool_stats *st) {
  if (!st) return MPI_ERR_ARG;
  memset(st, 0, sizeof *st);
  if (!skn_heap_enabled(NULL)) return MPI_SUCCESS;
  uint64_t maps, unmaps;
  st->recycling = skn_heap_extent_counts(&maps, &unmaps);
  st->maps = maps;
  st->unmaps = unmaps;
  skn_pool_stats p;
  skn_pool_get_stats(-2, &p);
  st->reused_bytes = p.reused_bytes;
  st->purges = p.purges;
  st->purge_bytes = p.purge_bytes;
  st->free_bytes = p.free_bytes;
  st->resident_free_bytes = p.dirty_bytes;
  return MPI_SUCCESS;
}
