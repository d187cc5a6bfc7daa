/* MPI-IO engine (see io.h): view mapping, independent and collective data movement,
 * and the I/O thread pool. */
#define _GNU_SOURCE
#include "io.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* ================================================================ view mapping */

static int push(skn_io_pieces *out, int64_t off, int64_t len, int64_t spos) {
  if (out->n) {
    skn_io_piece *l = &out->p[out->n - 1];
    if (l->off + l->len == off && l->spos + l->len == spos) {
      l->len += len;
      return 0;
    }
  }
  if (out->n == out->cap) {
    size_t cap = out->cap ? out->cap * 2 : 16;
    skn_io_piece *p = realloc(out->p, cap * sizeof *p);
    if (!p) return -ENOMEM;
    out->p = p;
    out->cap = cap;
  }
  out->p[out->n++] = (skn_io_piece){off, len, spos};
  return 0;
}

void skn_io_pieces_free(skn_io_pieces *ps) {
  free(ps->p);
  *ps = (skn_io_pieces){0};
}

/* The filetype block holding data byte `within` of an element, and the bytes of that
 * block before it. */
static int find_block(const skn_dtype *ft, int64_t within, int64_t *skip) {
  int b = 0;
  int64_t cum = 0;
  while (b < ft->nblocks - 1 && cum + (int64_t)ft->blocks[b].len <= within) cum += (int64_t)ft->blocks[b++].len;
  *skip = within - cum;
  return b;
}

int skn_io_map(const skn_io_view *v, int64_t spos, int64_t bytes, int64_t base, skn_io_pieces *out) {
  const skn_dtype *ft = v->ftype;
  if (bytes <= 0) return 0;
  if (ft->size == 0) return -EINVAL;
  if (ft->contig) return push(out, v->disp + spos, bytes, base);
  const int64_t size = (int64_t)ft->size, ext = ft->extent;
  int64_t inst = spos / size, skip;
  int b = find_block(ft, spos % size, &skip);
  int64_t origin = v->disp + inst * ext;
  while (bytes > 0) {
    int64_t len = (int64_t)ft->blocks[b].len - skip;
    if (len > bytes) len = bytes;
    if (len > 0 && push(out, origin + ft->blocks[b].off + skip, len, base) < 0) return -ENOMEM;
    base += len;
    bytes -= len;
    skip = 0;
    if (++b == ft->nblocks) {
      b = 0;
      origin += ext;
    }
  }
  return 0;
}

int64_t skn_io_byte_offset(const skn_io_view *v, int64_t spos) {
  const skn_dtype *ft = v->ftype;
  if (ft->contig || ft->size == 0) return v->disp + spos;
  int64_t size = (int64_t)ft->size, skip;
  int b = find_block(ft, spos % size, &skip);
  return v->disp + spos / size * ft->extent + ft->blocks[b].off + skip;
}

/* ================================================================ system calls */

int skn_io_pwrite_full(int fd, const void *buf, size_t len, int64_t off) {
  const char *p = buf;
  while (len) {
    ssize_t w = pwrite(fd, p, len > (size_t)INT_MAX ? (size_t)INT_MAX & ~4095u : len, (off_t)off);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (w == 0) return -ENOSPC; /* the device took nothing: never report a truncated write as success */
    p += w;
    off += w;
    len -= (size_t)w;
  }
  return 0;
}

int skn_io_pread_full(int fd, void *buf, size_t len, int64_t off, size_t *got) {
  char *p = buf;
  size_t done = 0;
  while (done < len) {
    size_t want = len - done;
    ssize_t r = pread(fd, p + done, want > (size_t)INT_MAX ? (size_t)INT_MAX & ~4095u : want, (off_t)(off + (int64_t)done));
    if (r < 0) {
      if (errno == EINTR) continue;
      *got = done;
      return -errno;
    }
    if (r == 0) break; /* end of file */
    done += (size_t)r;
  }
  *got = done;
  return 0;
}

/* ================================================================ independent access */

/* Pieces split at `cap` bytes: segment k of the walk. */
typedef struct seg_walk {
  const skn_io_piece *p;
  size_t n, i;
  int64_t k, cap;
} seg_walk;

