/* One-sided operations to other processes: the RMA slots of the UCX transport (remote.h). */
#include <stdlib.h>
#include <string.h>

#include "remote.h"

/* * The RMA slots of the transport (device.h): UCX put/get/atomics straight into the
 * target's registered memory. Operations of one call are issued together and waited for
 * on a request of the caller's stack (completed by the last callback); the wait goes
 * through the scheduler like any other. */

typedef struct rma_wait {
  skn_req req;
  _Atomic(int) pending; /* operations in flight + 1 for the issuer */
} rma_wait;

static void rma_wait_init(rma_wait *w) {
  atomic_init(&w->req.sync, 0);
  atomic_init(&w->pending, 1);
}

static void rma_op_done(void *arg, int status) {
  rma_wait *w = arg;
  if (status < 0) skn_fatal("a one-sided operation to another process failed");
  atomic_fetch_sub_explicit(&skn_remote.in_flight, 1, memory_order_relaxed);
  if (atomic_fetch_sub(&w->pending, 1) == 1) skn_req_complete(&w->req);
}

/* Before an operation is handed to UCX (its callback may run before the call returns). */
static void rma_issuing(rma_wait *w) {
  atomic_fetch_add(&w->pending, 1);
  atomic_fetch_add_explicit(&skn_remote.in_flight, 1, memory_order_relaxed);
}

/* After: rc is what the module returned. */
static void rma_issued(rma_wait *w, int rc, skn_rank *target) {
  if (rc == SKN_NET_INPROGRESS) return;
  if (rc < 0)
    skn_fatal("cannot reach rank %d in process %d for a one-sided operation", target->world_rank, target->proc);
  atomic_fetch_sub_explicit(&skn_remote.in_flight, 1, memory_order_relaxed);
  atomic_fetch_sub(&w->pending, 1); /* the issuer's own count keeps it above 0 */
}

/* The origin drives the transport itself while it waits for its own operations, as
 * MPICH's ch4:ucx does: it spins on the request polling the transports (the scheduler's
 * poll hook, which counts it as a poller: the progress thread stays out of the way) and
 * yields to the worker's other units whenever they are ready, but never sleeps, which
 * would hand progress to the progress thread's 2-ms turns. (Over transports that need
 * the target's progress, the target's side costs more: docs/performance.md.)
 * The module lets one thread progress at a time, so ranks of this process waiting
 * together take turns. req.sync is the callback's last touch of w (pending is not: it
 * completes the request after it), so it is what says that w may go. */
static void rma_wait_all(rma_wait *w) {
  if (atomic_fetch_sub(&w->pending, 1) == 1) return;
  skn_unit *me = skn_sched_self();
  if (!me) {
    skn_req_wait(&w->req);
    return;
  }
  while (!skn_sched_poll_word(me, &w->req.sync, SKN_REQ_DONE))
    if (!skn_req_done(&w->req)) skn_sched_yield();
    else break;
}

/* Calls fn(arg, packed offset, target address, len) for each contiguous piece of the
 * target layout (tcount elements of tt at addr). */
static void rma_walk(char *addr, size_t tcount, const skn_dtype *tt, void (*fn)(void *, size_t, char *, size_t),
                     void *arg) {
  if (tt->contig) {
    fn(arg, 0, addr, tcount * tt->size);
    return;
  }
  size_t s = 0;
  for (size_t i = 0; i < tcount; i++)
    for (int b = 0; b < tt->nblocks; b++) {
      fn(arg, s, addr + (ptrdiff_t)i * tt->extent + tt->blocks[b].off, tt->blocks[b].len);
      s += tt->blocks[b].len;
    }
}

typedef struct rma_xfer {
  rma_wait w;
  bool put;
  skn_rank *target;
  const skn_rma_loc *t;
  char *buf; /* packed data */
} rma_xfer;

