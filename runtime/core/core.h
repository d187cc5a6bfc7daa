/* Messaging core: ranks, requests, communicators, datatypes, matching.
 * Knows nothing of the MPI C API's argument conventions or error classes (the API layer
 * checks arguments and translates handles); it uses mpi.h only for constants such as
 * MPI_ANY_SOURCE and the predefined handle values.
 * Thread safety: a rank's private state is touched by the rank's own units (its ULT and
 * the threads it created, serialized by `lock` when the rank is multithreaded); a rank's
 * matching queues are touched by every sender under `mq.lock`. */
#ifndef SKN_CORE_H
#define SKN_CORE_H

#include "base/base.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "mpi.h" /* generated from include/mpi.h.in in the build tree */
#include "sched/sched.h"

typedef enum skn_status {
  SKN_OK = 0,
  SKN_ERR_TRUNCATE = -1,
  SKN_ERR_NOMEM = -2,
  SKN_ERR_NOT_FOUND = -3,
  SKN_ERR_NOT_CANCELLED = -4,
  SKN_ERR_NO_ROOM = -5, /* buffered send: the attached buffer has no room (device.h) */
} skn_status;

/* ================================================================ datatypes */

typedef struct skn_block {
  ptrdiff_t off;
  size_t len;
} skn_block;

/* Classes of basic types in type signatures: integers by size whatever their signedness
 * (char, bool and wchar_t included), floating and complex types by size, and MPI_BYTE /
 * MPI_PACKED, which match anything. A class also says how to convert to external32. */
enum {
  SKN_SIG_BYTE = 1,
  SKN_SIG_I1, SKN_SIG_I2, SKN_SIG_I4, SKN_SIG_I8,
  SKN_SIG_F4, SKN_SIG_F8, SKN_SIG_LD,   /* float, double, long double */
  SKN_SIG_C8, SKN_SIG_C16, SKN_SIG_LDC, /* float, double, long double _Complex */
  SKN_SIG_I16, SKN_SIG_F16, SKN_SIG_C32, /* __int128, __float128 (IEEE binary128) and its complex */
  SKN_SIG_NCODES
};

/* How an element is stored in external32 when that differs from its native form: MPI-3.1's
 * table 13.2 (and MPICH) give long 4 bytes and wchar_t 2, where LP64 has 8 and 4. The class
 * alone cannot say it (long and long long share one), so a run carries it. */
enum { SKN_X_NATIVE, SKN_X_S4, SKN_X_U4, SKN_X_U2 };

/* `count` basic elements of one class, `size` bytes each. */
typedef struct skn_sigrun {
  size_t count;
  uint32_t code;
  uint16_t size;
  uint16_t xconv; /* SKN_X_*; runs merge only when code and xconv agree */
} skn_sigrun;

enum {
  SKN_DT_DERIVED = 1,   /* built by a constructor (else predefined, immutable, shared) */
  SKN_DT_COMMITTED = 2, /* derived: MPI_Type_commit was called */
  SKN_DT_STICKY = 4,    /* bounds set explicitly (resized, subarray, darray): no padding */
  SKN_DT_HAS_BYTE = 8,  /* contains MPI_BYTE or MPI_PACKED */
  SKN_DT_FLAT = 16,     /* derived: blocks and signature are computed */
};

struct skn_dt_args; /* constructor arguments (core/datatype_engine.c) */
struct skn_dt_flat; /* blocks and signature, shared by a type, its dups and resized copies */
struct skn_rank;

/* A datatype. Predefined ones are one shared immutable table. A derived type belongs to
 * the rank that built it; once committed its layout is immutable (ranks may share it).
 * One element is `nblocks` contiguous blocks (merged, in type map order, offsets from the
 * element's origin: absolute addresses for MPI_BOTTOM); element i starts at i * extent. */
typedef struct skn_dtype {
  size_t size;          /* data bytes per element */
  ptrdiff_t lb, extent; /* extent includes lb adjustment as in MPI */
  ptrdiff_t true_lb, true_extent;
  bool contig;          /* one block at offset 0 of length size == extent */
  int nblocks;
  const skn_block *blocks;
  size_t basic_size;    /* size of the basic element when homogeneous, else 0 */
  const char *name;
  /* Type signature of one element: sig[0..nsig) repeated sig_reps times; nsig < 0 when
   * it was too long to keep (then neither checked nor convertible to external32).
   * Derived types: valid once SKN_DT_FLAT is set (commit). */
  int nsig;
  const skn_sigrun *sig;
  size_t sig_reps;
  size_t nelems;        /* basic elements per element */
  /* Regular layouts (every block reg_len bytes, block i at blocks[0].off + i * reg_stride)
   * get tight copy loops that do not read the block list; reg_len is 0 otherwise. */
  size_t reg_len;
  ptrdiff_t reg_stride;
  uint32_t flags;       /* SKN_DT_* */
  uint32_t align;       /* largest alignment of a basic type inside (struct padding) */
  int combiner;         /* MPI_COMBINER_* */
  /* derived only, touched by the owner rank only */
  int refs;             /* handles and derived types built from it */
  struct skn_dt_args *args;
  struct skn_dt_flat *flat;
  struct skn_dtype *next; /* deferred-free list */
} skn_dtype;

