/* Point-to-point calls: argument checks, then the core's send and receive. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "core/engine.h"

/* Persistent requests remember their arguments; each MPI_Start makes a new instance. */
struct skn_msg_args {
  bool is_recv;
  uint8_t mode;
  void *buf;
  int count, peer, tag;
  MPI_Datatype dt;
  MPI_Comm comm;
  const skn_dtype *t; /* referenced while the persistent request lives */
};

static const char *const isend_names[] = {"MPI_Isend", "MPI_Issend", "MPI_Irsend", "MPI_Ibsend"};

/* The entry points (generated from runtime/binding/functions.txt into entries_p2p.h,
 * included at the end) check every argument before calling the impl_ functions below:
 * counts, tags and ranks are in range (a rank may be MPI_PROC_NULL, and for receives
 * MPI_ANY_SOURCE/MPI_ANY_TAG), handles are looked up once, and a NULL buffer is an error
 * only when it would be read or written. */

/* The message a checked send describes. */
static inline void fill_msg(skn_msg *m, const void *buf, int count, const skn_dtype *t, int dest, int tag,
                            MPI_Comm comm, const skn_comm_view *v, uint8_t mode) {
  skn_comm *c = v->comm;
  m->buf = buf;
  m->count = (size_t)count;
  m->dt = t;
  m->ctx = c->ctx;
  m->src = v->rank;
  m->tag = tag;
  m->comm = comm;
  m->peer = c->rmembers[dest];
  m->mode = mode;
}

/* A checked receive's arguments into r (recv_args), and its kind (fill_recv). */
static inline void recv_args(skn_req *r, void *buf, int count, const skn_dtype *t, int source, int tag,
                             MPI_Comm comm, const skn_comm_view *v) {
  r->buf = buf;
  r->count = (size_t)count;
  r->dt = t;
  r->ctx = v->comm->ctx;
  r->src = source;
  r->tag = tag;
  r->comm = comm;
}
static inline void fill_recv(skn_req *r, void *buf, int count, const skn_dtype *t, int source, int tag,
                             MPI_Comm comm, const skn_comm_view *v) {
  r->kind = SKN_REQ_RECV;
  recv_args(r, buf, count, t, source, tag, comm, v);
}

/* A receive request for the length of a blocking call (on the caller's stack, or the rank's recv_req). */
static inline void stack_recv_init(skn_req *r) {
  atomic_init(&r->sync, 0);
  r->pooled = false;
  r->queued = false;
  r->cancelled = false;
  r->truncated = false;
  r->type_mismatch = false;
  r->next = NULL;
}

static __attribute__((noinline, cold)) int recv_error(skn_rank *me, const char *fn, const skn_req *r,
                                                     MPI_Status *status) {
  if (r->type_mismatch) {
    if (status != MPI_STATUS_IGNORE) status->MPI_ERROR = MPI_ERR_TYPE;
    return skn_api_error(me, r->comm, MPI_ERR_TYPE, fn, "the message from source %d (tag %d) has a type signature "
                         "that does not match the receive's datatype", r->st_src, r->st_tag);
  }
  if (status != MPI_STATUS_IGNORE) status->MPI_ERROR = MPI_ERR_TRUNCATE;
  return skn_api_error(me, r->comm, MPI_ERR_TRUNCATE, fn, "a message of %zu bytes (source %d, tag %d) arrived "
                       "for a buffer of %zu bytes", r->sent, r->st_src, r->st_tag, r->count * r->dt->size);
}

static inline int recv_result(skn_rank *me, const char *fn, const skn_req *r, MPI_Status *status) {
  skn_api_set_status(status, r);
  if (SKN_UNLIKELY(skn_req_flawed(r))) return recv_error(me, fn, r, status);
  return MPI_SUCCESS;
}

