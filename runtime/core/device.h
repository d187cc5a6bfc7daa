/* The device interface: what the MPI layer asks of the core, and what a transport must
 * provide to it. One contract per operation, as MPICH ch4's ch4_api.txt.
 *
 *   MPI layer (runtime/api)
 *        |  skn_p2p_* (send, receive, probe, cancel), skn_req_wait, skn_coll_* and
 *        v  skn_comm_create* (core.h)
 *   engine (core/engine.c): the matching queues, and delivery written once
 *        |  rank->tp: one ops table per peer, bound when the job starts
 *        v
 *   transports: skn_local_transport (core/local.c, one copy through the shared address
 *   space), the UCX one (core/remote.c over the dlopen'ed netlayer/ucx module), and a
 *   loopback fake in tests/unit/test_device.cpp.
 *
 * A message is followed through it in docs/architecture.md. Included by core.h after the
 * types it uses; include core.h, not this header alone. */
#ifndef SKN_DEVICE_H
#define SKN_DEVICE_H

#include "core.h"

/* ================================================================ the MPI layer's calls
 * ranks are skn_rank, requests skn_req; `me` is the calling rank. Errors of arguments are
 * the MPI layer's to find; these calls assume valid arguments. */

/* A message to send: buffer, count, type, envelope (context, the sender's rank in the
 * communicator, tag), the communicator handle (for error reports) and the receiving rank
 * (local, or a proxy of another process's rank). */
typedef struct skn_msg {
  const void *buf;
  size_t count;
  const skn_dtype *dt;
  int ctx, src, tag; /* src: sender's rank in the communicator */
  int comm;
  skn_rank *peer;    /* receiver */
  uint8_t mode;      /* SKN_MODE_* */
} skn_msg;

/* SEND. Starts sending m through m->peer's transport. With r == NULL (blocking send) it
 * returns when the send buffer may be reused (for SKN_MODE_SYNC: once the receive has
 * matched) and needs no request; otherwise it returns at once and r completes later,
 * with the same meaning. Never fails: resources that run out make the transport fall
 * back to a slower protocol, or end the job. */
static inline void skn_p2p_send(skn_rank *me, const skn_msg *m, skn_req *r); /* below: the peer's send */

/* RECEIVE. Starts receive r (kind SKN_REQ_RECV; buf, count, dt, ctx, src, tag set; src
 * and tag may be wildcards). It matches the first queued message that fits, in arrival
 * order per sender (MPI's non-overtaking rule), or waits posted. r completes once the data
 * is in place; then st_src, st_tag, bytes, truncated and type_mismatch describe it. */
SKN_INTERNAL void skn_p2p_recv(skn_rank *me, skn_req *r);

/* PROBE. Finds the first queued message matching (ctx, src, tag) and describes it; with
 * remove it also takes it out of the queue (a matched probe) and returns it for
 * skn_p2p_recv_matched. NULL when there is none; probe_wait blocks until one arrives. */
typedef struct skn_probe_info {
  int src, tag;
  size_t bytes;
} skn_probe_info;
SKN_INTERNAL skn_req *skn_p2p_probe(skn_rank *me, int ctx, int src, int tag, bool remove, skn_probe_info *info);
SKN_INTERNAL skn_req *skn_p2p_probe_wait(skn_rank *me, int ctx, int src, int tag, bool remove, skn_probe_info *info);
/* Completes receive r from a message taken with probe(remove) (MPI_Mrecv). */
SKN_INTERNAL void skn_p2p_recv_matched(skn_req *r, skn_req *env);

/* CANCEL. A posted receive not yet matched is withdrawn; a send is withdrawn if its
 * message has not matched (its transport decides: across processes this asks the
 * receiving process and waits for its answer). SKN_OK: cancelled (r completes with
 * `cancelled` set); SKN_ERR_NOT_CANCELLED: it matched or will, and completes normally. */
SKN_INTERNAL skn_status skn_p2p_cancel(skn_rank *me, skn_req *r);

