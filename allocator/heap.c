/* Per-rank arenas and tcaches, extent hooks into the pool, statistics. */
#define _GNU_SOURCE
#include "heap.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "pool.h"

#ifndef SKN_HEAP_OFF
#include "je.h"

/* Options of Skein's private jemalloc (the user's MALLOC_CONF still applies on top).
 * narenas:1 - threads outside ranks share one default arena; ranks have their own.
 * retain:false - jemalloc returns whole extents through the dalloc hook instead of
 * keeping them as retained address space per arena, so the pool can pass them on.
 * tcache_nslots_small_max:16 - each explicit tcache (one per rank) then takes ~10 KiB
 * instead of ~31 KiB; the rank's bins (malloc.c) absorb the churn in front of it and
 * move at most 16 blocks at a time through it. */
SKN_INTERNAL extern const char *skn_je_malloc_conf;
const char *skn_je_malloc_conf = "narenas:1,retain:false,tcache_nslots_small_max:16";

SKN_INTERNAL void *skn_alloc_own_malloc(size_t n); /* malloc.c: our malloc, by a hidden name */

#define MAX_ARENAS 4096
#define NODE_UNSET (-128)

skn_heap_classes skn_heap_cls;

/* The bins' size classes: jemalloc's, up to SKN_HEAP_BIN_MAX; each holds about 8 KiB. */
static void init_classes(void) {
  skn_heap_classes *c = &skn_heap_cls;
  c->nbins = 0;
  for (size_t k = 0; k <= SKN_HEAP_BIN_MAX / 8; k++) {
    size_t cls = skn_je_nallocx(k ? k * 8 : 1, 0);
    if (c->nbins == 0 || c->size[c->nbins - 1] != cls) {
      if (c->nbins == SKN_HEAP_NBINS) skn_fatal("heap: more size classes than bins");
      c->size[c->nbins] = (uint32_t)cls;
      size_t cap = 8192 / cls;
      c->cap[c->nbins] = (uint32_t)(cap < 4 ? 4 : cap > SKN_HEAP_BIN_CAP ? SKN_HEAP_BIN_CAP : cap);
      c->off[c->nbins] = (uint16_t)(c->nbins ? c->off[c->nbins - 1] + c->cap[c->nbins - 1] : 0);
      if (c->off[c->nbins] + c->cap[c->nbins] > SKN_HEAP_SLOTS) skn_fatal("heap: bins need more than %d slots", SKN_HEAP_SLOTS);
      c->nbins++;
    }
    c->of[k] = (uint8_t)(c->nbins - 1);
  }
}

static struct {
  bool on, recycle, memstats;
  const char *why_off;
  char why_buf[256];
  long long decay_ms;
  extent_hooks_t *dflt;   /* jemalloc's own hooks (arena 0) */
  extent_hooks_t hooks;   /* rank arenas */
  int creating_node;      /* node of the arena being created (its base is allocated inside arenas.create) */
  int8_t node_of[MAX_ARENAS];
  _Atomic(uint64_t) ext_allocs, ext_deallocs; /* recycling off: extents mapped / unmapped by jemalloc */
} heap_state;

static int node_of_arena(unsigned ind) {
  int n = ind < MAX_ARENAS ? heap_state.node_of[ind] : -1;
  return n == NODE_UNSET ? heap_state.creating_node : n;
}

/* ------------------------------------------------------------------ extent hooks */

/* Recycling on: every extent of a rank arena comes from and goes back to the pool. */
static void *pool_alloc(extent_hooks_t *eh, void *new_addr, size_t size, size_t align, bool *zero, bool *commit,
                        unsigned ind) {
  void *p = skn_pool_take(node_of_arena(ind), new_addr, size, align, zero);
  if (p) *commit = true;
  return p;
}
static bool pool_dalloc(extent_hooks_t *eh, void *addr, size_t size, bool committed, unsigned ind) {
  skn_pool_put(node_of_arena(ind), addr, size);
  return false;
}
static void pool_destroy(extent_hooks_t *eh, void *addr, size_t size, bool committed, unsigned ind) {
  skn_pool_put(node_of_arena(ind), addr, size);
}
static bool pool_commit(extent_hooks_t *eh, void *addr, size_t size, size_t off, size_t len, unsigned ind) {
  return false; /* pool memory is always committed */
}
static bool pool_decommit(extent_hooks_t *eh, void *addr, size_t size, size_t off, size_t len, unsigned ind) {
  return true; /* opt out: jemalloc purges instead */
}
static bool pool_purge(extent_hooks_t *eh, void *addr, size_t size, size_t off, size_t len, unsigned ind) {
  return madvise((char *)addr + off, len, MADV_DONTNEED) != 0;
}
static bool pool_split(extent_hooks_t *eh, void *addr, size_t size, size_t a, size_t b, bool committed, unsigned ind) {
  return false;
}
static bool pool_merge(extent_hooks_t *eh, void *a, size_t sa, void *b, size_t sb, bool committed, unsigned ind) {
  return false; /* runs of one node may span two mappings: the pool never unmaps */
}