/* A buffered send (the protocol is the core's, core/bsend.c): its errors as MPI's. */
static int buffered_send(skn_rank *me, const skn_msg *m, const char *fn, skn_req *link) {
  skn_status st = skn_bsend_start(me, m, link);
  if (SKN_LIKELY(st == SKN_OK)) return MPI_SUCCESS;
  if (st == SKN_ERR_NO_ROOM)
    return skn_api_error(me, m->comm, MPI_ERR_BUFFER, fn, "no room for %zu bytes in the attached buffer (%zu bytes "
                         "attached)", m->count * m->dt->size, me->bsend_size);
  return skn_api_error(me, m->comm, MPI_ERR_NO_MEM, fn, "out of memory");
}

/* ------------------------------------------------------------------ blocking */

static inline int blocking_send(skn_rank *me, const char *fn, const void *buf, int count, const skn_dtype *t,
                                int dest, int tag, MPI_Comm comm, const skn_comm_view *v, uint8_t mode) {
  if (SKN_UNLIKELY(dest == MPI_PROC_NULL)) return MPI_SUCCESS;
  skn_msg m;
  fill_msg(&m, buf, count, t, dest, tag, comm, v, mode);
  if (mode == SKN_MODE_BUFFERED) return buffered_send(me, &m, fn, NULL);
  skn_api_enter(me, fn, NULL, dest, tag);
  skn_p2p_send(me, &m, NULL);
  skn_api_leave(me);
  return MPI_SUCCESS;
}

SKN_API_HOT int impl_Send(skn_rank *me, const char *fn, const void *buf, int count, MPI_Datatype dt, const skn_dtype *t,
                     int dest, int tag, MPI_Comm comm, skn_comm_view *v) {
  return blocking_send(me, fn, buf, count, t, dest, tag, comm, v, SKN_MODE_STANDARD);
}
SKN_API_HOT int impl_Ssend(skn_rank *me, const char *fn, const void *buf, int count, MPI_Datatype dt, const skn_dtype *t,
                      int dest, int tag, MPI_Comm comm, skn_comm_view *v) {
  return blocking_send(me, fn, buf, count, t, dest, tag, comm, v, SKN_MODE_SYNC);
}
SKN_API_HOT int impl_Rsend(skn_rank *me, const char *fn, const void *buf, int count, MPI_Datatype dt, const skn_dtype *t,
                      int dest, int tag, MPI_Comm comm, skn_comm_view *v) {
  return blocking_send(me, fn, buf, count, t, dest, tag, comm, v, SKN_MODE_READY);
}
SKN_API_HOT int impl_Bsend(skn_rank *me, const char *fn, const void *buf, int count, MPI_Datatype dt, const skn_dtype *t,
                      int dest, int tag, MPI_Comm comm, skn_comm_view *v) {
  return blocking_send(me, fn, buf, count, t, dest, tag, comm, v, SKN_MODE_BUFFERED);
}

/* The rank's own receive request (skn_rank.recv_req) between two blocking receives:
 * kind SKN_REQ_RECV (skn_rank_create), not pooled, not queued, next NULL (taking a
 * receive out of a queue clears its link), not cancelled (it has no handle), and
 * truncated/type_mismatch are rewritten by every delivery (skn_p2p_set_result). Only
 * `sync` and the arguments change from one receive to the next. */
static inline void rank_recv_init(skn_req *r) { atomic_init(&r->sync, 0); }

/* A blocking receive into request r: posted, waited for, its status reported. `own`: r
 * is the rank's recv_req (rank_recv_init), else a request on the caller's stack. */
static inline __attribute__((always_inline)) int recv_wait(skn_rank *me, const char *fn, skn_req *r, bool own,
                                                           void *buf, int count, const skn_dtype *t, int source,
                                                           int tag, MPI_Comm comm, const skn_comm_view *v,
                                                           MPI_Status *status) {
  if (own) {
    rank_recv_init(r);
  } else {
    stack_recv_init(r);
    r->kind = SKN_REQ_RECV;
  }
  recv_args(r, buf, count, t, source, tag, comm, v);
  skn_req *env = skn_p2p_recv_post(me, r); /* skn_p2p_recv, compiled in */
  if (env) skn_p2p_recv_matched(r, env);
  if (!skn_req_done(r)) {
    skn_api_enter(me, fn, NULL, source, tag);
    skn_req_wait_inline(r);
    skn_api_leave(me);
  }
  return recv_result(me, fn, r, status);
}

