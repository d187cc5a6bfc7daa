/* Page pool: per node, an address-ordered array of free runs with coalescing. The
 * arrays live in address space reserved with mmap (never malloc: this code runs inside
 * jemalloc's extent hooks). Runs are few (jemalloc coalesces extents before it gives
 * them back), so first-fit over the array is cheap next to the page faults it saves. */
#define _GNU_SOURCE
#include "pool.h"

#include <errno.h>
#include <numaif.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_RUNS (1u << 20) /* per node: 24 MiB of address space, touched as used */
#define NSLOTS (SKN_POOL_MAX_NODE + 2) /* slot 0: no node; slot n + 1: node n */

typedef struct run {
  uintptr_t addr;
  size_t size;
  bool zeroed; /* known to read as zero (fresh or purged); runs merge only with their kind */
} run;

typedef struct slot {
  skn_spinlock lock;
  run *runs; /* [0, n) sorted by addr, disjoint, never adjacent with equal `zeroed` */
  size_t n;
  size_t free_bytes, dirty_bytes;
  _Atomic(uint64_t) maps, map_bytes, takes, reused_bytes, puts, put_bytes, purges, purge_bytes, unmaps;
} __attribute__((aligned(SKN_CACHELINE))) slot;

static struct {
  skn_pool_config cfg;
  size_t page;
  unsigned long mems_allowed; /* bit n: the kernel has node n */
  _Atomic(uint64_t) binds, bind_failures;
  slot slots[NSLOTS];
} pool_state = {.cfg = {.chunk = 4 << 20, .keep = 16 << 20, .bind = true}};

static slot *slot_of(int node) {
  return &pool_state.slots[node < 0 || node > SKN_POOL_MAX_NODE ? 0 : node + 1];
}

static size_t align_up(size_t v, size_t a) { return (v + a - 1) & ~(a - 1); }

void skn_pool_configure(const skn_pool_config *cfg) {
  pool_state.page = (size_t)sysconf(_SC_PAGESIZE);
  pool_state.cfg = *cfg;
  pool_state.cfg.chunk = align_up(cfg->chunk ? cfg->chunk : pool_state.page, pool_state.page);
  unsigned long mask[16] = {0};
  if (get_mempolicy(NULL, mask, sizeof mask * 8, NULL, MPOL_F_MEMS_ALLOWED) == 0) pool_state.mems_allowed = mask[0];
  else pool_state.mems_allowed = 1; /* no NUMA support in the kernel: one node, 0 */
}

bool skn_pool_node_real(int node) {
  return node >= 0 && node <= SKN_POOL_MAX_NODE && (pool_state.mems_allowed >> node & 1);
}

int skn_pool_bind(void *p, size_t size, int node) {
  if (!pool_state.cfg.bind || !skn_pool_node_real(node)) return 1;
  unsigned long mask = 1ul << node;
  atomic_fetch_add_explicit(&pool_state.binds, 1, memory_order_relaxed);
  if (mbind(p, size, MPOL_BIND, &mask, sizeof mask * 8, 0) == 0) return 0;
  atomic_fetch_add_explicit(&pool_state.bind_failures, 1, memory_order_relaxed);
  return -1;
}

/* ------------------------------------------------------------------ free runs */

