/* Point-to-point through the shared address space, with one copy per message.
 *
 * A send locks the receiver's queues. If a matching receive is posted, the sender copies
 * straight into the receive buffer. Otherwise it leaves an envelope in the unexpected
 * queue: tiny data inside the envelope, medium data in an eager copy (the sender
 * completes at once), large or synchronous data by reference (the receiver copies from
 * the send buffer when it matches, then completes the sender). Early-completed envelopes
 * count against the receiver's buffer budget; past it, sends fall back to by-reference,
 * so a flood of unexpected messages costs the flooder's requests, not unbounded memory. */
#include <stdlib.h>
#include <string.h>

#include "core.h"

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
  return env->proto != SKN_PROTO_RNDV && env->proto != SKN_PROTO_NET_RNDV;
}

/* Unlocked helpers: caller holds mq->lock. */
static skn_req *take_posted(skn_mq *mq, int ctx, int src, int tag) {
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

static skn_req *find_unexpected(skn_mq *mq, int ctx, int src, int tag, bool remove) {
  skn_req *prev = NULL;
  for (skn_req *e = mq->unexp; e; prev = e, e = e->next) {
    if (envelope_matches(e, ctx, src, tag)) {
      if (remove) {
        list_remove(&mq->unexp, &mq->unexp_tail, prev, e);
        e->queued = false;
        if (envelope_buffered(e)) mq->buffered -= envelope_charge(e);
      }
      return e;
    }
  }
  return NULL;
}

static void wake_probers(skn_mq *mq) {
  for (skn_probe_waiter *p = mq->probers; p; p = p->next) skn_sched_wake(p->unit);
  mq->probers = NULL;
}


/* ------------------------------------------------------------------ send */

void skn_p2p_send(skn_rank *me, const skn_msg *m, skn_req *sreq) {
  skn_rank *peer = m->peer;
  if (SKN_UNLIKELY(skn_rank_is_remote(peer))) {
    skn_remote_send(me, m, sreq);
    return;
  }
  skn_mq *mq = &peer->mq;
  size_t bytes = m->count * m->dt->size;

  skn_spin_lock(&mq->lock);
  skn_req *r = take_posted(mq, m->ctx, m->src, m->tag);
  if (r) {
    skn_spin_unlock(&mq->lock);
    size_t cap = r->count * r->dt->size;
    /* type signatures that cannot match: nothing is copied, the receive fails */
    bool sig_ok = skn_dt_sig_match(r->dt, m->dt, bytes < cap ? bytes : cap);
    size_t copied = SKN_LIKELY(sig_ok) ? skn_dt_copy_inline(r->buf, r->count, r->dt, m->buf, m->count, m->dt) : 0;
    skn_p2p_set_result(r, m->src, m->tag, bytes, copied, sig_ok);
    skn_req_complete(r);
    if (sreq) skn_req_complete(sreq);
    return;
  }

  /* Unexpected. Choose how the data travels. A nonblocking send goes by reference past
   * the tiny size: its owner waits for it anyway, so the receiver's single copy beats
   * copying twice through an eager buffer. Blocking sends are buffered up to the eager
   * limit so that "everybody sends, then receives" codes do not deadlock. */
  uint8_t proto = SKN_PROTO_RNDV;
  size_t buffered_limit = sreq ? SKN_CELL_SIZE : skn_job_g.eager_limit;
  if (m->mode != SKN_MODE_SYNC && bytes <= buffered_limit &&
      mq->buffered + sizeof(skn_req) + bytes <= skn_job_g.buffer_budget)
    proto = bytes <= SKN_CELL_SIZE ? SKN_PROTO_INLINE : SKN_PROTO_EAGER;

  skn_req stack_env;
  skn_req *env = sreq;
  if (!env) {
    if (proto == SKN_PROTO_RNDV) {
      env = &stack_env; /* we wait below; the receiver's completion is its last access */
      memset(env, 0, offsetof(skn_req, cell));
    } else if (!(env = skn_req_alloc(me))) {
      proto = SKN_PROTO_RNDV; /* out of memory for a copy: fall back to by-reference */
      env = &stack_env;
      memset(env, 0, offsetof(skn_req, cell));
    } else {
      atomic_store_explicit(&env->refs, 0, memory_order_relaxed); /* no user handle */
    }
  }
  env->kind = SKN_REQ_SEND;
  env->mode = m->mode;
  env->proto = proto;
  env->ctx = m->ctx;
  env->src = m->src;
  env->tag = m->tag;
  env->comm = m->comm;
  env->peer = peer;
  env->buf = (void *)(uintptr_t)m->buf;
  env->count = m->count;
  env->dt = m->dt;
  env->bytes = bytes;
  env->queued = true;
  atomic_store_explicit(&env->filled, proto != SKN_PROTO_EAGER, memory_order_relaxed);
  if (proto == SKN_PROTO_INLINE) {
    skn_dt_pack(env->cell, m->buf, m->dt, bytes);
    env->payload = env->cell;
  }
  if (proto != SKN_PROTO_RNDV) {
    mq->buffered += envelope_charge(env);
    atomic_fetch_add_explicit(&env->refs, 1, memory_order_relaxed); /* the queue's */
  }
  list_append(&mq->unexp, &mq->unexp_tail, env);
  if (mq->probers) wake_probers(mq);
  skn_spin_unlock(&mq->lock);

  if (proto == SKN_PROTO_EAGER) {
    /* Copy outside the lock; a receiver that matches meanwhile waits for `filled`. */
    void *payload = malloc(bytes);
    if (payload) {
      skn_dt_pack(payload, m->buf, m->dt, bytes);
      env->payload = payload;
    } else {
      env->proto = proto = SKN_PROTO_RNDV; /* the receiver reads the send buffer */
    }
    /* From here on the receiver may consume env and its owner reuse it: only locals. */
    atomic_store_explicit(&env->filled, 1, memory_order_release);
  }
  if (proto == SKN_PROTO_RNDV) {
    if (!sreq) {
      skn_req_wait(env);
      if (env != &stack_env) skn_req_release(env);
    }
    return;
  }
  if (sreq) skn_req_complete(sreq);
}

/* ------------------------------------------------------------------ receive */

skn_req *skn_p2p_arrive(skn_rank *dst, int ctx, int src, int tag, skn_req *(*make)(void *arg), void *arg) {
  skn_mq *mq = &dst->mq;
  skn_spin_lock(&mq->lock);
  skn_req *r = take_posted(mq, ctx, src, tag);
  if (!r) {
    skn_req *env = make(arg);
    env->queued = true;
    if (envelope_buffered(env)) mq->buffered += envelope_charge(env);
    list_append(&mq->unexp, &mq->unexp_tail, env);
    if (mq->probers) wake_probers(mq);
  }
  skn_spin_unlock(&mq->lock);
  return r;
}

/* Copies an envelope's data into r and finishes both sides. Returns false when r
 * completes later (a remote rendezvous being fetched). */
static bool consume(skn_req *r, skn_req *env) {
  if (SKN_UNLIKELY(env->proto >= SKN_PROTO_NET_EAGER)) return skn_remote_consume(r, env);
  size_t copied = 0, cap = r->count * r->dt->size;
  /* type signatures that cannot match: nothing is copied, the receive fails */
  bool sig_ok = skn_dt_sig_match(r->dt, env->dt, env->bytes < cap ? env->bytes : cap);
  /* `filled` is set from the start except while an eager copy is being made; the sender
   * may also turn an eager envelope into a by-reference one when it cannot allocate. */
  while (!atomic_load_explicit(&env->filled, memory_order_acquire)) skn_cpu_relax();
  if (sig_ok && env->proto == SKN_PROTO_RNDV) {
    copied = skn_dt_copy(r->buf, r->count, r->dt, env->buf, env->count, env->dt);
  } else if (sig_ok) {
    copied = env->bytes < cap ? env->bytes : cap;
    skn_dt_unpack(r->buf, r->dt, env->payload, copied);
  }
  skn_p2p_set_result(r, env->src, env->tag, env->bytes, copied, sig_ok);
  if (env->proto == SKN_PROTO_RNDV) {
    skn_req_complete(env); /* last access to a by-reference envelope */
  } else {
    if (env->proto == SKN_PROTO_EAGER) free(env->payload);
    skn_req_release(env);
  }
  return true;
}

void skn_p2p_recv_matched(skn_req *r, skn_req *env) {
  if (consume(r, env)) skn_req_complete(r);
}

void skn_p2p_recv(skn_rank *me, skn_req *r) {
  skn_mq *mq = &me->mq;
  skn_spin_lock(&mq->lock);
  skn_req *env = find_unexpected(mq, r->ctx, r->src, r->tag, true);
  if (!env) {
    r->queued = true;
    list_append(&mq->posted, &mq->posted_tail, r);
    skn_spin_unlock(&mq->lock);
    return;
  }
  skn_spin_unlock(&mq->lock);
  skn_p2p_recv_matched(r, env);
}

/* ------------------------------------------------------------------ probe, cancel */

static inline void describe(const skn_req *env, skn_probe_info *info) {
  info->src = env->src;
  info->tag = env->tag;
  info->bytes = env->bytes;
}

skn_req *skn_p2p_probe(skn_rank *me, int ctx, int src, int tag, bool remove, skn_probe_info *info) {
  skn_mq *mq = &me->mq;
  skn_spin_lock(&mq->lock);
  skn_req *env = find_unexpected(mq, ctx, src, tag, remove);
  if (env) describe(env, info);
  skn_spin_unlock(&mq->lock);
  return env;
}

skn_req *skn_p2p_probe_wait(skn_rank *me, int ctx, int src, int tag, bool remove, skn_probe_info *info) {
  skn_mq *mq = &me->mq;
  skn_unit *self = skn_sched_self();
  skn_probe_waiter w = {self, NULL};
  for (;;) {
    skn_sched_prepare_wait(self);
    skn_spin_lock(&mq->lock);
    skn_req *env = find_unexpected(mq, ctx, src, tag, remove);
    if (env) {
      describe(env, info);
      /* we may still be on the probers list: take ourselves off */
      for (skn_probe_waiter **p = &mq->probers; *p; p = &(*p)->next)
        if (*p == &w) {
          *p = w.next;
          break;
        }
      skn_spin_unlock(&mq->lock);
      skn_sched_done_waiting(self);
      return env;
    }
    bool listed = false;
    for (skn_probe_waiter *p = mq->probers; p; p = p->next) listed |= (p == &w);
    if (!listed) {
      w.next = mq->probers;
      mq->probers = &w;
    }
    skn_spin_unlock(&mq->lock);
    skn_sched_wait(self);
  }
}

skn_req *skn_p2p_withdraw(skn_rank *dst, bool (*match)(const skn_req *env, const void *arg), const void *arg) {
  skn_mq *mq = &dst->mq;
  skn_spin_lock(&mq->lock);
  skn_req *prev = NULL, *e = mq->unexp;
  for (; e && !match(e, arg); e = e->next) prev = e;
  if (e) {
    list_remove(&mq->unexp, &mq->unexp_tail, prev, e);
    e->queued = false;
    if (envelope_buffered(e)) mq->buffered -= envelope_charge(e);
  }
  skn_spin_unlock(&mq->lock);
  return e;
}

skn_status skn_p2p_cancel(skn_rank *me, skn_req *r) {
  bool send = r->kind != SKN_REQ_RECV;
  if (send && !r->peer) return SKN_ERR_NOT_CANCELLED; /* matched a posted receive at once */
  if (send && skn_rank_is_remote(r->peer)) return skn_remote_cancel(me, r);
  skn_mq *mq = r->kind == SKN_REQ_RECV ? &me->mq : &r->peer->mq;
  skn_spin_lock(&mq->lock);
  if (!r->queued) {
    skn_spin_unlock(&mq->lock);
    return SKN_ERR_NOT_CANCELLED;
  }
  skn_req **head = r->kind == SKN_REQ_RECV ? &mq->posted : &mq->unexp;
  skn_req **tail = r->kind == SKN_REQ_RECV ? &mq->posted_tail : &mq->unexp_tail;
  skn_req *prev = NULL;
  for (skn_req *x = *head; x && x != r; x = x->next) prev = x;
  list_remove(head, tail, prev, r);
  r->queued = false;
  bool early = r->kind == SKN_REQ_SEND && r->proto != SKN_PROTO_RNDV;
  if (early) mq->buffered -= envelope_charge(r);
  skn_spin_unlock(&mq->lock);
  r->cancelled = true;
  if (early) {
    while (!atomic_load_explicit(&r->filled, memory_order_acquire)) skn_cpu_relax();
    if (r->proto == SKN_PROTO_EAGER) free(r->payload);
    skn_req_release(r); /* the queue's reference; the send already completed */
  } else {
    skn_req_complete(r);
  }
  return SKN_OK;
}