/* BUFFERED SEND (core/bsend.c). The rank's attached buffer (MPI_Buffer_attach) is cut
 * into segments, first fit, kept sorted by offset; a segment is claimed under
 * me->bsend_lock (threads of a rank may send at once) and freed once its send completes.
 * bsend_start packs m into a segment and sends the copy in standard mode: SKN_OK,
 * SKN_ERR_NOMEM, or SKN_ERR_NO_ROOM (no buffer attached, or no segment big enough).
 * `link`, when given, is the user's (already complete) request of an MPI_Ibsend or
 * MPI_Bsend_init instance: it gets mode SKN_MODE_BUFFERED and a reference to the internal
 * send in `inner`, so that bsend_cancel can withdraw the message and free its segment
 * (SKN_OK: cancelled, `link->cancelled` set); bsend_unlink drops that reference.
 * bsend_detach blocks until every buffered send has completed and detaches the buffer. */
SKN_INTERNAL skn_status skn_bsend_start(skn_rank *me, const skn_msg *m, skn_req *link);
SKN_INTERNAL skn_status skn_bsend_cancel(skn_rank *me, skn_req *link);
SKN_INTERNAL void skn_bsend_detach(skn_rank *me, void **buf, size_t *size);
static inline void skn_bsend_unlink(skn_req *link) {
  if (link && link->mode == SKN_MODE_BUFFERED && link->inner) {
    skn_req_release(link->inner);
    link->inner = NULL;
  }
}

/* WAIT is skn_req_wait (core.h): blocks the calling unit until r completes, spinning
 * first, polling the transports through the scheduler's poll hook, then sleeping.
 * COLLECTIVES enter through skn_coll_* (shared-memory), skn_xcoll_* (communicators that
 * span processes, built on skn_p2p_*) and skn_icoll_* (intercommunicators), declared in
 * core.h; COMMUNICATOR CONSTRUCTION through skn_comm_create*, skn_intercomm_create* and
 * skn_cid_alloc (core.h): context ids are unique in the job without agreement, and a
 * communicator whose members live in several processes gets its skn_xcomm. */

/* ================================================================ type signatures
 * Within a process the receiver compares the sender's datatype itself
 * (skn_dt_sig_match). Across processes the data header carries this summary of the
 * message's signature, and the receiver compares it with the same prefix of its own
 * type's signature: the same rule (the message's signature must be a prefix of the
 * receive's; MPI_BYTE and MPI_PACKED match anything; at most SIG_CHECK_STEPS runs). */
/* skn_sigsum (core.h): hash of the merged runs (class, count) of the message's first
 * `covered` bytes (0: anything matches), and the class of its first element, which is all
 * a truncating receive compares. */
SKN_INTERNAL void skn_dt_sigsum(const skn_dtype *t, size_t count, skn_sigsum *out);
/* Whether a message summarised by s may be received as (rcount, recv). */
SKN_INTERNAL bool skn_dt_sig_match_sum(const skn_dtype *recv, size_t rcount, const skn_sigsum *s);

/* ================================================================ transports
 * A transport moves messages to a set of ranks. Every rank record (local or proxy) points
 * at the transport that reaches it (skn_rank.tp), bound once when the job starts
 * (skn_dev_bind): local ranks to skn_local_transport, proxies of another process's ranks
 * to the UCX transport of core/remote.c. The engine calls through the peer's table and
 * never asks which transport it is. */
struct skn_transport;
struct skn_win;

/* Where a one-sided operation lands (the RMA slots below). */
typedef struct skn_rma_loc {
  struct skn_win *w;
  char *addr; /* in the target's address space */
  void *rkey; /* the transport's key for it; NULL within the process */
} skn_rma_loc;
#define SKN_RMA_UNSUPPORTED (-5)