/* The predefined type a type of MPI_Type_create_f90_* (combiner MPI_COMBINER_F90_*, a
 * duplicate of it that reports only (p, r) as its contents) stands for, or NULL. Predefined
 * operations apply to it (MPI-3.1 17.1.9: these types are predefined). */
SKN_INTERNAL const struct skn_dtype *skn_dt_f90_base(const struct skn_dtype *t);
SKN_INTERNAL extern const skn_dtype skn_dt_predefined[SKN_DT_PREDEFINED_COUNT];

/* Copies min(src bytes, dst capacity) bytes from the typed layout (src, scount, st) into
 * (dst, dcount, dt). Returns the bytes copied. src or dst may be NULL (MPI_BOTTOM) when
 * the layout holds absolute addresses. Allocates nothing. */
SKN_INTERNAL size_t skn_dt_copy(void *dst, size_t dcount, const skn_dtype *dt,
                                const void *src, size_t scount, const skn_dtype *st);
/* skn_dt_copy with the common case inline: contiguous layouts, small messages copied
 * without a call. */
static inline void skn_copy_bytes(void *dst, const void *src, size_t n) {
  char *d = (char *)dst;
  const char *s = (const char *)src;
  if (n >= 8 && n <= 16) { /* two overlapping 8-byte moves */
    uint64_t a, b;
    __builtin_memcpy(&a, s, 8);
    __builtin_memcpy(&b, s + n - 8, 8);
    __builtin_memcpy(d, &a, 8);
    __builtin_memcpy(d + n - 8, &b, 8);
  } else if (n) {
    __builtin_memcpy(d, s, n);
  }
}
static inline size_t skn_dt_copy_inline(void *dst, size_t dcount, const skn_dtype *dt, const void *src,
                                        size_t scount, const skn_dtype *st) {
  if (SKN_UNLIKELY(!dt->contig || !st->contig)) return skn_dt_copy(dst, dcount, dt, src, scount, st);
  size_t sb = scount * st->size, db = dcount * dt->size, n = sb < db ? sb : db;
  skn_copy_bytes(dst, src, n);
  return n;
}

/* Copies `bytes` packed bytes into / out of a typed layout. */
SKN_INTERNAL void skn_dt_unpack(void *dst, const skn_dtype *dt, const void *packed, size_t bytes);
SKN_INTERNAL void skn_dt_pack(void *packed, const void *src, const skn_dtype *st, size_t bytes);
/* The same for the bytes [skip, skip + bytes) of the typed stream. */
SKN_INTERNAL void skn_dt_unpack_at(void *dst, const skn_dtype *dt, size_t skip, const void *packed, size_t bytes);
SKN_INTERNAL void skn_dt_pack_at(void *packed, const void *src, const skn_dtype *st, size_t skip, size_t bytes);

/* external32: big-endian, the MPI standard's sizes (long and wchar_t are narrower than
 * here; values that do not fit are truncated, as MPICH does). skn_dt_external_size is the
 * external32 size of count elements (the native size when the signature is unknown).
 * Return SKN_OK, or SKN_ERR_NOT_FOUND when the type's signature was too long to keep. */
SKN_INTERNAL size_t skn_dt_external_size(const skn_dtype *t, size_t count);
SKN_INTERNAL int skn_dt_pack_external(void *out, const void *src, size_t count, const skn_dtype *t);
SKN_INTERNAL int skn_dt_unpack_external(void *dst, size_t count, const skn_dtype *t, const void *in);

/* Derived types. skn_dt_create builds an uncommitted type from constructor arguments
 * laid out as MPI_Type_get_contents returns them (the caller has checked them), with one
 * reference for the caller; it takes references on derived children. Returns NULL with
 * *err = SKN_ERR_NOMEM, or SKN_ERR_TRUNCATE when sizes overflow. */
SKN_INTERNAL skn_dtype *skn_dt_create(int combiner, int ni, const int *ints, int na, const ptrdiff_t *aints,
                                      int nd, const skn_dtype *const *types, int *err);