/* Threads of an MPI_THREAD_MULTIPLE rank may receive at once: each on its own stack. */
static __attribute__((noinline)) int recv_on_stack(skn_rank *me, const char *fn, void *buf, int count,
                                                   const skn_dtype *t, int source, int tag, MPI_Comm comm,
                                                   const skn_comm_view *v, MPI_Status *status) {
  skn_req r;
  return recv_wait(me, fn, &r, false, buf, count, t, source, tag, comm, v, status);
}

SKN_API_HOT int impl_Recv(skn_rank *me, const char *fn, void *buf, int count, MPI_Datatype dt, const skn_dtype *t,
                     int source, int tag, MPI_Comm comm, skn_comm_view *v, MPI_Status *status) {
  if (SKN_UNLIKELY(source == MPI_PROC_NULL)) {
    skn_api_proc_null_status(status);
    return MPI_SUCCESS;
  }
  if (SKN_UNLIKELY(me->mt)) return recv_on_stack(me, fn, buf, count, t, source, tag, comm, v, status);
  return recv_wait(me, fn, &me->recv_req, true, buf, count, t, source, tag, comm, v, status);
}

/* ------------------------------------------------------------------ nonblocking */

/* A request that is complete from the start (MPI_PROC_NULL). */
static int completed_request(skn_rank *me, const char *fn, MPI_Comm comm, int src, MPI_Request *req) {
  skn_req *r = skn_req_alloc(me);
  if (!r) return skn_api_error(me, comm, MPI_ERR_NO_MEM, fn, "out of memory for a request");
  r->kind = SKN_REQ_RECV;
  r->comm = comm;
  r->st_src = src;
  r->st_tag = MPI_ANY_TAG;
  r->handle_live = true;
  r->origin = fn;
  atomic_store(&r->sync, SKN_REQ_DONE);
  *req = skn_req_handle(r);
  return MPI_SUCCESS;
}

SKN_API_HOT int isend_start(skn_rank *me, const char *fn, const void *buf, int count, const skn_dtype *t, int dest,
                       int tag, MPI_Comm comm, const skn_comm_view *v, uint8_t mode, MPI_Request *req) {
  if (SKN_UNLIKELY(dest == MPI_PROC_NULL)) return completed_request(me, fn, comm, MPI_PROC_NULL, req);
  skn_msg m;
  fill_msg(&m, buf, count, t, dest, tag, comm, v, mode);
  if (mode == SKN_MODE_BUFFERED) {
    /* the user's request is complete at once; it holds the internal send for MPI_Cancel */
    int rc = completed_request(me, fn, comm, MPI_ANY_SOURCE, req);
    if (rc != MPI_SUCCESS) return rc;
    skn_req *link = skn_req_lookup(me, *req);
    rc = buffered_send(me, &m, fn, link);
    if (rc != MPI_SUCCESS) {
      link->handle_live = false;
      skn_req_release(link);
      *req = MPI_REQUEST_NULL;
    }
    return rc;
  }
  skn_req *r = skn_req_alloc(me);
  if (SKN_UNLIKELY(!r)) return skn_api_error(me, comm, MPI_ERR_NO_MEM, fn, "out of memory for a request");
  r->handle_live = true;
  r->origin = fn;
  r->origin_peer = dest;
  r->st_src = MPI_ANY_SOURCE;
  r->st_tag = MPI_ANY_TAG;
  skn_p2p_send(me, &m, r);
  *req = skn_req_handle(r);
  return MPI_SUCCESS;
}

