/* The transport to the job's other processes (device.h), over the UCX module.
 *
 * Ranks of other processes are proxies (skn_rank with another `proc`), bound to this
 * transport at start-up. What arrives goes through the engine (skn_dev_arrive, then
 * skn_dev_deliver into a posted receive, or an envelope in the destination rank's
 * matching queue), so wildcards, order, probe, truncation and type checks behave as for
 * local senders: eager data is copied once into a posted receive (or kept until one
 * matches), rendezvous data is fetched by UCX straight into the receive buffer when the
 * receive matches. The transport is loaded with dlopen only here, in multi-process jobs
 * (netlayer/README.md says why; remote_module.c), and progressed by spinning waiters (the
 * scheduler's poll hook) and by a thread that sleeps on the transport's event fd
 * (remote_progress.c), so that nothing burns a core while every rank sleeps. The files
 * of this transport are listed in remote.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "remote.h"

/* A message from another process waiting in a matching queue. */
typedef struct remote_env {
  skn_req req;          /* proto SKN_PROTO_EAGER/INLINE (data in payload) or FETCH (payload:
                         * the transport's handle); dt NULL, the signature in req.sum */
  skn_net_data_hdr hdr; /* the sender's header: what an ack or a cancel names it by */
} remote_env;

skn_remote_state skn_remote;

static const skn_net_pmi_ops pmi_ops = {
    .put = skn_pmi_put, .fence = skn_pmi_fence, .get = skn_pmi_get, .node_of = skn_pmi_node_of};

static const skn_transport ucx_transport;

/* ------------------------------------------------------------------ sending */

static void send_event_done(skn_req *r) {
  if (atomic_fetch_sub(&r->net_pending, 1) == 1) skn_req_complete(r);
}

static void send_finished(skn_req *r) {
  free(r->payload); /* the packed copy of a non-contiguous buffer, or NULL */
  r->payload = NULL;
  send_event_done(r);
}

/* UCX held the send (counted in skn_remote.in_flight when it said so). */
static void on_send_done(void *arg, int status) {
  (void)status; /* a failed peer ends the job (on_peer_failed) */
  atomic_fetch_sub_explicit(&skn_remote.in_flight, 1, memory_order_relaxed);
  send_finished(arg);
}

static void on_rndv_send_done(void *arg, int status) {
  (void)status;
  atomic_fetch_add_explicit(&skn_remote.rndv_completed, 1, memory_order_relaxed);
  atomic_fetch_sub_explicit(&skn_remote.rndv_sends, 1, memory_order_relaxed);
  send_finished(arg);
}

static void ucx_send_body(skn_rank *me, const skn_msg *m, skn_req *sreq);
/* UCX's socket calls leave EAGAIN and the like in errno, which is the sending rank's. */
static void ucx_send(skn_rank *me, const skn_msg *m, skn_req *sreq) {
  int saved = errno;
  ucx_send_body(me, m, sreq);
  errno = saved;
}