/* Flattens t (once); SKN_OK or SKN_ERR_NOMEM. */
SKN_INTERNAL int skn_dt_commit(skn_dtype *t);
/* Constructor arguments of a derived type (pointers into t; NULL when none). */
SKN_INTERNAL void skn_dt_contents(const skn_dtype *t, int *ni, const int **ints, int *na, const ptrdiff_t **aints,
                                  int *nd, skn_dtype *const **types);
static inline void skn_dt_retain(skn_dtype *t) {
  if (t->flags & SKN_DT_DERIVED) t->refs++;
}
/* Drops a reference (owner rank only). The last one frees the type, unless a request of
 * `me` still refers to it: then it waits on the rank's deferred list until
 * skn_dt_collect finds it unused. Code that keeps a derived type beyond an MPI call in
 * anything but a request (nonblocking collectives) holds a reference meanwhile. */
SKN_INTERNAL void skn_dt_release(struct skn_rank *me, skn_dtype *t);
SKN_INTERNAL void skn_dt_collect(struct skn_rank *me);
/* True when a live request of `me` (send, receive, envelope still queued) uses t. */
SKN_INTERNAL bool skn_dt_in_use(struct skn_rank *me, const skn_dtype *t);

/* The rank's table of derived types (me->types; slot 0 is reserved for the deferred
 * list): add returns the slot (>= 1) or -1 when out of memory; get returns NULL for a
 * free or invalid slot. Handles are SKN_HANDLE(SKN_KIND_DATATYPE, SKN_DT_PREDEFINED_COUNT
 * + slot). Callers hold the rank's lock. */
SKN_INTERNAL int skn_dt_table_add(struct skn_rank *me, skn_dtype *t);
SKN_INTERNAL void skn_dt_table_remove(struct skn_rank *me, int slot);
SKN_INTERNAL skn_dtype *skn_dt_table_get(struct skn_rank *me, int slot);

/* Basic elements in `bytes` bytes of a stream of t (committed), or -1 (MPI_UNDEFINED)
 * when the bytes end inside a basic element. */
SKN_INTERNAL long long skn_dt_elements(const skn_dtype *t, long long bytes);
/* The inverse (MPI_Status_set_elements): bytes taken by the first `elements` basic
 * elements of a stream of t, or -1 when t has none or its signature was not kept. */
SKN_INTERNAL long long skn_dt_element_bytes(const skn_dtype *t, long long elements);

/* Whether a message of `bytes` bytes typed `send` may be received as `recv`: the
 * message's type signature must be a prefix of the receive's. Lenient where MPI programs
 * commonly are (see SKN_SIG_*); long signatures are checked on their first runs only. */
SKN_INTERNAL bool skn_dt_sig_match_slow(const skn_dtype *recv, const skn_dtype *send, size_t bytes);
static inline bool skn_dt_sig_match(const skn_dtype *recv, const skn_dtype *send, size_t bytes) {
  if (SKN_LIKELY(recv == send || bytes == 0)) return true;
  if (SKN_LIKELY(recv->nsig == 1 && send->nsig == 1 && recv->sig[0].code == send->sig[0].code)) return true;
  return skn_dt_sig_match_slow(recv, send, bytes);
}

/* A message's type signature in a data header between processes (device.h). */
typedef struct skn_sigsum {
  uint64_t hash;
  uint64_t covered;
  uint32_t first;
  uint32_t pad;
} skn_sigsum;

/* ================================================================ requests */

#define SKN_CELL_SIZE 128 /* tiny messages travel inside the envelope */

enum skn_req_kind { SKN_REQ_SEND = 1, SKN_REQ_RECV, SKN_REQ_PERSISTENT, SKN_REQ_MESSAGE, SKN_REQ_GREQ /* api/grequest.c */ };
enum skn_send_mode { SKN_MODE_STANDARD = 0, SKN_MODE_SYNC, SKN_MODE_READY, SKN_MODE_BUFFERED };
enum skn_proto {
  /* how an envelope holds its data: packed in `cell`, packed in `payload`, by reference
   * to the sender's buffer (buf, count, dt), or with the transport (`payload` is its
   * handle for transport->fetch) */
  SKN_PROTO_NONE = 0, SKN_PROTO_INLINE, SKN_PROTO_EAGER, SKN_PROTO_RNDV, SKN_PROTO_FETCH,
};

#define SKN_REQ_DONE ((uintptr_t)1)

struct skn_rank;
struct skn_transport;
typedef struct skn_msg_args skn_msg_args;