static void rma_piece(void *arg, size_t s, char *taddr, size_t len) {
  rma_xfer *x = arg;
  if (!len) return;
  rma_issuing(&x->w);
  int rc = x->put ? skn_remote.net->put(x->target->proc, x->buf + s, len, (uintptr_t)taddr, x->t->rkey, rma_op_done, &x->w)
                  : skn_remote.net->get(x->target->proc, x->buf + s, len, (uintptr_t)taddr, x->t->rkey, rma_op_done, &x->w);
  rma_issued(&x->w, rc, x->target);
}

int skn_remote_rma_put(skn_rank *target, const skn_rma_loc *t, const void *obuf, size_t ocount, const skn_dtype *ot,
                       size_t tcount, const skn_dtype *tt) {
  size_t bytes = tcount * tt->size;
  if (!bytes) return SKN_OK;
  rma_xfer x = {.put = true, .target = target, .t = t, .buf = (char *)(uintptr_t)obuf};
  rma_wait_init(&x.w);
  void *packed = NULL;
  if (!ot->contig) { /* one pack; the target layout is written piece by piece */
    if (!(packed = malloc(bytes))) skn_fatal("out of memory packing %zu bytes for MPI_Put", bytes);
    skn_dt_pack(packed, obuf, ot, bytes);
    x.buf = packed;
  }
  (void)ocount;
  rma_walk(t->addr, tcount, tt, rma_piece, &x);
  rma_wait_all(&x.w);
  free(packed);
  return SKN_OK;
}

int skn_remote_rma_get(skn_rank *target, const skn_rma_loc *t, void *obuf, size_t ocount, const skn_dtype *ot,
                       size_t tcount, const skn_dtype *tt) {
  size_t bytes = tcount * tt->size;
  if (!bytes) return SKN_OK;
  rma_xfer x = {.put = false, .target = target, .t = t, .buf = obuf};
  rma_wait_init(&x.w);
  void *packed = NULL;
  if (!ot->contig) {
    if (!(packed = malloc(bytes))) skn_fatal("out of memory for %zu bytes of MPI_Get", bytes);
    x.buf = packed;
  }
  (void)ocount;
  rma_walk(t->addr, tcount, tt, rma_piece, &x);
  rma_wait_all(&x.w);
  if (packed) skn_dt_unpack(obuf, ot, packed, bytes);
  free(packed);
  return SKN_OK;
}

/* One remote atomic on a 4- or 8-byte word, waited for. */
static void rma_word(skn_rank *target, const skn_rma_loc *t, char *taddr, int aop, size_t width,
                     const void *operand, void *result) {
  rma_wait w;
  rma_wait_init(&w);
  rma_issuing(&w);
  rma_issued(&w, skn_remote.net->atomic(target->proc, aop, width, operand, result, (uintptr_t)taddr, t->rkey, rma_op_done, &w),
             target);
  rma_wait_all(&w);
}

enum { OP_MAX = 1, OP_MIN, OP_SUM, OP_PROD, OP_LAND, OP_BAND, OP_LOR, OP_BOR, OP_LXOR, OP_BXOR, OP_MINLOC,
       OP_MAXLOC, OP_REPLACE, OP_NO_OP };

/* Accumulates in batches: the elements of one call are collected (up to ACC_BATCH at a
 * time) and their remote atomics issued together, so that a call costs a few round
 * trips instead of one or two per element. Per element: old (if wanted) = element;
 * element = in op element, atomically with respect to the target process's own
 * accumulates, which use hardware atomics on elements of 1, 2, 4 and 8 bytes aligned to
 * their size and a lock otherwise (rma.c, acc_elem). Here: a 4- or 8-byte element is
 * one UCX word atomic where the op is one of UCX's, a compare-and-swap loop otherwise; a
 * 1- or 2-byte element is a compare-and-swap loop on the aligned 4-byte word holding it
 * (its neighbours are written back unchanged, and the CPU's atomics on the byte and on
 * the word exclude each other); any other element takes the window's element lock in
 * the target process (skn_win_elem_lock), is read, changed and written back. Each round
 * is waited for before the call returns, and the module fences a posted atomic from
 * the operations after it (skn_net_atomic), which keeps the accumulates of one origin
 * ordered. */
