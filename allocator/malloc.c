/* The program's malloc family, exported by libskein.so. Inside a rank the request goes
 * to the rank's arena: from its ULTs through the rank's explicit tcache, from threads it
 * created through their own tcache (their thread.arena is the rank's). Elsewhere (before
 * start-up, after the end, threads of no rank, ranks without a heap) jemalloc's default
 * arena serves it. Frees go to whichever arena owns the block (jemalloc finds it), so a
 * block may be freed by any rank or thread. Nothing here may switch ULTs. */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sched/sched.h"
#include "heap.h"

#ifndef SKN_HEAP_OFF
#include "je.h"

/* The scheduler's TLS word, read with the initial-exec model it is defined with. */
extern __thread skn_unit *skn_sched_current_tls __attribute__((tls_model("initial-exec")));

/* The heap of the calling rank, or NULL; *ult: called from one of its ULTs. */
static inline skn_heap *self_heap(bool *ult) {
  skn_unit *u = skn_sched_current_tls;
  if (!u || !u->owner) return NULL;
  *ult = u->kind == SKN_UNIT_ULT;
  return skn_heap_of_owner(u->owner);
}

#define RELAXED memory_order_relaxed

static inline void count_alloc(skn_heap *h, bool ult, size_t sz) {
  int64_t live;
  if (ult) { /* one worker runs every ULT of the rank: no read-modify-write needed */
    atomic_store_explicit(&h->nmalloc, atomic_load_explicit(&h->nmalloc, RELAXED) + 1, RELAXED);
    int64_t net = atomic_load_explicit(&h->net, RELAXED) + (int64_t)sz;
    atomic_store_explicit(&h->net, net, RELAXED);
    live = net + atomic_load_explicit(&h->tnet, RELAXED);
    if (live > atomic_load_explicit(&h->peak, RELAXED)) atomic_store_explicit(&h->peak, live, RELAXED);
  } else {
    atomic_fetch_add_explicit(&h->tnmalloc, 1, RELAXED);
    live = atomic_fetch_add_explicit(&h->tnet, (int64_t)sz, RELAXED) + (int64_t)sz +
           atomic_load_explicit(&h->net, RELAXED);
    int64_t p = atomic_load_explicit(&h->peak, RELAXED);
    while (live > p && !atomic_compare_exchange_weak_explicit(&h->peak, &p, live, RELAXED, RELAXED)) {
    }
  }
}

static inline void count_free(skn_heap *h, bool ult, size_t sz) {
  if (ult) {
    atomic_store_explicit(&h->nfree, atomic_load_explicit(&h->nfree, RELAXED) + 1, RELAXED);
    atomic_store_explicit(&h->net, atomic_load_explicit(&h->net, RELAXED) - (int64_t)sz, RELAXED);
  } else {
    atomic_fetch_add_explicit(&h->tnfree, 1, RELAXED);
    atomic_fetch_sub_explicit(&h->tnet, (int64_t)sz, RELAXED);
  }
}

/* ------------------------------------------------------------------ bins (ULTs only) */

static inline void **bin_of(skn_heap *h, int c) { return &h->slot[skn_heap_cls.off[c]]; }

static __attribute__((noinline)) void *bin_refill(skn_heap *h, int c) {
  size_t size = skn_heap_cls.size[c];
  int half = (int)skn_heap_cls.cap[c] / 2;
  for (int i = 0; i < half; i++) {
    void *p = skn_je_mallocx(size, h->flags);
    if (!p) break;
    bin_of(h, c)[h->nbin[c]++] = p;
  }
  return h->nbin[c] ? bin_of(h, c)[--h->nbin[c]] : NULL;
}

