/* UCX transport between the processes of a job: one UCP context and worker per process,
 * one endpoint per remote process (created on first send), one active-message id and
 * header per message kind, eager data up to a threshold, UCX rendezvous into the receiver's final buffer
 * above it. Knows nothing of MPI, ranks' queues or the scheduler: the core receives
 * messages through hooks. Thread-safe: any thread may call any function; one lock of the
 * module's own serializes UCX (SERIALIZED mode), recursive for its holder so that hooks,
 * which run inside progress, may send; progress only try-locks (a second caller returns
 * at once). */
#ifndef SKN_NET_H
#define SKN_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "pmi/pmi.h"

/* Status codes: 0 done, 1 started (a callback follows), negative failure (logged). */
enum {
  SKN_NET_OK = 0,
  SKN_NET_INPROGRESS = 1, /* the completion callback will run from skn_net_progress */
  SKN_NET_ERR = -1,       /* UCX or PMI error; the job cannot go on */
  SKN_NET_ERR_PEER = -2,  /* the destination process has failed (hooks.peer_failed ran) */
  SKN_NET_INVAL = -3,     /* bad argument: process or rank out of range, handle reused */
};

/* Data header flags. */
enum {
  SKN_NET_SYNC = 1u << 0, /* synchronous send: the receiver's core calls skn_net_ack once
                           * the message has matched; the sender then gets hooks.acked */
  SKN_NET_LATER = 1u << 1, /* for skn_net_send only, not sent: the message may wait (copied)
                            * until this process's next skn_net_progress or arm, coalesced
                            * with others to the same process (a nonblocking send: its
                            * caller progresses before it waits on anything) */
};

/* One wire header per message kind (one UCX active-message id each), as UCX defines one
 * header per AM id: no field changes meaning with the kind. */

/* DATA: a message for a receive of rank dst_world (64 bytes). */
typedef struct skn_net_data_hdr {
  int32_t ctx;       /* communicator context id */
  int32_t src;       /* sender's rank in the communicator (for matching) */
  int32_t src_world; /* sender's world rank: names the source process */
  int32_t dst_world; /* receiver's world rank: must live in the destination process */
  int32_t tag;
  uint32_t seq;      /* set by skn_net_send: position in the (source process, destination
                      * process) stream; delivery follows it, which implies MPI's order per
                      * (source rank, destination rank) pair with state per process only */
  uint32_t flags;    /* SKN_NET_SYNC */
  uint32_t sig_first; /* opaque to the module: the core's type-signature summary ... */
  uint64_t sig_hash;
  uint64_t sig_covered; /* ... (skn_sigsum, device.h) */
  uint64_t bytes;    /* payload length */
  uint64_t cookie;   /* opaque to the module (the sender's request): echoed by the ack */
} skn_net_data_hdr;

/* ACK: the receiver of a SKN_NET_SYNC message matched it; goes to src_world's process. */
typedef struct skn_net_ack_hdr {
  int32_t src_world; /* the data message's sender */
  uint32_t pad;
  uint64_t cookie;   /* the data message's */
} skn_net_ack_hdr;

/* CANCEL and its answer: the sender (src_world) of message `cookie` asks dst_world's
 * process to withdraw it; the answer comes back with the same header, `cancelled` set. */
typedef struct skn_net_cancel_hdr {
  int32_t src_world, dst_world;
  uint64_t cookie;   /* the data message's */
  uint64_t answer;   /* opaque to the module: where the sender waits for the answer */
  uint32_t cancelled;
  uint32_t pad;
} skn_net_cancel_hdr;

/* CONTROL: the core's own protocols (deadlock detection): a kind and two numbers. */
typedef struct skn_net_ctrl_hdr {
  int32_t kind;
  int32_t from_proc;
  uint64_t a, b;
} skn_net_ctrl_hdr;

/* A rendezvous message announced but not fetched yet (owned by the core until it calls
 * skn_net_fetch or skn_net_discard, exactly once). */
typedef struct skn_net_rndv skn_net_rndv;

