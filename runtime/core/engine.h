/* The engine's inline half (device.h has the contracts): the matching-queue primitives
 * and delivery, which the transports' hot paths compile in. Only the engine (engine.c),
 * the transports' arrival paths and the MPI layer's blocking receive (skn_p2p_recv_post)
 * include it; nothing else touches the queues. */
#ifndef SKN_ENGINE_H
#define SKN_ENGINE_H

#include <string.h>

#include "core.h"

SKN_INTERNAL void skn_dev_wake_probers(skn_mq *mq);
SKN_INTERNAL bool skn_dev_deliver_fetch(skn_req *r, const skn_transport *tp, void *handle, size_t n, bool ok);

static inline bool envelope_matches(const skn_req *env, int ctx, int src, int tag) {
  return env->ctx == ctx && (src == MPI_ANY_SOURCE || env->src == src) &&
         (tag == MPI_ANY_TAG || env->tag == tag);
}

static inline bool receive_matches(const skn_req *r, int ctx, int src, int tag) {
  return r->ctx == ctx && (r->src == MPI_ANY_SOURCE || r->src == src) &&
         (r->tag == MPI_ANY_TAG || r->tag == tag);
}

static inline void list_append(skn_req **head, skn_req **tail, skn_req *r) {
  r->next = NULL;
  if (*tail) (*tail)->next = r;
  else *head = r;
  *tail = r;
}

static inline void list_remove(skn_req **head, skn_req **tail, skn_req *prev, skn_req *r) {
  if (prev) prev->next = r->next;
  else *head = r->next;
  if (*tail == r) *tail = prev;
  r->next = NULL;
}

static inline size_t envelope_charge(const skn_req *env) { return sizeof(skn_req) + env->bytes; }
/* Envelopes whose data sits in the receiver's memory count against its buffer budget. */
static inline bool envelope_buffered(const skn_req *env) {
  return env->proto != SKN_PROTO_RNDV && env->proto != SKN_PROTO_FETCH;
}

/* The earliest posted receive, `solo` (core.h: skn_mq). Only a holder of mq->lock puts a
 * receive there, and only into an empty queue (solo NULL, posted empty): later receives go
 * to `posted`, so solo is always the first to match. An arrival claims what solo holds by
 * swapping it for SKN_MQ_BUSY before it reads the receive: the receive cannot then be
 * matched, withdrawn or reposted under it (the rank's recv_req is reused receive after
 * receive, so a check made before claiming could be about an earlier one). It then either
 * empties the slot (matched) or puts the receive back. Code under the lock that must know
 * what solo holds waits out SKN_MQ_BUSY (a few instructions of another thread).
 *
 * Returns the receive in solo if it matches, taken out; else NULL. Without the lock
 * (locked false) it gives up when another arrival holds the slot; under it, it waits. */
static inline skn_req *take_solo(skn_mq *mq, int ctx, int src, int tag, bool locked) {
  skn_req *r = atomic_load_explicit(&mq->solo, memory_order_relaxed);
  for (;;) {
    if (r == SKN_MQ_BUSY && locked) {
      skn_cpu_relax();
      r = atomic_load_explicit(&mq->solo, memory_order_relaxed);
      continue;
    }
    if ((uintptr_t)r <= (uintptr_t)SKN_MQ_BUSY) return NULL;
    if (atomic_compare_exchange_weak_explicit(&mq->solo, &r, SKN_MQ_BUSY, memory_order_acquire, memory_order_relaxed))
      break;
    if (!locked) return NULL;
  }
  bool ok = receive_matches(r, ctx, src, tag);
  if (ok && !locked) /* only a BUSY holder writes it; the locked path counts in `arrived` */
    atomic_store_explicit(&mq->arrived_solo, atomic_load_explicit(&mq->arrived_solo, memory_order_relaxed) + 1,
                          memory_order_relaxed);
  atomic_store_explicit(&mq->solo, ok ? NULL : r, memory_order_release);
  return ok ? r : NULL;
}

static inline skn_req *solo_settled(skn_mq *mq) {
  skn_req *s;
  while ((s = atomic_load_explicit(&mq->solo, memory_order_acquire)) == SKN_MQ_BUSY) skn_cpu_relax();
  return s;
}

/* Unlocked helpers: caller holds mq->lock. */
static inline skn_req *take_posted(skn_mq *mq, int ctx, int src, int tag) {
  skn_req *s = take_solo(mq, ctx, src, tag, true);
  if (s) return s;
  skn_req *prev = NULL;
  for (skn_req *r = mq->posted; r; prev = r, r = r->next) {
    if (receive_matches(r, ctx, src, tag)) {
      list_remove(&mq->posted, &mq->posted_tail, prev, r);
      r->queued = false;
      return r;
    }
  }
  return NULL;
}

/* Posts r (not matched by a queued message). */
static inline void post_receive(skn_mq *mq, skn_req *r) {
  /* solo is never refilled by anyone but a lock holder, so NULL seen here stays NULL */
  if (!mq->posted && !atomic_load_explicit(&mq->solo, memory_order_relaxed)) {
    atomic_store_explicit(&mq->solo, r, memory_order_release);
    return;
  }
  r->queued = true;
  list_append(&mq->posted, &mq->posted_tail, r);
}