typedef struct skn_transport {
  const char *name;

  /* SEND (required). Sends m to m->peer, a rank this transport reaches, with the
   * contract of skn_p2p_send. The transport chooses the protocol: eager (data copied or
   * sent now, the sender completes at once) or rendezvous (data stays in the send buffer
   * until the receive matches and fetches it; the sender completes after). A message
   * that meets a posted receive of a local rank goes through skn_dev_arrive and
   * skn_dev_deliver below. Per (sender, receiver) pair, messages must arrive (reach
   * skn_dev_arrive) in the order they were sent. Sets r->peer when the message may still
   * be cancelled. */
  void (*send)(skn_rank *me, const skn_msg *m, skn_req *r);

  /* CANCEL of a send (required). r was sent through this transport and r->peer is set:
   * withdraw its message if it has not matched (skn_dev_withdraw on the receiver's side),
   * as skn_p2p_cancel. */
  skn_status (*cancel_send)(skn_rank *me, skn_req *r);

  /* FETCH of rendezvous data (required if it queues SKN_PROTO_FETCH envelopes or
   * delivers SKN_DATA_FETCH messages). Moves the first n bytes of the message named by
   * `handle` into dst, then calls skn_dev_fetched(r) (from any thread, maybe before it
   * returns). With r == NULL: drop the message without reading it (its sender completes). */
  void (*fetch)(void *handle, void *dst, size_t n, skn_req *r);

  /* RELEASE of an envelope (required). The engine is done with an envelope this
   * transport queued (env->tp == this): matched (its data has been delivered or the fetch
   * started; a synchronous sender may now be acknowledged) or withdrawn by a cancel (not
   * delivered; drop its data). The transport frees or recycles it. */
  void (*release)(skn_req *env, bool matched);

  /* PROGRESS (optional; NULL: everything happens inside send and release). Runs the
   * transport: delivers what arrived, completes sends and fetches. Returns whether
   * anything happened. Called by waiting units (the scheduler's poll hook) and a
   * progress thread of the transport's own; must not block. */
  bool (*progress)(void);

  /* CONTROL messages (optional): the core's own protocols between processes, carried
   * beside the messages and not counted as messages: a kind and two numbers for process
   * `proc` (this one included), handed there to the protocol that owns the kind (today
   * the deadlock detection of core/remote.c). Returns 0, or negative when unreachable. */
  int (*control)(int proc, int kind, uint64_t a, uint64_t b);

  /* FAILURE NOTICE: a transport that loses a process calls skn_dev_peer_lost (below). */

  /* ONE-SIDED slots (RMA, core/rma.c). `t` names the target memory: an address in the
   * target's address space, the remote key of the registration holding it (NULL within
   * the process) and the window (its stripe locks). Each call returns once its origin
   * buffers may be reused and its results are in place; the data is at the target after
   * `flush` (the local transport: when the call returns). SKN_RMA_UNSUPPORTED: this
   * transport cannot do it (nothing was done). Arguments were checked by the API layer.
   *   put/get:    tcount elements of tt at the target <-> ocount of ot at obuf.
   *   accumulate: as skn_rma_accumulate (rma.h), atomic per element with respect to
   *               every other accumulate on the element, whichever transport issued it.
   *   cas:        compare-and-swap of one element of predefined type `basic`.
   *   flush:      remote completion of everything issued to target (NULL: to every
   *               rank this transport reaches). */
  int (*put)(skn_rank *target, const struct skn_rma_loc *t, const void *obuf, size_t ocount, const skn_dtype *ot,
             size_t tcount, const skn_dtype *tt);
  int (*get)(skn_rank *target, const struct skn_rma_loc *t, void *obuf, size_t ocount, const skn_dtype *ot,
             size_t tcount, const skn_dtype *tt);
  int (*accumulate)(skn_rank *target, const struct skn_rma_loc *t, int op, int basic, const void *origin,
                    size_t ocount, const skn_dtype *ot, void *result, size_t rcount, const skn_dtype *rt,
                    size_t tcount, const skn_dtype *tt);
  int (*cas)(skn_rank *target, const struct skn_rma_loc *t, int basic, const void *origin, const void *compare,
             void *result);
  int (*flush)(skn_rank *target);

  /* The transport a counting copy (skn_dev_count_sends) stands for; NULL in a real one. */
  const struct skn_transport *counted;
} skn_transport;

/* MPI_T's send counters (api/mpit.c) are the only thing a send counts. They are not a test
 * on this path: while some rank of the process has initialized the tools interface, every
 * rank record is bound to a counting copy of its transport (same slots, but `send` adds
 * to the sender's sent_msgs/sent_bytes when the sender itself has MPI_T initialized, then
 * calls the real send). The record's tp is read and swapped with relaxed atomics: a send
 * racing with the swap goes through either table, and either one sends. */
static inline void skn_p2p_send(skn_rank *me, const skn_msg *m, skn_req *r) {
  skn_rank_tp(m->peer)->send(me, m, r);
}