static void ucx_send_body(skn_rank *me, const skn_msg *m, skn_req *sreq) {
  skn_req stack_req; /* a blocking send waits on it: sync, payload, peer, net_pending */
  skn_req *r = sreq;
  if (!r) {
    r = &stack_req;
    atomic_init(&r->sync, 0);
  }
  size_t bytes = m->count * m->dt->size;
  const void *data = m->buf;
  r->peer = m->peer;
  r->mode = m->mode; /* a cancel needs to know whether an ack is awaited */
  r->payload = NULL;
  if (!m->dt->contig && bytes) { /* one pack: UCX then reads a single contiguous block */
    if (!(r->payload = malloc(bytes))) skn_fatal("rank %d: out of memory packing a %zu-byte message", me->world_rank, bytes);
    skn_dt_pack(r->payload, m->buf, m->dt, bytes);
    data = r->payload;
  }
  bool sync = m->mode == SKN_MODE_SYNC;
  /* A nonblocking send may wait in the transport until this process's next progress,
   * coalesced with others to the same process: 200,000 Isends of 8 bytes over tcp cost a
   * sendmsg each (5 us of CPU per Isend, 2.6 in one process). Its caller progresses
   * before it waits on anything, and the progress thread does within milliseconds. */
  skn_sigsum sum;
  skn_dt_sigsum(m->dt, m->count, &sum);
  skn_net_data_hdr hdr = {
      .ctx = m->ctx, .src = m->src, .src_world = me->world_rank, .dst_world = m->peer->world_rank,
      .tag = m->tag, .flags = sync ? SKN_NET_SYNC : sreq ? SKN_NET_LATER : 0, .sig_first = sum.first, .sig_hash = sum.hash,
      .sig_covered = sum.covered, .bytes = bytes, .cookie = (uintptr_t)r,
  };
  /* published to the completion callbacks by the transport's lock */
  atomic_store_explicit(&r->net_pending, sync ? 2u : 1u, memory_order_relaxed);
  bool rndv = bytes > skn_remote.rndv_threshold;
  if (rndv) atomic_fetch_add_explicit(&skn_remote.rndv_sends, 1, memory_order_relaxed);
  int rc = skn_remote.net->send(m->peer->proc, &hdr, data, bytes, rndv ? on_rndv_send_done : on_send_done, r);
  if (rndv && rc != SKN_NET_INPROGRESS) { /* no callback will come */
    atomic_fetch_sub_explicit(&skn_remote.rndv_sends, 1, memory_order_relaxed);
    if (rc == SKN_NET_OK) atomic_fetch_add_explicit(&skn_remote.rndv_completed, 1, memory_order_relaxed);
  }
  if (rc == SKN_NET_OK && !sreq && !sync) { /* the common blocking send: nothing waits */
    free(r->payload);
    return;
  }
  /* Counted only when UCX holds it (its callback may already have run: the count dips
   * below zero for a moment, which reads as "in flight" too). */
  if (rc == SKN_NET_INPROGRESS && !rndv) atomic_fetch_add_explicit(&skn_remote.in_flight, 1, memory_order_relaxed);
  else if (rc == SKN_NET_OK) send_finished(r);
  else if (rc < 0) skn_fatal("rank %d: cannot send to rank %d in process %d", me->world_rank, m->peer->world_rank,
                             m->peer->proc);
  if (!sreq) skn_req_wait(r);
}

static void on_acked(void *hctx, const skn_net_ack_hdr *h) {
  (void)hctx;
  send_event_done((skn_req *)(uintptr_t)h->cookie);
}

/* ------------------------------------------------------------------ receiving */

/* Envelopes are recycled: only the delivery hooks take them (serialized by the
 * transport's progress lock), and whoever is done with one (any thread) pushes it back on
 * a lock-free stack. malloc and free of each envelope cost more than the rest of the
 * delivery. */
static remote_env *env_cache;                /* the delivery hooks' own */
static _Atomic(remote_env *) env_returned;    /* pushed by anyone */

static inline remote_env *env_next(remote_env *e) { return (remote_env *)(void *)e->req.next; }

static void envelope_free(remote_env *e) {
  remote_env *head = atomic_load_explicit(&env_returned, memory_order_relaxed);
  do {
    e->req.next = (skn_req *)(void *)head;
  } while (!atomic_compare_exchange_weak_explicit(&env_returned, &head, e, memory_order_release,
                                                  memory_order_relaxed));
}

static void envelope_cache_drain(void) {
  remote_env *lists[2] = {env_cache, atomic_exchange(&env_returned, NULL)};
  env_cache = NULL;
  for (int i = 0; i < 2; i++)
    for (remote_env *e = lists[i], *next; e; e = next) {
      next = env_next(e);
      free(e);
    }
}

static inline void header_sum(const skn_net_data_hdr *h, skn_sigsum *sum) {
  *sum = (skn_sigsum){.hash = h->sig_hash, .covered = h->sig_covered, .first = h->sig_first};
}

static remote_env *envelope_new(const skn_net_data_hdr *h, uint8_t proto) {
  remote_env *e = env_cache;
  if (!e) e = atomic_exchange_explicit(&env_returned, NULL, memory_order_acquire);
  if (e) env_cache = env_next(e);
  else e = aligned_alloc(SKN_CACHELINE, (sizeof *e + SKN_CACHELINE - 1) & ~(size_t)(SKN_CACHELINE - 1));
  if (!e) skn_fatal("out of memory for a message from rank %d", h->src_world);
  memset(&e->req, 0, offsetof(skn_req, cell));
  e->req.kind = SKN_REQ_SEND;
  e->req.proto = proto;
  e->req.ctx = h->ctx;
  e->req.src = h->src;
  e->req.tag = h->tag;
  e->req.bytes = h->bytes;
  e->req.count = h->bytes;
  e->req.tp = &ucx_transport;
  header_sum(h, &e->req.sum);
  e->hdr = *h;
  return e;
}