/* Recycling off: jemalloc's own hooks, plus the NUMA binding and counting. */
static void *bind_alloc(extent_hooks_t *eh, void *new_addr, size_t size, size_t align, bool *zero, bool *commit,
                        unsigned ind) {
  void *p = heap_state.dflt->alloc(heap_state.dflt, new_addr, size, align, zero, commit, ind);
  if (p) {
    atomic_fetch_add_explicit(&heap_state.ext_allocs, 1, memory_order_relaxed);
    skn_pool_bind(p, size, node_of_arena(ind));
  }
  return p;
}
static bool bind_dalloc(extent_hooks_t *eh, void *addr, size_t size, bool committed, unsigned ind) {
  bool kept = heap_state.dflt->dalloc(heap_state.dflt, addr, size, committed, ind);
  if (!kept) atomic_fetch_add_explicit(&heap_state.ext_deallocs, 1, memory_order_relaxed);
  return kept;
}

/* ------------------------------------------------------------------ set-up */

static int je_set(const char *name, const void *v, size_t len) {
  return skn_je_mallctl(name, NULL, NULL, (void *)v, len);
}

static bool program_has_own_malloc(void) {
  void *m = dlsym(RTLD_DEFAULT, "malloc");
  if (!m || m == (void *)skn_alloc_own_malloc) return false;
  Dl_info di;
  const char *from = dladdr(m, &di) && di.dli_fname && *di.dli_fname ? di.dli_fname : "the program";
  snprintf(heap_state.why_buf, sizeof heap_state.why_buf, "the program's own malloc (from %s) serves every request", from);
  heap_state.why_off = heap_state.why_buf;
  return true;
}

void skn_heap_init(int nranks) {
  (void)nranks;
  for (int i = 0; i < MAX_ARENAS; i++) heap_state.node_of[i] = NODE_UNSET;
  heap_state.creating_node = -1;
  heap_state.memstats = skn_env_int("MEMSTATS", 0) != 0;
  if (skn_env_int("HEAP", 1) == 0) {
    heap_state.why_off = "SKEIN_HEAP=0";
    return;
  }
  if (program_has_own_malloc()) return;
  heap_state.recycle = skn_env_int("HEAP_RECYCLE", 1) != 0;
  heap_state.decay_ms = skn_env_int("HEAP_DECAY_MS", heap_state.recycle ? 0 : -2);
  if (heap_state.decay_ms < -2) skn_fatal("SKEIN_HEAP_DECAY_MS must be -1 (never), 0 or more milliseconds");
  skn_pool_config pc = {
      .chunk = (size_t)skn_env_size("HEAP_CHUNK", 4 << 20),
      .keep = (size_t)skn_env_size("HEAP_KEEP", 16 << 20),
      .bind = skn_env_int("HEAP_BIND", 1) != 0,
      .huge_min = (size_t)skn_env_size("HEAP_HUGE", 4 << 20),
  };
  if (pc.chunk < 4096 || (pc.chunk & (pc.chunk - 1))) skn_fatal("SKEIN_HEAP_CHUNK must be a power of two of at least 4k");
  skn_pool_configure(&pc);
  init_classes();
  size_t sz = sizeof heap_state.dflt;
  if (skn_je_mallctl("arena.0.extent_hooks", &heap_state.dflt, &sz, NULL, 0) != 0) {
    heap_state.why_off = "jemalloc did not report its extent hooks";
    return;
  }
  if (heap_state.recycle) {
    heap_state.hooks = (extent_hooks_t){pool_alloc, pool_dalloc, pool_destroy, pool_commit, pool_decommit,
                               NULL, pool_purge, pool_split, pool_merge};
  } else {
    heap_state.hooks = *heap_state.dflt;
    heap_state.hooks.alloc = bind_alloc;
    heap_state.hooks.dalloc = bind_dalloc;
  }
  heap_state.on = true;
}

bool skn_heap_enabled(const char **why_not) {
  if (why_not) *why_not = heap_state.on ? NULL : heap_state.why_off;
  return heap_state.on;
}