/* Completion of a send or fetch that returned SKN_NET_INPROGRESS: status is SKN_NET_OK
 * or negative (SKN_NET_ERR_PEER when the peer failed). Runs inside skn_net_progress. */
typedef void (*skn_net_done_fn)(void *arg, int status);

/* The process-management calls the transport needs (skn_pmi_* of pmi.h). Passed in rather
 * than linked: inside libskein the module is dlopen'ed and must use libskein's PMI client,
 * the one connected to the launcher; test programs pass skn_net_pmi_static (pmi_static.c). */
typedef struct skn_net_pmi_ops {
  int (*put)(const char *key, const void *val, size_t len);
  int (*fence)(void);
  int (*get)(int proc, const char *key, void **val, size_t *len);
  int (*node_of)(int proc);
} skn_net_pmi_ops;
SKN_INTERNAL extern const skn_net_pmi_ops skn_net_pmi_static;

typedef struct skn_net_hooks {
  /* Eager message: data valid only during the call (copy or queue it). */
  void (*deliver)(void *hctx, const skn_net_data_hdr *hdr, const void *data, size_t len);
  /* Rendezvous message: the payload stays with the sender until skn_net_fetch. */
  void (*deliver_rndv)(void *hctx, const skn_net_data_hdr *hdr, skn_net_rndv *handle);
  /* The receiver of a SKN_NET_SYNC message called skn_net_ack. */
  void (*acked)(void *hctx, const skn_net_ack_hdr *hdr);
  /* A sender asks to cancel its message (src_world, cookie): withdraw it if it has not
   * matched yet (discarding its data) and return true; the answer goes back by itself. */
  bool (*withdraw)(void *hctx, const skn_net_cancel_hdr *hdr);
  /* The answer to skn_net_cancel(hdr): hdr->cancelled says whether it was withdrawn. */
  void (*cancel_done)(void *hctx, const skn_net_cancel_hdr *hdr);
  /* A control message of the core's own (skn_net_control). */
  void (*control)(void *hctx, const skn_net_ctrl_hdr *hdr);
  /* Process `proc` died or its connection broke (why: UCX's or the OS's reason). Called
   * once per process; sends to it then fail with SKN_NET_ERR_PEER. */
  void (*peer_failed)(void *hctx, int proc, const char *why);
  void *hctx;
  const skn_net_pmi_ops *pmi;
  /* TSan builds: progress acquires it before UCX runs and releases it after. UCX applies
   * other processes' puts and atomics to this process's registered memory in code whose
   * synchronization TSan does not see; the core's own atomics on that memory do the same
   * (core/remote.c), so that TSan orders the two. */
  void *tsan_arrivals;
} skn_net_hooks;

/* Creates the UCP context and worker, publishes this process's worker address
 * (skn_pmi_put "ucx.addr") and fences: every process of the job must call it. The pmi
 * info must outlive the module. */
SKN_INTERNAL int skn_net_init(const skn_pmi_info *pmi, const skn_net_hooks *hooks);

/* Sends `len` bytes at buf to world rank hdr->dst_world (in process dst_proc). hdr->seq
 * and hdr->bytes are assigned here. SKN_NET_OK: sent, buf reusable now, `done` will not run.
 * SKN_NET_INPROGRESS: `done(arg, status)` runs from a later progress when buf may be
 * reused. Nonblocking apart from the first send to a process (one PMI get). */
SKN_INTERNAL int skn_net_send(int dst_proc, const skn_net_data_hdr *hdr, const void *buf, size_t len,
                              skn_net_done_fn done, void *arg);

/* Remote completion of a SKN_NET_SYNC message: sends the ack to hdr->src_world's process.
 * Call once per such message, after it has matched. */
SKN_INTERNAL int skn_net_ack(const skn_net_ack_hdr *hdr);

/* Asks the process of world rank hdr->dst_world to withdraw the message that hdr's
 * (src_world, cookie) name; hooks.cancel_done answers, from a later progress, with hdr
 * (`answer` echoed, `cancelled` set). Messages may overtake a cancel: a message not
 * matched yet but not arrived either is not withdrawn. */
SKN_INTERNAL int skn_net_cancel(const skn_net_cancel_hdr *hdr);