SKN_API_HOT int impl_Isend(skn_rank *me, const char *fn, const void *buf, int count, MPI_Datatype dt, const skn_dtype *t,
                      int dest, int tag, MPI_Comm comm, skn_comm_view *v, MPI_Request *req) {
  return isend_start(me, fn, buf, count, t, dest, tag, comm, v, SKN_MODE_STANDARD, req);
}
SKN_API_HOT int impl_Issend(skn_rank *me, const char *fn, const void *buf, int count, MPI_Datatype dt,
                       const skn_dtype *t, int dest, int tag, MPI_Comm comm, skn_comm_view *v, MPI_Request *req) {
  return isend_start(me, fn, buf, count, t, dest, tag, comm, v, SKN_MODE_SYNC, req);
}
SKN_API_HOT int impl_Irsend(skn_rank *me, const char *fn, const void *buf, int count, MPI_Datatype dt,
                       const skn_dtype *t, int dest, int tag, MPI_Comm comm, skn_comm_view *v, MPI_Request *req) {
  return isend_start(me, fn, buf, count, t, dest, tag, comm, v, SKN_MODE_READY, req);
}
SKN_API_HOT int impl_Ibsend(skn_rank *me, const char *fn, const void *buf, int count, MPI_Datatype dt,
                       const skn_dtype *t, int dest, int tag, MPI_Comm comm, skn_comm_view *v, MPI_Request *req) {
  return isend_start(me, fn, buf, count, t, dest, tag, comm, v, SKN_MODE_BUFFERED, req);
}

SKN_API_HOT int irecv_start(skn_rank *me, const char *fn, void *buf, int count, const skn_dtype *t, int source, int tag,
                       MPI_Comm comm, const skn_comm_view *v, MPI_Request *req) {
  if (SKN_UNLIKELY(source == MPI_PROC_NULL)) return completed_request(me, fn, comm, MPI_PROC_NULL, req);
  skn_req *r = skn_req_alloc(me);
  if (SKN_UNLIKELY(!r)) return skn_api_error(me, comm, MPI_ERR_NO_MEM, fn, "out of memory for a request");
  fill_recv(r, buf, count, t, source, tag, comm, v);
  r->handle_live = true;
  r->origin = fn;
  r->origin_peer = source;
  skn_p2p_recv(me, r);
  *req = skn_req_handle(r);
  return MPI_SUCCESS;
}

SKN_API_HOT int impl_Irecv(skn_rank *me, const char *fn, void *buf, int count, MPI_Datatype dt, const skn_dtype *t,
                      int source, int tag, MPI_Comm comm, skn_comm_view *v, MPI_Request *req) {
  return irecv_start(me, fn, buf, count, t, source, tag, comm, v, req);
}

/* ------------------------------------------------------------------ send-receive */

static int impl_Sendrecv(skn_rank *me, const char *fn, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                         const skn_dtype *st, int dest, int sendtag, void *recvbuf, int recvcount,
                         MPI_Datatype recvtype, const skn_dtype *rt, int source, int recvtag, MPI_Comm comm,
                         skn_comm_view *v, MPI_Status *status) {
  bool do_send = dest != MPI_PROC_NULL, do_recv = source != MPI_PROC_NULL;
  /* The send's request first: once the stack receive is posted, nothing may return early
   * (the queue would keep a request of a dead frame). */
  skn_req *s = NULL;
  if (do_send && !(s = skn_req_alloc(me)))
    return skn_api_error(me, comm, MPI_ERR_NO_MEM, fn, "out of memory for a request");
  skn_req r;
  stack_recv_init(&r);
  /* Post the receive first so that a partner's send can copy straight into it. */
  if (do_recv) {
    fill_recv(&r, recvbuf, recvcount, rt, source, recvtag, comm, v);
    skn_p2p_recv(me, &r);
  }
  if (s) {
    skn_msg m;
    fill_msg(&m, sendbuf, sendcount, st, dest, sendtag, comm, v, SKN_MODE_STANDARD);
    skn_p2p_send(me, &m, s);
  }
  skn_api_enter(me, fn, NULL, do_recv ? source : dest, do_recv ? recvtag : sendtag);
  if (s) {
    skn_req_wait(s);
    skn_req_release(s);
  }
  if (do_recv) skn_req_wait(&r);
  skn_api_leave(me);
  if (!do_recv) {
    skn_api_proc_null_status(status);
    return MPI_SUCCESS;
  }
  return recv_result(me, fn, &r, status);
}

