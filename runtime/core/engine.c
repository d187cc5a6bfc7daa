/* The matching and delivery engine (device.h): the only code that touches a rank's
 * matching queues, and delivery (signature check, copy or fetch into the final buffer,
 * status, completion) written once for every transport. The MPI layer's point-to-point
 * calls start here; sends go to the receiver's transport (rank->tp), which comes back
 * through skn_dev_arrive and skn_dev_deliver; the engine calls transports only through
 * their ops table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
  return env->proto != SKN_PROTO_RNDV && env->proto != SKN_PROTO_FETCH;
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

static void unqueue_unexpected(skn_mq *mq, skn_req *prev, skn_req *e) {
  list_remove(&mq->unexp, &mq->unexp_tail, prev, e);
  e->queued = false;
  if (envelope_buffered(e)) mq->buffered -= envelope_charge(e);
}

static skn_req *find_unexpected(skn_mq *mq, int ctx, int src, int tag, bool remove) {
  skn_req *prev = NULL;
  for (skn_req *e = mq->unexp; e; prev = e, e = e->next) {
    if (envelope_matches(e, ctx, src, tag)) {
      if (remove) unqueue_unexpected(mq, prev, e);
      return e;
    }
  }
  return NULL;
}

static void wake_probers(skn_mq *mq) {
  for (skn_probe_waiter *p = mq->probers; p; p = p->next) skn_sched_wake(p->unit);
  mq->probers = NULL;
}

/* ------------------------------------------------------------------ transports' side */

skn_req *skn_dev_arrive(skn_rank *dst, int ctx, int src, int tag, skn_req *(*make)(void *arg, size_t buffered),
                        void *arg) {
  skn_mq *mq = &dst->mq;
  skn_spin_lock(&mq->lock);
  skn_req *r = take_posted(mq, ctx, src, tag);
  if (!r) {
    skn_req *env = make(arg, mq->buffered);
    env->queued = true;
    if (envelope_buffered(env)) mq->buffered += envelope_charge(env);
    list_append(&mq->unexp, &mq->unexp_tail, env);
    if (mq->probers) wake_probers(mq);
  }
  skn_spin_unlock(&mq->lock);
  return r;
}

static size_t receive_capacity(const skn_req *r) { return r->count * r->dt->size; }

bool skn_dev_deliver(skn_req *r, const skn_dev_msg *m) {
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
  /* SKN_DATA_FETCH: the transport moves the data; a non-contiguous receive takes it
   * through a bounce buffer, unpacked in skn_dev_fetched. */
  if (!ok) {
    m->tp->fetch(m->handle, NULL, 0, NULL);
    return true;
  }
  void *dst = r->buf;
  r->payload = NULL;
  if (!r->dt->contig && n && !(dst = r->payload = malloc(n)))
    skn_fatal("out of memory receiving %zu bytes from rank %d", n, m->src);
  m->tp->fetch(m->handle, dst, n, r);
  return false;
}

void skn_dev_fetched(skn_req *r) {
  if (r->payload) {
    skn_dt_unpack(r->buf, r->dt, r->payload, r->bytes);
    free(r->payload);
    r->payload = NULL;
  }
  skn_req_complete(r);
}

skn_req *skn_dev_withdraw(skn_rank *dst, bool (*match)(const skn_req *env, const void *arg), const void *arg) {
  skn_mq *mq = &dst->mq;
  skn_spin_lock(&mq->lock);
  skn_req *prev = NULL, *e = mq->unexp;
  for (; e && !match(e, arg); e = e->next) prev = e;
  if (e) unqueue_unexpected(mq, prev, e);
  skn_spin_unlock(&mq->lock);
  return e;
}

bool skn_dev_unqueue(skn_rank *dst, skn_req *env) {
  skn_mq *mq = &dst->mq;
  skn_spin_lock(&mq->lock);
  bool queued = env->queued;
  if (queued) {
    skn_req *prev = NULL;
    for (skn_req *x = mq->unexp; x && x != env; x = x->next) prev = x;
    unqueue_unexpected(mq, prev, env);
  }
  skn_spin_unlock(&mq->lock);
  return queued;
}

void skn_dev_bind(int proc, const skn_transport *tp) {
  for (int w = 0; w < skn_job_g.size; w++) {
    skn_rank *r = skn_job_g.ranks[w];
    if (r && r->proc == proc) r->tp = tp;
  }
}

/* ------------------------------------------------------------------ failure */

static _Atomic(bool) ending;

void skn_dev_ending(void) { atomic_store(&ending, true); }
bool skn_dev_is_ending(void) { return atomic_load(&ending); }

void skn_dev_peer_lost(int proc, const char *where, const char *why) {
  if (atomic_load(&ending)) return;
  int first = -1, last = -1;
  for (int w = 0; w < skn_job_g.size; w++) {
    skn_rank *r = skn_job_g.ranks[w];
    if (r && r->proc == proc) {
      if (first < 0) first = w;
      last = w;
    }
  }
  skn_log("lost process %d (ranks %d-%d%s%s): %s; ending the job", proc, first, last, where ? ", " : "",
          where ? where : "", why);
  _exit(SKN_EXIT_PEER_LOST);
}

/* ------------------------------------------------------------------ the MPI layer's side */

void skn_p2p_send(skn_rank *me, const skn_msg *m, skn_req *sreq) { m->peer->tp->send(me, m, sreq); }

/* Delivers envelope env to receive r and hands env back to its transport. Returns false
 * when r completes later (a fetch). */
static bool consume(skn_req *r, skn_req *env) {
  /* `filled` is 0 while the transport is still putting the data in place (an eager copy
   * being made); the transport may also turn such an envelope into a by-reference one. */
  while (!atomic_load_explicit(&env->filled, memory_order_acquire)) skn_cpu_relax();
  skn_dev_msg m = {.src = env->src, .tag = env->tag, .bytes = env->bytes, .dt = env->dt, .sum = &env->sum};
  switch (env->proto) {
  case SKN_PROTO_RNDV: m.how = SKN_DATA_TYPED, m.data = env->buf, m.count = env->count; break;
  case SKN_PROTO_FETCH: m.how = SKN_DATA_FETCH, m.tp = env->tp, m.handle = env->payload; break;
  default: m.how = SKN_DATA_PACKED, m.data = env->payload; break;
  }
  bool done = skn_dev_deliver(r, &m);
  env->tp->release(env, true);
  return done;
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

skn_status skn_p2p_cancel(skn_rank *me, skn_req *r) {
  if (r->kind != SKN_REQ_RECV) {
    if (!r->peer) return SKN_ERR_NOT_CANCELLED; /* matched a posted receive at once */
    return r->peer->tp->cancel_send(me, r);
  }
  skn_mq *mq = &me->mq;
  skn_spin_lock(&mq->lock);
  if (!r->queued) {
    skn_spin_unlock(&mq->lock);
    return SKN_ERR_NOT_CANCELLED;
  }
  skn_req *prev = NULL;
  for (skn_req *x = mq->posted; x && x != r; x = x->next) prev = x;
  list_remove(&mq->posted, &mq->posted_tail, prev, r);
  r->queued = false;
  skn_spin_unlock(&mq->lock);
  r->cancelled = true;
  skn_req_complete(r);
  return SKN_OK;
}