#define ACC_BATCH 256
typedef struct acc_batch {
  skn_rank *target;
  const skn_rma_loc *t;
  int op, basic, aop; /* aop: UCX's own op for `op`, or -1 (CAS loop) */
  size_t width, bs;   /* atomic's width; element size (smaller: a part of the word) */
  int n;
  char *taddr[ACC_BATCH]; /* the words */
  uint8_t off[ACC_BATCH]; /* the element's offset in its word */
  const char *in[ACC_BATCH]; /* NULL for MPI_NO_OP */
  char *old[ACC_BATCH];      /* NULL: not wanted */
  uint64_t cur[ACC_BATCH], nv[ACC_BATCH], cmp[ACC_BATCH];
} acc_batch;

static void acc_issue(acc_batch *b, rma_wait *w, int k, int aop, const void *operand, void *result) {
  rma_issuing(w);
  rma_issued(w, skn_remote.net->atomic(b->target->proc, aop, b->width, operand, result, (uintptr_t)b->taddr[k],
                                         b->t->rkey, rma_op_done, w),
             b->target);
}

static void acc_run(acc_batch *b) {
  static const uint64_t zero = 0;
  rma_wait w;
  if (b->op == OP_NO_OP || b->aop >= 0) {
    /* one round; an element whose old value is not wanted gets a posted atomic (no reply:
     * complete at the target after the flush, which then costs one round trip for all),
     * except MPI_REPLACE, whose swap UCX only has fetching */
    rma_wait_init(&w);
    for (int k = 0; k < b->n; k++) {
      void *res = b->old[k] && b->width == b->bs ? (void *)b->old[k] : (void *)&b->cur[k];
      if (b->op == OP_NO_OP) acc_issue(b, &w, k, SKN_NET_AOP_OR, &zero, res); /* an atomic read */
      else acc_issue(b, &w, k, b->aop, b->in[k], b->old[k] || b->aop == SKN_NET_AOP_SWAP ? res : NULL);
    }
    rma_wait_all(&w);
    for (int k = 0; k < b->n; k++)
      if (b->old[k] && b->width != b->bs) memcpy(b->old[k], (char *)&b->cur[k] + b->off[k], b->bs);
    b->n = 0;
    return;
  }
  rma_wait_init(&w); /* read every element, then CAS them all until each one held */
  for (int k = 0; k < b->n; k++) acc_issue(b, &w, k, SKN_NET_AOP_OR, &zero, &b->cur[k]);
  rma_wait_all(&w);
  for (int left = b->n; left;) {
    rma_wait_init(&w);
    for (int k = 0; k < b->n; k++) {
      if (!b->taddr[k]) continue; /* done */
      b->nv[k] = b->cur[k];
      skn_rma_apply(b->op, b->basic, b->in[k], false, (char *)&b->nv[k] + b->off[k]); /* native: bs == extent */
      b->cmp[k] = b->cur[k];
      acc_issue(b, &w, k, SKN_NET_AOP_CSWAP, &b->nv[k], &b->cmp[k]);
    }
    rma_wait_all(&w);
    for (int k = 0; k < b->n; k++) {
      if (!b->taddr[k]) continue;
      if (memcmp(&b->cmp[k], &b->cur[k], b->width) != 0) {
        b->cur[k] = b->cmp[k]; /* someone changed it meanwhile: again from its value */
        continue;
      }
      if (b->old[k]) memcpy(b->old[k], (char *)&b->cur[k] + b->off[k], b->bs);
      b->taddr[k] = NULL;
      left--;
    }
  }
  b->n = 0;
}

/* `len` contiguous bytes at taddr, waited for (a put completes locally only: the caller
 * flushes when the target must have it). */
static void rma_bytes(skn_rank *target, const skn_rma_loc *t, bool put, void *buf, char *taddr, size_t len) {
  rma_xfer x = {.put = put, .target = target, .t = t, .buf = buf};
  rma_wait_init(&x.w);
  rma_piece(&x, 0, taddr, len);
  rma_wait_all(&x.w);
}