/* A request, and for sends also the envelope a receiver finds in its unexpected queue. */
typedef struct skn_req {
  /* First cache line: everything a sender reads from a posted receive (envelope, buffer,
   * capacity) and writes into it (status, flags, sync), so that meeting a receive posted
   * on another core moves this one line (engine.h). */
  /* 0: pending; SKN_REQ_DONE: complete; otherwise the skn_unit* waiting for it. The
   * completer's exchange on this word is its last access to the request. */
  _Atomic(uintptr_t) sync;
  int ctx, src, tag;       /* envelope: context, source rank in the communicator, tag */
  int st_src;              /* recv: the matched message's source ... */
  int st_tag;              /* ... and tag */
  uint8_t kind, proto;
  bool truncated;
  bool type_mismatch;      /* recv: the message's type signature cannot match (nothing copied) */
  void *buf;               /* user buffer */
  size_t count;
  const skn_dtype *dt;
  size_t bytes;            /* send: message bytes; recv: bytes received */
  /* Then the rest. */
  struct skn_req *next;    /* queue link */
  uint8_t mode;
  bool queued;             /* in a matching queue's list (guarded by that queue's lock) */
  bool cancelled;
  bool pooled;             /* from the owner's pool (else on a caller's stack) */
  bool handle_live;        /* user holds an MPI_Request handle to it */
  _Atomic(int) refs;       /* pooled requests: user handle + queue reference */
  _Atomic(uint32_t) filled; /* eager envelope: payload copy finished */
  int index;               /* slot in the owner's handle table */
  struct skn_rank *owner;
  int comm;                /* communicator handle, for error handlers */
  int origin_peer;         /* the peer as the user gave it to `origin` */
  const char *origin;      /* MPI call that created it */
  struct skn_rank *peer;   /* send: receiving rank */
  void *payload;           /* eager copy */
  struct skn_req *inner;   /* persistent: the active instance; message: matched envelope */
  _Atomic(uint32_t) net_pending; /* send to another process: events left (local completion, ack) */
  skn_msg_args *persist;   /* persistent: how to start the next instance */
  int io_err;              /* MPI-IO request (api/file.c): error class of a failed access, else 0 */
  size_t sent;             /* recv, truncated only: the message's size (bytes: what was kept) */
  char cell[SKN_CELL_SIZE];
  /* Envelopes only, set by the transport that queues one (not cleared by skn_req_alloc): */
  const struct skn_transport *tp; /* the transport holding it (releases it) */
  skn_sigsum sum;          /* from another process: its type signature (dt NULL) */
} __attribute__((aligned(SKN_CACHELINE))) skn_req;

SKN_INTERNAL skn_req *skn_req_alloc(struct skn_rank *me);
SKN_INTERNAL void skn_req_release(skn_req *r);
static inline skn_req *skn_req_lookup(struct skn_rank *me, int handle); /* below skn_rank */
static inline int skn_req_handle(const skn_req *r) { return SKN_HANDLE(SKN_KIND_REQUEST, r->index); }

static inline bool skn_req_done(const skn_req *r) {
  return atomic_load_explicit(&r->sync, memory_order_acquire) == SKN_REQ_DONE;
}
/* Whether a completed receive failed: truncated or type_mismatch, the two adjacent flags
 * read as one 16-bit word (one test on the blocking receive's return; engine.c asserts
 * that they are adjacent). */
static inline bool skn_req_flawed(const skn_req *r) {
  uint16_t f;
  __builtin_memcpy(&f, (const char *)r + offsetof(skn_req, truncated), sizeof f);
  return f != 0;
}
static inline void skn_req_complete(skn_req *r) {
  uintptr_t w = atomic_exchange(&r->sync, SKN_REQ_DONE);
  if (w > SKN_REQ_DONE) skn_sched_wake((skn_unit *)w);
}
/* Registers `me` as the waiter; false when the request is already complete. */
static inline bool skn_req_register(skn_req *r, skn_unit *me) {
  uintptr_t cur = atomic_load(&r->sync);
  while (cur != SKN_REQ_DONE) {
    if (cur == (uintptr_t)me) return true;
    if (atomic_compare_exchange_weak(&r->sync, &cur, (uintptr_t)me)) return true;
  }
  return false;
}
/* Blocks the calling unit until r completes. */
SKN_INTERNAL void skn_req_wait(skn_req *r);
/* Its body, for the blocking receive (api/p2p.c), which saves the call and its frame. */
static inline void skn_req_wait_inline(skn_req *r) {
  if (skn_req_done(r)) return;
  skn_unit *me = skn_sched_self();
  if (skn_sched_poll_word(me, &r->sync, SKN_REQ_DONE)) return;
  for (;;) {
    skn_sched_prepare_wait(me);
    if (!skn_req_register(r, me)) break;
    skn_sched_wait(me);
    if (skn_req_done(r)) break;
  }
  skn_sched_done_waiting(me);
}