static __attribute__((noinline)) void bin_flush(skn_heap *h, int c, int keep) {
  size_t size = skn_heap_cls.size[c];
  int drop = h->nbin[c] - keep;
  for (int i = 0; i < drop; i++) skn_je_sdallocx(bin_of(h, c)[i], size, h->tflags);
  memmove(&bin_of(h, c)[0], &bin_of(h, c)[drop], (size_t)keep * sizeof(void *));
  h->nbin[c] = (uint8_t)keep;
}

void skn_heap_flush_bins(skn_heap *h) {
  for (int c = 0; c < skn_heap_cls.nbins; c++)
    if (h->nbin[c]) bin_flush(h, c, 0);
}

/* A small block for a ULT of the rank. */
static inline void *bin_alloc(skn_heap *h, size_t n) {
  int c = skn_heap_cls.of[(n + 7) >> 3];
  void *p = SKN_LIKELY(h->nbin[c]) ? bin_of(h, c)[--h->nbin[c]] : bin_refill(h, c);
  if (SKN_UNLIKELY(!p)) {
    errno = ENOMEM;
    return NULL;
  }
  count_alloc(h, true, skn_heap_cls.size[c]);
  return p;
}

/* extra: MALLOCX_ZERO and/or MALLOCX_LG_ALIGN. */
static inline void *heap_alloc(skn_heap *h, bool ult, size_t n, int extra) {
  if (ult && n <= SKN_HEAP_BIN_MAX && !(extra & ~MALLOCX_ZERO)) {
    void *p = bin_alloc(h, n);
    if (p && (extra & MALLOCX_ZERO)) memset(p, 0, n);
    return p;
  }
  if (n == 0) n = 1; /* mallocx(0) is undefined; malloc(0) returns a unique pointer */
  /* kernel threads of the rank: thread.arena is the rank's, jemalloc's fast path serves */
  void *p = !ult && !extra ? skn_je_malloc(n) : skn_je_mallocx(n, (ult ? h->flags : 0) | extra);
  if (SKN_UNLIKELY(!p)) {
    errno = ENOMEM;
    return NULL;
  }
  count_alloc(h, ult, skn_je_sallocx(p, 0));
  return p;
}

static inline int lg(size_t pow2) { return __builtin_ctzl(pow2); }
static inline bool is_pow2(size_t a) { return a && !(a & (a - 1)); }

static __attribute__((noinline)) void *malloc_slow(skn_heap *h, bool ult, size_t n) {
  return heap_alloc(h, ult, n, 0);
}

/* The common case (a ULT, a small block, a bin that is not empty) calls nothing. */
SKN_EXPORT void *malloc(size_t n) {
  skn_unit *u = skn_sched_current_tls;
  if (SKN_LIKELY(u != NULL) && u->owner) {
    skn_heap *h = skn_heap_of_owner(u->owner);
    if (SKN_LIKELY(h != NULL)) {
      if (SKN_LIKELY(u->kind == SKN_UNIT_ULT && n <= SKN_HEAP_BIN_MAX)) {
        int c = skn_heap_cls.of[(n + 7) >> 3];
        unsigned k = h->nbin[c];
        if (SKN_LIKELY(k != 0)) {
          h->nbin[c] = (uint8_t)(k - 1);
          count_alloc(h, true, skn_heap_cls.size[c]);
          return bin_of(h, c)[k - 1];
        }
      }
      return malloc_slow(h, u->kind == SKN_UNIT_ULT, n);
    }
  }
  return skn_je_malloc(n);
}
/* For heap.c: tells whether the program's malloc is this one. */
SKN_INTERNAL void *skn_alloc_own_malloc(size_t n) __attribute__((alias("malloc"), copy(malloc)));