static skn_rank *local_rank(const skn_net_data_hdr *h) {
  int w = h->dst_world;
  if (w < skn_job_g.first_rank || w >= skn_job_g.first_rank + skn_job_g.nranks)
    skn_fatal("a message from rank %d for rank %d arrived in the wrong process", h->src_world, w);
  return skn_job_g.ranks[w];
}

static void ack_if_sync(const skn_net_data_hdr *h) {
  if (!(h->flags & SKN_NET_SYNC)) return;
  skn_net_ack_hdr ack = {.src_world = h->src_world, .cookie = h->cookie};
  if (skn_remote.net->ack(&ack) < 0) skn_log("cannot acknowledge a synchronous send of rank %d", h->src_world);
}

static void on_fetched(void *arg, int status) {
  (void)status;
  atomic_fetch_add_explicit(&skn_remote.rndv_fetched, 1, memory_order_relaxed);
  atomic_fetch_sub_explicit(&skn_remote.in_flight, 1, memory_order_relaxed);
  skn_dev_fetched(arg);
}

/* The transport's fetch (device.h): handle is UCX's rendezvous handle. */
static void ucx_fetch(void *handle, void *dst, size_t n, skn_req *r) {
  if (!r) {
    skn_remote.net->discard(handle);
    atomic_fetch_add_explicit(&skn_remote.rndv_fetched, 1, memory_order_relaxed);
    return;
  }
  int rc = skn_remote.net->fetch(handle, dst, n, on_fetched, r);
  if (rc == SKN_NET_INPROGRESS) atomic_fetch_add_explicit(&skn_remote.in_flight, 1, memory_order_relaxed);
  else if (rc == SKN_NET_OK) {
    atomic_fetch_add_explicit(&skn_remote.rndv_fetched, 1, memory_order_relaxed);
    skn_dev_fetched(r);
  }
  else if (rc < 0) skn_fatal("cannot receive a message from rank %d", r->st_src);
}

/* What skn_dev_arrive needs to build an envelope when no receive is posted. */
typedef struct arrival {
  const skn_net_data_hdr *h;
  skn_net_rndv *rndv; /* rendezvous: the transport's handle */
  remote_env *made;
} arrival;

static skn_req *make_envelope(void *arg, size_t buffered) {
  (void)buffered; /* the sender has sent: the data is taken whatever the budget */
  arrival *a = arg;
  remote_env *e = a->made = envelope_new(a->h, a->rndv ? SKN_PROTO_FETCH : SKN_PROTO_EAGER);
  if (a->rndv) {
    e->req.payload = a->rndv;
    atomic_store_explicit(&e->req.filled, 1, memory_order_relaxed); /* published by the queue lock */
  } /* eager: filled stays 0 until on_deliver has copied the data; a matcher waits */
  return &e->req;
}

static skn_req *arrive(arrival *a) {
  const skn_net_data_hdr *h = a->h;
  return skn_dev_arrive(local_rank(h), h->ctx, h->src, h->tag, make_envelope, a);
}

static void on_deliver(void *hctx, const skn_net_data_hdr *h, const void *data, size_t len) {
  (void)hctx;
  (void)len; /* == h->bytes, checked by the transport */
  arrival a = {.h = h};
  skn_req *r = arrive(&a);
  if (r) {
    skn_sigsum sum;
    header_sum(h, &sum);
    skn_dev_msg m = {.src = h->src, .tag = h->tag, .how = SKN_DATA_PACKED, .bytes = h->bytes, .sum = &sum,
                     .data = data};
    skn_dev_deliver(r, &m);
    ack_if_sync(h);
    skn_req_complete(r);
    return;
  }
  remote_env *e = a.made;
  void *payload = h->bytes <= SKN_CELL_SIZE ? e->req.cell : malloc(h->bytes);
  if (!payload) skn_fatal("out of memory for a %llu-byte message from rank %d", (unsigned long long)h->bytes, h->src_world);
  memcpy(payload, data, h->bytes);
  e->req.payload = payload;
  atomic_store_explicit(&e->req.filled, 1, memory_order_release);
}