/* ================================================================ matching queues */

typedef struct skn_probe_waiter {
  skn_unit *unit;
  struct skn_probe_waiter *next;
} skn_probe_waiter;

/* A rank's receive side. Invariant: a message is either in `unexp` or matched; a
 * receive is either posted (in `solo` or `posted`) or matched. The lists are FIFO, which
 * with one lock per receiver keeps MPI's non-overtaking order. `solo` holds the earliest
 * posted receive when it was posted into an empty queue (the ping-pong case): an arrival
 * claims it with one CAS instead of the lock (engine.h has the protocol). */
typedef struct skn_mq {
  /* first line: posting a receive and an arrival that meets one */
  skn_spinlock lock;
  _Atomic(struct skn_req *) solo; /* NULL, a receive, or SKN_MQ_BUSY while an arrival looks at it */
  skn_req *posted, *posted_tail;   /* posted receives after `solo` */
  skn_req *unexp, *unexp_tail;
  uint64_t arrived;    /* messages that reached this rank under the lock (MPI_T: skn_mq_arrived) */
  _Atomic(uint64_t) arrived_solo; /* ... and through `solo` (written by the SKN_MQ_BUSY holder only) */
  /* second line: touched on the unexpected path only */
  uint32_t unexp_len;  /* envelopes in unexp */
  uint32_t unexp_peak; /* high-water mark of unexp_len */
  skn_probe_waiter *probers;
  size_t buffered; /* bytes held by unexpected envelopes that completed early */
} __attribute__((aligned(SKN_CACHELINE))) skn_mq;
#define SKN_MQ_BUSY ((struct skn_req *)1)
/* Messages that reached the rank (matched or queued), for MPI_T. Caller holds mq->lock. */
static inline uint64_t skn_mq_arrived(const skn_mq *mq) {
  return mq->arrived + atomic_load_explicit(&mq->arrived_solo, memory_order_relaxed);
}

/* ================================================================ communicators */

/* Units waiting for a barrier generation. Lists alternate by its parity: a member can only
 * register for the generation after next once every waker of this one has finished,
 * since the wakers must arrive at the next barrier first. */
typedef struct skn_waitlist {
  int n[2];
  skn_unit **slots; /* [2][capacity] */
  int capacity;
} skn_waitlist;

typedef struct skn_barrier {
  skn_spinlock lock;
  int arrived;
  _Atomic(uintptr_t) generation; /* a word the scheduler's poll can watch */
  skn_waitlist waiting;
  /* members grouped by worker (core/coll_local.c), built on first use */
  _Atomic(struct skn_barrier_groups *) groups;
} skn_barrier;

/* What each member publishes for a collective: the other members read it directly. */
typedef struct skn_coll_args {
  const void *sbuf;
  void *rbuf;
  size_t scount, rcount;
  const skn_dtype *st, *rt;
  const int *scounts, *sdispls, *rcounts, *rdispls; /* v variants, in elements */
  const skn_dtype *const *sts, *const *rts;          /* w variants */
  int root;
  int op;                 /* predefined op index, or 0 with user_fn */
  void (*user_fn)(void *, void *, int *, int *);
  int dt_handle;          /* passed to user ops */
  int color, key;         /* communicator split */
  bool noncommute;        /* user op declared non-commutative */
  void *result;           /* a value one member hands the others (e.g. a new communicator) */
  const struct skn_nbrs *nbrs;            /* neighbourhood collectives: the caller's edges */
  const MPI_Aint *sbytes, *rbytes;        /* ... their w variant's byte displacements */
} skn_coll_args;

/* How a communicator spans processes (set up in core/rank.c, used by core/coll_span.c).
 * Each process has its own copy of the communicator, with the same context id and member
 * list (other processes' ranks as proxies); collectives run in three phases: this
 * process's members through `local` (shared memory), one representative per process over
 * the transport, `local` again. */
typedef struct skn_xcomm {
  struct skn_comm *local; /* this process's members, in communicator order */
  int *local_of;          /* comm rank -> index in local, or -1 */
  int *proc_index;        /* comm rank -> index of its process (order of first member) */
  int *leaders;           /* process index -> its lowest comm rank */
  int nprocs;             /* processes with members */
  int me;                 /* this process's index */
  bool blocked;           /* every process holds consecutive comm ranks */
} skn_xcomm;

/* Shared by the members; immutable except for the collective state.
 * An intercommunicator is two of these, one per group, sharing one context id: each
 * side's `members` is its local group and `rmembers` the remote one, so point-to-point
 * code is the same for both kinds. Their collectives run on `bridge`, an internal
 * intracommunicator of both groups (side 0 first). */
