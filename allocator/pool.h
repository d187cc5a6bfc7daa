/* Process-wide page pool behind the extent hooks of the rank arenas.
 * Knows nothing of ranks or jemalloc: it hands out and takes back page runs, one free
 * list per NUMA node, so that pages one rank's arena gives back are reused by another
 * rank's arena on the same node without mmap/munmap. Address space is never unmapped;
 * physical pages go back to the kernel (MADV_DONTNEED) under the policy of
 * skn_pool_put. Thread safety: every function may be called from any thread. It never
 * calls malloc (it runs inside jemalloc's hooks). */
#ifndef SKN_ALLOC_POOL_H
#define SKN_ALLOC_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

#define SKN_POOL_MAX_NODE 63 /* OS NUMA node indices the pool keeps apart */

typedef struct skn_pool_config {
  size_t chunk;      /* address space mapped at a time (a multiple of the page size) */
  size_t keep;       /* per node: bytes of freed, still-resident pages kept for reuse */
  bool bind;         /* mbind new chunks to their node (when the kernel has that node) */
  size_t huge_min;   /* extents of at least this size are mapped with transparent huge pages; 0: never */
} skn_pool_config;

typedef struct skn_pool_stats {
  uint64_t maps, map_bytes;         /* mmap calls and bytes: new address space */
  uint64_t takes, reused_bytes;     /* runs handed out; bytes of them that came from puts */
  uint64_t puts, put_bytes;         /* runs given back by arenas */
  uint64_t purges, purge_bytes;     /* madvise(MADV_DONTNEED) calls and bytes */
  uint64_t binds, bind_failures;    /* mbind calls; calls the kernel refused */
  uint64_t unmaps;                  /* runs unmapped because the free list was full */
  size_t free_bytes, dirty_bytes;   /* now: free runs; those not known to be zero */
  size_t nruns;                     /* now: free runs */
} skn_pool_stats;

SKN_INTERNAL void skn_pool_configure(const skn_pool_config *cfg);
/* A run of `size` bytes aligned to `align` (both multiples of the page size) on `node`
 * (-1: no node). With want != NULL, only the run starting at want (extending an extent
 * in place), or NULL. *zero in: the caller needs zeroed memory; out: it is zeroed. */
SKN_INTERNAL void *skn_pool_take(int node, void *want, size_t size, size_t align, bool *zero);
/* Gives back a run taken from the same node's pool. It stays resident (the next take
 * reuses it without a page fault); when the node's free resident pages exceed cfg.keep,
 * those of the highest-addressed free runs go back to the kernel (MADV_DONTNEED). */
SKN_INTERNAL void skn_pool_put(int node, void *addr, size_t size);
/* Binds [p, p + size) to node with mbind(MPOL_BIND). Returns 0 when bound, 1 when not
 * attempted (node < 0, binding off, or the kernel has no such node), -1 on failure. */
SKN_INTERNAL int skn_pool_bind(void *p, size_t size, int node);
/* Whether the kernel has memory node `node` (false for nodes of a forced topology). */
SKN_INTERNAL bool skn_pool_node_real(int node);
/* Sum over nodes (node == -2) or one node's pool. */
SKN_INTERNAL void skn_pool_get_stats(int node, skn_pool_stats *out);

#endif