/* Sends hdr alone to process `proc` (this one included), for its hooks.control: the
 * core's own protocols (deadlock detection). Not counted as a message. */
SKN_INTERNAL int skn_net_control(int proc, const skn_net_ctrl_hdr *hdr);

/* Receives a rendezvous payload straight into buf (len <= hdr->bytes; shorter fetches
 * get the first len bytes through a bounce buffer). Return codes as skn_net_send. */
SKN_INTERNAL int skn_net_fetch(skn_net_rndv *handle, void *buf, size_t len, skn_net_done_fn done,
                               void *arg);
/* Drops a rendezvous message without reading it; the sender's send completes. */
SKN_INTERNAL void skn_net_discard(skn_net_rndv *handle);

/* Makes progress: runs UCX, delivers messages, completes sends and fetches, checks that
 * peers on this node are alive. Returns true if anything happened that a waiter may wait
 * for (control messages alone do not count: they wake nobody). Another thread in
 * progress makes it return false at once. */
SKN_INTERNAL bool skn_net_progress(void);

/* Sleeping while idle: a worker with nothing to run calls skn_net_arm(); if it returns
 * true, it may block in poll/epoll_wait on skn_net_event_fd() (readable when a message
 * arrives, an operation completes or a local peer process ends) and then call progress.
 * False: events are pending (or another thread is progressing): progress, do not sleep. */
SKN_INTERNAL int skn_net_event_fd(void);
SKN_INTERNAL bool skn_net_arm(void);

/* Process holding world rank r (block distribution, see skn_pmi_block), -1 if out of
 * range. */
SKN_INTERNAL int skn_net_proc_of(int world_rank);

typedef struct skn_net_stats {
  int endpoints;          /* endpoints created: one per remote process talked to */
  uint64_t sent_eager, sent_rndv, delivered_eager, delivered_rndv;
  uint64_t held;          /* messages that arrived ahead of their sequence and waited */
  uint64_t acks_sent, acks_received;
  uint64_t batched;       /* of sent_eager: coalesced (SKN_NET_LATER) */
  size_t rndv_threshold;  /* payloads above it go by rendezvous */
  const char *thread_mode; /* UCX worker thread mode granted */
} skn_net_stats;
SKN_INTERNAL void skn_net_get_stats(skn_net_stats *out);

/* Flushes outstanding sends, waits for every process (skn_pmi_fence), closes endpoints,
 * waits for every process again (none leaves while another closes) and destroys the
 * worker. Collective; no other call may run concurrently or after. */
SKN_INTERNAL int skn_net_finalize(void);

/* ---------------------------------------------------------------- one-sided (RMA)
 * Memory of this process registered for remote access, and the remote keys of other
 * processes' registered memory. Put, get and atomics go straight into the target's
 * memory (ucp_put_nbx/get_nbx/atomic_op_nbx); where the transport has no RMA or atomics
 * of its own (tcp), UCX emulates them with active messages run by the target's progress
 * (the core's progress thread), with CPU atomics: they stay atomic with the target
 * process's own atomics on the same words. */
typedef struct skn_net_mem skn_net_mem;
typedef struct skn_net_rkey skn_net_rkey;

/* Registers [addr, addr + len) (len > 0) and packs its remote key into rkey (capacity
 * *rkey_len on entry, its length on return). SKN_NET_INVAL: the key does not fit. */
SKN_INTERNAL int skn_net_mem_map(void *addr, size_t len, skn_net_mem **mem, void *rkey, size_t *rkey_len);
SKN_INTERNAL void skn_net_mem_unmap(skn_net_mem *mem);
/* The key packed by process `proc`'s skn_net_mem_map, usable for operations to `proc`. */
SKN_INTERNAL int skn_net_rkey_unpack(int proc, const void *rkey, size_t len, skn_net_rkey **out);
SKN_INTERNAL void skn_net_rkey_destroy(skn_net_rkey *rk);