/* One element under the window's element lock: in and old in the packed stream's
 * layout (NULL: MPI_NO_OP, not wanted). */
static void acc_locked(skn_rank *target, const skn_rma_loc *t, int op, int basic, const char *in, char *old,
                       char *taddr) {
  const skn_dtype *bt = &skn_dt_predefined[basic];
  size_t ext = (size_t)bt->extent;
  _Alignas(64) char cur[64];
  if (ext > sizeof cur) skn_fatal("accumulate on %s: %zu-byte elements", bt->name, ext);
  skn_win_elem_lock(t->w, target, taddr);
  rma_bytes(target, t, false, cur, taddr, ext);
  if (old) skn_dt_pack(old, cur, bt, bt->size);
  if (in) {
    skn_rma_apply(op, basic, in, true, cur);
    rma_bytes(target, t, true, cur, taddr, ext);
    skn_remote_rma_flush(target); /* at the target before the lock is released */
  }
  skn_win_elem_unlock(t->w, target, taddr);
}

int skn_remote_rma_accumulate(skn_rank *target, const skn_rma_loc *t, int op, int basic, const void *origin,
                              size_t ocount, const skn_dtype *ot, void *result, size_t rcount, const skn_dtype *rt,
                              size_t tcount, const skn_dtype *tt) {
  const skn_dtype *bt = &skn_dt_predefined[basic];
  size_t bs = bt->size, total = tcount * tt->size;
  if (!total) return SKN_OK;
  bool native = (ptrdiff_t)bs == bt->extent; /* the packed stream is the memory layout */
  /* elements the target's process updates with hardware atomics when aligned */
  size_t hw = native && (bs == 1 || bs == 2 || bs == 4 || bs == 8) ? bs : 0;
  bool integer = bt->nsig == 1 && bt->sig[0].code >= SKN_SIG_I1 && bt->sig[0].code <= SKN_SIG_I8;
  const char *in = origin;
  char *inbuf = NULL, *oldbuf = NULL;
  if (op != OP_NO_OP && !(ot->contig && native)) {
    if (!(inbuf = malloc(total))) skn_fatal("out of memory for an accumulate of %zu bytes", total);
    skn_dt_pack(inbuf, origin, ot, total);
    in = inbuf;
  }
  (void)ocount;
  char *old = result;
  if (result && !(rt->contig && native)) {
    if (!(oldbuf = malloc(total))) skn_fatal("out of memory for an accumulate of %zu bytes", total);
    old = oldbuf;
  }
  (void)rcount;
  acc_batch *b = malloc(sizeof *b);
  if (!b) skn_fatal("out of memory for an accumulate of %zu bytes", total);
  b->target = target;
  b->t = t;
  b->op = op;
  b->basic = basic;
  b->bs = bs;
  b->width = bs == 8 ? 8 : 4;
  b->n = 0;
  b->aop = -1;
  if (bs >= 4) { /* whole words: UCX's own ops apply */
    if (op == OP_REPLACE) b->aop = SKN_NET_AOP_SWAP;
    else if (integer && op == OP_SUM) b->aop = SKN_NET_AOP_ADD;
    else if (integer && op == OP_BAND) b->aop = SKN_NET_AOP_AND;
    else if (integer && op == OP_BOR) b->aop = SKN_NET_AOP_OR;
    else if (integer && op == OP_BXOR) b->aop = SKN_NET_AOP_XOR;
  }
  skn_rma_pos pos = {tt, t->addr, 0, 0, 0};
  for (size_t s = 0; s < total; s += bs) {
    char *a = tt->contig && native ? t->addr + s : skn_rma_elem(&pos, bs);
    if (op == OP_NO_OP && !old) continue; /* nothing to read or change */
    const char *ein = op == OP_NO_OP ? NULL : in + s;
    char *eold = old ? old + s : NULL;
    if (!hw || ((uintptr_t)a & (hw - 1))) {
      if (b->n) acc_run(b); /* this origin's accumulates stay ordered */
      acc_locked(target, t, op, basic, ein, eold, a);
      continue;
    }
    char *word = (char *)((uintptr_t)a & ~(uintptr_t)(b->width - 1));
    b->taddr[b->n] = word;
    b->off[b->n] = (uint8_t)(a - word);
    b->in[b->n] = ein;
    b->old[b->n] = eold;
    if (++b->n == ACC_BATCH) acc_run(b);
  }
  if (b->n) acc_run(b);
  free(b);
  if (oldbuf) skn_dt_unpack(result, rt, oldbuf, total);
  free(inbuf);
  free(oldbuf);
  return SKN_OK;
}