typedef struct skn_comm {
  int ctx;             /* point-to-point context; ctx + 1 is for collectives */
  int size;
  struct skn_rank **members; /* comm rank -> rank */
  int rsize;                 /* remote group; rsize == size and rmembers == members when intra */
  struct skn_rank **rmembers;
  struct skn_comm *bridge;   /* intercommunicator only */
  struct skn_comm *other;    /* intercommunicator: the remote group's side */
  int bridge_off, remote_off; /* where the local and remote groups start in bridge */
  _Atomic(int) refs;   /* members holding a view; the last MPI_Comm_free releases it */
  skn_barrier barrier;
  skn_coll_args **slots; /* one per member, valid between the publish and done barriers */
  struct skn_topo *topo; /* Cartesian / graph / distributed graph topology, or NULL (api/topo.c) */
  _Atomic(struct skn_coll_cell *) cells; /* tiny allreduce inputs: [2][size], created on first use */
  skn_xcomm *x;          /* members in other processes: see skn_xcomm; NULL when all are here */
  const struct skn_coll_ops *coll; /* its collective algorithms (collective.h), chosen at creation */
  bool ghost;            /* an intercommunicator's side with no member here ... */
  bool frees_other;      /* ... is freed with its other side */
} skn_comm;

/* A rank's own view of a communicator. */
typedef struct skn_comm_view {
  skn_comm *comm; /* NULL: free slot */
  int rank;       /* next to comm: every call reads both, in one cache line */
  bool nbc_running; /* an executor unit runs nbc_head's queue (below) */
  /* the MPI layer's state of this view (name, error handler, attributes, info: api/api.h),
   * given by it when it makes the view; core never reads it. NULL for MPI_COMM_WORLD and
   * MPI_COMM_SELF until MPI_Init. */
  struct skn_api_comm_state *api;
  /* nonblocking collectives not yet completed, in issue order, run by one executor unit
   * (core/nbc.c); guarded by the rank's lock */
  struct skn_nbc *nbc_head, *nbc_tail;
  skn_unit *nbc_drainer; /* a blocking collective waiting for the queue to empty */
} skn_comm_view;

/* ================================================================ ranks */

/* What a rank is blocked in, for the deadlock and crash reports. */
typedef struct skn_call {
  const char *fn;     /* MPI function, or NULL outside blocking MPI calls */
  const char *origin; /* for waits: the call that started the request */
  int peer, tag;
} skn_call;

/* A rank's threads (MPI_THREAD_MULTIPLE) record their calls in it at once and the reports
 * read it from other threads: each field is one relaxed atomic access (a plain move; a
 * report may mix two threads' calls, which it only describes). */
static inline void skn_call_record(skn_call *c, skn_call v) {
  __atomic_store_n(&c->fn, v.fn, __ATOMIC_RELAXED);
  __atomic_store_n(&c->origin, v.origin, __ATOMIC_RELAXED);
  __atomic_store_n(&c->peer, v.peer, __ATOMIC_RELAXED);
  __atomic_store_n(&c->tag, v.tag, __ATOMIC_RELAXED);
}
static inline skn_call skn_call_read(const skn_call *c) {
  return (skn_call){__atomic_load_n(&c->fn, __ATOMIC_RELAXED), __atomic_load_n(&c->origin, __ATOMIC_RELAXED),
                    __atomic_load_n(&c->peer, __ATOMIC_RELAXED), __atomic_load_n(&c->tag, __ATOMIC_RELAXED)};
}

#define SKN_OP_PREDEFINED_COUNT 15 /* handle indexes 1..14 are MPI_MAX..MPI_NO_OP */

typedef struct skn_bsend_seg {
  size_t off, len;
  skn_req *req; /* the internal send using this segment */
  struct skn_bsend_seg *next;
} skn_bsend_seg;

#define SKN_COMM_CHUNK 64
#define SKN_COMM_CHUNKS 4096 /* at most, as the top level grows */
#define SKN_REQ_CHUNK 1024
#define SKN_REQ_CHUNKS 4096

/* The top level of a two-level handle table: an array of chunk pointers that grows by
 * doubling, so a rank pays for the handles it uses. Chunks never move; a grown-out top
 * array is kept (another thread of the rank may still be reading it, without a lock), and
 * the kept ones add up to less than the current one. */
typedef struct skn_chunk_dir {
  void **chunks;
  int n;
} skn_chunk_dir;
static inline void *skn_chunk_at(const skn_chunk_dir *d, unsigned chunk) {
  void **chunks = __atomic_load_n(&d->chunks, __ATOMIC_ACQUIRE);
  return chunks[chunk];
}

