/* UCX transport (see net.h). One UCP context and worker per process, worker in
 * UCS_THREAD_MODE_SERIALIZED behind one lock of our own (net_state.holder): it serializes every UCX
 * call and all of the transport's state (sequence numbers, reorder state, the record free
 * list, counters), so those need no atomics of their own. UCX's MULTI mode would take its
 * recursive lock inside every call on top of ours (8-byte latency over sm, transport alone:
 * 0.39 us in MULTI, 0.345 us in SINGLE). Progress takes the lock with a try (a second caller
 * returns at once); hooks run with it held and may call back in (an ack, a fetch), which
 * the holder's thread pointer recognizes. */
#define _GNU_SOURCE
#include "net.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ucp/api/ucp.h>

enum { AM_MSG = 0, AM_ACK = 1, AM_CANCEL = 2, AM_CANCEL_ANSWER = 3, AM_CONTROL = 4, AM_BATCH = 5, AM_PUT = 6, AM_PUT_DONE = 7 };

/* Small SKN_NET_LATER messages to one process are coalesced: each is appended (header,
 * then the payload padded to 8 bytes) to the process's batch, which goes as one AM_BATCH
 * message at the next progress, arm, other send to that process, or when full. */
#define BATCH_BYTES 4096     /* within UCX's eager copy (tcp: 8 KiB segments) */
#define BATCH_ITEM_MAX 256   /* larger payloads go alone */

#define ADDR_KEY "ucx.addr"
#define BLOB_MAGIC 0x534b4e31u /* "SKN1" */

/* What each process publishes: enough to reach it and, on the same host, to watch it. */
typedef struct blob_head {
  uint32_t magic;
  int32_t pid;
  char host_id[96]; /* boot id + pid namespace: pids are comparable only when equal */
  uint32_t addr_len;
} blob_head;

/* A message that arrived ahead of its sequence number. */
typedef struct held_msg {
  struct held_msg *next;
  skn_net_data_hdr hdr;
  bool rndv;
  bool ucx_owned; /* data is a UCX descriptor (release with ucp_am_data_release) */
  void *data;     /* eager payload, or the rendezvous descriptor */
  size_t len;
} held_msg;

/* Per remote process: connection and ordering state. Not per rank pair. */
typedef struct peer {
  ucp_ep_h ep;                /* NULL until the first send */
  uint32_t send_seq;          /* next sequence number to this process */
  _Atomic(bool) failed;       /* read without the lock */
  bool errmode_peer;          /* endpoint uses UCP_ERR_HANDLING_MODE_PEER */
  int pidfd;                  /* same host: becomes readable when the process ends; else -1 */
  int proc;
  /* receive side, only inside progress: */
  uint32_t recv_next;
  held_msg *held;
  struct send_rec *deferred; /* send side reordering for tests (SKEIN_NET_TEST_SWAP) */
  char *batch;               /* BATCH_BYTES, allocated on first use */
  size_t batch_len;
  uint8_t put_mode;          /* PUT_UNKNOWN, PUT_UCX or PUT_RNDV (put_by_rndv) */
  /* one-sided, so that a flush waits only when something needs it (skn_net_flush): */
  uint64_t rma_issued;  /* operations only a flush completes at the target: UCX's puts, posted atomics */
  uint64_t rma_flushed; /* of those, how many completed flushes covered */
  int rma_pending;      /* operations whose own completion is still due (gets, fetching atomics, ...) */
  uint8_t posted_aop;   /* the op (+ 1) of the posted atomics not fenced from later ones yet; 0: none */
} peer;

/* A send in flight: the header must stay valid until UCX completes the operation. */
typedef struct send_rec {
  struct send_rec *next; /* free list */
  union {
    skn_net_data_hdr data;
    skn_net_ack_hdr ack;
    skn_net_cancel_hdr cancel;
    skn_net_ctrl_hdr ctrl;
    uint64_t operand; /* an atomic's */
  } hdr;
  size_t hlen;
  skn_net_done_fn done;
  void *arg;
  const void *buf;     /* only for deferred (swap test) sends */
  void *owned;         /* a batch buffer UCX holds: freed on completion */
  size_t len;
  int dst;
} send_rec;

struct skn_net_rndv {
  void *desc;
  skn_net_data_hdr hdr;
  int src_proc;
  /* fetch in flight */
  skn_net_done_fn done;
  void *arg;
  void *bounce; /* truncated fetch: the whole payload lands here, then len bytes are copied */
  void *buf;
  size_t len;
};

static struct {
  const skn_pmi_info *pmi;
  skn_net_hooks hooks;
  ucp_context_h context;
  ucp_worker_h worker;
  ucs_thread_mode_t thread_mode;
  peer *peers;
  _Atomic(uintptr_t) holder; /* thread pointer of the thread holding the lock, 0: free */
  _Atomic(unsigned) wanted;  /* threads waiting in lock_slow: progress polls stand back */
  unsigned calls;        /* progress calls */
  uint64_t next_check_ns;
  size_t rndv_threshold;
  size_t put_rndv_min;   /* SKEIN_NET_PUT_RNDV: puts of this size or more may go by rendezvous */
  struct skn_net_mem *mems; /* this process's registered regions (a rendezvous put's target is checked) */
  bool errmode_all_peer; /* SKEIN_NET_ERRMODE=peer */
  bool test_swap;
  unsigned events;       /* hooks called in this progress */
  unsigned controls;     /* control messages (AM_CONTROL) received in this progress */
  unsigned batched;      /* peers whose batch is not empty */
  skn_net_rndv *delivering; /* the rendezvous handed to the hook inside its UCX callback */
  bool dropped_in_hook;     /* ... and the hook discarded it */
  int epfd;              /* UCX's event fd + the pidfds: readable when progress has work */
  /* in the closing fence: a peer that has passed it may end at any time */
  _Atomic(bool) finalizing;
  send_rec *free_recs;
  /* written under the lock, read by skn_net_get_stats from anywhere */
  _Atomic(uint64_t) endpoints, sent_eager, sent_rndv, delivered_eager, delivered_rndv, held, acks_sent,
      acks_received, batched_msgs;
} net_state;

#define LIVENESS_PERIOD_NS 10000000ull /* pidfds polled at most every 10 ms */

/* ---------------------------------------------------------------- the lock */

/* Ranks are user-level threads that never change the FS base, so the thread pointer names
 * the kernel thread in one instruction. */
static inline uintptr_t thread_id(void) { return (uintptr_t)__builtin_thread_pointer(); }

/* A thread that must send waits here; try_lock (progress polls, which can be skipped) gives
 * way while anyone does: a waiter spinning on progress took the lock again at once after
 * each release and starved the other worker's send for good (intercomm, 5 ranks over 2
 * processes on 2 workers: a rank stuck in MPI_Intercomm_create). */
static void lock_slow(uintptr_t me) {
  atomic_fetch_add_explicit(&net_state.wanted, 1, memory_order_relaxed);
  for (unsigned spins = 1;; spins++) {
    uintptr_t none = 0;
    if (atomic_load_explicit(&net_state.holder, memory_order_relaxed) == 0 &&
        atomic_compare_exchange_weak_explicit(&net_state.holder, &none, me, memory_order_acquire,
                                              memory_order_relaxed)) {
      atomic_fetch_sub_explicit(&net_state.wanted, 1, memory_order_relaxed);
      return;
    }
    if (spins % 1024 == 0) sched_yield(); /* the holder may have lost its core */
    else skn_cpu_relax();
  }
}

/* Takes the lock unless this thread holds it already (a hook calling back into the
 * transport). Returns what unlock needs. */
static inline bool lock(void) {
  uintptr_t me = thread_id(), none = 0;
  if (atomic_load_explicit(&net_state.holder, memory_order_relaxed) == me) return false;
  if (SKN_UNLIKELY(!atomic_compare_exchange_strong_explicit(&net_state.holder, &none, me, memory_order_acquire,
                                                            memory_order_relaxed)))
    lock_slow(me);
  return true;
}

static inline void unlock(bool taken) {
  if (taken) atomic_store_explicit(&net_state.holder, 0, memory_order_release);
}

/* For progress and arm: false if anyone holds or waits for the lock, this thread included. */
static inline bool try_lock(void) {
  uintptr_t none = 0;
  return atomic_load_explicit(&net_state.holder, memory_order_relaxed) == 0 &&
         atomic_load_explicit(&net_state.wanted, memory_order_relaxed) == 0 &&
         atomic_compare_exchange_strong_explicit(&net_state.holder, &none, thread_id(), memory_order_acquire,
                                                 memory_order_relaxed);
}

/* A counter only the lock holder writes: no locked instruction. */
static inline void bump(_Atomic(uint64_t) *c, int64_t by) {
  atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + (uint64_t)by, memory_order_relaxed);
}

/* ---------------------------------------------------------------- small helpers */

int skn_net_proc_of(int r) {
  const skn_pmi_info *pi = net_state.pmi;
  if (r < 0 || r >= pi->world_size) return -1;
  return skn_pmi_block_proc(pi->world_size, pi->nprocs, r);
}

static send_rec *rec_alloc(void) {
  send_rec *r = net_state.free_recs;
  if (r) net_state.free_recs = r->next;
  else if (!(r = malloc(sizeof *r))) skn_fatal("UCX transport: out of memory");
  r->owned = NULL;
  return r;
}