/* Put and get of len bytes between buf and remote address raddr of process proc. Return
 * codes as skn_net_send: `done` runs once buf may be reused (put: local completion; the
 * data is at the target after skn_net_flush) or holds the data (get). Where UCX only
 * emulates put, a put of SKEIN_NET_PUT_RNDV bytes (64 KiB) or more goes as a rendezvous
 * message into the target's registered memory; its `done` then means that the data is
 * at the target. */
SKN_INTERNAL int skn_net_put(int proc, const void *buf, size_t len, uint64_t raddr, skn_net_rkey *rk,
                             skn_net_done_fn done, void *arg);
SKN_INTERNAL int skn_net_get(int proc, void *buf, size_t len, uint64_t raddr, skn_net_rkey *rk,
                             skn_net_done_fn done, void *arg);

enum { SKN_NET_AOP_ADD, SKN_NET_AOP_AND, SKN_NET_AOP_OR, SKN_NET_AOP_XOR, SKN_NET_AOP_SWAP, SKN_NET_AOP_CSWAP };
/* Atomic operation aop on the width-byte (4 or 8) word at raddr, operand `*operand`
 * (copied at once). result: NULL (ADD, AND, OR, XOR only: posted, no reply; at the target
 * after skn_net_flush), else the old value lands there (the atomic is then complete at
 * the target); for CSWAP it holds the compare value on entry. The atomics of this
 * process to one process are applied in the order issued (but for posted ones of one
 * op in a row, which commute). */
SKN_INTERNAL int skn_net_atomic(int proc, int aop, size_t width, const void *operand, void *result, uint64_t raddr,
                                skn_net_rkey *rk, skn_net_done_fn done, void *arg);
/* Remote completion: `done` runs once every put and atomic issued so far to proc (-1:
 * to every process) is complete at its target. SKN_NET_OK at once when nothing issued
 * needs a flush (only gets, fetching atomics and rendezvous puts, all complete). */
SKN_INTERNAL int skn_net_flush(int proc, skn_net_done_fn done, void *arg);

/* What libskein finds in the dlopen'ed transport (libskein-ucx.so, symbol
 * SKN_NET_MODULE_SYMBOL): the calls above, so that UCX is loaded only by multi-process
 * jobs (see netlayer/README.md). */
#define SKN_NET_MODULE_ABI 4 /* 4: one-sided calls */
#define SKN_NET_MODULE_SYMBOL "skn_net_module_v1"
typedef struct skn_net_module {
  int abi;
  int (*init)(const skn_pmi_info *pmi, const skn_net_hooks *hooks);
  int (*send)(int dst_proc, const skn_net_data_hdr *hdr, const void *buf, size_t len, skn_net_done_fn done,
              void *arg);
  int (*ack)(const skn_net_ack_hdr *hdr);
  int (*cancel)(const skn_net_cancel_hdr *hdr);
  int (*control)(int proc, const skn_net_ctrl_hdr *hdr);
  int (*fetch)(skn_net_rndv *handle, void *buf, size_t len, skn_net_done_fn done, void *arg);
  void (*discard)(skn_net_rndv *handle);
  bool (*progress)(void);
  int (*event_fd)(void);
  bool (*arm)(void);
  void (*get_stats)(skn_net_stats *out);
  int (*finalize)(void);
  /* ABI 4 */
  int (*mem_map)(void *addr, size_t len, skn_net_mem **mem, void *rkey, size_t *rkey_len);
  void (*mem_unmap)(skn_net_mem *mem);
  int (*rkey_unpack)(int proc, const void *rkey, size_t len, skn_net_rkey **out);
  void (*rkey_destroy)(skn_net_rkey *rk);
  int (*put)(int proc, const void *buf, size_t len, uint64_t raddr, skn_net_rkey *rk, skn_net_done_fn done,
             void *arg);
  int (*get)(int proc, void *buf, size_t len, uint64_t raddr, skn_net_rkey *rk, skn_net_done_fn done, void *arg);
  int (*atomic)(int proc, int aop, size_t width, const void *operand, void *result, uint64_t raddr,
                skn_net_rkey *rk, skn_net_done_fn done, void *arg);
  int (*flush)(int proc, skn_net_done_fn done, void *arg);
} skn_net_module;

#endif