/* Sends a packed copy of buf and receives into buf (the entry point checked the arguments;
 * MPI_Sendrecv reports what goes wrong in the transfer). */
static int impl_Sendrecv_replace(skn_rank *me, const char *fn, void *buf, int count, MPI_Datatype dt,
                                 const skn_dtype *t, int dest, int sendtag, int source, int recvtag, MPI_Comm comm,
                                 skn_comm_view *v, MPI_Status *status) {
  (void)v;
  size_t bytes = (size_t)count * t->size;
  void *tmp = malloc(bytes ? bytes : 1);
  if (!tmp) return skn_api_error(me, comm, MPI_ERR_NO_MEM, fn, "out of memory for %zu bytes", bytes);
  skn_dt_pack(tmp, buf, t, bytes);
  int rc = PMPI_Sendrecv(tmp, (int)bytes, MPI_BYTE, dest, sendtag, buf, count, dt, source, recvtag, comm, status);
  free(tmp);
  return rc;
}

/* ------------------------------------------------------------------ nonblocking send-receive (MPI-4.0) */

/* MPI_Isendrecv starts the receive and the send at the call, in MPI_Sendrecv's order, so
 * they take their places in the matching order at once. The user's request completes when
 * both have: a small unit of the rank waits for the two and completes it with the
 * receive's status, so every Wait/Test variant, Request_free and the deadlock report see
 * an ordinary request. */
typedef struct {
  skn_req *outer, *send, *recv; /* send, recv: NULL for MPI_PROC_NULL */
  void *packed;                 /* Isendrecv_replace: the packed copy of the outgoing data */
} sendrecv_pair;

static void finish_pair(sendrecv_pair *p) {
  skn_req *o = p->outer, *r = p->recv;
  if (r) {
    o->st_src = r->st_src;
    o->st_tag = r->st_tag;
    o->bytes = r->bytes;
    o->truncated = r->truncated;
    o->type_mismatch = r->type_mismatch;
    o->count = r->count * r->dt->size; /* capacity, in bytes of o->dt (MPI_BYTE), for the error message */
    skn_req_release(r);
  }
  if (p->send) skn_req_release(p->send);
  free(p->packed);
  free(p);
  skn_req_complete(o);
}

static void wait_pair(void *arg) {
  sendrecv_pair *p = arg;
  if (p->send) skn_req_wait(p->send);
  if (p->recv) skn_req_wait(p->recv);
  finish_pair(p);
}

