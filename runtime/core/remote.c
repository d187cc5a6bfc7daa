/* The transport to the job's other processes (device.h), over the UCX module.
 *
 * Ranks of other processes are proxies (skn_rank with another `proc`), bound to this
 * transport at start-up. What arrives goes through the engine (skn_dev_arrive, then
 * skn_dev_deliver into a posted receive, or an envelope in the destination rank's
 * matching queue), so wildcards, order, probe, truncation and type checks behave as for
 * local senders: eager data is copied once into a posted receive (or kept until one
 * matches), rendezvous data is fetched by UCX straight into the receive buffer when the
 * receive matches. The transport is loaded with dlopen only here, in multi-process jobs
 * (netlayer/README.md says why), and progressed by spinning waiters (the scheduler's poll
 * hook) and by a thread that sleeps on the transport's event fd, so that nothing burns a
 * core while every rank sleeps. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "core.h"
#include "engine.h"
#include "rma.h"
#include "pmi/pmi.h"
#include "ucx/net.h"

/* A message from another process waiting in a matching queue. */
typedef struct remote_env {
  skn_req req;          /* proto SKN_PROTO_EAGER/INLINE (data in payload) or FETCH (payload:
                         * the transport's handle); dt NULL, the signature in req.sum */
  skn_net_data_hdr hdr; /* the sender's header: what an ack or a cancel names it by */
} remote_env;

static struct {
  const skn_net_module *net;
  const skn_pmi_info *pmi;
  pthread_t progress_thread;
  int wake_fd; /* eventfd: wakes the progress thread (a worker sleeps, or the end) */
  _Atomic(bool) stopping;
  _Atomic(int) in_flight; /* eager sends UCX still holds, fetches, cancels awaiting their answer */
  /* Rendezvous sends wait for the receiver to fetch, which may never happen (a deadlock):
   * not "in flight" for the detector. Instead each end counts its half of the completion
   * as a message: the receiver's fetch (or discard) as sent, the sender's completion as
   * delivered, so the job's sums balance only once the sender has heard of it. */
  _Atomic(int) rndv_sends;
  _Atomic(uint64_t) rndv_fetched, rndv_completed;
  size_t rndv_threshold;
  void (*report_deadlock)(void);
} remote_state;

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

/* UCX held the send (counted in remote_state.in_flight when it said so). */
static void on_send_done(void *arg, int status) {
  (void)status; /* a failed peer ends the job (on_peer_failed) */
  atomic_fetch_sub_explicit(&remote_state.in_flight, 1, memory_order_relaxed);
  send_finished(arg);
}

static void on_rndv_send_done(void *arg, int status) {
  (void)status;
  atomic_fetch_add_explicit(&remote_state.rndv_completed, 1, memory_order_relaxed);
  atomic_fetch_sub_explicit(&remote_state.rndv_sends, 1, memory_order_relaxed);
  send_finished(arg);
}

static void ucx_send(skn_rank *me, const skn_msg *m, skn_req *sreq) {
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
  bool rndv = bytes > remote_state.rndv_threshold;
  if (rndv) atomic_fetch_add_explicit(&remote_state.rndv_sends, 1, memory_order_relaxed);
  int rc = remote_state.net->send(m->peer->proc, &hdr, data, bytes, rndv ? on_rndv_send_done : on_send_done, r);
  if (rndv && rc != SKN_NET_INPROGRESS) { /* no callback will come */
    atomic_fetch_sub_explicit(&remote_state.rndv_sends, 1, memory_order_relaxed);
    if (rc == SKN_NET_OK) atomic_fetch_add_explicit(&remote_state.rndv_completed, 1, memory_order_relaxed);
  }
  if (rc == SKN_NET_OK && !sreq && !sync) { /* the common blocking send: nothing waits */
    free(r->payload);
    return;
  }
  /* Counted only when UCX holds it (its callback may already have run: the count dips
   * below zero for a moment, which reads as "in flight" too). */
  if (rc == SKN_NET_INPROGRESS && !rndv) atomic_fetch_add_explicit(&remote_state.in_flight, 1, memory_order_relaxed);
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
  if (remote_state.net->ack(&ack) < 0) skn_log("cannot acknowledge a synchronous send of rank %d", h->src_world);
}

static void on_fetched(void *arg, int status) {
  (void)status;
  atomic_fetch_add_explicit(&remote_state.rndv_fetched, 1, memory_order_relaxed);
  atomic_fetch_sub_explicit(&remote_state.in_flight, 1, memory_order_relaxed);
  skn_dev_fetched(arg);
}