skn_heap *skn_heap_rank_create(int rank, int node) {
  if (!heap_state.on) return NULL;
  static bool warned;
  skn_heap *h = aligned_alloc(SKN_CACHELINE, sizeof *h);
  if (!h) return NULL;
  memset(h, 0, sizeof *h);
  h->rank = rank;
  h->node = node;
  unsigned ind, tc;
  size_t sz = sizeof ind;
  extent_hooks_t *hp = &heap_state.hooks;
  heap_state.creating_node = node;
  int rc = skn_je_mallctl("arenas.create", &ind, &sz, &hp, sizeof hp);
  heap_state.creating_node = -1;
  if (rc != 0 || ind >= MAX_ARENAS - 1 || skn_je_mallctl("tcache.create", &tc, &sz, NULL, 0) != 0 || tc > 4000) {
    if (!warned) skn_log("heap: no arena or tcache left for rank %d: it and later ranks share the default arena", rank);
    warned = true;
    free(h);
    return NULL;
  }
  heap_state.node_of[ind] = (int8_t)(node < 0 || node > SKN_POOL_MAX_NODE ? -1 : node);
  if (heap_state.decay_ms != -2) {
    char name[64];
    ssize_t d = (ssize_t)heap_state.decay_ms;
    snprintf(name, sizeof name, "arena.%u.dirty_decay_ms", ind);
    je_set(name, &d, sizeof d);
    snprintf(name, sizeof name, "arena.%u.muzzy_decay_ms", ind);
    d = 0;
    je_set(name, &d, sizeof d);
  }
  h->arena = ind;
  h->tcache = tc;
  h->flags = MALLOCX_ARENA(ind) | MALLOCX_TCACHE(tc);
  h->tflags = MALLOCX_TCACHE(tc);
  return h;
}

void skn_heap_adopt_thread(skn_heap *h) {
  if (!h) return;
  /* ~600 ns once per thread; the thread keeps its own tcache (explicit ones are not
   * thread-safe), filled from the rank's arena */
  je_set("thread.arena", &h->arena, sizeof h->arena);
}

/* ------------------------------------------------------------------ statistics */

static size_t arena_stat(unsigned ind, const char *what) {
  char name[96];
  snprintf(name, sizeof name, "stats.arenas.%u.%s", ind, what);
  size_t v = 0, sz = sizeof v;
  if (skn_je_mallctl(name, &v, &sz, NULL, 0) != 0) return 0;
  return v;
}

void skn_heap_snapshot(skn_heap *h, bool flush_tcache, skn_heap_snap *out) {
  memset(out, 0, sizeof *out);
  if (flush_tcache) {
    skn_heap_flush_bins(h);
    je_set("tcache.flush", &h->tcache, sizeof h->tcache);
  }
  uint64_t epoch = 1;
  size_t sz = sizeof epoch;
  skn_je_mallctl("epoch", &epoch, &sz, &epoch, sz);
  out->nmalloc = atomic_load_explicit(&h->nmalloc, memory_order_relaxed) + atomic_load(&h->tnmalloc);
  out->nfree = atomic_load_explicit(&h->nfree, memory_order_relaxed) + atomic_load(&h->tnfree);
  int64_t live = atomic_load_explicit(&h->net, memory_order_relaxed) + atomic_load(&h->tnet);
  int64_t peak = atomic_load_explicit(&h->peak, memory_order_relaxed);
  out->in_use = live > 0 ? (size_t)live : 0;
  out->peak = peak > 0 ? (size_t)peak : 0;
  out->arena_allocated = arena_stat(h->arena, "small.allocated") + arena_stat(h->arena, "large.allocated");
  out->arena_resident = arena_stat(h->arena, "resident");
  out->arena_metadata = arena_stat(h->arena, "base") + arena_stat(h->arena, "internal");
  out->overhead = out->arena_resident > out->arena_allocated ? out->arena_resident - out->arena_allocated : 0;
}

void skn_heap_rank_end(skn_heap *h) {
  if (!h || h->ended) return;
  if (heap_state.memstats) {
    skn_heap_snapshot(h, true, &h->end);
  } else {
    /* Give the rank's cached blocks back, nothing more: a snapshot refreshes jemalloc's
     * statistics of every arena ("epoch"), which made the ends of N ranks cost O(N^2)
     * (1024 ranks of an empty program: 72 s). Only SKEIN_MEMSTATS reports use them. */
    skn_heap_flush_bins(h);
    je_set("tcache.flush", &h->tcache, sizeof h->tcache);
  }
  h->ended = true;
}