static void rec_free(send_rec *r) {
  free(r->owned);
  r->owned = NULL;
  r->next = net_state.free_recs;
  net_state.free_recs = r;
}

static void host_id(char *out, size_t n) {
  char boot[64] = "", ns[64] = "";
  FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
  if (f) {
    if (!fgets(boot, sizeof boot, f)) boot[0] = 0;
    fclose(f);
    boot[strcspn(boot, "\n")] = 0;
  }
  ssize_t k = readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
  ns[k > 0 ? k : 0] = 0;
  snprintf(out, n, "%s/%s", boot, ns);
}

static void mark_failed(peer *p, const char *why) {
  if (atomic_exchange(&p->failed, true)) return;
  /* One that died before it joined the fence is reported by the key-value service */
  if (atomic_load(&net_state.finalizing)) return;
  net_state.events++;
  /* the hook reports it (the runtime: "lost process N ...: why"), once per job */
  if (net_state.hooks.peer_failed) net_state.hooks.peer_failed(net_state.hooks.hctx, p->proc, why);
  else skn_log("UCX transport: process %d failed: %s", p->proc, why);
}

static int fail_status(peer *p) { return atomic_load(&p->failed) ? SKN_NET_ERR_PEER : SKN_NET_ERR; }

/* ---------------------------------------------------------------- endpoints */

static void ep_error_cb(void *arg, ucp_ep_h ep, ucs_status_t status) {
  mark_failed(arg, ucs_status_string(status));
}

/* Under the lock. The first contact with a process costs one PMI get, lock held. */
static ucp_ep_h get_ep(peer *p) {
  if (SKN_LIKELY(p->ep != NULL)) return p->ep;
  void *blob = NULL;
  size_t len = 0;
  if (net_state.hooks.pmi->get(p->proc, ADDR_KEY, &blob, &len) != SKN_PMI_OK) return NULL;
  blob_head h;
  if (len < sizeof h || (memcpy(&h, blob, sizeof h), h.magic != BLOB_MAGIC) ||
      len != sizeof h + h.addr_len) {
    skn_log("UCX transport: process %d published a malformed address (%zu bytes)", p->proc, len);
    free(blob);
    return NULL;
  }
  ucp_ep_params_t ep_params = {
      .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                    UCP_EP_PARAM_FIELD_ERR_HANDLER,
      .address = (const ucp_address_t *)((char *)blob + sizeof h),
      .err_mode = p->errmode_peer ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE,
      .err_handler = {.cb = ep_error_cb, .arg = p},
  };
  ucp_ep_h ep;
  ucs_status_t st = ucp_ep_create(net_state.worker, &ep_params, &ep);
  free(blob);
  if (st != UCS_OK) {
    skn_log("UCX transport: cannot connect to process %d: %s", p->proc, ucs_status_string(st));
    return NULL;
  }
  bump(&net_state.endpoints, 1);
  return p->ep = ep;
}

/* ---------------------------------------------------------------- receive side */

static void deliver_eager(const skn_net_data_hdr *hdr, const void *data, size_t len) {
  bump(&net_state.delivered_eager, 1);
  net_state.events++;
  net_state.hooks.deliver(net_state.hooks.hctx, hdr, data, len);
}

/* in_cb: inside UCX's receive callback for this very descriptor, which UCX owns until the
 * callback returns: a discard from the hook cannot release it (ucp_am_data_release would
 * read a descriptor not handed over yet) and is answered by the callback's return value.
 * Returns false when the hook discarded it so. */
static bool deliver_rndv(const skn_net_data_hdr *hdr, void *desc, int src_proc, bool in_cb) {
  skn_net_rndv *h = malloc(sizeof *h);
  if (!h) skn_fatal("UCX transport: out of memory");
  *h = (skn_net_rndv){.desc = desc, .hdr = *hdr, .src_proc = src_proc};
  bump(&net_state.delivered_rndv, 1);
  net_state.events++;
  net_state.delivering = in_cb ? h : NULL;
  net_state.dropped_in_hook = false;
  net_state.hooks.deliver_rndv(net_state.hooks.hctx, &h->hdr, h);
  net_state.delivering = NULL;
  return !net_state.dropped_in_hook;
}

/* Delivers the held messages that have become next in their stream. */
static void drain_held(peer *p) {
  for (;;) {
    held_msg **pp = &p->held;
    while (*pp && (*pp)->hdr.seq != p->recv_next) pp = &(*pp)->next;
    held_msg *m = *pp;
    if (!m) return;
    *pp = m->next;
    p->recv_next++;
    if (m->rndv) {
      deliver_rndv(&m->hdr, m->data, p->proc, false);
    } else {
      deliver_eager(&m->hdr, m->data, m->len);
      if (m->ucx_owned) ucp_am_data_release(net_state.worker, m->data);
      else free(m->data);
    }
    free(m);
  }
}

/* The source process of a well-formed data header for a payload of `length`, else -1. */
static int data_source(const skn_net_data_hdr *env, size_t length) {
  int src = skn_net_proc_of(env->src_world);
  if (src < 0 || env->dst_world < net_state.pmi->first_rank ||
      env->dst_world >= net_state.pmi->first_rank + net_state.pmi->nranks || env->bytes != length)
    return -1;
  return src;
}

/* An eager message whose data is valid during the call only (one of a batch). */
static void receive_copied(peer *p, const skn_net_data_hdr *env, const void *data) {
  if (env->seq == p->recv_next) {
    p->recv_next++;
    deliver_eager(env, data, env->bytes);
    if (p->held) drain_held(p);
    return;
  }
  held_msg *m = malloc(sizeof *m);
  void *copy = malloc(env->bytes ? env->bytes : 1);
  if (!m || !copy) skn_fatal("UCX transport: out of memory");
  memcpy(copy, data, env->bytes);
  *m = (held_msg){.next = p->held, .hdr = *env, .len = env->bytes, .data = copy};
  p->held = m;
  bump(&net_state.held, 1);
}

/* Messages coalesced by the sender (batch_add): header, payload, padding to 8 bytes. */
static ucs_status_t am_batch_cb(void *arg, const void *header, size_t header_length, void *data, size_t length,
                                const ucp_am_recv_param_t *param) {
  (void)arg, (void)header, (void)header_length;
  if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) { /* never sent so */
    skn_log("UCX transport: dropped a malformed batch (rendezvous)");
    ucp_am_data_release(net_state.worker, data);
    return UCS_OK;
  }
  const char *b = data;
  skn_net_data_hdr env;
  for (size_t off = 0; off < length;) {
    int src = -1;
    if (length - off >= sizeof env) {
      memcpy(&env, b + off, sizeof env);
      if (env.bytes <= length - off - sizeof env) src = data_source(&env, env.bytes);
    }
    if (src < 0) {
      skn_log("UCX transport: dropped the rest of a malformed batch (%zu of %zu bytes)", length - off, length);
      break;
    }
    receive_copied(&net_state.peers[src], &env, b + off + sizeof env);
    off += sizeof env + ((env.bytes + 7) & ~(uint64_t)7);
  }
  return UCS_OK;
}

static ucs_status_t am_msg_cb(void *arg, const void *header, size_t header_length, void *data,
                              size_t length, const ucp_am_recv_param_t *param) {
  skn_net_data_hdr env;
  bool rndv = param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV;
  int src = -1;
  if (header_length == sizeof env) {
    memcpy(&env, header, sizeof env); /* the header may be unaligned */
    src = data_source(&env, length);
  }
  if (src < 0) {
    skn_log("UCX transport: dropped a malformed message (header %zu bytes, payload %zu)",
            header_length, length);
    if (rndv) ucp_am_data_release(net_state.worker, data);
    return UCS_OK;
  }
  peer *p = &net_state.peers[src];
  if (env.seq == p->recv_next) {
    p->recv_next++;
    bool kept = rndv && deliver_rndv(&env, data, src, true); /* UCS_OK drops a rendezvous */
    if (!rndv) deliver_eager(&env, data, length);
    if (p->held) drain_held(p);
    return kept ? UCS_INPROGRESS : UCS_OK;
  }
  /* Ahead of its turn: keep it (the descriptor if UCX lets us, else a copy). */
  held_msg *m = malloc(sizeof *m);
  if (!m) skn_fatal("UCX transport: out of memory");
  *m = (held_msg){.hdr = env, .rndv = rndv, .len = length, .data = data};
  ucs_status_t ret = UCS_INPROGRESS;
  if (!rndv) {
    if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_DATA) {
      m->ucx_owned = true;
    } else {
      m->data = malloc(length ? length : 1);
      if (!m->data) skn_fatal("UCX transport: out of memory");
      memcpy(m->data, data, length);
      ret = UCS_OK;
    }
  }
  m->next = p->held;
  p->held = m;
  bump(&net_state.held, 1);
  return ret;
}


/* A header-only message of `size` header bytes. */
static bool control_hdr(const void *header, size_t header_length, size_t length, void *out, size_t size) {
  if (header_length != size || length != 0) {
    skn_log("UCX transport: dropped a malformed control message (%zu bytes)", header_length);
    return false;
  }
  memcpy(out, header, size);
  net_state.events++;
  return true;
}

static int send_control(int proc, unsigned am, const void *hdr, size_t hlen);