/* The transport's fetch (device.h): handle is UCX's rendezvous handle. */
static void ucx_fetch(void *handle, void *dst, size_t n, skn_req *r) {
  if (!r) {
    remote_state.net->discard(handle);
    atomic_fetch_add_explicit(&remote_state.rndv_fetched, 1, memory_order_relaxed);
    return;
  }
  int rc = remote_state.net->fetch(handle, dst, n, on_fetched, r);
  if (rc == SKN_NET_INPROGRESS) atomic_fetch_add_explicit(&remote_state.in_flight, 1, memory_order_relaxed);
  else if (rc == SKN_NET_OK) {
    atomic_fetch_add_explicit(&remote_state.rndv_fetched, 1, memory_order_relaxed);
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
    remote_state.net->discard(env->payload);
    atomic_fetch_add_explicit(&remote_state.rndv_fetched, 1, memory_order_relaxed);
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
  atomic_fetch_add_explicit(&remote_state.in_flight, 1, memory_order_relaxed);
  if (remote_state.net->cancel(&h) < 0) {
    atomic_fetch_sub_explicit(&remote_state.in_flight, 1, memory_order_relaxed);
    return SKN_ERR_NOT_CANCELLED;
  }
  skn_req_wait(&answer);
  atomic_fetch_sub_explicit(&remote_state.in_flight, 1, memory_order_relaxed);
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

/* ------------------------------------------------------------------ deadlock
 * A process whose ranks are all blocked (the scheduler's stall hook, every SKEIN_DEADLOCK_MS
 * while it lasts) reports to process 0 how many messages it has sent and delivered
 * (acks included); a process whose ranks have ended reports so once. Blocked ranks wake
 * only when a message arrives, so once every process has reported twice with unchanged
 * counts, nothing of its own is in flight, and the job has sent as many messages as it
 * delivered, nothing can wake anyone: process 0 tells every process, and each names its
 * blocked ranks and calls (boot's report) and exits.
 * A process's latest report may be old: one woken since by a message may have sent as
 * many as it received (a rendezvous fetch, an ack, a reply), which keeps the job's totals
 * equal while it runs. So process 0 first asks every process for its counts now (a
 * second wave, after all the reports: the four-counter method) and judges a deadlock only
 * when none has moved since its report. */

enum { CTRL_STALLED = 1, CTRL_DEADLOCK = 2, CTRL_ALL_ENDED = 3, CTRL_CONFIRM = 4, CTRL_CONFIRMED = 5 }; /* kinds of control messages; -CTRL_STALLED: ended */

typedef struct stall_report {
  uint64_t sent, delivered;
  int count;  /* reports in a row with these numbers */
  bool ended; /* its ranks have all ended */
} stall_report;

static struct {
  skn_spinlock lock;
  stall_report *of; /* process 0: the latest report of each process */
  bool verdict;
  uint64_t round; /* process 0: the latest confirmation round */
  int awaited;    /* its answers still to come */
  bool moved;     /* a process's counts moved since its report */
  _Atomic(bool) declared; /* process 0: told the others; its progress thread ends the job */
  _Atomic(bool) all_ended; /* every process's ranks have ended (process 0 tells the others) */
} stall_state = {.lock = SKN_SPINLOCK_INIT};

static void counts(uint64_t *sent, uint64_t *delivered) {
  skn_net_stats st;
  remote_state.net->get_stats(&st);
  *sent = st.sent_eager + st.sent_rndv + st.acks_sent + atomic_load(&remote_state.rndv_fetched);
  *delivered = st.delivered_eager + st.delivered_rndv + st.acks_received + atomic_load(&remote_state.rndv_completed);
}

static void tell(int proc, int kind, uint64_t sent, uint64_t delivered) {
  if (ucx_transport.control(proc, kind, sent, delivered) < 0)
    skn_log("cannot reach process %d for deadlock detection", proc);
}

/* Process 0: records a report; returns the confirmation round to start when the reports
 * say deadlock, else 0. */
static uint64_t record(int proc, uint64_t sent, uint64_t delivered, bool ended) {
  skn_spin_lock(&stall_state.lock);
  stall_report *r = &stall_state.of[proc];
  if (r->sent == sent && r->delivered == delivered && r->count > 0) r->count++;
  else {
    *r = (stall_report){sent, delivered, 1, false};
    stall_state.moved = true; /* the round out, if any, cannot succeed */
  }
  if (ended) *r = (stall_report){sent, delivered, 2, true};
  uint64_t all_sent = 0, all_delivered = 0;
  bool quiet = !stall_state.verdict, someone_waits = false; /* all ended is the normal end */
  for (int p = 0; p < remote_state.pmi->nprocs && quiet; p++) {
    quiet = stall_state.of[p].count >= 2;
    someone_waits |= !stall_state.of[p].ended;
    all_sent += stall_state.of[p].sent;
    all_delivered += stall_state.of[p].delivered;
  }
  uint64_t round = 0;
  if (quiet && someone_waits && all_sent == all_delivered && stall_state.awaited == 0) {
    round = ++stall_state.round;
    stall_state.awaited = remote_state.pmi->nprocs;
    stall_state.moved = false;
  }
  bool all_ended = true;
  for (int p = 0; p < remote_state.pmi->nprocs; p++) all_ended &= stall_state.of[p].ended;
  skn_spin_unlock(&stall_state.lock);
  if (all_ended && !atomic_exchange(&stall_state.all_ended, true))
    for (int p = 1; p < remote_state.pmi->nprocs; p++) tell(p, CTRL_ALL_ENDED, 0, 0);
  return round;
}

/* Tells the others; the progress thread lets the messages out, then reports (an exit right
 * here could drop them, and inside progress nothing would send them). */
static void declare_deadlock(void) {
  for (int p = 1; p < remote_state.pmi->nprocs; p++) tell(p, CTRL_DEADLOCK, 0, 0);
  atomic_store(&stall_state.declared, true);
  skn_dev_ending();
  skn_remote_sleeping();
}

/* This process's counts added up, for a confirmation round; never a report's sum while a
 * transfer is in flight. */
static uint64_t counts_now(void) {
  if (atomic_load(&remote_state.in_flight) != 0) return UINT64_MAX;
  uint64_t sent, delivered;
  counts(&sent, &delivered);
  return sent + delivered;
}

/* Process 0: a process's answer in a round. Counts only grow, so an unchanged sum means
 * unchanged counts: no message reached or left it since its report. */
static void confirm(int proc, uint64_t round, uint64_t sum) {
  skn_spin_lock(&stall_state.lock);
  bool verdict = false;
  if (round == stall_state.round && stall_state.awaited > 0) {
    stall_report *r = &stall_state.of[proc];
    if (sum != r->sent + r->delivered) {
      stall_state.moved = true;
      r->count = 0; /* not quiet until it reports again */
    }
    verdict = --stall_state.awaited == 0 && !stall_state.moved;
    if (verdict) stall_state.verdict = true;
  }
  skn_spin_unlock(&stall_state.lock);
  if (verdict) declare_deadlock();
}

static void start_round(uint64_t round) {
  for (int p = 1; p < remote_state.pmi->nprocs; p++) tell(p, CTRL_CONFIRM, round, 0);
  confirm(0, round, counts_now());
}

static void finish_deadlock(void) {
  for (int i = 0; i < 100; i++) {
    remote_state.net->progress();
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  remote_state.report_deadlock(); /* names this process's blocked ranks; exits */
}

/* Returns whether it reported. */
static bool report_stall(bool ended) {
  if (atomic_load(&remote_state.in_flight) != 0) return false; /* a transfer will wake someone (may dip below 0) */
  uint64_t sent, delivered;
  counts(&sent, &delivered);
  if (remote_state.pmi->proc != 0) tell(0, ended ? -CTRL_STALLED : CTRL_STALLED, sent, delivered);
  else {
    uint64_t round = record(0, sent, delivered, ended);
    if (round) start_round(round);
  }
  return true;
}

void skn_remote_stall(void) { report_stall(false); }

static void on_control(void *hctx, const skn_net_ctrl_hdr *h) {
  (void)hctx;
  if (h->kind == CTRL_ALL_ENDED) {
    atomic_store(&stall_state.all_ended, true);
    return;
  }
  if (h->kind == CTRL_DEADLOCK) {
    atomic_store(&stall_state.declared, true); /* peers ending from now on are not failures */
    skn_dev_ending();
    remote_state.report_deadlock();              /* names the blocked ranks, exits */
  }
  if (h->kind == CTRL_CONFIRM) {
    tell(0, CTRL_CONFIRMED, h->a, counts_now());
    return;
  }
  bool ended = h->kind == -CTRL_STALLED;
  if (remote_state.pmi->proc != 0 || h->from_proc <= 0 || h->from_proc >= remote_state.pmi->nprocs) return;
  if (h->kind == CTRL_CONFIRMED) confirm(h->from_proc, h->a, h->b);
  uint64_t round = h->kind == CTRL_STALLED || ended ? record(h->from_proc, h->a, h->b, ended) : 0;
  if (round) start_round(round);
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

bool skn_remote_poll(void) { return remote_state.net->progress(); }

static bool ucx_progress(void) { return remote_state.net->progress(); }

static int ucx_control(int proc, int kind, uint64_t a, uint64_t b) {
  skn_net_ctrl_hdr h = {.kind = kind, .from_proc = remote_state.pmi->proc, .a = a, .b = b};
  return remote_state.net->control(proc, &h);
}

/* ------------------------------------------------------------------ one-sided
 * The RMA slots of the transport (device.h): UCX put/get/atomics straight into the
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
  atomic_fetch_sub_explicit(&remote_state.in_flight, 1, memory_order_relaxed);
  if (atomic_fetch_sub(&w->pending, 1) == 1) skn_req_complete(&w->req);
}

/* Before an operation is handed to UCX (its callback may run before the call returns). */
static void rma_issuing(rma_wait *w) {
  atomic_fetch_add(&w->pending, 1);
  atomic_fetch_add_explicit(&remote_state.in_flight, 1, memory_order_relaxed);
}

/* After: rc is what the module returned. */
static void rma_issued(rma_wait *w, int rc, skn_rank *target) {
  if (rc == SKN_NET_INPROGRESS) return;
  if (rc < 0)
    skn_fatal("cannot reach rank %d in process %d for a one-sided operation", target->world_rank, target->proc);
  atomic_fetch_sub_explicit(&remote_state.in_flight, 1, memory_order_relaxed);
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
  int rc = x->put ? remote_state.net->put(x->target->proc, x->buf + s, len, (uintptr_t)taddr, x->t->rkey, rma_op_done, &x->w)
                  : remote_state.net->get(x->target->proc, x->buf + s, len, (uintptr_t)taddr, x->t->rkey, rma_op_done, &x->w);
  rma_issued(&x->w, rc, x->target);
}

static int ucx_rma_put(skn_rank *target, const skn_rma_loc *t, const void *obuf, size_t ocount, const skn_dtype *ot,
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

static int ucx_rma_get(skn_rank *target, const skn_rma_loc *t, void *obuf, size_t ocount, const skn_dtype *ot,
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
  rma_issued(&w, remote_state.net->atomic(target->proc, aop, width, operand, result, (uintptr_t)taddr, t->rkey, rma_op_done, &w),
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
  rma_issued(w, remote_state.net->atomic(b->target->proc, aop, b->width, operand, result, (uintptr_t)b->taddr[k],
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

static int ucx_rma_flush(skn_rank *target);

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
    ucx_rma_flush(target); /* at the target before the lock is released */
  }
  skn_win_elem_unlock(t->w, target, taddr);
}

static int ucx_rma_accumulate(skn_rank *target, const skn_rma_loc *t, int op, int basic, const void *origin,
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

static int ucx_rma_cas(skn_rank *target, const skn_rma_loc *t, int basic, const void *origin, const void *compare,
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
    ucx_rma_flush(target);
  }
  skn_win_elem_unlock(t->w, target, t->addr);
  memcpy(result, old, bs);
  return SKN_OK;
}

static int ucx_rma_flush(skn_rank *target) {
  rma_wait w;
  rma_wait_init(&w);
  rma_issuing(&w);
  rma_issued(&w, remote_state.net->flush(target ? target->proc : -1, rma_op_done, &w), target ? target : skn_job_g.ranks[skn_job_g.first_rank]);
  rma_wait_all(&w);
  return SKN_OK;
}

bool skn_remote_mem_map(void *addr, size_t len, void **mem, void *rkey, size_t *rkey_len) {
  return remote_state.net->mem_map(addr, len, (skn_net_mem **)mem, rkey, rkey_len) == SKN_NET_OK;
}

void skn_remote_mem_unmap(void *mem) { remote_state.net->mem_unmap(mem); }

void *skn_remote_rkey(int proc, const void *rkey, size_t len) {
  skn_net_rkey *rk = NULL;
  if (remote_state.net->rkey_unpack(proc, rkey, len, &rk) != SKN_NET_OK)
    skn_fatal("cannot use the window memory of process %d", proc);
  return rk;
}

void skn_remote_rkey_destroy(void *rk) { remote_state.net->rkey_destroy(rk); }

static const skn_transport ucx_transport = {
    .name = "ucx",
    .send = ucx_send,
    .cancel_send = ucx_cancel_send,
    .fetch = ucx_fetch,
    .release = ucx_release,
    .progress = ucx_progress,
    .control = ucx_control,
    .put = ucx_rma_put,
    .get = ucx_rma_get,
    .accumulate = ucx_rma_accumulate,
    .cas = ucx_rma_cas,
    .flush = ucx_rma_flush,
};

/* Progresses while no worker does: while units spin in waiting loops they call the
 * transport themselves, and this thread sleeps until a worker is about to sleep
 * (skn_remote_sleeping) or a short timeout; it takes over only when no unit has entered a
 * waiting loop for a whole timeout (all workers computing, say), and then blocks on the
 * transport's event fd when there is nothing to do. Judging by one look at the timeout
 * instead would catch a worker between two waits and take the transport from under it:
 * over tcp the two contend for its lock, and this unbound thread takes a core from a
 * worker (4 MiB ping-pong over tcp, median of 15 interleaved runs: 4696 -> 5072 MB/s). Waking this thread for every message while a worker
 * spins would cost each message a context switch. */
static void *progress_main(void *unused) {
  (void)unused;
  struct pollfd fds[2] = {{.fd = remote_state.wake_fd, .events = POLLIN}, {.fd = remote_state.net->event_fd(), .events = POLLIN}};
  uint64_t mark = 0;
  while (!atomic_load(&remote_state.stopping)) {
    if (atomic_load(&stall_state.declared)) finish_deadlock();
    if (skn_sched_polled_since(&mark)) {
      poll(fds, 1, 2);
    } else if (remote_state.net->progress()) {
      continue;
    } else if (remote_state.net->arm()) {
      poll(fds, 2, 100); /* the timeout keeps the liveness checks of local peers going */
    } else {
      sched_yield(); /* events pending or another thread progressing: look again */
      continue;
    }
    uint64_t n;
    if (fds[0].revents & POLLIN) { /* a worker is about to sleep: judge from now on */
      if (read(remote_state.wake_fd, &n, sizeof n) < 0 && errno != EAGAIN) skn_log("eventfd read: %s", strerror(errno));
      skn_sched_polled_since(&mark);
    }
  }
  return NULL;
}

#ifdef __SANITIZE_THREAD__
static char tsan_arrivals; /* only its address (device.h, net.h) */
void skn_remote_tsan_acquire(void) { SKN_TSAN_ACQUIRE(&tsan_arrivals); }
void skn_remote_tsan_release(void) { SKN_TSAN_RELEASE(&tsan_arrivals); }
#endif

void skn_remote_sleeping(void) {
  uint64_t one = 1;
  if (write(remote_state.wake_fd, &one, sizeof one) < 0) skn_log("eventfd write: %s", strerror(errno));
}

/* ------------------------------------------------------------------ start and end */

/* libskein-ucx.so lives in lib/skein/ beside libskein.so (build tree and install alike). */
static const skn_net_module *load_module(void) {
  Dl_info self;
  char path[4096];
  const char *override = getenv("SKEIN_NET_MODULE");
  if (override) {
    snprintf(path, sizeof path, "%s", override);
  } else {
    if (!dladdr((void *)load_module, &self) || !self.dli_fname) skn_fatal("cannot find libskein's own path");
    snprintf(path, sizeof path, "%s", self.dli_fname);
    char *slash = strrchr(path, '/');
    size_t dir = slash ? (size_t)(slash - path) + 1 : 0;
    snprintf(path + dir, sizeof path - dir, "skein/libskein-ucx.so");
  }
  /* Crashes are Skein's to report (rank, call, stack overflow): keep UCX's own SIGSEGV
   * handler out unless the user asks for it. */
  setenv("UCX_ERROR_SIGNALS", "", 0);
#ifdef __SANITIZE_THREAD__
  /* UCX's libucm patches mmap, munmap and madvise process-wide to track memory for its
   * registration caches; over libtsan's interceptors every multi-process job ended with
   * SIGSEGV after the program's end. The tcp transport needs no registration cache. */
  setenv("UCX_MEM_MMAP_HOOK_MODE", "none", 0);
  setenv("UCX_MEM_MALLOC_HOOKS", "no", 0);
  setenv("UCX_MEM_EVENTS", "no", 0);
#endif
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) skn_fatal("cannot load the UCX transport for a multi-process job: %s", dlerror());
  const skn_net_module *m = dlsym(h, SKN_NET_MODULE_SYMBOL);
  if (!m || m->abi != SKN_NET_MODULE_ABI) skn_fatal("%s is not a transport of this Skein version", path);
  return m;
}

void skn_remote_init(const skn_pmi_info *pi, void (*report_deadlock)(void)) {
  remote_state.pmi = pi;
  remote_state.report_deadlock = report_deadlock;
  if (pi->proc == 0 && !(stall_state.of = calloc((size_t)pi->nprocs, sizeof *stall_state.of)))
    skn_fatal("out of memory for deadlock detection over %d processes", pi->nprocs);
  remote_state.net = load_module();
  char host[256];
  if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "?");
  host[sizeof host - 1] = 0;
  if (skn_pmi_put("skein.host", host, strlen(host)) != SKN_PMI_OK) skn_fatal("cannot publish this process's host");
  skn_net_hooks hooks = {
      .deliver = on_deliver, .deliver_rndv = on_deliver_rndv, .acked = on_acked, .withdraw = on_withdraw,
      .cancel_done = on_cancel_done, .control = on_control, .peer_failed = on_peer_failed, .pmi = &pmi_ops,
  };
#ifdef __SANITIZE_THREAD__
  hooks.tsan_arrivals = &tsan_arrivals;
#endif
  if (remote_state.net->init(pi, &hooks) != SKN_NET_OK) skn_fatal("cannot connect the job's %d processes", pi->nprocs);
  skn_net_stats st;
  remote_state.net->get_stats(&st);
  remote_state.rndv_threshold = st.rndv_threshold;
  for (int p = 0; p < pi->nprocs; p++)
    if (p != pi->proc) skn_dev_bind(p, &ucx_transport);
  if ((remote_state.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) skn_fatal("eventfd: %s", strerror(errno));
  int rc = pthread_create(&remote_state.progress_thread, NULL, progress_main, NULL);
  if (rc != 0) skn_fatal("cannot start the network progress thread: %s", strerror(rc));
}

void skn_remote_finalize(void) {
  /* Our ranks have ended: once our sends are out, we count as quiet for good. */
  for (int i = 0; i < 2000 && (atomic_load(&remote_state.in_flight) != 0 || atomic_load(&remote_state.rndv_sends) != 0); i++) {
    if (!remote_state.net->progress()) {
      struct timespec ts = {0, 1000000};
      nanosleep(&ts, NULL);
    }
  }
  /* Report "ended", and again whenever our counts change (a message to one of our ended
   * ranks still arrives and counts as delivered: the others' deadlock detector needs it),
   * until every process has ended; a deadlock verdict ends this process meanwhile. */
  uint64_t s0 = 0, d0 = 0, s, d;
  bool reported = false;
  while (!atomic_load(&stall_state.all_ended)) {
    counts(&s, &d);
    if (!reported || s != s0 || d != d0) {
      s0 = s;
      d0 = d;
      reported = report_stall(true);
    }
    if (!remote_state.net->progress()) {
      struct timespec ts = {0, 1000000};
      nanosleep(&ts, NULL);
    }
  }
  atomic_store(&remote_state.stopping, true);
  skn_remote_sleeping(); /* wakes the thread, which sees `stopping` */
  pthread_join(remote_state.progress_thread, NULL);
  close(remote_state.wake_fd);
  if (skn_env_int("NETSTATS", 0)) {
    skn_net_stats st;
    remote_state.net->get_stats(&st);
    skn_log("net: process %d/%d: %d ranks, %d endpoints, eager sent %llu, rendezvous sent %llu, delivered %llu, "
            "held %llu, coalesced %llu", remote_state.pmi->proc, remote_state.pmi->nprocs, remote_state.pmi->nranks, st.endpoints,
            (unsigned long long)st.sent_eager, (unsigned long long)st.sent_rndv,
            (unsigned long long)(st.delivered_eager + st.delivered_rndv), (unsigned long long)st.held,
            (unsigned long long)st.batched);
  }
  if (remote_state.net->finalize() != SKN_NET_OK) skn_log("the UCX transport did not end cleanly");
  envelope_cache_drain();
}