int skn_remote_rma_cas(skn_rank *target, const skn_rma_loc *t, int basic, const void *origin, const void *compare,
                       void *result) {
  size_t bs = skn_dt_predefined[basic].size; /* integer, logical or byte types: no gaps */
  uintptr_t a = (uintptr_t)t->addr;
  if ((bs == 4 || bs == 8) && !(a & (bs - 1))) {
    uint64_t cmp = 0;
    memcpy(&cmp, compare, bs);
    rma_word(target, t, t->addr, SKN_NET_AOP_CSWAP, bs, origin, &cmp);
    memcpy(result, &cmp, bs);
    return SKN_OK;
  }
  if ((bs == 1 || bs == 2) && !(a & (bs - 1))) { /* on the aligned word holding it (see above) */
    static const uint64_t zero = 0;
    char *word = (char *)(a & ~(uintptr_t)3);
    size_t off = a & 3;
    uint64_t cur = 0, nv, cmp;
    rma_word(target, t, word, SKN_NET_AOP_OR, 4, &zero, &cur);
    while (!memcmp((char *)&cur + off, compare, bs)) {
      nv = cmp = cur;
      memcpy((char *)&nv + off, origin, bs);
      rma_word(target, t, word, SKN_NET_AOP_CSWAP, 4, &nv, &cmp);
      if (!memcmp(&cmp, &cur, 4)) break; /* swapped */
      cur = cmp;                         /* a neighbour or the element changed: again */
    }
    memcpy(result, (char *)&cur + off, bs);
    return SKN_OK;
  }
  _Alignas(64) char old[64];
  if (bs > sizeof old) skn_fatal("compare-and-swap on %zu-byte elements", bs);
  skn_win_elem_lock(t->w, target, t->addr);
  rma_bytes(target, t, false, old, t->addr, bs);
  if (!memcmp(old, compare, bs)) {
    rma_bytes(target, t, true, (void *)(uintptr_t)origin, t->addr, bs);
    skn_remote_rma_flush(target);
  }
  skn_win_elem_unlock(t->w, target, t->addr);
  memcpy(result, old, bs);
  return SKN_OK;
}

int skn_remote_rma_flush(skn_rank *target) {
  rma_wait w;
  rma_wait_init(&w);
  rma_issuing(&w);
  rma_issued(&w, skn_remote.net->flush(target ? target->proc : -1, rma_op_done, &w), target ? target : skn_job_g.ranks[skn_job_g.first_rank]);
  rma_wait_all(&w);
  return SKN_OK;
}

bool skn_remote_mem_map(void *addr, size_t len, void **mem, void *rkey, size_t *rkey_len) {
  return skn_remote.net->mem_map(addr, len, (skn_net_mem **)mem, rkey, rkey_len) == SKN_NET_OK;
}

void skn_remote_mem_unmap(void *mem) { skn_remote.net->mem_unmap(mem); }

void *skn_remote_rkey(int proc, const void *rkey, size_t len) {
  skn_net_rkey *rk = NULL;
  if (skn_remote.net->rkey_unpack(proc, rkey, len, &rk) != SKN_NET_OK)
    skn_fatal("cannot use the window memory of process %d", proc);
  return rk;
}

void skn_remote_rkey_destroy(void *rk) { skn_remote.net->rkey_destroy(rk); }