SKN_EXPORT void free(void *p) {
  if (!p) return;
  bool ult;
  skn_heap *h = self_heap(&ult);
  if (SKN_LIKELY(h != NULL)) {
    size_t sz = skn_je_sallocx(p, 0);
    count_free(h, ult, sz);
    if (SKN_LIKELY(ult && sz <= SKN_HEAP_BIN_MAX)) {
      int c = skn_heap_cls.of[sz >> 3]; /* sz is a size class: a multiple of 8 */
      if (SKN_UNLIKELY(h->nbin[c] == skn_heap_cls.cap[c])) bin_flush(h, c, (int)skn_heap_cls.cap[c] / 2);
      bin_of(h, c)[h->nbin[c]++] = p;
      return;
    }
    if (ult) skn_je_sdallocx(p, sz, h->tflags);
    else skn_je_free(p);
    return;
  }
  skn_je_free(p);
}

SKN_EXPORT void *calloc(size_t nmemb, size_t size) {
  bool ult;
  skn_heap *h = self_heap(&ult);
  if (!h) return skn_je_calloc(nmemb, size);
  size_t n;
  if (__builtin_mul_overflow(nmemb, size, &n)) {
    errno = ENOMEM;
    return NULL;
  }
  return heap_alloc(h, ult, n, MALLOCX_ZERO);
}

SKN_EXPORT void *realloc(void *p, size_t n) {
  if (!p) return malloc(n);
  if (n == 0) { /* glibc's behaviour */
    free(p);
    return NULL;
  }
  bool ult;
  skn_heap *h = self_heap(&ult);
  if (!h) return skn_je_realloc(p, n);
  size_t old = skn_je_sallocx(p, 0);
  void *q = skn_je_rallocx(p, n, ult ? h->flags : 0);
  if (!q) {
    errno = ENOMEM;
    return NULL;
  }
  count_free(h, ult, old);
  count_alloc(h, ult, skn_je_sallocx(q, 0));
  return q;
}

SKN_EXPORT void *reallocarray(void *p, size_t nmemb, size_t size) {
  size_t n;
  if (__builtin_mul_overflow(nmemb, size, &n)) {
    errno = ENOMEM;
    return NULL;
  }
  return realloc(p, n);
}

static void *aligned(size_t align, size_t n) {
  bool ult;
  skn_heap *h = self_heap(&ult);
  if (!h) return skn_je_mallocx(n ? n : 1, MALLOCX_LG_ALIGN(lg(align)));
  return heap_alloc(h, ult, n, MALLOCX_LG_ALIGN(lg(align)));
}

SKN_EXPORT int posix_memalign(void **out, size_t align, size_t n) {
  if (align < sizeof(void *) || !is_pow2(align)) return EINVAL;
  int saved = errno;
  void *p = aligned(align, n);
  errno = saved; /* posix_memalign reports through its result only */
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}

SKN_EXPORT void *aligned_alloc(size_t align, size_t n) {
  if (!is_pow2(align)) { /* C11 lets it refuse; like jemalloc and glibc >= 2.38: powers of two only */
    errno = EINVAL;
    return NULL;
  }
  void *p = aligned(align, n);
  if (!p) errno = ENOMEM;
  return p;
}

SKN_EXPORT void *memalign(size_t align, size_t n) {
  if (align <= 1) return malloc(n);
  if (!is_pow2(align)) { /* glibc rounds up to the next power of two */
    if (align > ((size_t)1 << 62)) {
      errno = EINVAL;
      return NULL;
    }
    align = (size_t)1 << (64 - __builtin_clzl(align));
  }
  void *p = aligned(align, n);
  if (!p) errno = ENOMEM;
  return p;
}

SKN_EXPORT void *valloc(size_t n) { return memalign((size_t)sysconf(_SC_PAGESIZE), n); }

SKN_EXPORT void *pvalloc(size_t n) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE), r;
  if (__builtin_add_overflow(n, page - 1, &r)) {
    errno = ENOMEM;
    return NULL;
  }
  r &= ~(page - 1);
  return memalign(page, r ? r : page);
}

SKN_EXPORT size_t malloc_usable_size(void *p) { return p ? skn_je_sallocx(p, 0) : 0; }

#else
typedef int skn_alloc_malloc_c_is_empty_in_sanitizer_builds;
#endif