static ucs_status_t am_ack_cb(void *arg, const void *header, size_t header_length, void *data, size_t length,
                              const ucp_am_recv_param_t *param) {
  (void)arg, (void)data, (void)param;
  skn_net_ack_hdr h;
  if (!control_hdr(header, header_length, length, &h, sizeof h)) return UCS_OK;
  bump(&net_state.acks_received, 1);
  if (net_state.hooks.acked) net_state.hooks.acked(net_state.hooks.hctx, &h);
  return UCS_OK;
}

static ucs_status_t am_cancel_cb(void *arg, const void *header, size_t header_length, void *data, size_t length,
                                 const ucp_am_recv_param_t *param) {
  (void)arg, (void)data, (void)param;
  skn_net_cancel_hdr h;
  if (!control_hdr(header, header_length, length, &h, sizeof h)) return UCS_OK;
  h.cancelled = net_state.hooks.withdraw && net_state.hooks.withdraw(net_state.hooks.hctx, &h);
  if (send_control(skn_net_proc_of(h.src_world), AM_CANCEL_ANSWER, &h, sizeof h) < 0)
    skn_log("UCX transport: cannot answer a cancel from rank %d", h.src_world);
  return UCS_OK;
}

static ucs_status_t am_cancel_answer_cb(void *arg, const void *header, size_t header_length, void *data,
                                        size_t length, const ucp_am_recv_param_t *param) {
  (void)arg, (void)data, (void)param;
  skn_net_cancel_hdr h;
  if (!control_hdr(header, header_length, length, &h, sizeof h)) return UCS_OK;
  if (net_state.hooks.cancel_done) net_state.hooks.cancel_done(net_state.hooks.hctx, &h);
  return UCS_OK;
}

static ucs_status_t am_control_cb(void *arg, const void *header, size_t header_length, void *data, size_t length,
                                  const ucp_am_recv_param_t *param) {
  (void)arg, (void)data, (void)param;
  skn_net_ctrl_hdr h;
  if (header_length == sizeof h && length == 0) net_state.controls++;
  else {
    skn_log("UCX transport: dropped a malformed control message (%zu bytes)", header_length);
    return UCS_OK;
  }
  memcpy(&h, header, sizeof h);
  if (net_state.hooks.control) net_state.hooks.control(net_state.hooks.hctx, &h);
  return UCS_OK;
}

/* ---------------------------------------------------------------- send side */

static void send_cb(void *request, ucs_status_t status, void *user_data) {
  send_rec *r = user_data;
  int st = status == UCS_OK ? SKN_NET_OK : fail_status(&net_state.peers[r->dst]);
  if (status != UCS_OK && !atomic_load(&net_state.peers[r->dst].failed))
    skn_log("UCX transport: send to process %d failed: %s", r->dst, ucs_status_string(status));
  net_state.events++;
  if (r->done) r->done(r->arg, st);
  rec_free(r);
  ucp_request_free(request);
}

static int send_failed(peer *p, ucs_status_ptr_t sp) {
  int st = fail_status(p);
  if (st == SKN_NET_ERR)
    skn_log("UCX transport: send to process %d: %s", p->proc, ucs_status_string(UCS_PTR_STATUS(sp)));
  return st;
}

/* The common case, an eager message UCX can send inline at once: the header may live on
 * the caller's stack, and neither a record nor a callback is needed. SKN_NET_INPROGRESS:
 * UCX cannot (no room, or not inline): send it with a record instead. */
static int send_now(peer *p, ucp_ep_h ep, unsigned am, const void *hdr, size_t hlen, const void *buf,
                    size_t len) {
  if (len > net_state.rndv_threshold || SKN_UNLIKELY(net_state.test_swap)) return SKN_NET_INPROGRESS;
  ucp_request_param_t param = {
      .op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL,
      .flags = UCP_AM_SEND_FLAG_EAGER,
  };
  ucs_status_ptr_t sp = ucp_am_send_nbx(ep, am, hdr, hlen, buf, len, &param);
  if (SKN_LIKELY(sp == NULL)) return SKN_NET_OK;
  return UCS_PTR_STATUS(sp) == UCS_ERR_NO_RESOURCE ? SKN_NET_INPROGRESS : send_failed(p, sp);
}

/* Hands one record to UCX. */
/* deferred: the caller already returned SKN_NET_INPROGRESS for it, so its callback must
 * run whatever happens (UCX calls it even on immediate completion). */
static int post_send(peer *p, ucp_ep_h ep, send_rec *r, const void *buf, size_t len, unsigned am,
                     bool deferred) {
  ucp_request_param_t param = {
      .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                      UCP_OP_ATTR_FIELD_FLAGS | (deferred ? UCP_OP_ATTR_FLAG_NO_IMM_CMPL : 0),
      .cb.send = send_cb,
      .user_data = r,
      .flags = am == AM_ACK || len <= net_state.rndv_threshold ? UCP_AM_SEND_FLAG_EAGER
                                                        : UCP_AM_SEND_FLAG_RNDV,
  };
  ucs_status_ptr_t sp = ucp_am_send_nbx(ep, am, &r->hdr, r->hlen, buf, len, &param);
  if (sp == NULL) {
    rec_free(r);
    return SKN_NET_OK;
  }
  if (UCS_PTR_IS_ERR(sp)) {
    int st = send_failed(p, sp);
    if (deferred && r->done) r->done(r->arg, st);
    rec_free(r);
    return st;
  }
  return SKN_NET_INPROGRESS;
}

/* SKEIN_NET_TEST_SWAP: sends of even sequence numbers wait for the next send to the same
 * process (or the next progress), so that the receiver sees pairs in reverse order. */
static void flush_deferred(peer *p) {
  send_rec *d = p->deferred;
  p->deferred = NULL;
  if (d) post_send(p, p->ep, d, d->buf, d->len, AM_MSG, true);
}

/* Under the lock: sends p's batch (p->ep exists: batch_add made it). */
static void batch_flush(peer *p) {
  size_t len = p->batch_len;
  if (!len) return;
  p->batch_len = 0;
  net_state.batched--;
  ucp_request_param_t param = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL,
                               .flags = UCP_AM_SEND_FLAG_EAGER};
  ucs_status_ptr_t sp = ucp_am_send_nbx(p->ep, AM_BATCH, NULL, 0, p->batch, len, &param);
  if (sp == NULL) return;
  if (UCS_PTR_STATUS(sp) != UCS_ERR_NO_RESOURCE) {
    send_failed(p, sp); /* the messages are lost with the peer (peer_failed ends the job) */
    return;
  }
  /* UCX cannot take it now: it keeps the buffer until the callback; the peer gets another */
  send_rec *r = rec_alloc();
  r->owned = p->batch;
  p->batch = NULL;
  r->done = NULL;
  r->dst = p->proc;
  param = (ucp_request_param_t){
      .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS,
      .cb.send = send_cb, .user_data = r, .flags = UCP_AM_SEND_FLAG_EAGER};
  sp = ucp_am_send_nbx(p->ep, AM_BATCH, NULL, 0, r->owned, len, &param);
  if (sp == NULL) rec_free(r);
  else if (UCS_PTR_IS_ERR(sp)) {
    send_failed(p, sp);
    rec_free(r);
  }
}

static void batch_flush_all(void) {
  for (int q = 0; q < net_state.pmi->nprocs && net_state.batched; q++) batch_flush(&net_state.peers[q]);
}

/* Under the lock: appends a small SKN_NET_LATER message to p's batch; sent as far as the
 * caller is concerned (the data is copied). */
static int batch_add(peer *p, const skn_net_data_hdr *env, const void *buf, size_t len) {
  skn_net_data_hdr e = *env;
  size_t need = sizeof e + ((len + 7) & ~(size_t)7);
  if (p->batch_len + need > BATCH_BYTES) batch_flush(p);
  if (!p->batch && !(p->batch = malloc(BATCH_BYTES))) skn_fatal("UCX transport: out of memory");
  e.flags &= ~(uint32_t)SKN_NET_LATER;
  e.bytes = len;
  e.seq = p->send_seq++;
  memcpy(p->batch + p->batch_len, &e, sizeof e);
  if (len) memcpy(p->batch + p->batch_len + sizeof e, buf, len);
  if (!p->batch_len) net_state.batched++;
  p->batch_len += need;
  bump(&net_state.sent_eager, 1);
  bump(&net_state.batched_msgs, 1);
  return SKN_NET_OK;
}

/* Under the lock. */
static int send_msg(int dst_proc, const skn_net_data_hdr *env, const void *buf, size_t len,
                    skn_net_done_fn done, void *arg) {
  peer *p = &net_state.peers[dst_proc];
  ucp_ep_h ep = get_ep(p);
  if (!ep) return SKN_NET_ERR;
  if ((env->flags & SKN_NET_LATER) && len <= BATCH_ITEM_MAX && SKN_LIKELY(!net_state.test_swap))
    return batch_add(p, env, buf, len);
  if (p->batch_len) batch_flush(p); /* keeps the stream in order */
  bump(len > net_state.rndv_threshold ? &net_state.sent_rndv : &net_state.sent_eager, 1);
  skn_net_data_hdr e = *env;
  e.flags &= ~(uint32_t)SKN_NET_LATER;
  e.bytes = len;
  e.seq = p->send_seq++;
  int st = send_now(p, ep, AM_MSG, &e, sizeof e, buf, len);
  if (st != SKN_NET_INPROGRESS) return st;
  send_rec *r = rec_alloc();
  r->hdr.data = e;
  r->hlen = sizeof e;
  r->done = done;
  r->arg = arg;
  r->dst = dst_proc;
  if (SKN_UNLIKELY(net_state.test_swap)) {
    r->buf = buf;
    r->len = len;
    send_rec *d = p->deferred;
    p->deferred = d ? NULL : r;
    if (!d) return SKN_NET_INPROGRESS; /* its callback runs from progress once really sent */
    st = post_send(p, ep, r, buf, len, AM_MSG, false);
    post_send(p, ep, d, d->buf, d->len, AM_MSG, true);
    return st;
  }
  return post_send(p, ep, r, buf, len, AM_MSG, false);
}