static bool seg_next(seg_walk *w, skn_io_piece *s) {
  if (w->i == w->n) return false;
  const skn_io_piece *q = &w->p[w->i];
  int64_t len = q->len - w->k;
  if (len > w->cap) len = w->cap;
  *s = (skn_io_piece){q->off + w->k, len, q->spos + w->k};
  w->k += len;
  if (w->k == q->len) {
    w->i++;
    w->k = 0;
  }
  return true;
}
static bool seg_peek(const seg_walk *w, skn_io_piece *s) {
  seg_walk c = *w;
  return seg_next(&c, s);
}

#define SIEVE_GAP (64 << 10) /* reads fetch holes up to this size rather than issue another call */

int skn_io_rw(int fd, bool wr, const skn_io_piece *p, size_t n, void *buf, const skn_dtype *mt, size_t bounce,
              int64_t *moved) {
  *moved = 0;
  if (!n) return 0;
  char *mem = buf;
  if (mt->contig && (wr || n == 1)) { /* straight between the user's memory and the file */
    for (size_t i = 0; i < n; i++) {
      int rc;
      if (wr) {
        rc = skn_io_pwrite_full(fd, mem + p[i].spos, (size_t)p[i].len, p[i].off);
        if (rc) return rc;
        *moved += p[i].len;
      } else {
        size_t got;
        rc = skn_io_pread_full(fd, mem + p[i].spos, (size_t)p[i].len, p[i].off, &got);
        *moved += (int64_t)got;
        if (rc || (int64_t)got < p[i].len) return rc;
      }
    }
    return 0;
  }
  int64_t total = p[n - 1].spos + p[n - 1].len - p[0].spos, span = p[n - 1].off + p[n - 1].len - p[0].off;
  int64_t cap = (int64_t)bounce;
  if (!wr && span < cap) cap = span;
  if (wr && total < cap) cap = total;
  if (cap < 1) cap = 1;
  char *tmp = malloc((size_t)cap);
  if (!tmp) return -ENOMEM;
  seg_walk w = {p, n, 0, 0, cap};
  skn_io_piece first, s, nx;
  int rc = 0;
  while (rc == 0 && seg_next(&w, &first)) {
    if (wr) {
      /* pack consecutive segments (contiguous in the stream) into one bounce fill */
      int64_t data = first.len;
      seg_walk g = w;
      while (seg_peek(&g, &nx) && data + nx.len <= cap) {
        seg_next(&g, &nx);
        data += nx.len;
      }
      skn_dt_pack_at(tmp, buf, mt, (size_t)first.spos, (size_t)data);
      rc = skn_io_pwrite_full(fd, tmp, (size_t)first.len, first.off);
      while (rc == 0 && !(w.i == g.i && w.k == g.k)) {
        seg_next(&w, &s);
        rc = skn_io_pwrite_full(fd, tmp + (s.spos - first.spos), (size_t)s.len, s.off);
      }
      if (rc == 0) *moved += data;
      continue;
    }
    /* read: one call for the span of nearby segments (data sieving) */
    int64_t end = first.off + first.len;
    seg_walk g = w;
    while (seg_peek(&g, &nx) && nx.off - end <= SIEVE_GAP && nx.off + nx.len - first.off <= cap) {
      seg_next(&g, &nx);
      end = nx.off + nx.len;
    }
    size_t got;
    rc = skn_io_pread_full(fd, tmp, (size_t)(end - first.off), first.off, &got);
    int64_t valid_end = first.off + (int64_t)got;
    s = first;
    for (;;) {
      int64_t ok = valid_end - s.off;
      if (ok > s.len) ok = s.len;
      if (ok > 0) {
        if (mt->contig) memcpy(mem + s.spos, tmp + (s.off - first.off), (size_t)ok);
        else skn_dt_unpack_at(buf, mt, (size_t)s.spos, tmp + (s.off - first.off), (size_t)ok);
        *moved += ok;
      }
      if (ok < s.len) goto out; /* end of file (or an error) */
      if (w.i == g.i && w.k == g.k) break;
      seg_next(&w, &s);
    }
  }
out:
  free(tmp);
  return rc;
}

/* ================================================================ collective access */

/* One covered file range of a chunk and where its bytes are: a member's own memory when
 * its layout is contiguous (no copy at all), else the aggregation buffer. */
typedef struct ent {
  int64_t lo, hi;
  int64_t rlo; /* the run's end before it: it moves [rlo, hi) itself (none if rlo >= hi) */
  char *ptr;
  const skn_io_part *pt; /* staged through the buffer: the member, for the unpack of a read */
  int64_t spos;
} ent;