void skn_heap_report(int nranks, skn_heap *(*heap_of)(int rank)) {
  if (!heap_state.memstats) return;
  if (!heap_state.on) {
    skn_log("memstats: per-rank heap off: %s", heap_state.why_off);
    return;
  }
  fflush(NULL);
  fprintf(stderr, "skein: memstats: %5s %4s %5s %10s %10s %12s %12s %12s %12s %12s\n", "rank", "node", "arena",
          "nmalloc", "nfree", "in_use", "peak", "arena_alloc", "resident", "overhead");
  skn_heap_snap tot = {0};
  for (int i = 0; i < nranks; i++) {
    skn_heap *h = heap_of(i);
    if (!h) {
      fprintf(stderr, "skein: memstats: %5d (default arena)\n", i);
      continue;
    }
    skn_heap_snap s;
    if (h->ended) s = h->end;
    else skn_heap_snapshot(h, false, &s);
    fprintf(stderr, "skein: memstats: %5d %4d %5u %10" PRIu64 " %10" PRIu64 " %12zu %12zu %12zu %12zu %12zu\n", i,
            h->node, h->arena, s.nmalloc, s.nfree, s.in_use, s.peak, s.arena_allocated, s.arena_resident,
            s.overhead);
    tot.nmalloc += s.nmalloc;
    tot.nfree += s.nfree;
    tot.in_use += s.in_use;
    tot.peak += s.peak;
    tot.arena_allocated += s.arena_allocated;
    tot.arena_resident += s.arena_resident;
    tot.overhead += s.overhead;
  }
  fprintf(stderr, "skein: memstats: %5s %4s %5s %10" PRIu64 " %10" PRIu64 " %12zu %12zu %12zu %12zu %12zu\n", "all",
          "", "", tot.nmalloc, tot.nfree, tot.in_use, tot.peak, tot.arena_allocated, tot.arena_resident, tot.overhead);
  skn_pool_stats p;
  skn_pool_get_stats(-2, &p);
  if (heap_state.recycle)
    fprintf(stderr,
            "skein: memstats: pool: %" PRIu64 " mmap (%" PRIu64 " bytes), %" PRIu64 " extents given back (%" PRIu64
            " bytes), %" PRIu64 " bytes reused resident, %" PRIu64 " purges (%" PRIu64 " bytes), %zu bytes free "
            "in %zu runs (%zu possibly resident), %" PRIu64 " mbind (%" PRIu64 " refused)\n",
            p.maps, p.map_bytes, p.puts, p.put_bytes, p.reused_bytes, p.purges, p.purge_bytes, p.free_bytes, p.nruns,
            p.dirty_bytes, p.binds, p.bind_failures);
  else
    fprintf(stderr,
            "skein: memstats: recycling off: %" PRIu64 " extents mapped and %" PRIu64 " unmapped by the arenas, %" PRIu64
            " mbind (%" PRIu64 " refused)\n",
            atomic_load(&heap_state.ext_allocs), atomic_load(&heap_state.ext_deallocs), p.binds, p.bind_failures);
}

bool skn_heap_extent_counts(uint64_t *maps, uint64_t *unmaps) {
  skn_pool_stats p;
  skn_pool_get_stats(-2, &p);
  *maps = heap_state.recycle ? p.maps : atomic_load(&heap_state.ext_allocs);
  *unmaps = heap_state.recycle ? p.unmaps : atomic_load(&heap_state.ext_deallocs);
  return heap_state.recycle;
}

#else /* SKN_HEAP_OFF: sanitizer build, nothing interposed */

void skn_heap_init(int nranks) { (void)nranks; }
bool skn_heap_enabled(const char **why_not) {
  if (why_not) *why_not = "sanitizer build (the sanitizer owns malloc)";
  return false;
}
skn_heap *skn_heap_rank_create(int rank, int node) { return NULL; }
void skn_heap_adopt_thread(skn_heap *h) {}
void skn_heap_rank_end(skn_heap *h) {}
void skn_heap_snapshot(skn_heap *h, bool flush_tcache, skn_heap_snap *out) { memset(out, 0, sizeof *out); }
void skn_heap_flush_bins(skn_heap *h) {}
void skn_heap_report(int nranks, skn_heap *(*heap_of)(int rank)) {
  if (skn_env_int("MEMSTATS", 0)) skn_log("memstats: per-rank heap off: sanitizer build");
}
bool skn_heap_extent_counts(uint64_t *maps, uint64_t *unmaps) {
  *maps = *unmaps = 0;
  return false;
}
#endif