int skn_net_send(int dst_proc, const skn_net_data_hdr *env, const void *buf, size_t len,
                 skn_net_done_fn done, void *arg) {
  if (dst_proc < 0 || dst_proc >= net_state.pmi->nprocs) {
    skn_log("UCX transport: send to process %d of %d", dst_proc, net_state.pmi->nprocs);
    return SKN_NET_INVAL;
  }
  if (SKN_UNLIKELY(atomic_load_explicit(&net_state.peers[dst_proc].failed, memory_order_relaxed)))
    return SKN_NET_ERR_PEER;
  bool taken = lock();
  int st = send_msg(dst_proc, env, buf, len, done, arg);
  unlock(taken);
  return st;
}

/* A header-only message (ack, cancel, its answer, the core's control) to process `proc`.
 * Under the lock. */
static int send_control(int proc, unsigned am, const void *hdr, size_t hlen) {
  if (proc < 0 || proc >= net_state.pmi->nprocs) {
    skn_log("UCX transport: control message to process %d of %d", proc, net_state.pmi->nprocs);
    return SKN_NET_INVAL;
  }
  peer *p = &net_state.peers[proc];
  if (atomic_load_explicit(&p->failed, memory_order_relaxed)) return SKN_NET_ERR_PEER;
  ucp_ep_h ep = get_ep(p);
  if (!ep) return SKN_NET_ERR;
  if (p->batch_len) batch_flush(p); /* an ack or cancel after the data it may concern */
  int st = send_now(p, ep, am, hdr, hlen, NULL, 0);
  if (st != SKN_NET_INPROGRESS) return st;
  send_rec *r = rec_alloc();
  memcpy(&r->hdr, hdr, hlen);
  r->hlen = hlen;
  r->done = NULL;
  r->dst = proc;
  st = post_send(p, ep, r, NULL, 0, am, false);
  return st < 0 ? st : SKN_NET_OK;
}

static int send_control_locking(int proc, unsigned am, const void *hdr, size_t hlen) {
  bool taken = lock();
  int st = send_control(proc, am, hdr, hlen);
  unlock(taken);
  return st;
}

int skn_net_ack(const skn_net_ack_hdr *env) {
  bool taken = lock();
  /* counted before it can arrive: a count of the job never sees it delivered but not sent */
  bump(&net_state.acks_sent, 1);
  int st = send_control(skn_net_proc_of(env->src_world), AM_ACK, env, sizeof *env);
  if (st < 0) bump(&net_state.acks_sent, -1);
  unlock(taken);
  return st;
}

int skn_net_cancel(const skn_net_cancel_hdr *hdr) {
  return send_control_locking(skn_net_proc_of(hdr->dst_world), AM_CANCEL, hdr, sizeof *hdr);
}

int skn_net_control(int proc, const skn_net_ctrl_hdr *hdr) {
  return send_control_locking(proc, AM_CONTROL, hdr, sizeof *hdr);
}

/* ---------------------------------------------------------------- rendezvous fetch */

static void fetch_finish(skn_net_rndv *h) {
  if (h->bounce) {
    memcpy(h->buf, h->bounce, h->len);
    free(h->bounce);
  }
}

static void fetch_cb(void *request, ucs_status_t status, size_t length, void *user_data) {
  skn_net_rndv *h = user_data;
  int st = SKN_NET_OK;
  if (status == UCS_OK) {
    fetch_finish(h);
  } else {
    free(h->bounce);
    st = fail_status(&net_state.peers[h->src_proc]);
    if (st == SKN_NET_ERR)
      skn_log("UCX transport: fetch from process %d failed: %s", h->src_proc,
              ucs_status_string(status));
  }
  net_state.events++;
  if (h->done) h->done(h->arg, st);
  free(h);
  ucp_request_free(request);
}

/* Under the lock. */
static int fetch(skn_net_rndv *h, void *buf, size_t len, skn_net_done_fn done, void *arg) {
  if (len > h->hdr.bytes) {
    skn_log("UCX transport: fetch of %zu bytes from a message of %llu", len,
            (unsigned long long)h->hdr.bytes);
    return SKN_NET_INVAL;
  }
  h->done = done;
  h->arg = arg;
  h->buf = buf;
  h->len = len;
  void *dst = buf;
  if (len < h->hdr.bytes) {
    if (!(h->bounce = malloc(h->hdr.bytes))) skn_fatal("UCX transport: out of memory");
    dst = h->bounce;
  }
  ucp_request_param_t param = {
      .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
      .cb.recv_am = fetch_cb,
      .user_data = h,
  };
  ucs_status_ptr_t sp = ucp_am_recv_data_nbx(net_state.worker, h->desc, dst, h->hdr.bytes, &param);
  if (sp == NULL) {
    fetch_finish(h);
    free(h);
    return SKN_NET_OK;
  }
  if (UCS_PTR_IS_ERR(sp)) {
    int st = fail_status(&net_state.peers[h->src_proc]);
    if (st == SKN_NET_ERR)
      skn_log("UCX transport: fetch from process %d: %s", h->src_proc,
              ucs_status_string(UCS_PTR_STATUS(sp)));
    free(h->bounce);
    free(h);
    return st;
  }
  return SKN_NET_INPROGRESS;
}

int skn_net_fetch(skn_net_rndv *h, void *buf, size_t len, skn_net_done_fn done, void *arg) {
  bool taken = lock();
  int st = fetch(h, buf, len, done, arg);
  unlock(taken);
  return st;
}

void skn_net_discard(skn_net_rndv *h) {
  bool taken = lock();
  if (h == net_state.delivering) net_state.dropped_in_hook = true; /* released by the callback's return */
  else ucp_am_data_release(net_state.worker, h->desc);
  unlock(taken);
  free(h);
}

/* ---------------------------------------------------------------- one-sided */

struct skn_net_rkey {
  ucp_rkey_h rkey;
};

/* A registered region; listed so that a rendezvous put can be checked against them. */
struct skn_net_mem {
  struct skn_net_mem *next;
  ucp_mem_h memh;
  uintptr_t lo, hi;
};

int skn_net_mem_map(void *addr, size_t len, skn_net_mem **mem, void *rkey, size_t *rkey_len) {
  ucp_mem_map_params_t mp = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH,
                             .address = addr, .length = len};
  skn_net_mem *m = malloc(sizeof *m);
  if (!m) return SKN_NET_ERR;
  *m = (skn_net_mem){.lo = (uintptr_t)addr, .hi = (uintptr_t)addr + len};
  bool taken = lock();
  ucs_status_t st = ucp_mem_map(net_state.context, &mp, &m->memh);
  void *packed = NULL;
  size_t plen = 0;
  if (st == UCS_OK && (st = ucp_rkey_pack(net_state.context, m->memh, &packed, &plen)) != UCS_OK)
    ucp_mem_unmap(net_state.context, m->memh);
  if (st == UCS_OK) {
    m->next = net_state.mems;
    net_state.mems = m;
  }
  unlock(taken);
  if (st != UCS_OK) {
    skn_log("UCX transport: cannot register %zu bytes at %p: %s", len, addr, ucs_status_string(st));
    free(m);
    return SKN_NET_ERR;
  }
  int rc = SKN_NET_OK;
  if (plen > *rkey_len) {
    skn_log("UCX transport: a %zu-byte remote key does not fit in %zu", plen, *rkey_len);
    rc = SKN_NET_INVAL;
  } else {
    memcpy(rkey, packed, plen);
    *rkey_len = plen;
    *mem = m;
  }
  ucp_rkey_buffer_release(packed);
  if (rc != SKN_NET_OK) skn_net_mem_unmap(m);
  return rc;
}

void skn_net_mem_unmap(skn_net_mem *mem) {
  if (!mem) return;
  bool taken = lock();
  skn_net_mem **pp = &net_state.mems;
  while (*pp && *pp != mem) pp = &(*pp)->next;
  if (*pp) *pp = mem->next;
  ucs_status_t st = ucp_mem_unmap(net_state.context, mem->memh);
  unlock(taken);
  if (st != UCS_OK) skn_log("UCX transport: ucp_mem_unmap: %s", ucs_status_string(st));
  free(mem);
}

/* Under the lock: [a, a + len) lies in one registered region. */
static bool mapped(uintptr_t a, size_t len) {
  for (skn_net_mem *m = net_state.mems; m; m = m->next)
    if (a >= m->lo && a <= m->hi && len <= m->hi - a) return true;
  return false;
}