static int ent_cmp(const void *a, const void *b) {
  const ent *x = a, *y = b;
  return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* First piece of part that ends after `off` (pieces are sorted by offset). */
static size_t first_after(const skn_io_part *pt, int64_t off) {
  size_t lo = 0, hi = pt->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (pt->p[mid].off + pt->p[mid].len <= off) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static void note_error(skn_io_part *const *parts, int n, int err) {
  for (int j = 0; j < n; j++) {
    int zero = 0;
    __atomic_compare_exchange_n(&parts[j]->err, &zero, err, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  }
}

static void note_eof(skn_io_part *const *parts, int n, int64_t at) {
  for (int j = 0; j < n; j++) {
    int64_t cur = __atomic_load_n(&parts[j]->eof_at, __ATOMIC_RELAXED);
    while ((cur < 0 || at < cur) &&
           !__atomic_compare_exchange_n(&parts[j]->eof_at, &cur, at, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
  }
}

#define IOV_BATCH 1024 /* IOV_MAX on Linux */

/* pwritev / preadv of a run of adjacent ranges starting at off, resuming after partial
 * transfers; a write that takes nothing is -ENOSPC. *got: bytes read (reads stop at end
 * of file). */
static int rw_iov(int fd, bool wr, struct iovec *iov, int cnt, int64_t off, int64_t *got) {
  *got = 0;
  int i = 0;
  while (i < cnt) {
    int c = cnt - i < IOV_BATCH ? cnt - i : IOV_BATCH;
    ssize_t r = wr ? pwritev(fd, iov + i, c, (off_t)off) : preadv(fd, iov + i, c, (off_t)off);
    if (r < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (r == 0) return wr ? -ENOSPC : 0;
    off += r;
    *got += r;
    while (i < cnt && (size_t)r >= iov[i].iov_len) r -= (ssize_t)iov[i++].iov_len;
    if (i < cnt && r) {
      iov[i].iov_base = (char *)iov[i].iov_base + r;
      iov[i].iov_len -= (size_t)r;
    }
  }
  return 0;
}

/* After the read of a run of entries (sorted by offset; entry j received [rlo, hi), the
 * bytes no earlier entry covered, up to `valid`): copies to every entry the bytes it
 * shares with earlier ones from the entry that received them. rlo never decreases along
 * the run, so the receiver of byte b is the last entry with rlo <= b. */
static void overlap_copy(const ent *es, size_t ne, int64_t valid) {
  for (size_t k = 1; k < ne; k++) {
    const ent *e = &es[k];
    int64_t shared = e->hi < e->rlo ? e->hi : e->rlo;
    if (shared > valid) shared = valid;
    for (int64_t b = e->lo; b < shared;) {
      size_t lo = 0, hi = k; /* last j < k with es[j].rlo <= b */
      while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (es[mid].rlo <= b) lo = mid;
        else hi = mid;
      }
      const ent *s = &es[lo];
      int64_t upto = s->hi < shared ? s->hi : shared;
      char *to = e->ptr + (b - e->lo), *from = s->ptr + (b - s->lo);
      if (to != from) memcpy(to, from, (size_t)(upto - b)); /* staged entries share the chunk buffer */
      b = upto;
    }
  }
}

/* Aggregator work on file range [d0, d1), in chunks of at most cbuf_len bytes: the
 * covered ranges of all members sorted by offset, each run of adjacent ones moved by
 * one vectored system call straight to or from the members' buffers. */
static void aggregate(skn_io_part *const *parts, int n, int fd, bool wr, int64_t d0, int64_t d1, char *cbuf,
                      int64_t cbuf_len) {
  size_t cap = 256, ne;
  ent *es = malloc(cap * sizeof *es);
  struct iovec *iov = malloc(cap * sizeof *iov);
  if (!es || !iov) {
    free(es);
    free(iov);
    note_error(parts, n, -ENOMEM);
    return;
  }
  for (int64_t c0 = d0; c0 < d1; c0 += cbuf_len) {
    int64_t c1 = c0 + cbuf_len < d1 ? c0 + cbuf_len : d1;
    ne = 0;
    for (int j = 0; j < n; j++) {
      const skn_io_part *pt = parts[j];
      for (size_t i = first_after(pt, c0); i < pt->n && pt->p[i].off < c1; i++) {
        const skn_io_piece *q = &pt->p[i];
        int64_t lo = q->off > c0 ? q->off : c0, hi = q->off + q->len < c1 ? q->off + q->len : c1;
        int64_t sp = q->spos + lo - q->off;
        if (ne == cap) {
          ent *g = realloc(es, 2 * cap * sizeof *es);
          struct iovec *gv = g ? realloc(iov, 2 * cap * sizeof *iov) : NULL;
          if (g) es = g;
          if (gv) iov = gv;
          if (!g || !gv) {
            free(es);
            free(iov);
            note_error(parts, n, -ENOMEM);
            return;
          }
          cap *= 2;
        }
        ent *e = &es[ne++];
        *e = (ent){lo, hi, lo, NULL, NULL, sp};
        if (pt->mt->contig) {
          e->ptr = (char *)pt->buf + sp;
        } else {
          e->ptr = cbuf + (lo - c0);
          e->pt = pt;
          if (wr) skn_dt_pack_at(e->ptr, pt->buf, pt->mt, (size_t)sp, (size_t)(hi - lo));
        }
      }
    }
    if (!ne) continue;
    qsort(es, ne, sizeof *es, ent_cmp);
    int64_t valid = INT64_MAX; /* reads: end of file, once found */
    size_t i = 0;
    while (i < ne) {
      /* a run of adjacent ranges, each byte moved once: overlapping ones (erroneous for
       * writes, common for reads: members reading the same data) are trimmed here, and
       * a read copies the trimmed bytes from the entries that received them */
      int64_t start = es[i].lo, end = start;
      size_t first = i;
      int cnt = 0;
      for (; i < ne && es[i].lo <= end; i++) {
        int64_t skip = end - es[i].lo;
        es[i].rlo = end;
        if (es[i].hi <= end) continue;
        iov[cnt++] = (struct iovec){es[i].ptr + skip, (size_t)(es[i].hi - es[i].lo - skip)};
        end = es[i].hi;
      }
      int64_t got;
      int rc = rw_iov(fd, wr, iov, cnt, start, &got);
      if (rc) {
        note_error(parts, n, rc);
        goto out;
      }
      if (!wr) overlap_copy(es + first, i - first, start + got);
      if (!wr && got < end - start) {
        valid = start + got;
        note_eof(parts, n, valid);
        break;
      }
    }
    if (!wr) /* members whose layout is not contiguous: from the buffer into their memory */
      for (size_t k = 0; k < ne; k++) {
        const ent *e = &es[k];
        int64_t hi = e->hi < valid ? e->hi : valid;
        if (e->pt && hi > e->lo) skn_dt_unpack_at(e->pt->buf, e->pt->mt, (size_t)e->spos, e->ptr, (size_t)(hi - e->lo));
      }
    if (valid != INT64_MAX) break;
  }
out:
  free(es);
  free(iov);
}

int skn_io_coll(skn_comm *local, int lrank, int fd, bool wr, skn_io_part *mine, const skn_io_coll_hints *h,
                int64_t *moved) {
  mine->err = 0;
  mine->eof_at = -1;
  skn_coll_args a = {.result = mine};
  skn_coll_publish(local, lrank, &a);
  const int n = local->size;
  skn_io_part *stackparts[64];
  skn_io_part **parts = n <= 64 ? stackparts : malloc((size_t)n * sizeof *parts);
  if (!parts) skn_fatal("out of memory in a collective file access"); /* the others wait for us */
  int64_t lo = INT64_MAX, hi = -1;
  for (int j = 0; j < n; j++) {
    parts[j] = local->slots[j]->result;
    const skn_io_part *pt = parts[j];
    if (!pt->n) continue;
    if (pt->p[0].off < lo) lo = pt->p[0].off;
    int64_t e = pt->p[pt->n - 1].off + pt->p[pt->n - 1].len;
    if (e > hi) hi = e;
  }
  int naggr = h->aggregators > 0 ? h->aggregators : 1;
  if (naggr > n) naggr = n;
  if (naggr < 1) naggr = 1;
  /* Which aggregator the caller is: the first members on distinct workers (ranks on one
   * worker would take turns), then other members spread evenly. Every member must reach
   * the same answer: by the worker each was placed on (home), which moves do not change. */
  int k = -1, nw = skn_sched_nworkers(), picked = 0;
  bool *taken = calloc((size_t)n + (size_t)nw, sizeof *taken), *wused = taken ? taken + n : NULL;
  if (!taken) skn_fatal("out of memory in a collective file access");
  for (int j = 0; j < n && picked < naggr; j++) {
    const skn_unit *u = local->members[j]->unit;
    int w = u ? u->home : 0;
    if (w < 0 || w >= nw || wused[w]) continue;
    wused[w] = taken[j] = true;
    if (j == lrank) k = picked;
    picked++;
  }
  for (int i = picked; i < naggr; i++) {
    int j = (int)((int64_t)(i - picked) * n / (naggr - picked));
    while (taken[j]) j = (j + 1) % n;
    taken[j] = true;
    if (j == lrank) k = i;
  }
  free(taken);
  if (k >= 0 && hi > lo) {
    int64_t align = h->align ? (int64_t)h->align : 1;
    int64_t base = lo - lo % align;
    int64_t per = (hi - base + naggr - 1) / naggr;
    per = (per + align - 1) / align * align;
    int64_t d0 = base + k * per, d1 = d0 + per;
    if (d0 < lo) d0 = lo;
    if (d1 > hi) d1 = hi;
    int64_t cb = (int64_t)h->buffer;
    if (cb > d1 - d0) cb = d1 - d0;
    if (d1 > d0) {
      char *cbuf = h->cache ? *h->cache : NULL;
      if (!cbuf || *h->cache_len < (size_t)cb) {
        if (h->cache) free(cbuf);
        cbuf = malloc((size_t)cb);
        if (h->cache) {
          *h->cache = cbuf;
          *h->cache_len = cbuf ? (size_t)cb : 0;
        }
      }
      if (!cbuf) note_error(parts, n, -ENOMEM);
      else aggregate(parts, n, fd, wr, d0, d1, cbuf, cb);
      if (!h->cache) free(cbuf);
    }
  }
  if (parts != stackparts) free(parts);
  skn_coll_barrier(NULL, local); /* the aggregators are done with every member's buffer */
  int err = __atomic_load_n(&mine->err, __ATOMIC_RELAXED);
  int64_t eof = __atomic_load_n(&mine->eof_at, __ATOMIC_RELAXED);
  *moved = 0;
  for (size_t i = 0; i < mine->n; i++) {
    const skn_io_piece *q = &mine->p[i];
    if (eof >= 0 && q->off + q->len > eof) {
      if (eof > q->off) *moved += eof - q->off;
      break;
    }
    *moved += q->len;
  }
  return err;
}

/* ================================================================ I/O threads */

static struct {
  pthread_once_t once;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  skn_io_task *head, *tail;
  int nthreads;
} pool = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

static void *io_thread(void *arg) {
  (void)arg;
  for (;;) {
    pthread_mutex_lock(&pool.lock);
    while (!pool.head) pthread_cond_wait(&pool.cond, &pool.lock);
    skn_io_task *t = pool.head;
    pool.head = t->next;
    if (!pool.head) pool.tail = NULL;
    pthread_mutex_unlock(&pool.lock);
    /* counted as running while it works, so that ranks waiting for it are not taken
     * for a deadlock */
    skn_sched_adopt_thread(NULL);
    t->run(t);
    skn_sched_release_thread();
  }
  return NULL;
}

static void pool_start(void) {
  const char *e = getenv("SKEIN_IO_THREADS");
  int n = e ? atoi(e) : 2;
  if (n < 1) n = 1;
  if (n > 64) n = 64;
  /* libc's pthread_create, not boot's: these threads belong to no rank */
  int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *) =
      (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))dlsym(RTLD_NEXT, "pthread_create");
  if (!create) return;
  pthread_attr_t at;
  pthread_attr_init(&at);
  pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&at, 256 << 10);
  for (int i = 0; i < n; i++) {
    pthread_t th;
    if (create(&th, &at, io_thread, NULL) == 0) pool.nthreads++;
  }
  pthread_attr_destroy(&at);
}

int skn_io_submit(skn_io_task *t) {
  pthread_once(&pool.once, pool_start);
  if (!pool.nthreads) return -EAGAIN;
  t->next = NULL;
  pthread_mutex_lock(&pool.lock);
  if (pool.tail) pool.tail->next = t;
  else pool.head = t;
  pool.tail = t;
  pthread_cond_signal(&pool.cond);
  pthread_mutex_unlock(&pool.lock);
  return 0;
}
