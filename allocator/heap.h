/* Per-rank heap: each rank gets its own jemalloc arena (bound to the NUMA node of its
 * worker, extents from the process-wide pool of pool.h) and an explicit tcache.
 * Knows ranks only as an index and a NUMA node; boot.c stores the heap in skn_rank.
 * Thread safety: a heap's `flags` (explicit tcache) may be used only by the rank's ULTs,
 * which all run on one worker and never switch inside malloc; the rank's kernel threads
 * use the rank's arena through their own tcache (skn_heap_adopt_thread). */
#ifndef SKN_ALLOC_HEAP_H
#define SKN_ALLOC_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

/* Small blocks (at most SKN_HEAP_BIN_MAX bytes) freed by a rank's ULTs wait in the
 * rank's bins for its next malloc of the same jemalloc size class: jemalloc's mallocx
 * with explicit arena and tcache costs ~140 instructions and sdallocx ~115 (its fast
 * path serves only the thread's implicit tcache), a bin push or pop ~5. Bins refill
 * from and flush to the rank's arena (through its explicit tcache) in halves. */
#define SKN_HEAP_BIN_MAX 1024
#define SKN_HEAP_NBINS 24  /* jemalloc 5.3 has 21 size classes up to 1 KiB */
#define SKN_HEAP_BIN_CAP 32
#define SKN_HEAP_SLOTS 544 /* sum of the bins' capacities (535 with jemalloc 5.3) */

typedef struct skn_heap_classes {
  int nbins;
  uint8_t of[SKN_HEAP_BIN_MAX / 8 + 1]; /* bin of a request of n bytes: of[(n + 7) / 8] */
  uint32_t size[SKN_HEAP_NBINS];         /* jemalloc's size class of each bin */
  uint32_t cap[SKN_HEAP_NBINS];          /* blocks a bin holds: about 8 KiB, 4..BIN_CAP */
  uint16_t off[SKN_HEAP_NBINS];          /* a bin's first slot in skn_heap.slot */
} skn_heap_classes;
SKN_INTERNAL extern skn_heap_classes skn_heap_cls;

typedef struct skn_heap {
  int flags;   /* MALLOCX_ARENA | MALLOCX_TCACHE: allocation from the rank's ULTs */
  int tflags;  /* MALLOCX_TCACHE: deallocation from the rank's ULTs */
  unsigned arena, tcache;
  int node;    /* OS index of the NUMA node, -1 when unknown */
  int rank;
  /* Counters in usable bytes. Written with plain stores by the ULTs (one worker) and
   * with atomic adds by the rank's kernel threads; a block is counted by the rank that
   * frees it, so with cross-rank frees `net` of one rank may go below zero. */
  _Atomic(int64_t) net, tnet;
  _Atomic(int64_t) peak;           /* high-water mark of net + tnet */
  _Atomic(uint64_t) nmalloc, nfree, tnmalloc, tnfree;
  bool ended;                      /* `end` holds the statistics taken when the rank ended */
  uint8_t nbin[SKN_HEAP_NBINS];    /* blocks in each bin (ULTs only) */
  void *slot[SKN_HEAP_SLOTS];      /* bin c: slot[off[c] .. off[c] + nbin[c]) */
  struct skn_heap_stats_snap {
    uint64_t nmalloc, nfree;
    size_t in_use, peak, arena_allocated, arena_resident, arena_metadata, overhead;
  } end;
} __attribute__((aligned(SKN_CACHELINE))) skn_heap;

typedef struct skn_heap_stats_snap skn_heap_snap;

/* Process start: reads SKEIN_HEAP* and SKEIN_MEMSTATS, decides whether the heap is on
 * (off in sanitizer builds, with SKEIN_HEAP=0, or when the program brings its own
 * malloc). Call once, before the first skn_heap_rank_create. */
SKN_INTERNAL void skn_heap_init(int nranks);
/* A heap for world rank `rank` on NUMA node `node` (-1: unknown), or NULL when the heap
 * is off or jemalloc's limits on arenas/tcaches are reached (the rank then uses the
 * default arena through its worker's tcache). */
SKN_INTERNAL skn_heap *skn_heap_rank_create(int rank, int node);
/* The calling kernel thread now acts for the rank of h (h may be NULL). */
SKN_INTERNAL void skn_heap_adopt_thread(skn_heap *h);
/* Called by the rank's own ULT when the rank ends: flushes its tcache, keeps the stats. */
SKN_INTERNAL void skn_heap_rank_end(skn_heap *h);
/* Job end: with SKEIN_MEMSTATS=1 prints one line per rank and the pool on stderr. */
SKN_INTERNAL void skn_heap_report(int nranks, skn_heap *(*heap_of)(int rank));
/* Current statistics of h; flush_tcache only from the rank's own ULT. */
SKN_INTERNAL void skn_heap_snapshot(skn_heap *h, bool flush_tcache, skn_heap_snap *out);
/* New address space mapped and unmapped for rank arenas (by the pool, or by jemalloc
 * when recycling is off); returns whether recycling is on. */
SKN_INTERNAL bool skn_heap_extent_counts(uint64_t *maps, uint64_t *unmaps);
/* Returns every block of h's bins to jemalloc (from the rank's ULTs only). */
SKN_INTERNAL void skn_heap_flush_bins(skn_heap *h);
/* Whether requests of ranks go to per-rank arenas, and if not, why. */
SKN_INTERNAL bool skn_heap_enabled(const char **why_not);

/* The rank identity the allocator is given (it sits below core and knows no skn_rank):
 * the owner of a unit (sched.h's skn_unit.owner) is a rank whose object begins with this
 * head, as core/rank.c asserts for skn_rank. One load, as reading skn_rank's field was. */
typedef struct skn_heap_owner {
  skn_heap *heap; /* NULL: the default arena */
} skn_heap_owner;
static inline skn_heap *skn_heap_of_owner(const void *owner) { return ((const skn_heap_owner *)owner)->heap; }

#endif