typedef struct skn_rank {
  /* first: the head the allocator reads (allocator/heap.h: skn_heap_owner, checked in rank.c) */
  struct skn_heap *heap; /* per-rank heap, NULL: the default arena */
  skn_mq mq;
  int world_rank;
  int proc;          /* process running it: skn_job_g.proc, or another one (a proxy:
                      * nothing below `tp` is used, see core/remote.c) */
  const struct skn_transport *tp; /* what reaches it (device.h), bound at start-up */
  skn_unit *unit;
  bool mt;           /* threads of this rank may call MPI concurrently */
  uint8_t api_gate;  /* SKN_GATE_* bits: an MPI call takes its fast path only when the gate is
                      * exactly SKN_GATE_OPEN (one compare for "initialized, not finalized, no
                      * libc hold"); set and cleared with atomic or/and, read relaxed.
                      * SKN_GATE_HOLD: the rank holds process-wide libc state (getopt's,
                      * boot/libc_state.c) until its next MPI call, which ends the hold
                      * (skn_rank_libc_hold_end); changed under that file's lock */
  skn_spinlock lock; /* private state when mt */
  int state;         /* SKN_RANK_* */
  int thread_level;
  int exit_code;
  skn_call call;
  /* request pool and handle table */
  skn_req *req_free;
  _Atomic(skn_req *) req_remote_free;
  int req_count;
  skn_chunk_dir req_chunks; /* of skn_req *[SKN_REQ_CHUNK] */
  /* communicators, by handle (two-level table: views never move) */
  skn_chunk_dir comm_chunks; /* of skn_comm_view[SKN_COMM_CHUNK] */
  skn_comm_view *comm_first; /* chunk 0 (the predefined and first communicators), one load */
  int ncomms; /* slots in use or freed, high-water mark */
  /* the MPI layer's own state (its tables of groups, infos, keyvals, windows, files, user
   * ops, error handlers and classes: api/api.h), created on first use; core never sees it */
  struct skn_api_rank *api;
  int mpit_refs; /* MPI_T_init_thread minus MPI_T_finalize (api/mpit.c): the tools interface
                  * is each rank's own; the counting transport copies read it to count
                  * (core/engine.c: skn_dev_count_sends) */
  /* what this rank's sends moved, for MPI_T's performance variables */
  _Atomic(uint64_t) sent_msgs, sent_bytes;
  /* derived datatypes, indexed by handle - SKN_DT_PREDEFINED_COUNT (api/datatype.c) */
  struct skn_dtype **types;
  int ntypes, types_cap;
  /* MPI_Buffer_attach (core/bsend.c) */
  char *bsend_buf;
  size_t bsend_size;
  skn_bsend_seg *bsend_segs;
  skn_spinlock bsend_lock; /* the segment list: threads of the rank send at once (THREAD_MULTIPLE) */
  /* privatized globals: this rank's segments (privatizer/runtime/priv.c) */
  struct skn_priv_rank *priv;
  /* libc's hidden state (rand, strtok, getopt...) for this rank, created on first use
   * (boot/libc_state.c) */
  _Atomic(struct skn_libc_state *) libc;
  /* The request of the rank's blocking receive (api/p2p.c, MPI_Recv) unless it is
   * MPI_THREAD_MULTIPLE: a rank is then in at most one MPI_Recv at a time, and a request
   * on the caller's stack would cost every receive a realigned frame (skn_req is
   * line-aligned). */
  skn_req recv_req;
} skn_rank;

/* The live request a user handle names, or NULL: one range check, two loads. */
static inline skn_req *skn_req_lookup(skn_rank *me, int handle) {
  unsigned idx = (unsigned)handle & 0xffffffu;
  if (SKN_UNLIKELY(((unsigned)handle >> 24) != SKN_KIND_REQUEST || idx - 1 >= (unsigned)me->req_count)) return NULL;
  skn_req *r = ((skn_req **)skn_chunk_at(&me->req_chunks, idx / SKN_REQ_CHUNK))[idx % SKN_REQ_CHUNK];
  return SKN_LIKELY(r && r->handle_live) ? r : NULL;
}

enum { SKN_RANK_CREATED = 0, SKN_RANK_INITIALIZED, SKN_RANK_FINALIZED, SKN_RANK_EXITED };
/* api_gate: OPEN between MPI_Init and MPI_Finalize, HOLD while the rank holds libc state */
enum { SKN_GATE_OPEN = 1, SKN_GATE_HOLD = 2 };
static inline bool skn_rank_libc_held(const skn_rank *r) {
  return __atomic_load_n(&r->api_gate, __ATOMIC_RELAXED) & SKN_GATE_HOLD;
}

/* Ends rank me's libc hold (SKN_GATE_HOLD, set by boot, which is above the MPI calls that
 * end it). */