int skn_net_rkey_unpack(int proc, const void *buf, size_t len, skn_net_rkey **out) {
  (void)len;
  if (proc < 0 || proc >= net_state.pmi->nprocs) return SKN_NET_INVAL;
  skn_net_rkey *rk = malloc(sizeof *rk);
  if (!rk) return SKN_NET_ERR;
  bool taken = lock();
  ucp_ep_h ep = get_ep(&net_state.peers[proc]);
  ucs_status_t st = ep ? ucp_ep_rkey_unpack(ep, buf, &rk->rkey) : UCS_ERR_UNREACHABLE;
  unlock(taken);
  if (st != UCS_OK) {
    skn_log("UCX transport: cannot unpack a remote key of process %d: %s", proc, ucs_status_string(st));
    free(rk);
    return fail_status(&net_state.peers[proc]);
  }
  *out = rk;
  return SKN_NET_OK;
}

void skn_net_rkey_destroy(skn_net_rkey *rk) {
  if (!rk) return;
  bool taken = lock();
  ucp_rkey_destroy(rk->rkey);
  unlock(taken);
  free(rk);
}

/* Under the lock: a record for an operation's completion callback (send_cb). */
static send_rec *op_rec(int proc, skn_net_done_fn done, void *arg) {
  send_rec *r = rec_alloc();
  r->done = done;
  r->arg = arg;
  r->dst = proc;
  return r;
}

/* A one-sided operation's completion: one fewer pending to its process. */
static void rma_cb(void *request, ucs_status_t status, void *user_data) {
  net_state.peers[((send_rec *)user_data)->dst].rma_pending--;
  send_cb(request, status, user_data);
}

/* Under the lock: what an nbx call of a one-sided operation (callback rma_cb) returned. */
static int op_status(peer *p, send_rec *r, ucs_status_ptr_t sp, const char *what) {
  if (sp == NULL) {
    rec_free(r);
    return SKN_NET_OK;
  }
  if (UCS_PTR_IS_ERR(sp)) {
    int st = fail_status(p);
    if (st == SKN_NET_ERR)
      skn_log("UCX transport: %s to process %d: %s", what, p->proc, ucs_status_string(UCS_PTR_STATUS(sp)));
    rec_free(r);
    return st;
  }
  p->rma_pending++;
  return SKN_NET_INPROGRESS;
}

/* ---- large puts by rendezvous
 * Where UCX has no RMA lane to a process, its put is a software emulation: 8-KiB active
 * messages, each copied at both ends and acknowledged one by one, handled by the
 * target's progress. That is the case over tcp, and between processes of a node over
 * shared memory too (UCX's sysv/posix lanes reach only memory UCX allocated itself): see
 * UCX_PROTO_INFO=y, "remote memory write by ucp_put*(): software emulation". A large put
 * then goes as a rendezvous active message instead, which UCX moves with its zero-copy
 * protocols (tcp: put_zcopy over every tcp lane, the data received straight into the
 * window; shared memory: one cma copy). The target's handler checks that the range lies
 * in a registered region, receives the data into it and answers AM_PUT_DONE: the put is
 * then complete at the target. Both ways need the target's progress. */
enum { PUT_UNKNOWN = 0, PUT_UCX, PUT_RNDV };

typedef struct put_hdr {
  uint64_t raddr;
  uint64_t cookie;  /* the origin's put_rec */
  int32_t src_proc; /* AM_PUT: the origin; AM_PUT_DONE: the target */
  int32_t status;   /* AM_PUT_DONE: SKN_NET_OK or SKN_NET_ERR */
} put_hdr;

typedef struct put_rec {
  put_hdr hdr; /* UCX reads it until the send completes */
  skn_net_done_fn done;
  void *arg;
  int dst;
  int pending; /* UCX's send completion and the target's answer */
  int status;
} put_rec;

/* Under the lock: UCX 1.13 has no query for it, but its endpoint printout names each
 * lane's roles, and put is emulated when no lane is an "rma" lane. If the printout
 * changes, puts go by rendezvous everywhere: still correct. */
static bool put_by_rndv(peer *p, ucp_ep_h ep) {
  if (SKN_UNLIKELY(p->put_mode == PUT_UNKNOWN)) {
    char *text = NULL;
    size_t n = 0;
    bool rma_lane = false;
    FILE *f = open_memstream(&text, &n);
    if (f) {
      ucp_ep_print_info(ep, f);
      fclose(f);
      rma_lane = text && strstr(text, " rma#");
    }
    free(text);
    p->put_mode = rma_lane ? PUT_UCX : PUT_RNDV;
  }
  return p->put_mode == PUT_RNDV;
}

static void put_event(put_rec *r, int status) {
  if (status != SKN_NET_OK) r->status = status;
  if (--r->pending) return;
  net_state.peers[r->dst].rma_pending--;
  net_state.events++;
  if (r->done) r->done(r->arg, r->status);
  free(r);
}

static void put_sent_cb(void *request, ucs_status_t status, void *user_data) {
  put_rec *r = user_data;
  ucp_request_free(request);
  if (status == UCS_OK) {
    put_event(r, SKN_NET_OK);
    return;
  }
  if (!atomic_load(&net_state.peers[r->dst].failed))
    skn_log("UCX transport: put to process %d failed: %s", r->dst, ucs_status_string(status));
  r->pending = 1; /* no answer will come */
  put_event(r, fail_status(&net_state.peers[r->dst]));
}

/* Under the lock. */
static int put_rndv(peer *p, ucp_ep_h ep, const void *buf, size_t len, uint64_t raddr, skn_net_done_fn done,
                    void *arg) {
  put_rec *r = malloc(sizeof *r);
  if (!r) skn_fatal("UCX transport: out of memory");
  *r = (put_rec){.hdr = {.raddr = raddr, .cookie = (uintptr_t)r, .src_proc = net_state.pmi->proc},
                 .done = done, .arg = arg, .dst = p->proc, .pending = 2, .status = SKN_NET_OK};
  ucp_request_param_t param = {
      .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS,
      .cb.send = put_sent_cb, .user_data = r, .flags = UCP_AM_SEND_FLAG_RNDV};
  ucs_status_ptr_t sp = ucp_am_send_nbx(ep, AM_PUT, &r->hdr, sizeof r->hdr, buf, len, &param);
  if (sp == NULL) {
    r->pending--; /* sent; the answer follows */
  } else if (UCS_PTR_IS_ERR(sp)) {
    free(r);
    return send_failed(p, sp);
  }
  p->rma_pending++;
  return SKN_NET_INPROGRESS;
}

/* Under the lock (progress): the target's answer. */
static void put_answer(const put_hdr *in, int status) {
  put_hdr h = {.cookie = in->cookie, .src_proc = net_state.pmi->proc, .status = status};
  if (send_control(in->src_proc, AM_PUT_DONE, &h, sizeof h) < 0)
    skn_log("UCX transport: cannot answer a put of process %d", in->src_proc);
}

static void put_recv_cb(void *request, ucs_status_t status, size_t length, void *user_data) {
  (void)length;
  put_hdr *in = user_data;
  if (status != UCS_OK) skn_log("UCX transport: put from process %d: %s", in->src_proc, ucs_status_string(status));
  put_answer(in, status == UCS_OK ? SKN_NET_OK : SKN_NET_ERR);
  free(in);
  ucp_request_free(request);
}

static ucs_status_t am_put_cb(void *arg, const void *header, size_t header_length, void *data, size_t length,
                              const ucp_am_recv_param_t *param) {
  (void)arg;
  bool rndv = param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV;
  put_hdr h;
  if (header_length != sizeof h || (memcpy(&h, header, sizeof h), h.src_proc < 0) ||
      h.src_proc >= net_state.pmi->nprocs) {
    skn_log("UCX transport: dropped a malformed put (header %zu bytes)", header_length);
    if (rndv) ucp_am_data_release(net_state.worker, data);
    return UCS_OK;
  }
  if (!mapped(h.raddr, length)) {
    skn_log("UCX transport: process %d put %zu bytes at %#llx, outside this process's registered memory",
            h.src_proc, length, (unsigned long long)h.raddr);
    put_answer(&h, SKN_NET_ERR);
    if (rndv) ucp_am_data_release(net_state.worker, data);
    return UCS_OK;
  }
  if (!rndv) { /* UCX sent it eagerly after all */
    memcpy((void *)(uintptr_t)h.raddr, data, length);
    put_answer(&h, SKN_NET_OK);
    return UCS_OK;
  }
  put_hdr *in = malloc(sizeof *in);
  if (!in) skn_fatal("UCX transport: out of memory");
  *in = h;
  ucp_request_param_t rp = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
                            .cb.recv_am = put_recv_cb, .user_data = in};
  ucs_status_ptr_t sp = ucp_am_recv_data_nbx(net_state.worker, data, (void *)(uintptr_t)h.raddr, length, &rp);
  if (sp == NULL || UCS_PTR_IS_ERR(sp)) {
    if (sp) skn_log("UCX transport: put from process %d: %s", h.src_proc, ucs_status_string(UCS_PTR_STATUS(sp)));
    put_answer(&h, sp ? SKN_NET_ERR : SKN_NET_OK);
    free(in);
  }
  return UCS_INPROGRESS; /* the descriptor is UCX's receive's now */
}