static void on_deliver_rndv(void *hctx, const skn_net_data_hdr *h, skn_net_rndv *handle) {
  (void)hctx;
  arrival a = {.h = h, .rndv = handle};
  skn_req *r = arrive(&a);
  if (!r) return;
  skn_sigsum sum;
  header_sum(h, &sum);
  skn_dev_msg m = {.src = h->src, .tag = h->tag, .how = SKN_DATA_FETCH, .bytes = h->bytes, .sum = &sum,
                   .tp = &ucx_transport, .handle = handle};
  ack_if_sync(h);
  if (skn_dev_deliver(r, &m)) skn_req_complete(r);
}

/* The engine is done with one of our envelopes (device.h). */
static void ucx_release(skn_req *env, bool matched) {
  remote_env *e = (remote_env *)env;
  if (matched) ack_if_sync(&e->hdr);
  else if (env->proto == SKN_PROTO_FETCH) {
    skn_remote.net->discard(env->payload);
    atomic_fetch_add_explicit(&skn_remote.rndv_fetched, 1, memory_order_relaxed);
  }
  if (env->proto != SKN_PROTO_FETCH && env->payload != env->cell) free(env->payload);
  envelope_free(e);
}

/* ------------------------------------------------------------------ cancel
 * The sender names its message by (its world rank, cookie = its request) and waits on a
 * request of its stack, whose address travels in the cancel header's `answer`. */

static skn_status ucx_cancel_send(skn_rank *me, skn_req *r) {
  skn_req answer;
  atomic_init(&answer.sync, 0);
  answer.cancelled = false;
  skn_net_cancel_hdr h = {.src_world = me->world_rank, .dst_world = r->peer->world_rank, .cookie = (uintptr_t)r,
                          .answer = (uintptr_t)&answer};
  atomic_fetch_add_explicit(&skn_remote.in_flight, 1, memory_order_relaxed);
  if (skn_remote.net->cancel(&h) < 0) {
    atomic_fetch_sub_explicit(&skn_remote.in_flight, 1, memory_order_relaxed);
    return SKN_ERR_NOT_CANCELLED;
  }
  skn_req_wait(&answer);
  atomic_fetch_sub_explicit(&skn_remote.in_flight, 1, memory_order_relaxed);
  if (!answer.cancelled) return SKN_ERR_NOT_CANCELLED;
  r->cancelled = true;
  if (r->mode == SKN_MODE_SYNC) send_event_done(r); /* the ack that will not come */
  return SKN_OK;
}

static void on_cancel_done(void *hctx, const skn_net_cancel_hdr *h) {
  (void)hctx;
  skn_req *answer = (skn_req *)(uintptr_t)h->answer;
  answer->cancelled = h->cancelled;
  skn_req_complete(answer);
}

static bool is_named(const skn_req *env, const void *arg) {
  const skn_net_cancel_hdr *h = arg;
  if (env->tp != &ucx_transport) return false;
  const remote_env *e = (const remote_env *)env;
  return e->hdr.src_world == h->src_world && e->hdr.cookie == h->cookie;
}

/* Runs inside progress, like the deliveries: an eager envelope found here is filled. */
static bool on_withdraw(void *hctx, const skn_net_cancel_hdr *h) {
  (void)hctx;
  int w = h->dst_world;
  if (w < skn_job_g.first_rank || w >= skn_job_g.first_rank + skn_job_g.nranks) return false;
  skn_req *env = skn_dev_withdraw(skn_job_g.ranks[w], is_named, h);
  if (!env) return false;
  ucx_release(env, false);
  return true;
}
/* ------------------------------------------------------------------ failure */

static void on_peer_failed(void *hctx, int proc, const char *why) {
  (void)hctx;
  if (skn_dev_is_ending()) return; /* the others end on their own after a deadlock */
  char host[256] = "unknown", where[320];
  void *val = NULL;
  size_t len = 0;
  if (skn_pmi_get(proc, "skein.host", &val, &len) == SKN_PMI_OK && len > 0 && len < sizeof host) {
    memcpy(host, val, len);
    host[len] = 0;
  }
  free(val);
  snprintf(where, sizeof where, "node %d, host %s", skn_pmi_node_of(proc), host);
  skn_dev_peer_lost(proc, where, why);
}
/* ------------------------------------------------------------------ progress */

