/* The one-copy transport between ranks of this process (device.h: skn_local_transport).
 *
 * A send goes to the engine at once (skn_dev_arrive_begin, then _queue). If a matching receive is posted,
 * the sender copies straight into the receive buffer. Otherwise it leaves an envelope in
 * the unexpected queue: tiny data inside the envelope, medium data in an eager copy (the
 * sender completes at once), large or synchronous data by reference (the receiver copies
 * from the send buffer when it matches, then completes the sender). Early-completed
 * envelopes count against the receiver's buffer budget; past it, sends fall back to
 * by-reference, so a flood of unexpected messages costs the flooder's requests, not
 * unbounded memory. */
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "engine.h"

typedef struct local_send {
  skn_rank *me;
  const skn_msg *m;
  skn_req *sreq;
  skn_req *stack_env; /* a blocking by-reference send waits on it */
  size_t bytes;
} local_send;

/* Under the receiver's queue lock: chooses how the data travels and builds the envelope.
 * A nonblocking send goes by reference past the tiny size: its owner waits for it anyway,
 * so the receiver's single copy beats copying twice through an eager buffer. Blocking
 * sends are buffered up to the eager limit so that "everybody sends, then receives" codes
 * do not deadlock. */
static skn_req *make_envelope(void *arg, size_t buffered) {
  local_send *s = arg;
  const skn_msg *m = s->m;
  size_t bytes = s->bytes;
  uint8_t proto = SKN_PROTO_RNDV;
  size_t buffered_limit = s->sreq ? SKN_CELL_SIZE : skn_job_g.eager_limit;
  if (m->mode != SKN_MODE_SYNC && bytes <= buffered_limit &&
      buffered + sizeof(skn_req) + bytes <= skn_job_g.buffer_budget)
    proto = bytes <= SKN_CELL_SIZE ? SKN_PROTO_INLINE : SKN_PROTO_EAGER;

  skn_req *env = s->sreq;
  if (!env) {
    if (proto == SKN_PROTO_RNDV) {
      env = s->stack_env; /* we wait below; the receiver's completion is its last access */
      memset(env, 0, offsetof(skn_req, cell));
    } else if (!(env = skn_req_alloc(s->me))) {
      proto = SKN_PROTO_RNDV; /* out of memory for a copy: fall back to by-reference */
      env = s->stack_env;
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
  env->peer = m->peer;
  env->tp = &skn_local_transport;
  env->buf = (void *)(uintptr_t)m->buf;
  env->count = m->count;
  env->dt = m->dt;
  env->bytes = bytes;
  atomic_store_explicit(&env->filled, proto != SKN_PROTO_EAGER, memory_order_relaxed);
  if (proto == SKN_PROTO_INLINE) {
    skn_dt_pack(env->cell, m->buf, m->dt, bytes);
    env->payload = env->cell;
  }
  if (proto != SKN_PROTO_RNDV) atomic_fetch_add_explicit(&env->refs, 1, memory_order_relaxed); /* the queue's */
  return env;
}

/* A send that found no posted receive: called with the receiver's queue lock held
 * (skn_dev_arrive_begin), queues an envelope and carries it through its protocol. Out of
 * line so that the matched path has neither this frame nor the aligned stack envelope. */
static __attribute__((noinline)) void local_send_queued(skn_rank *me, const skn_msg *m, skn_req *sreq, size_t bytes) {
  skn_req stack_env;
  local_send s = {.me = me, .m = m, .sreq = sreq, .stack_env = &stack_env, .bytes = bytes};
  skn_req *env = make_envelope(&s, m->peer->mq.buffered);
  /* Read before queueing (device.h, ARRIVE): a by-reference envelope that is sreq may be
   * matched, completed and freed by another thread of this rank once it is queued. */
  uint8_t proto = env->proto;
  skn_dev_arrive_queue(m->peer, env);
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

static void local_send_fn(skn_rank *me, const skn_msg *m, skn_req *sreq) {
  size_t bytes = m->count * m->dt->size;
  skn_req *r = skn_dev_arrive_begin(m->peer, m->ctx, m->src, m->tag);
  if (SKN_UNLIKELY(!r)) {
    local_send_queued(me, m, sreq, bytes);
    return;
  }
  skn_dev_msg d = {.src = m->src, .tag = m->tag, .how = SKN_DATA_TYPED, .bytes = bytes, .dt = m->dt,
                   .data = m->buf, .count = m->count};
  skn_dev_deliver(r, &d);
  skn_req_complete(r);
  if (sreq) skn_req_complete(sreq);
}

/* The receiver is done with env (matched: data delivered; or withdrawn). */
static void local_release(skn_req *env, bool matched) {
  (void)matched;
  if (env->proto == SKN_PROTO_RNDV) {
    skn_req_complete(env); /* last access to a by-reference envelope: the sender goes on */
    return;
  }
  if (env->proto == SKN_PROTO_EAGER) free(env->payload);
  skn_req_release(env); /* the queue's reference */
}

static skn_status local_cancel_send(skn_rank *me, skn_req *r) {
  (void)me;
  if (!skn_dev_unqueue(r->peer, r)) return SKN_ERR_NOT_CANCELLED;
  r->cancelled = true;
  /* an early-completed envelope may still be being filled by its sender (not here: a
   * cancel comes from the sender's own rank after the send returned) */
  while (!atomic_load_explicit(&r->filled, memory_order_acquire)) skn_cpu_relax();
  local_release(r, false);
  return SKN_OK;
}

static void local_fetch(void *handle, void *dst, size_t n, skn_req *r) {
  (void)handle, (void)dst, (void)n, (void)r;
  skn_fatal("the local transport has no data to fetch");
}

const skn_transport skn_local_transport = {
    .name = "local",
    .send = local_send_fn,
    .cancel_send = local_cancel_send,
    .fetch = local_fetch,
    .release = local_release,
    /* one-sided (core/rma.c) */
    .put = skn_rma_local_put,
    .get = skn_rma_local_get,
    .accumulate = skn_rma_local_accumulate,
    .cas = skn_rma_local_cas,
    .flush = skn_rma_local_flush,
};

/* ------------------------------------------------------------------ unbound */

static void unbound_send(skn_rank *me, const skn_msg *m, skn_req *r) {
  (void)r;
  skn_fatal("rank %d: no transport reaches rank %d (process %d)", me->world_rank, m->peer->world_rank,
            m->peer->proc);
}

static skn_status unbound_cancel(skn_rank *me, skn_req *r) {
  (void)me, (void)r;
  return SKN_ERR_NOT_CANCELLED;
}

const skn_transport skn_unbound_transport = {
    .name = "unbound", .send = unbound_send, .cancel_send = unbound_cancel, .fetch = local_fetch,
    .release = local_release,
};