static ucs_status_t am_put_done_cb(void *arg, const void *header, size_t header_length, void *data, size_t length,
                                   const ucp_am_recv_param_t *param) {
  (void)arg, (void)data, (void)param;
  put_hdr h;
  if (!control_hdr(header, header_length, length, &h, sizeof h)) return UCS_OK;
  put_event((put_rec *)(uintptr_t)h.cookie, h.status);
  return UCS_OK;
}

static int rma(bool put, int proc, void *buf, size_t len, uint64_t raddr, skn_net_rkey *rk, skn_net_done_fn done,
               void *arg) {
  if (proc < 0 || proc >= net_state.pmi->nprocs) return SKN_NET_INVAL;
  peer *p = &net_state.peers[proc];
  if (atomic_load_explicit(&p->failed, memory_order_relaxed)) return SKN_NET_ERR_PEER;
  bool taken = lock();
  ucp_ep_h ep = get_ep(p);
  int st = SKN_NET_ERR;
  if (ep && put && len >= net_state.put_rndv_min && put_by_rndv(p, ep)) {
    st = put_rndv(p, ep, buf, len, raddr, done, arg);
  } else if (ep) {
    send_rec *r = op_rec(proc, done, arg);
    ucp_request_param_t param = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
                                 .cb.send = rma_cb, .user_data = r};
    ucs_status_ptr_t sp = put ? ucp_put_nbx(ep, buf, len, raddr, rk->rkey, &param)
                              : ucp_get_nbx(ep, buf, len, raddr, rk->rkey, &param);
    st = op_status(p, r, sp, put ? "put" : "get");
    if (put && st >= 0) p->rma_issued++; /* at the target after a flush */
  }
  unlock(taken);
  return st;
}

int skn_net_put(int proc, const void *buf, size_t len, uint64_t raddr, skn_net_rkey *rk, skn_net_done_fn done,
                void *arg) {
  return rma(true, proc, (void *)(uintptr_t)buf, len, raddr, rk, done, arg);
}

int skn_net_get(int proc, void *buf, size_t len, uint64_t raddr, skn_net_rkey *rk, skn_net_done_fn done,
                void *arg) {
  return rma(false, proc, buf, len, raddr, rk, done, arg);
}

int skn_net_atomic(int proc, int aop, size_t width, const void *operand, void *result, uint64_t raddr,
                   skn_net_rkey *rk, skn_net_done_fn done, void *arg) {
  static const ucp_atomic_op_t ops[] = {
      [SKN_NET_AOP_ADD] = UCP_ATOMIC_OP_ADD, [SKN_NET_AOP_AND] = UCP_ATOMIC_OP_AND,
      [SKN_NET_AOP_OR] = UCP_ATOMIC_OP_OR,   [SKN_NET_AOP_XOR] = UCP_ATOMIC_OP_XOR,
      [SKN_NET_AOP_SWAP] = UCP_ATOMIC_OP_SWAP, [SKN_NET_AOP_CSWAP] = UCP_ATOMIC_OP_CSWAP};
  if (proc < 0 || proc >= net_state.pmi->nprocs || aop < 0 || aop > SKN_NET_AOP_CSWAP || (width != 4 && width != 8) ||
      (!result && aop >= SKN_NET_AOP_SWAP))
    return SKN_NET_INVAL;
  peer *p = &net_state.peers[proc];
  if (atomic_load_explicit(&p->failed, memory_order_relaxed)) return SKN_NET_ERR_PEER;
  bool taken = lock();
  ucp_ep_h ep = get_ep(p);
  int st = SKN_NET_ERR;
  if (ep) {
    /* Accumulates of one origin are ordered (MPI's default accumulate_ordering): a posted
     * atomic may still be on its way when the next operation is issued, so a fence
     * separates them, unless both are posted with the same op (those commute). */
    if (p->posted_aop && p->rma_flushed != p->rma_issued && (result || p->posted_aop != aop + 1)) {
      ucs_status_t fs = ucp_worker_fence(net_state.worker);
      if (fs != UCS_OK) skn_log("UCX transport: ucp_worker_fence: %s", ucs_status_string(fs));
      p->posted_aop = 0;
    }
    send_rec *r = op_rec(proc, done, arg);
    r->hdr.operand = 0;
    if (aop == SKN_NET_AOP_CSWAP) { /* UCX's order: buffer = compare, reply buffer = new value in, old out */
      memcpy(&r->hdr.operand, result, width);
      memcpy(result, operand, width);
    } else {
      memcpy(&r->hdr.operand, operand, width);
    }
    ucp_request_param_t param = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_DATATYPE |
                        (result ? UCP_OP_ATTR_FIELD_REPLY_BUFFER : 0),
        .cb.send = rma_cb, .user_data = r, .datatype = ucp_dt_make_contig(width), .reply_buffer = result};
    ucs_status_ptr_t sp = ucp_atomic_op_nbx(ep, ops[aop], &r->hdr.operand, 1, raddr, rk->rkey, &param);
    /* the operand is read at once, but the record lives until the callback anyway */
    st = op_status(p, r, sp, "atomic");
    if (!result && st >= 0) { /* posted: at the target after a flush */
      p->rma_issued++;
      p->posted_aop = (uint8_t)(aop + 1);
    }
  }
  unlock(taken);
  return st;
}

/* A flush in flight: what it covers of each process's rma_issued (one entry, or one per
 * process for a flush of every process). */
typedef struct flush_rec {
  skn_net_done_fn done;
  void *arg;
  int proc; /* -1: every process */
  uint64_t upto[];
} flush_rec;

static void flush_covered(const flush_rec *f) {
  for (int q = f->proc < 0 ? 0 : f->proc, k = 0; q < (f->proc < 0 ? net_state.pmi->nprocs : f->proc + 1); q++, k++)
    if (f->upto[k] > net_state.peers[q].rma_flushed) net_state.peers[q].rma_flushed = f->upto[k];
}

static void flush_cb(void *request, ucs_status_t status, void *user_data) {
  flush_rec *f = user_data;
  int st = SKN_NET_OK;
  if (status == UCS_OK) flush_covered(f);
  else {
    st = f->proc < 0 ? SKN_NET_ERR : fail_status(&net_state.peers[f->proc]);
    if (st == SKN_NET_ERR) skn_log("UCX transport: flush failed: %s", ucs_status_string(status));
  }
  net_state.events++;
  if (f->done) f->done(f->arg, st);
  free(f);
  ucp_request_free(request);
}

/* Under the lock: nothing issued to p waits for a flush. Gets, fetching atomics and
 * rendezvous puts are complete at the target when their own completion has run; only
 * UCX's puts and posted atomics need the flush (over tcp each flush also costs UCX a
 * round trip of its own: a zero-length put and its acknowledgement). */
static bool rma_clean(const peer *p) { return p->rma_flushed == p->rma_issued && p->rma_pending == 0; }

int skn_net_flush(int proc, skn_net_done_fn done, void *arg) {
  if (proc < -1 || proc >= net_state.pmi->nprocs) return SKN_NET_INVAL;
  bool taken = lock();
  int st = SKN_NET_OK, n = proc < 0 ? net_state.pmi->nprocs : 1;
  bool clean = true;
  for (int k = 0; k < n; k++) clean &= rma_clean(&net_state.peers[proc < 0 ? k : proc]);
  peer *p = &net_state.peers[proc < 0 ? net_state.pmi->proc : proc];
  if (!clean && (proc < 0 || p->ep)) { /* no endpoint: nothing was ever issued to it */
    flush_rec *f = malloc(sizeof *f + (size_t)n * sizeof f->upto[0]);
    if (!f) skn_fatal("UCX transport: out of memory");
    *f = (flush_rec){.done = done, .arg = arg, .proc = proc};
    for (int k = 0; k < n; k++) f->upto[k] = net_state.peers[proc < 0 ? k : proc].rma_issued;
    ucp_request_param_t param = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
                                 .cb.send = flush_cb, .user_data = f};
    ucs_status_ptr_t sp = proc < 0 ? ucp_worker_flush_nbx(net_state.worker, &param) : ucp_ep_flush_nbx(p->ep, &param);
    if (sp == NULL) flush_covered(f);
    else if (UCS_PTR_IS_ERR(sp)) {
      st = fail_status(p);
      if (st == SKN_NET_ERR) skn_log("UCX transport: flush: %s", ucs_status_string(UCS_PTR_STATUS(sp)));
    } else st = SKN_NET_INPROGRESS;
    if (st != SKN_NET_INPROGRESS) free(f);
  }
  unlock(taken);
  return st;
}

/* ---------------------------------------------------------------- progress */

/* Polls the pidfds of the processes on this host (cheap: one poll every 10 ms at most). */
static void check_liveness(void) {
  uint64_t now = skn_now_ns();
  if (now < net_state.next_check_ns) return;
  net_state.next_check_ns = now + LIVENESS_PERIOD_NS;
  for (int q = 0; q < net_state.pmi->nprocs; q++) {
    peer *p = &net_state.peers[q];
    if (p->pidfd < 0 || atomic_load_explicit(&p->failed, memory_order_relaxed)) continue;
    struct pollfd pfd = {.fd = p->pidfd, .events = POLLIN};
    if (poll(&pfd, 1, 0) > 0) mark_failed(p, "the process has ended");
  }
}