/* COUNT SENDS: on, MPI_T_init_thread of a rank; off, its MPI_T_finalize. The first `on` of
 * the process binds every rank record to the counting copy of its transport, the last
 * `off` binds the real ones back. */
SKN_INTERNAL void skn_dev_count_sends(bool on);

/* The local transport's RMA slots (core/rma.c): one copy, or the hardware atomics and
 * stripe locks of skn_rma_accumulate, in place. */
SKN_INTERNAL int skn_rma_local_put(skn_rank *target, const skn_rma_loc *t, const void *obuf, size_t ocount,
                                   const skn_dtype *ot, size_t tcount, const skn_dtype *tt);
SKN_INTERNAL int skn_rma_local_get(skn_rank *target, const skn_rma_loc *t, void *obuf, size_t ocount,
                                   const skn_dtype *ot, size_t tcount, const skn_dtype *tt);
SKN_INTERNAL int skn_rma_local_accumulate(skn_rank *target, const skn_rma_loc *t, int op, int basic,
                                          const void *origin, size_t ocount, const skn_dtype *ot, void *result,
                                          size_t rcount, const skn_dtype *rt, size_t tcount, const skn_dtype *tt);
SKN_INTERNAL int skn_rma_local_cas(skn_rank *target, const skn_rma_loc *t, int basic, const void *origin,
                                   const void *compare, void *result);
SKN_INTERNAL int skn_rma_local_flush(skn_rank *target);

/* The one-copy transport within a process (core/local.c). */
SKN_INTERNAL extern const skn_transport skn_local_transport;
/* Bound to proxies until their process's transport is: ends the job when used. */
SKN_INTERNAL extern const skn_transport skn_unbound_transport;

/* Binds every rank of process `proc` (proxies) to tp. At start-up, before any message. */
SKN_INTERNAL void skn_dev_bind(int proc, const skn_transport *tp);

/* ================================================================ the engine
 * core/engine.c: the only code that touches a rank's matching queues. Transports call it;
 * it calls transports only through the ops above. */

/* ARRIVE. A message (ctx, src, tag) reaches local rank dst. Returns the posted receive it
 * matches, taken out of the queue (deliver to it with skn_dev_deliver), or else queues
 * the envelope that make(arg, buffered) builds under the queue's lock and returns NULL.
 * `buffered` is what dst's unexpected envelopes hold against skn_job_g.buffer_budget
 * (make may choose a protocol by it). The envelope's kind, proto, ctx, src, tag, bytes,
 * dt or sum, and tp must be set; `filled` must stay 0 until its data is in place, and a
 * receiver that matches it meanwhile waits. Once queued, the envelope is the receiver's:
 * it may be matched, released and reused at once, so the transport reads nothing from it
 * afterwards and writes only while its `filled` is still 0. */
/* skn_req *skn_dev_arrive(skn_rank *dst, int ctx, int src, int tag,
 *                         skn_req *(*make)(void *arg, size_t buffered), void *arg);
 * (inline, in engine.h: the send hot path compiles it in) */

/* How a message's data is held, for delivery. */
enum skn_data_kind {
  SKN_DATA_TYPED = 1, /* count elements of dt at data, in this address space */
  SKN_DATA_PACKED,    /* `bytes` contiguous bytes at data */
  SKN_DATA_FETCH,     /* with the transport tp until fetched (handle) */
};

/* A message as delivery sees it, whichever transport brought it. */
typedef struct skn_dev_msg {
  int src, tag;
  uint8_t how;              /* skn_data_kind */
  size_t bytes;
  const skn_dtype *dt;      /* the sender's type (SKN_DATA_TYPED, and other data from this
                             * process); NULL: the signature is `sum` */
  const skn_sigsum *sum;
  const void *data;
  size_t count;             /* SKN_DATA_TYPED */
  const skn_transport *tp;  /* SKN_DATA_FETCH */
  void *handle;
} skn_dev_msg;

/* DELIVER: delivery, written once for every transport. Checks the type signature (a
 * mismatch copies nothing and flags r->type_mismatch), copies or unpacks min(message,
 * receive capacity) bytes into r's buffer, or has the transport fetch them; sets r's
 * status fields. Returns true when r is complete (the caller completes it), false when a
 * fetch will complete it. */