bool skn_remote_poll(void) { return skn_remote.net->progress(); }

int skn_remote_control(int proc, int kind, uint64_t a, uint64_t b) {
  skn_net_ctrl_hdr h = {.kind = kind, .from_proc = skn_remote.pmi->proc, .a = a, .b = b};
  return skn_remote.net->control(proc, &h);
}
static const skn_transport ucx_transport = {
    .name = "ucx",
    .send = ucx_send,
    .cancel_send = ucx_cancel_send,
    .fetch = ucx_fetch,
    .release = ucx_release,
    .progress = skn_remote_poll,
    .control = skn_remote_control,
    .put = skn_remote_rma_put,
    .get = skn_remote_rma_get,
    .accumulate = skn_remote_rma_accumulate,
    .cas = skn_remote_rma_cas,
    .flush = skn_remote_rma_flush,
};
#ifdef __SANITIZE_THREAD__
static char tsan_arrivals; /* only its address (device.h, net.h) */
void skn_remote_tsan_acquire(void) { SKN_TSAN_ACQUIRE(&tsan_arrivals); }
void skn_remote_tsan_release(void) { SKN_TSAN_RELEASE(&tsan_arrivals); }
#endif
/* ------------------------------------------------------------------ start and end */
void skn_remote_init(const skn_pmi_info *pi, void (*report_deadlock)(void)) {
  skn_remote.pmi = pi;
  skn_remote.report_deadlock = report_deadlock;
  skn_remote_deadlock_init(pi);
  skn_remote.net = skn_remote_load_module();
  char host[256];
  if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "?");
  host[sizeof host - 1] = 0;
  if (skn_pmi_put("skein.host", host, strlen(host)) != SKN_PMI_OK) skn_fatal("cannot publish this process's host");
  skn_net_hooks hooks = {
      .deliver = on_deliver, .deliver_rndv = on_deliver_rndv, .acked = on_acked, .withdraw = on_withdraw,
      .cancel_done = on_cancel_done, .control = skn_remote_on_control, .peer_failed = on_peer_failed, .pmi = &pmi_ops,
  };
#ifdef __SANITIZE_THREAD__
  hooks.tsan_arrivals = &tsan_arrivals;
#endif
  if (skn_remote.net->init(pi, &hooks) != SKN_NET_OK) skn_fatal("cannot connect the job's %d processes", pi->nprocs);
  skn_net_stats st;
  skn_remote.net->get_stats(&st);
  skn_remote.rndv_threshold = st.rndv_threshold;
  for (int p = 0; p < pi->nprocs; p++)
    if (p != pi->proc) skn_dev_bind(p, &ucx_transport);
  skn_remote_progress_start();
}
void skn_remote_finalize(void) {
  /* Our ranks have ended: once our sends are out, we count as quiet for good. */
  for (int i = 0; i < 2000 && (atomic_load(&skn_remote.in_flight) != 0 || atomic_load(&skn_remote.rndv_sends) != 0); i++) {
    if (!skn_remote.net->progress()) {
      struct timespec ts = {0, 1000000};
      nanosleep(&ts, NULL);
    }
  }
  skn_remote_report_ended();
  skn_remote_progress_stop();
  if (skn_env_int("NETSTATS", 0)) {
    skn_net_stats st;
    skn_remote.net->get_stats(&st);
    skn_log("net: process %d/%d: %d ranks, %d endpoints, eager sent %llu, rendezvous sent %llu, delivered %llu, "
            "held %llu, coalesced %llu", skn_remote.pmi->proc, skn_remote.pmi->nprocs, skn_remote.pmi->nranks, st.endpoints,
            (unsigned long long)st.sent_eager, (unsigned long long)st.sent_rndv,
            (unsigned long long)(st.delivered_eager + st.delivered_rndv), (unsigned long long)st.held,
            (unsigned long long)st.batched);
  }
  if (skn_remote.net->finalize() != SKN_NET_OK) skn_log("the UCX transport did not end cleanly");
  envelope_cache_drain();
}