bool skn_net_progress(void) {
  if (!try_lock()) return false;
  net_state.events = 0;
  net_state.controls = 0;
  if (SKN_UNLIKELY(net_state.batched)) batch_flush_all();
  void *tsan = net_state.hooks.tsan_arrivals; /* net.h */
  if (tsan) SKN_TSAN_ACQUIRE(tsan);
  unsigned n = ucp_worker_progress(net_state.worker);
  if (tsan) SKN_TSAN_RELEASE(tsan);
  if (SKN_UNLIKELY((++net_state.calls & 255) == 0 || net_state.next_check_ns == 0)) check_liveness();
  if (SKN_UNLIKELY(net_state.test_swap))
    for (int q = 0; q < net_state.pmi->nprocs; q++) flush_deferred(&net_state.peers[q]);
  /* The core's control messages (deadlock detection) wake no waiter: counted as work, the
   * reports that stalled processes send to process 0 every SKEIN_DEADLOCK_MS restarted
   * its waiters' spinning budget, and under load (a yield per poll) its workers never
   * slept, so process 0 never stalled and never judged (deadlock_n7_p3_w2 past 100 s). */
  bool any = net_state.events != 0 || (n != 0 && net_state.controls == 0);
  unlock(true);
  return any;
}

/* ---------------------------------------------------------------- init and end */

static int publish_address(void) {
  ucp_address_t *addr;
  size_t addr_len;
  ucs_status_t st = ucp_worker_get_address(net_state.worker, &addr, &addr_len);
  if (st != UCS_OK) {
    skn_log("UCX transport: ucp_worker_get_address: %s", ucs_status_string(st));
    return SKN_NET_ERR;
  }
  blob_head h = {.magic = BLOB_MAGIC, .pid = (int32_t)getpid(), .addr_len = (uint32_t)addr_len};
  host_id(h.host_id, sizeof h.host_id);
  size_t len = sizeof h + addr_len;
  char *blob = malloc(len);
  if (!blob) skn_fatal("UCX transport: out of memory");
  memcpy(blob, &h, sizeof h);
  memcpy(blob + sizeof h, addr, addr_len);
  ucp_worker_release_address(net_state.worker, addr);
  int rc = net_state.hooks.pmi->put(ADDR_KEY, blob, len);
  free(blob);
  if (rc != SKN_PMI_OK) return SKN_NET_ERR;
  return net_state.hooks.pmi->fence() == SKN_PMI_OK ? SKN_NET_OK : SKN_NET_ERR;
}

/* Same host and pid namespace: watch the process through a pidfd, and let the endpoint use
 * shared memory (which UCX's peer error mode excludes). Elsewhere: UCX's peer mode. */
static int setup_peer(peer *p) {
  p->pidfd = -1;
  p->errmode_peer = true;
  if (p->proc == net_state.pmi->proc || net_state.errmode_all_peer || net_state.hooks.pmi->node_of(p->proc) != net_state.pmi->node)
    return SKN_NET_OK; /* SKEIN_NET_ERRMODE=peer: every process is treated as remote */
  void *blob = NULL;
  size_t len = 0;
  if (net_state.hooks.pmi->get(p->proc, ADDR_KEY, &blob, &len) != SKN_PMI_OK) return SKN_NET_ERR;
  blob_head h, mine;
  host_id(mine.host_id, sizeof mine.host_id);
  bool ok = len >= sizeof h;
  if (ok) memcpy(&h, blob, sizeof h);
  free(blob);
  if (!ok || h.magic != BLOB_MAGIC) {
    skn_log("UCX transport: process %d published a malformed address", p->proc);
    return SKN_NET_ERR;
  }
  h.host_id[sizeof h.host_id - 1] = 0;
  if (strcmp(h.host_id, mine.host_id) != 0) return SKN_NET_OK; /* another host or namespace */
  p->pidfd = (int)syscall(SYS_pidfd_open, (pid_t)h.pid, 0);
  if (p->pidfd < 0) {
    if (errno == ESRCH) mark_failed(p, "the process has ended");
    return SKN_NET_OK; /* no pidfd (old kernel): UCX's peer mode below */
  }
  p->errmode_peer = false;
  return SKN_NET_OK;
}

/* One fd a sleeping worker can wait on: UCX's wakeup fd and the pidfds of local peers. */
static int make_epoll(void) {
  int ucx_fd;
  ucs_status_t st = ucp_worker_get_efd(net_state.worker, &ucx_fd);
  if (st != UCS_OK) {
    skn_log("UCX transport: ucp_worker_get_efd: %s", ucs_status_string(st));
    return SKN_NET_ERR;
  }
  if ((net_state.epfd = epoll_create1(EPOLL_CLOEXEC)) < 0) {
    skn_log("UCX transport: epoll_create1: %s", strerror(errno));
    return SKN_NET_ERR;
  }
  struct epoll_event ev = {.events = EPOLLIN};
  if (epoll_ctl(net_state.epfd, EPOLL_CTL_ADD, ucx_fd, &ev) != 0) goto fail;
  for (int q = 0; q < net_state.pmi->nprocs; q++)
    if (net_state.peers[q].pidfd >= 0 && epoll_ctl(net_state.epfd, EPOLL_CTL_ADD, net_state.peers[q].pidfd, &ev) != 0)
      goto fail;
  return SKN_NET_OK;
fail:
  skn_log("UCX transport: epoll_ctl: %s", strerror(errno));
  close(net_state.epfd);
  return SKN_NET_ERR;
}

int skn_net_event_fd(void) { return net_state.epfd; }

bool skn_net_arm(void) {
  if (!try_lock()) return false; /* someone is in the transport: do not sleep */
  if (net_state.batched) { /* send them before sleeping; then look again */
    batch_flush_all();
    unlock(true);
    return false;
  }
  net_state.next_check_ns = 0; /* after the sleep, look at the pidfds at the next progress */
  ucs_status_t st = ucp_worker_arm(net_state.worker);
  unlock(true);
  if (st != UCS_OK && st != UCS_ERR_BUSY)
    skn_log("UCX transport: ucp_worker_arm: %s", ucs_status_string(st));
  return st == UCS_OK;
}

int skn_net_init(const skn_pmi_info *pmi, const skn_net_hooks *hooks) {
  if (!hooks || !hooks->deliver || !hooks->deliver_rndv || !hooks->pmi) {
    skn_log("UCX transport: init needs deliver and deliver_rndv hooks and PMI calls");
    return SKN_NET_INVAL;
  }
  net_state.pmi = pmi;
  net_state.hooks = *hooks;
  net_state.rndv_threshold = (size_t)skn_env_size("NET_RNDV", 8192);
  net_state.put_rndv_min = (size_t)skn_env_size("NET_PUT_RNDV", 65536);
  const char *mode = getenv("SKEIN_NET_ERRMODE");
  if (mode && strcmp(mode, "peer") && strcmp(mode, "auto")) {
    skn_log("UCX transport: SKEIN_NET_ERRMODE must be auto or peer, not '%s'", mode);
    return SKN_NET_INVAL;
  }
  net_state.errmode_all_peer = mode && !strcmp(mode, "peer");
  net_state.test_swap = skn_env_int("NET_TEST_SWAP", 0) != 0;

  ucp_config_t *config;
  ucs_status_t st = ucp_config_read(NULL, NULL, &config); /* honours UCX_* variables */
  if (st != UCS_OK) goto ucx_error;
  ucp_params_t params = {
      .field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED |
                    UCP_PARAM_FIELD_ESTIMATED_NUM_EPS | UCP_PARAM_FIELD_NAME,
      .features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP | UCP_FEATURE_RMA | UCP_FEATURE_AMO32 | UCP_FEATURE_AMO64,
      .mt_workers_shared = 0,
      .estimated_num_eps = (size_t)pmi->nprocs,
      .name = "skein",
  };
  st = ucp_init(&params, config, &net_state.context);
  ucp_config_release(config);
  if (st != UCS_OK) goto ucx_error;
  ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                            .thread_mode = UCS_THREAD_MODE_SERIALIZED};
  st = ucp_worker_create(net_state.context, &wp, &net_state.worker);
  if (st != UCS_OK) goto cleanup_context;
  ucp_worker_attr_t wa = {.field_mask = UCP_WORKER_ATTR_FIELD_THREAD_MODE |
                                        UCP_WORKER_ATTR_FIELD_MAX_AM_HEADER};
  st = ucp_worker_query(net_state.worker, &wa);
  if (st != UCS_OK) goto cleanup_worker;
  net_state.thread_mode = wa.thread_mode;
  if (wa.thread_mode == UCS_THREAD_MODE_SINGLE) {
    skn_log("UCX transport: UCX granted thread mode SINGLE, not SERIALIZED");
    goto cleanup_worker_quiet;
  }
  if (wa.max_am_header < sizeof(skn_net_data_hdr)) {
    skn_log("UCX transport: UCX allows %zu-byte AM headers, the data header needs %zu",
            wa.max_am_header, sizeof(skn_net_data_hdr));
    goto cleanup_worker_quiet;
  }
  ucp_am_handler_param_t hp = {
      .field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                    UCP_AM_HANDLER_PARAM_FIELD_FLAGS,
      .id = AM_MSG, .flags = UCP_AM_FLAG_WHOLE_MSG, .cb = am_msg_cb};
  if ((st = ucp_worker_set_am_recv_handler(net_state.worker, &hp)) != UCS_OK) goto cleanup_worker;
  hp.id = AM_ACK;
  hp.cb = am_ack_cb;
  if ((st = ucp_worker_set_am_recv_handler(net_state.worker, &hp)) != UCS_OK) goto cleanup_worker;
  hp.id = AM_CANCEL;
  hp.cb = am_cancel_cb;
  if ((st = ucp_worker_set_am_recv_handler(net_state.worker, &hp)) != UCS_OK) goto cleanup_worker;
  hp.id = AM_CANCEL_ANSWER;
  hp.cb = am_cancel_answer_cb;
  if ((st = ucp_worker_set_am_recv_handler(net_state.worker, &hp)) != UCS_OK) goto cleanup_worker;
  hp.id = AM_CONTROL;
  hp.cb = am_control_cb;
  if ((st = ucp_worker_set_am_recv_handler(net_state.worker, &hp)) != UCS_OK) goto cleanup_worker;
  hp.id = AM_BATCH;
  hp.cb = am_batch_cb;
  if ((st = ucp_worker_set_am_recv_handler(net_state.worker, &hp)) != UCS_OK) goto cleanup_worker;
  hp.id = AM_PUT;
  hp.cb = am_put_cb;
  if ((st = ucp_worker_set_am_recv_handler(net_state.worker, &hp)) != UCS_OK) goto cleanup_worker;
  hp.id = AM_PUT_DONE;
  hp.cb = am_put_done_cb;
  if ((st = ucp_worker_set_am_recv_handler(net_state.worker, &hp)) != UCS_OK) goto cleanup_worker;

  net_state.peers = calloc((size_t)pmi->nprocs, sizeof *net_state.peers);
  if (!net_state.peers) skn_fatal("UCX transport: out of memory");
  for (int q = 0; q < pmi->nprocs; q++) net_state.peers[q].proc = q;
  if (publish_address() != SKN_NET_OK) goto cleanup_peers;
  for (int q = 0; q < pmi->nprocs; q++)
    if (setup_peer(&net_state.peers[q]) != SKN_NET_OK) goto cleanup_peers;
  if (make_epoll() != SKN_NET_OK) goto cleanup_peers;
  return SKN_NET_OK;

