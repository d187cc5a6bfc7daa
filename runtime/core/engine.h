/* The engine's inline half (device.h has the contracts): the matching-queue primitives
 * and delivery, which the transports' hot paths compile in. Only the engine (engine.c)
 * and the transports' arrival paths include it; nothing else touches the queues. */
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

/* Unlocked helpers: caller holds mq->lock. */
static inline skn_req *take_posted(skn_mq *mq, int ctx, int src, int tag) {
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

static inline skn_req *skn_dev_arrive(skn_rank *dst, int ctx, int src, int tag, skn_req *(*make)(void *arg, size_t buffered),
                        void *arg) {
  skn_mq *mq = &dst->mq;
  skn_spin_lock(&mq->lock);
  skn_req *r = take_posted(mq, ctx, src, tag);
  mq->arrived++;
  if (!r) {
    skn_req *env = make(arg, mq->buffered);
    env->queued = true;
    if (envelope_buffered(env)) mq->buffered += envelope_charge(env);
    list_append(&mq->unexp, &mq->unexp_tail, env);
    if (++mq->unexp_len > mq->unexp_peak) mq->unexp_peak = mq->unexp_len;
    if (mq->probers) skn_dev_wake_probers(mq);
  }
  skn_spin_unlock(&mq->lock);
  return r;
}

static inline size_t receive_capacity(const skn_req *r) { return r->count * r->dt->size; }

static inline __attribute__((always_inline)) bool skn_dev_deliver(skn_req *r, const skn_dev_msg *m) {
  size_t cap = receive_capacity(r), n = m->bytes < cap ? m->bytes : cap;
  /* type signatures that cannot match: nothing is copied, the receive fails */
  bool ok = m->dt ? skn_dt_sig_match(r->dt, m->dt, n) : skn_dt_sig_match_sum(r->dt, r->count, m->sum);
  skn_p2p_set_result(r, m->src, m->tag, m->bytes, ok ? n : 0, ok);
  if (SKN_LIKELY(m->how == SKN_DATA_TYPED)) {
    if (ok) skn_dt_copy_inline(r->buf, r->count, r->dt, m->data, m->count, m->dt); /* copies n bytes */
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