/* Takes r out of the posted receives; false when it was matched already. */
static inline bool withdraw_receive(skn_mq *mq, skn_req *r) {
  for (skn_req *s; (s = solo_settled(mq)) == r;) /* the CAS fails only to an arrival's claim */
    if (atomic_compare_exchange_strong(&mq->solo, &s, NULL)) return true;
  if (!r->queued) return false;
  skn_req *prev = NULL;
  for (skn_req *x = mq->posted; x && x != r; x = x->next) prev = x;
  list_remove(&mq->posted, &mq->posted_tail, prev, r);
  r->queued = false;
  return true;
}

static inline void unqueue_unexpected(skn_mq *mq, skn_req *prev, skn_req *e) {
  list_remove(&mq->unexp, &mq->unexp_tail, prev, e);
  mq->unexp_len--;
  e->queued = false;
  if (envelope_buffered(e)) mq->buffered -= envelope_charge(e);
}

static inline skn_req *find_unexpected(skn_mq *mq, int ctx, int src, int tag, bool remove) {
  skn_req *prev = NULL;
  for (skn_req *e = mq->unexp; e; prev = e, e = e->next) {
    if (envelope_matches(e, ctx, src, tag)) {
      if (remove) unqueue_unexpected(mq, prev, e);
      return e;
    }
  }
  return NULL;
}

/* ARRIVE in two halves, for a transport whose fast path needs no envelope when a receive
 * is posted (device.h describes skn_dev_arrive, which is begin + make + queue):
 * begin returns the matching posted receive, taken out of dst's queue, with the queue
 * unlocked; or NULL with dst's queue lock HELD. Then the caller builds its envelope (under
 * the lock: no other arrival or receive can come between) and hands it to
 * skn_dev_arrive_queue, which queues it and unlocks. */
static inline skn_req *skn_dev_arrive_begin(skn_rank *dst, int ctx, int src, int tag) {
  skn_mq *mq = &dst->mq;
  skn_req *r = take_solo(mq, ctx, src, tag, false);
  if (SKN_LIKELY(r != NULL)) return r;
  skn_spin_lock(&mq->lock);
  mq->arrived++;
  r = take_posted(mq, ctx, src, tag);
  if (r) skn_spin_unlock(&mq->lock);
  return r;
}

static inline void skn_dev_arrive_queue(skn_rank *dst, skn_req *env) {
  skn_mq *mq = &dst->mq;
  env->queued = true;
  if (envelope_buffered(env)) mq->buffered += envelope_charge(env);
  list_append(&mq->unexp, &mq->unexp_tail, env);
  if (++mq->unexp_len > mq->unexp_peak) mq->unexp_peak = mq->unexp_len;
  if (mq->probers) skn_dev_wake_probers(mq);
  skn_spin_unlock(&mq->lock);
}

static inline skn_req *skn_dev_arrive(skn_rank *dst, int ctx, int src, int tag, skn_req *(*make)(void *arg, size_t buffered),
                                      void *arg) {
  skn_req *r = skn_dev_arrive_begin(dst, ctx, src, tag);
  if (!r) skn_dev_arrive_queue(dst, make(arg, dst->mq.buffered));
  return r;
}

/* RECEIVE's first half (device.h: skn_p2p_recv is post, then skn_p2p_recv_matched when
 * a message was waiting), inline for the MPI layer's blocking receive: takes the first
 * queued message r matches out of me's queue and returns it, or posts r and returns NULL. */
static inline skn_req *skn_p2p_recv_post(skn_rank *me, skn_req *r) {
  skn_mq *mq = &me->mq;
  int ctx = r->ctx, src = r->src, tag = r->tag; /* before the lock: the caller's just-stored values, not reloads */
  skn_spin_lock(&mq->lock);
  skn_req *env = find_unexpected(mq, ctx, src, tag, true);
  if (!env) post_receive(mq, r);
  skn_spin_unlock(&mq->lock);
  return env;
}

static inline size_t receive_capacity(const skn_req *r) { return r->count * r->dt->size; }

static inline __attribute__((always_inline)) bool skn_dev_deliver(skn_req *r, const skn_dev_msg *m) {
  size_t cap = receive_capacity(r), n = m->bytes < cap ? m->bytes : cap;
  /* type signatures that cannot match: nothing is copied, the receive fails */
  bool ok = m->dt ? skn_dt_sig_match(r->dt, m->dt, n) : skn_dt_sig_match_sum(r->dt, r->count, m->sum);
  skn_p2p_set_result(r, m->src, m->tag, m->bytes, ok ? n : 0, ok);
  if (SKN_LIKELY(m->how == SKN_DATA_TYPED)) {
    /* n is min(message, capacity): contiguous layouts copy it without recomputing it */
    if (ok && SKN_LIKELY(r->dt->contig && m->dt->contig)) skn_copy_bytes(r->buf, m->data, n);
    else if (ok) skn_dt_copy(r->buf, r->count, r->dt, m->data, m->count, m->dt); /* copies n bytes */
    return true;
  }
  if (m->how == SKN_DATA_PACKED) {
    if (ok && n) {
      if (SKN_LIKELY(r->dt->contig)) memcpy(r->buf, m->data, n);
      else skn_dt_unpack(r->buf, r->dt, m->data, n);
    }
    return true;
  }
  return skn_dev_deliver_fetch(r, m->tp, m->handle, n, ok);
}

#endif