cleanup_peers:
  for (int q = 0; q < pmi->nprocs; q++)
    if (net_state.peers[q].pidfd >= 0) close(net_state.peers[q].pidfd);
  free(net_state.peers);
  net_state.peers = NULL;
  goto cleanup_worker_quiet;
cleanup_worker:
  skn_log("UCX transport: %s", ucs_status_string(st));
cleanup_worker_quiet:
  ucp_worker_destroy(net_state.worker);
cleanup_context:
  ucp_cleanup(net_state.context);
  return SKN_NET_ERR;
ucx_error:
  skn_log("UCX transport: %s", ucs_status_string(st));
  return SKN_NET_ERR;
}

void skn_net_get_stats(skn_net_stats *o) {
  *o = (skn_net_stats){
      .endpoints = atomic_load(&net_state.endpoints),
      .sent_eager = atomic_load(&net_state.sent_eager),
      .sent_rndv = atomic_load(&net_state.sent_rndv),
      .delivered_eager = atomic_load(&net_state.delivered_eager),
      .delivered_rndv = atomic_load(&net_state.delivered_rndv),
      .held = atomic_load(&net_state.held),
      .acks_sent = atomic_load(&net_state.acks_sent),
      .acks_received = atomic_load(&net_state.acks_received),
      .batched = atomic_load(&net_state.batched_msgs),
      .rndv_threshold = net_state.rndv_threshold,
      .thread_mode = net_state.thread_mode == UCS_THREAD_MODE_MULTI        ? "multi"
                     : net_state.thread_mode == UCS_THREAD_MODE_SERIALIZED ? "serialized"
                                                                   : "single",
  };
}

/* Progresses until the request completes or `ms` pass; returns its status. */
static ucs_status_t wait_request(ucs_status_ptr_t sp, int ms) {
  if (sp == NULL) return UCS_OK;
  if (UCS_PTR_IS_ERR(sp)) return UCS_PTR_STATUS(sp);
  uint64_t end = skn_now_ns() + (uint64_t)ms * 1000000u;
  ucs_status_t st;
  while ((st = ucp_request_check_status(sp)) == UCS_INPROGRESS && skn_now_ns() < end)
    skn_net_progress();
  /* A flush or close cannot be cancelled (ucp_request_cancel is for receives). Freed
   * unfinished, it goes on inside UCX with no callback, and ucp_worker_destroy ends
   * whatever is left of it. */
  ucp_request_free(sp);
  return st;
}

static void *fence_main(void *arg) {
  _Atomic(int) *rc = arg;
  atomic_store(rc, net_state.hooks.pmi->fence());
  return NULL;
}

/* skn_pmi_fence on a helper thread while this one keeps progressing: a process that has
 * finished its own sends must still answer its peers' (the acknowledgement that completes
 * a rendezvous send comes from the receiver's progress). */
static int fence_progressing(void) {
  _Atomic(int) rc = 1; /* not a PMI status: still running */
  pthread_t t;
  if (pthread_create(&t, NULL, fence_main, (void *)&rc) != 0) return net_state.hooks.pmi->fence();
  while (atomic_load(&rc) == 1)
    if (!skn_net_progress()) sched_yield();
  pthread_join(t, NULL);
  return atomic_load(&rc);
}

/* SKEIN_NET_TEST_LATE_CLOSE=MS (tests only): process 0 starts closing its endpoints MS
 * late, progressing meanwhile, and prints a FAIL line if a process of this host has
 * already left by then: the closing fences must keep every process until all have
 * closed. */
static void test_late_close(void) {
  int ms = skn_env_int("NET_TEST_LATE_CLOSE", 0);
  if (ms <= 0 || net_state.pmi->proc != 0) return;
  for (uint64_t end = skn_now_ns() + (uint64_t)ms * 1000000u; skn_now_ns() < end;)
    if (!skn_net_progress()) usleep(1000);
  for (int q = 0; q < net_state.pmi->nprocs; q++) {
    struct pollfd pfd = {.fd = net_state.peers[q].pidfd, .events = POLLIN};
    if (pfd.fd >= 0 && poll(&pfd, 1, 0) > 0)
      printf("FAIL net: process %d left before process 0 closed its endpoints\n", q);
  }
  fflush(stdout);
}

int skn_net_finalize(void) {
  int rc = SKN_NET_OK;
  for (int q = 0; q < net_state.pmi->nprocs; q++) flush_deferred(&net_state.peers[q]);
  batch_flush_all();
  /* Every send of this process has completed remotely before anyone closes. */
  ucp_request_param_t np = {.op_attr_mask = 0};
  ucs_status_t st = wait_request(ucp_worker_flush_nbx(net_state.worker, &np), 10000);
  if (st != UCS_OK) {
    skn_log("UCX transport: flush at finalize: %s", ucs_status_string(st));
    rc = SKN_NET_ERR;
  }
  atomic_store(&net_state.finalizing, true);
  if (fence_progressing() != SKN_PMI_OK) rc = SKN_NET_ERR;
  test_late_close();
  ucs_status_ptr_t *closing = calloc((size_t)net_state.pmi->nprocs, sizeof *closing);
  for (int q = 0; q < net_state.pmi->nprocs; q++) {
    peer *p = &net_state.peers[q];
    ucp_ep_h ep = p->ep;
    if (!ep) continue;
    /* FORCE is refused on endpoints without peer error mode; a failed peer cannot flush */
    ucp_request_param_t cp = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                              .flags = p->errmode_peer && atomic_load(&p->failed)
                                           ? UCP_EP_CLOSE_FLAG_FORCE : 0};
    closing[q] = ucp_ep_close_nbx(ep, &cp);
  }
  /* After the flush and the fence nothing of ours is in flight. A close that cannot
   * finish is given up. */
  for (int q = 0; q < net_state.pmi->nprocs; q++)
    if (closing[q] && wait_request(closing[q], 2000) == UCS_INPROGRESS)
      skn_log("UCX transport: closing the endpoint to process %d did not finish in 2 s", q);
  free(closing);
  /* And a second fence, so that no process leaves (closing its sockets) while another
   * still closes its endpoints or progresses: a peer gone in the middle of that showed
   * as "error during flush: Endpoint timeout" from UCX when process 0 was slow to close
   * (made slow on purpose), and on endpoints without UCX's peer error mode (processes of
   * this host) such an unhandled failure is where process 0 crashed in UCX progress under
   * this function (issue 17, --procs 2 over tcp, ~4 runs in 10 on a loaded machine). */
  if (fence_progressing() != SKN_PMI_OK) rc = SKN_NET_ERR;
  for (int q = 0; q < net_state.pmi->nprocs; q++) {
    peer *p = &net_state.peers[q];
    while (p->held) {
      held_msg *m = p->held;
      p->held = m->next;
      if (m->rndv || m->ucx_owned) ucp_am_data_release(net_state.worker, m->data);
      else free(m->data);
      free(m);
    }
    if (p->pidfd >= 0) close(p->pidfd);
    free(p->batch);
  }
  free(net_state.peers);
  net_state.peers = NULL;
  close(net_state.epfd);
  while (net_state.free_recs) {
    send_rec *r = net_state.free_recs;
    net_state.free_recs = r->next;
    free(r);
  }
  ucp_worker_destroy(net_state.worker);
  ucp_cleanup(net_state.context);
  return rc;
}