/* bool skn_dev_deliver(skn_req *r, const skn_dev_msg *m); (inline, in engine.h) */
/* A fetch started by skn_dev_deliver finished: unpacks a non-contiguous receive's bounce
 * buffer and completes r. Called by transports, from any thread. */
SKN_INTERNAL void skn_dev_fetched(skn_req *r);

/* WITHDRAW. Takes the first unexpected envelope of dst that match() accepts out of its
 * queue (a cancel from the sender); NULL when none. The caller releases it. */
SKN_INTERNAL skn_req *skn_dev_withdraw(skn_rank *dst, bool (*match)(const skn_req *env, const void *arg),
                                       const void *arg);
/* The same for one known envelope (a local cancel): true when it was still queued. */
SKN_INTERNAL bool skn_dev_unqueue(skn_rank *dst, skn_req *env);

/* FAILURE NOTICE. Process `proc` died or became unreachable (where: its node and host
 * if known, or NULL; why: the transport's reason): the job ends (exit code
 * SKN_EXIT_PEER_LOST), naming its ranks. Returns (ignoring it) only once the job is
 * already ending on its own (skn_dev_ending: a declared deadlock, whose processes end one
 * by one). */
#define SKN_EXIT_PEER_LOST 71
SKN_INTERNAL void skn_dev_peer_lost(int proc, const char *where, const char *why);
SKN_INTERNAL void skn_dev_ending(void);
SKN_INTERNAL bool skn_dev_is_ending(void);

static inline void skn_p2p_set_result(skn_req *r, int src, int tag, size_t msg_bytes, size_t copied, bool sig_ok) {
  r->st_src = src;
  r->st_tag = tag;
  r->bytes = copied;
  r->truncated = copied < msg_bytes;
  if (SKN_UNLIKELY(r->truncated)) r->sent = msg_bytes;
  r->type_mismatch = !sig_ok;
}

/* ================================================================ the UCX transport
 * (core/remote.c): the job's other processes, loaded only when there are some. Binds
 * their proxies to itself in skn_remote_init. */
typedef struct skn_pmi_info skn_pmi_info;
/* Loads the transport and connects (collective over the job's processes).
 * report_deadlock names this process's blocked ranks and exits, when the job's processes
 * agree that nothing can move any more. */
SKN_INTERNAL void skn_remote_init(const skn_pmi_info *pi, void (*report_deadlock)(void));
/* The scheduler's stall hook in multi-process jobs: every rank here is blocked. */
SKN_INTERNAL void skn_remote_stall(void);
/* Network progress (the scheduler's poll hook); returns whether anything happened. */
SKN_INTERNAL bool skn_remote_poll(void);
/* A worker is about to sleep (the scheduler's sleep hook): the progress thread takes over. */
SKN_INTERNAL void skn_remote_sleeping(void);
/* TSan builds: UCX applies other processes' puts and atomics to this process's window
 * memory during progress, synchronizing in code TSan does not see. Atomics of this
 * process on that memory (a spanning window's words and data) release before and
 * acquire after, and progress does the same around UCX (net.h), so that TSan orders a
 * remote origin's accesses and ours as the atomics really do. */
#ifdef __SANITIZE_THREAD__
SKN_INTERNAL void skn_remote_tsan_acquire(void);
SKN_INTERNAL void skn_remote_tsan_release(void);
#else
static inline void skn_remote_tsan_acquire(void) {}
static inline void skn_remote_tsan_release(void) {}
#endif
/* Window memory for the UCX transport's RMA slots (core/rma.c, windows spanning
 * processes): registers [addr, addr + len) and packs its key into rkey (capacity
 * *rkey_len, its length on return); false when that fails. */
SKN_INTERNAL bool skn_remote_mem_map(void *addr, size_t len, void **mem, void *rkey, size_t *rkey_len);
SKN_INTERNAL void skn_remote_mem_unmap(void *mem);
/* A key packed by process proc's skn_remote_mem_map (ends the job when it cannot be used). */
SKN_INTERNAL void *skn_remote_rkey(int proc, const void *rkey, size_t len);
SKN_INTERNAL void skn_remote_rkey_destroy(void *rk);

/* After the last local rank ended: flush, wait for the other processes, disconnect. */
SKN_INTERNAL void skn_remote_finalize(void);

#endif