SKN_INTERNAL extern void (*skn_rank_libc_hold_end)(skn_rank *me);

/* The job as seen by this process. */
typedef struct skn_job {
  int size;            /* ranks in MPI_COMM_WORLD */
  int nprocs, proc;    /* processes of the job, this one's index */
  int first_rank, nranks; /* this process runs world ranks first_rank .. + nranks - 1 */
  skn_rank **ranks;
  skn_comm world;
  skn_comm *self_comms; /* one per rank */
  size_t eager_limit;   /* largest message buffered when no receive is posted */
  size_t buffer_budget; /* bytes of early-completed envelopes one receiver may hold */
  int thread_level_max;
  _Atomic(int) first_exit_code;
  double wtime_base;
} skn_job;

SKN_INTERNAL extern skn_job skn_job_g;

static inline bool skn_rank_is_remote(const skn_rank *r) { return r->proc != skn_job_g.proc; }

/* The rank the calling unit acts for, or NULL. */
static inline skn_rank *skn_rank_self(void) {
  skn_unit *u = skn_sched_self();
  return u ? (skn_rank *)u->owner : NULL;
}

/* The transport that reaches r: relaxed atomic, as skn_dev_count_sends swaps it (device.h). */
static inline const struct skn_transport *skn_rank_tp(const skn_rank *r) {
  return __atomic_load_n(&r->tp, __ATOMIC_RELAXED);
}
static inline void skn_rank_lock(skn_rank *me) {
  if (me->mt) skn_spin_lock(&me->lock);
}
static inline void skn_rank_unlock(skn_rank *me) {
  if (me->mt) skn_spin_unlock(&me->lock);
}

/* The job's world of `size` ranks, of which this process (`proc` of `nprocs`) runs
 * first_rank .. first_rank + nranks - 1; the others get proxies. */
SKN_INTERNAL int skn_job_init(int size, int nprocs, int proc, int first_rank, int nranks);
SKN_INTERNAL void skn_job_fini(void); /* for a process that starts another job */
SKN_INTERNAL skn_rank *skn_rank_create(int world_rank);
/* A fresh context id pair, unique in the whole job without any agreement: each process
 * hands out the ids congruent to its index modulo the process count. */
SKN_INTERNAL int skn_cid_alloc(void);

static inline skn_comm_view *skn_rank_comm_slot(skn_rank *me, unsigned idx) {
  if (SKN_LIKELY(idx < SKN_COMM_CHUNK)) return &me->comm_first[idx];
  return &((skn_comm_view *)skn_chunk_at(&me->comm_chunks, idx / SKN_COMM_CHUNK))[idx % SKN_COMM_CHUNK];
}
/* Adds a view of c (as member `rank`) to me's table, holding the upper layer's state
 * `api`; returns its index, or -1. */
SKN_INTERNAL int skn_rank_comm_add(skn_rank *me, skn_comm *c, int rank, struct skn_api_comm_state *api);
/* New shared communicator with a fresh context id; members copied. */
SKN_INTERNAL skn_comm *skn_comm_create(int size, skn_rank *const *members);
/* The same with a context id agreed on elsewhere (a communicator spanning processes:
 * each process builds its own copy). */
SKN_INTERNAL skn_comm *skn_comm_create_ctx(int ctx, int size, skn_rank *const *members);
/* Sets up c->x when some members live in other processes (MPI_COMM_WORLD, once its
 * ranks exist; skn_comm_create* do it themselves). Returns -1 when out of memory. */
SKN_INTERNAL int skn_comm_attach_span(skn_comm *c);
/* New intercommunicator between groups a (side 0) and b (side 1), members copied;
 * returns side 0 (side 1 is its `other`), or NULL when out of memory. */
SKN_INTERNAL skn_comm *skn_intercomm_create(int na, skn_rank *const *a, int nb, skn_rank *const *b);
/* The same with context ids agreed on elsewhere (each process builds its own copy). */
SKN_INTERNAL skn_comm *skn_intercomm_create_ctx(int na, skn_rank *const *a, int nb, skn_rank *const *b, int ctx,
                                                int bridge_ctx);
/* Drops one member's reference (for an intercommunicator: to its side and the bridge). */
SKN_INTERNAL void skn_comm_release(skn_comm *c);
static inline bool skn_comm_is_inter(const skn_comm *c) { return c->bridge != NULL; }

/* Predefined reduction kernels (op.c); op and type are handle indexes. */
SKN_INTERNAL bool skn_op_defined(int op, int type);
SKN_INTERNAL void skn_op_apply(int op, int type, const void *in, void *inout, size_t n);

#include "collective.h"
#include "device.h"

#endif