/* Arguments are checked by the generated entry points: nothing here can fail but memory. */
static int isendrecv_start(skn_rank *me, const char *fn, const void *sendbuf, int sendcount, const skn_dtype *st,
                           int dest, int sendtag, void *recvbuf, int recvcount, const skn_dtype *rt, int source,
                           int recvtag, MPI_Comm comm, skn_comm_view *v, MPI_Request *req, void *packed) {
  bool do_send = dest != MPI_PROC_NULL, do_recv = source != MPI_PROC_NULL;
  sendrecv_pair *p = calloc(1, sizeof *p);
  skn_req *o = p ? skn_req_alloc(me) : NULL, *r = o && do_recv ? skn_req_alloc(me) : NULL;
  skn_req *s = o && do_send ? skn_req_alloc(me) : NULL;
  if (!o || (do_recv && !r) || (do_send && !s)) {
    for (skn_req *x[] = {o, r, s}, **i = x; i < x + 3; i++)
      if (*i) skn_req_release(*i);
    free(p);
    free(packed);
    return skn_api_error(me, comm, MPI_ERR_NO_MEM, fn, "out of memory for a request");
  }
  *p = (sendrecv_pair){.outer = o, .packed = packed};
  o->kind = SKN_REQ_RECV;
  o->comm = comm;
  o->origin = fn;
  o->origin_peer = do_recv ? source : dest;
  o->tag = do_recv ? recvtag : sendtag;
  o->dt = skn_api_dtype(me, MPI_BYTE);
  o->st_src = MPI_PROC_NULL; /* the status when the receive is from MPI_PROC_NULL */
  o->st_tag = MPI_ANY_TAG;
  o->handle_live = true;
  *req = skn_req_handle(o);
  if (do_recv) {
    fill_recv(r, recvbuf, recvcount, rt, source, recvtag, comm, v);
    r->origin = fn;
    r->origin_peer = source;
    skn_p2p_recv(me, r);
    p->recv = r;
  }
  if (do_send) {
    skn_msg m;
    fill_msg(&m, sendbuf, sendcount, st, dest, sendtag, comm, v, SKN_MODE_STANDARD);
    s->origin = fn;
    s->origin_peer = dest;
    skn_p2p_send(me, &m, s);
    p->send = s;
  }
  if ((!p->send || skn_req_done(p->send)) && (!p->recv || skn_req_done(p->recv))) {
    finish_pair(p); /* already complete: no unit needed */
    return MPI_SUCCESS;
  }
  if (!skn_sched_spawn_helper(me->unit, wait_pair, p, 64 << 10))
    skn_fatal("rank %d: %s: cannot start the unit that completes the request", me->world_rank, fn);
  return MPI_SUCCESS;
}

static int impl_Isendrecv(skn_rank *me, const char *fn, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          const skn_dtype *st, int dest, int sendtag, void *recvbuf, int recvcount,
                          MPI_Datatype recvtype, const skn_dtype *rt, int source, int recvtag, MPI_Comm comm,
                          skn_comm_view *v, MPI_Request *req) {
  (void)sendtype, (void)recvtype;
  return isendrecv_start(me, fn, sendbuf, sendcount, st, dest, sendtag, recvbuf, recvcount, rt, source, recvtag, comm,
                         v, req, NULL);
}

static int impl_Isendrecv_replace(skn_rank *me, const char *fn, void *buf, int count, MPI_Datatype dt,
                                  const skn_dtype *t, int dest, int sendtag, int source, int recvtag, MPI_Comm comm,
                                  skn_comm_view *v, MPI_Request *req) {
  (void)dt;
  /* The outgoing data is packed now: from here on buf is the receive buffer. */
  size_t bytes = (size_t)count * t->size;
  if (bytes > INT_MAX) return skn_api_error(me, comm, MPI_ERR_COUNT, fn, "%zu bytes is more than one send carries", bytes);
  void *packed = malloc(bytes ? bytes : 1);
  if (!packed) return skn_api_error(me, comm, MPI_ERR_NO_MEM, fn, "out of memory for %zu bytes", bytes);
  skn_dt_pack(packed, buf, t, bytes);
  return isendrecv_start(me, fn, packed, (int)bytes, skn_api_dtype(me, MPI_BYTE), dest, sendtag, buf, count, t, source,
                         recvtag, comm, v, req, packed);
}

/* ------------------------------------------------------------------ persistent */

/* Arguments were checked by the entry point, as MPI_Start has no way to report them well. */
static int persistent_init(skn_rank *me, const char *fn, bool is_recv, uint8_t mode, const void *buf, int count,
                           MPI_Datatype dt, const skn_dtype *t, int peer, int tag, MPI_Comm comm, MPI_Request *req) {
  skn_req *r = skn_req_alloc(me);
  skn_msg_args *a = malloc(sizeof *a);
  if (!r || !a) {
    free(a);
    if (r) skn_req_release(r);
    return skn_api_error(me, comm, MPI_ERR_NO_MEM, fn, "out of memory for a request");
  }
  *a = (skn_msg_args){is_recv, mode, (void *)(uintptr_t)buf, count, peer, tag, dt, comm, t};
  skn_dt_retain((skn_dtype *)a->t);
  r->kind = SKN_REQ_PERSISTENT;
  r->persist = a;
  r->comm = comm;
  r->origin = fn;
  r->origin_peer = peer;
  r->handle_live = true;
  atomic_store(&r->sync, SKN_REQ_DONE); /* inactive */
  *req = skn_req_handle(r);
  return MPI_SUCCESS;
}