static bool ensure_array(slot *s) {
  if (s->runs) return true;
  void *m = mmap(NULL, MAX_RUNS * sizeof(run), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  if (m == MAP_FAILED) return false;
  s->runs = m;
  return true;
}

/* First run whose address is above addr. */
static size_t upper_bound(const slot *s, uintptr_t addr) {
  size_t lo = 0, hi = s->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (s->runs[mid].addr <= addr) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static void account(slot *s, const run *r, int sign) {
  s->free_bytes += (size_t)sign * r->size;
  if (!r->zeroed) s->dirty_bytes += (size_t)sign * r->size;
}

/* Inserts a free run, merging with neighbours of the same kind. False when full. */
static bool insert_run(slot *s, run r) {
  if (!ensure_array(s)) return false;
  size_t i = upper_bound(s, r.addr);
  account(s, &r, +1);
  run *prev = i > 0 ? &s->runs[i - 1] : NULL, *next = i < s->n ? &s->runs[i] : NULL;
  bool join_prev = prev && prev->addr + prev->size == r.addr && prev->zeroed == r.zeroed;
  bool join_next = next && r.addr + r.size == next->addr && next->zeroed == r.zeroed;
  if (join_prev && join_next) {
    prev->size += r.size + next->size;
    memmove(next, next + 1, (s->n - i - 1) * sizeof(run));
    s->n--;
  } else if (join_prev) {
    prev->size += r.size;
  } else if (join_next) {
    next->addr = r.addr;
    next->size += r.size;
  } else {
    if (s->n == MAX_RUNS) {
      account(s, &r, -1);
      return false;
    }
    memmove(&s->runs[i + 1], &s->runs[i], (s->n - i) * sizeof(run));
    s->runs[i] = r;
    s->n++;
  }
  return true;
}

/* Takes [a, a + size) out of run i, which contains it. */
static bool carve(slot *s, size_t i, uintptr_t a, size_t size) {
  run r = s->runs[i];
  run taken = {a, size, r.zeroed};
  size_t head = a - r.addr, tail = r.addr + r.size - (a + size);
  if (head && tail) {
    if (s->n == MAX_RUNS) return false;
    memmove(&s->runs[i + 2], &s->runs[i + 1], (s->n - i - 1) * sizeof(run));
    s->n++;
    s->runs[i].size = head;
    s->runs[i + 1] = (run){a + size, tail, r.zeroed};
  } else if (head) {
    s->runs[i].size = head;
  } else if (tail) {
    s->runs[i].addr = a + size;
    s->runs[i].size = tail;
  } else {
    memmove(&s->runs[i], &s->runs[i + 1], (s->n - i - 1) * sizeof(run));
    s->n--;
  }
  account(s, &taken, -1);
  return true;
}

/* ------------------------------------------------------------------ take and put */

/* Large arrays walked with a stride (a stencil's columns, a matrix's rows of another
 * array) touch a new 4 KiB page at almost every step: one TLB miss and page walk each. With
 * 2 MiB pages they do not (a halo column of 2048 doubles, 16 KiB apart: 36 us -> 4 us on
 * this machine). Only mappings made for one large extent are advised, so small blocks
 * keep their 4 KiB granularity; the kernel's THP mode decides in the end ("never" wins). */
static void advise_huge(void *m, size_t len) {
  const uintptr_t huge = 2u << 20;
  uintptr_t lo = align_up((uintptr_t)m, huge), hi = ((uintptr_t)m + len) & ~(huge - 1);
  if (hi > lo) madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
}

static void *map_chunk(slot *s, int node, size_t size, size_t align, bool *zero) {
  size_t extra = align > pool_state.page ? align - pool_state.page : 0;
  size_t len = size + extra > pool_state.cfg.chunk ? align_up(size + extra, pool_state.page) : pool_state.cfg.chunk;
  void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return NULL;
  atomic_fetch_add_explicit(&s->maps, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&s->map_bytes, len, memory_order_relaxed);
  skn_pool_bind(m, len, node); /* only sets the policy: pages are placed at first touch */
  if (pool_state.cfg.huge_min && size >= pool_state.cfg.huge_min) advise_huge(m, len);
  uintptr_t base = (uintptr_t)m, a = align_up(base, align);
  skn_spin_lock(&s->lock);
  if (a > base && !insert_run(s, (run){base, a - base, true})) munmap(m, a - base);
  if (a + size < base + len && !insert_run(s, (run){a + size, base + len - (a + size), true}))
    munmap((void *)(a + size), base + len - (a + size));
  skn_spin_unlock(&s->lock);
  *zero = true;
  return (void *)a;
}

void *skn_pool_take(int node, void *want, size_t size, size_t align, bool *zero) {
  slot *s = slot_of(node);
  if (align < pool_state.page) align = pool_state.page;
  bool found = false, zeroed = false;
  uintptr_t a = 0;
  skn_spin_lock(&s->lock);
  if (want) {
    size_t i = upper_bound(s, (uintptr_t)want);
    if (i > 0) {
      run *r = &s->runs[i - 1];
      a = (uintptr_t)want;
      if (r->addr + r->size >= a + size) {
        zeroed = r->zeroed;
        found = carve(s, i - 1, a, size);
      }
    }
  } else {
    /* resident runs first: reusing them costs no page fault and keeps the pool under
     * its keep limit, so fewer runs given back later need purging */
    for (int pass = 0; pass < 2 && !found; pass++) {
      if (pass == 1 && s->dirty_bytes == s->free_bytes) break;
      for (size_t i = 0; i < s->n; i++) {
        run *r = &s->runs[i];
        if (pass == 0 && r->zeroed) continue;
        a = align_up(r->addr, align);
        if (a + size <= r->addr + r->size) {
          zeroed = r->zeroed;
          found = carve(s, i, a, size);
          break;
        }
      }
    }
  }
  skn_spin_unlock(&s->lock);
  if (!found) return want ? NULL : map_chunk(s, node, size, align, zero);
  atomic_fetch_add_explicit(&s->takes, 1, memory_order_relaxed);
  if (!zeroed) atomic_fetch_add_explicit(&s->reused_bytes, size, memory_order_relaxed);
  if (*zero && !zeroed) memset((void *)a, 0, size);
  else *zero = zeroed;
  return (void *)a;
}

void skn_pool_put(int node, void *addr, size_t size) {
  slot *s = slot_of(node);
  atomic_fetch_add_explicit(&s->puts, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&s->put_bytes, size, memory_order_relaxed);
  skn_spin_lock(&s->lock);
  if (!insert_run(s, (run){(uintptr_t)addr, size, false})) {
    skn_spin_unlock(&s->lock);
    munmap(addr, size);
    atomic_fetch_add_explicit(&s->unmaps, 1, memory_order_relaxed);
    return;
  }
  /* Over the keep limit: the pages of the highest dirty runs go back to the kernel.
   * Takes are first fit, so those are the ones least likely to be reused soon, while
   * the run just given back (often taken again at once) stays resident. A run is taken
   * out of the pool while its pages are dropped, so nobody can be handed it meanwhile. */
  while (s->dirty_bytes > pool_state.cfg.keep) {
    size_t i = s->n;
    while (i > 0 && s->runs[i - 1].zeroed) i--;
    if (i == 0) break;
    run r = s->runs[i - 1];
    if (!carve(s, i - 1, r.addr, r.size)) break;
    skn_spin_unlock(&s->lock);
    bool purged = madvise((void *)r.addr, r.size, MADV_DONTNEED) == 0;
    if (purged) {
      atomic_fetch_add_explicit(&s->purges, 1, memory_order_relaxed);
      atomic_fetch_add_explicit(&s->purge_bytes, r.size, memory_order_relaxed);
    }
    skn_spin_lock(&s->lock);
    r.zeroed = purged;
    if (!insert_run(s, r)) {
      skn_spin_unlock(&s->lock);
      munmap((void *)r.addr, r.size);
      atomic_fetch_add_explicit(&s->unmaps, 1, memory_order_relaxed);
      skn_spin_lock(&s->lock);
    }
    if (!purged) break;
  }
  skn_spin_unlock(&s->lock);
}

void skn_pool_get_stats(int node, skn_pool_stats *out) {
  memset(out, 0, sizeof *out);
  for (int k = 0; k < NSLOTS; k++) {
    slot *s = &pool_state.slots[k];
    if (node != -2 && s != slot_of(node)) continue;
    out->maps += atomic_load(&s->maps);
    out->map_bytes += atomic_load(&s->map_bytes);
    out->takes += atomic_load(&s->takes);
    out->reused_bytes += atomic_load(&s->reused_bytes);
    out->puts += atomic_load(&s->puts);
    out->put_bytes += atomic_load(&s->put_bytes);
    out->purges += atomic_load(&s->purges);
    out->purge_bytes += atomic_load(&s->purge_bytes);
    out->unmaps += atomic_load(&s->unmaps);
    skn_spin_lock(&s->lock);
    out->free_bytes += s->free_bytes;
    out->dirty_bytes += s->dirty_bytes;
    out->nruns += s->n;
    skn_spin_unlock(&s->lock);
  }
  out->binds = atomic_load(&pool_state.binds);
  out->bind_failures = atomic_load(&pool_state.bind_failures);
}