static int impl_Send_init(skn_rank *me, const char *fn, const void *buf, int count, MPI_Datatype dt,
                          const skn_dtype *t, int dest, int tag, MPI_Comm comm, skn_comm_view *v, MPI_Request *req) {
  return persistent_init(me, fn, false, SKN_MODE_STANDARD, buf, count, dt, t, dest, tag, comm, req);
}
static int impl_Ssend_init(skn_rank *me, const char *fn, const void *buf, int count, MPI_Datatype dt,
                           const skn_dtype *t, int dest, int tag, MPI_Comm comm, skn_comm_view *v, MPI_Request *req) {
  return persistent_init(me, fn, false, SKN_MODE_SYNC, buf, count, dt, t, dest, tag, comm, req);
}
static int impl_Rsend_init(skn_rank *me, const char *fn, const void *buf, int count, MPI_Datatype dt,
                           const skn_dtype *t, int dest, int tag, MPI_Comm comm, skn_comm_view *v, MPI_Request *req) {
  return persistent_init(me, fn, false, SKN_MODE_READY, buf, count, dt, t, dest, tag, comm, req);
}
static int impl_Bsend_init(skn_rank *me, const char *fn, const void *buf, int count, MPI_Datatype dt,
                           const skn_dtype *t, int dest, int tag, MPI_Comm comm, skn_comm_view *v, MPI_Request *req) {
  return persistent_init(me, fn, false, SKN_MODE_BUFFERED, buf, count, dt, t, dest, tag, comm, req);
}
static int impl_Recv_init(skn_rank *me, const char *fn, void *buf, int count, MPI_Datatype dt, const skn_dtype *t,
                          int source, int tag, MPI_Comm comm, skn_comm_view *v, MPI_Request *req) {
  return persistent_init(me, fn, true, SKN_MODE_STANDARD, buf, count, dt, t, source, tag, comm, req);
}

static int impl_Start(skn_rank *me, const char *fn, MPI_Request *handle) {
  skn_req *p = handle ? skn_req_lookup(me, *handle) : NULL;
  if (!p || p->kind != SKN_REQ_PERSISTENT)
    return skn_api_error(me, MPI_COMM_WORLD, MPI_ERR_REQUEST, fn, "not a persistent request");
  if (p->inner) return skn_api_error(me, p->comm, MPI_ERR_REQUEST, fn, "the request is already active");
  const skn_msg_args *a = p->persist;
  skn_comm_view *v = skn_api_comm(me, a->comm);
  if (!v) return skn_api_error(me, a->comm, MPI_ERR_COMM, fn, "the request's communicator was freed");
  MPI_Request inner;
  int rc;
  if (a->is_recv) rc = irecv_start(me, "MPI_Irecv", a->buf, a->count, a->t, a->peer, a->tag, a->comm, v, &inner);
  else rc = isend_start(me, isend_names[a->mode], a->buf, a->count, a->t, a->peer, a->tag, a->comm, v, a->mode, &inner);
  if (rc != MPI_SUCCESS) return rc;
  p->inner = skn_req_lookup(me, inner);
  p->inner->handle_live = false; /* reachable only through the persistent request */
  p->inner->origin = p->origin;
  return MPI_SUCCESS;
}

static int impl_Startall(skn_rank *me, const char *fn, int count, MPI_Request reqs[]) {
  for (int i = 0; i < count; i++) {
    int rc = impl_Start(me, fn, &reqs[i]);
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

/* Frees a persistent request's arguments when the request itself goes. */
void skn_api_persistent_free(skn_req *r) {
  if (r->persist && r->persist->t) skn_dt_release(r->owner, (skn_dtype *)r->persist->t);
  free(r->persist);
  r->persist = NULL;
}

#include "entries_p2p.h"
