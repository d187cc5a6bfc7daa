/* Point-to-point calls: argument checks, then the core's send and receive. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"

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

static const char *const send_names[] = {"MPI_Send", "MPI_Ssend", "MPI_Rsend", "MPI_Bsend"};
static const char *const isend_names[] = {"MPI_Isend", "MPI_Issend", "MPI_Irsend", "MPI_Ibsend"};

/* Reports the first bad argument of a send or receive. Returns -1 when the only
 * "problem" is a peer of MPI_PROC_NULL (the call then completes at once). Kept out of
 * line so that the checks on the fast path stay a few compares. */
static __attribute__((noinline, cold)) int p2p_arg_error(skn_rank *me, const char *fn, bool is_recv,
                                                        const void *buf, int count, MPI_Datatype dt, int peer,
                                                        int tag, MPI_Comm comm) {
  skn_comm_view *v = skn_api_comm(me, comm);
  if (!v) return skn_api_error(me, comm, MPI_ERR_COMM, fn, "comm=%#x", (unsigned)comm);
  const skn_dtype *t = skn_api_dtype(me, dt);
  if (!t) return skn_api_error(me, comm, MPI_ERR_TYPE, fn, "datatype=%#x", (unsigned)dt);
  if (count < 0) return skn_api_error(me, comm, MPI_ERR_COUNT, fn, "count=%d", count);
  if (tag < 0 && !(is_recv && tag == MPI_ANY_TAG))
    return skn_api_error(me, comm, MPI_ERR_TAG, fn, "tag=%d (must be %sin [0, %d])", tag,
                         is_recv ? "MPI_ANY_TAG or " : "", SKN_TAG_UB);
  if ((unsigned)peer >= (unsigned)v->comm->rsize && peer != MPI_PROC_NULL && !(is_recv && peer == MPI_ANY_SOURCE))
    return skn_api_error(me, comm, MPI_ERR_RANK, fn, "%s=%d (%scommunicator size %d)", is_recv ? "source" : "dest",
                         peer, skn_comm_is_inter(v->comm) ? "remote group of the inter" : "", v->comm->rsize);
  if (!buf && count > 0 && t->size > 0 && t->true_lb == 0)
    return skn_api_error(me, comm, MPI_ERR_BUFFER, fn, "buf=NULL with count=%d", count);
  return -1; /* MPI_PROC_NULL */
}

/* Checks send arguments and fills m. Returns MPI_SUCCESS, an error (already reported),
 * or -1 for MPI_PROC_NULL. */
/* `resolved`: the datatype already looked up (persistent requests keep a reference, so
 * MPI_Start works after MPI_Type_free), or NULL to look up `dt`. */
static inline int check_send_t(skn_rank *me, const char *fn, const void *buf, int count, MPI_Datatype dt,
                               const skn_dtype *resolved, int dest, int tag, MPI_Comm comm, uint8_t mode, skn_msg *m) {
  skn_comm_view *v = skn_api_comm(me, comm);
  const skn_dtype *t = resolved ? resolved : skn_api_dtype(me, dt);
  if (SKN_UNLIKELY(!v || !t || (count | tag) < 0 || (unsigned)dest >= (unsigned)v->comm->rsize ||
                   (!buf && count > 0 && t->size > 0 && t->true_lb == 0)))
    return p2p_arg_error(me, fn, false, buf, count, dt, dest, tag, comm);
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
  return MPI_SUCCESS;
}

static inline int check_recv_t(skn_rank *me, const char *fn, void *buf, int count, MPI_Datatype dt,
                               const skn_dtype *resolved, int source, int tag, MPI_Comm comm, skn_req *r) {
  skn_comm_view *v = skn_api_comm(me, comm);
  const skn_dtype *t = resolved ? resolved : skn_api_dtype(me, dt);
  if (SKN_UNLIKELY(!v || !t || count < 0 || (tag < 0 && tag != MPI_ANY_TAG) ||
                   ((unsigned)source >= (unsigned)v->comm->rsize && source != MPI_ANY_SOURCE) ||
                   (!buf && count > 0 && t->size > 0 && t->true_lb == 0)))
    return p2p_arg_error(me, fn, true, buf, count, dt, source, tag, comm);
  r->kind = SKN_REQ_RECV;
  r->buf = buf;
  r->count = (size_t)count;
  r->dt = t;
  r->ctx = v->comm->ctx;
  r->src = source;
  r->tag = tag;
  r->comm = comm;
  return MPI_SUCCESS;
}

static inline int check_send(skn_rank *me, const char *fn, const void *buf, int count, MPI_Datatype dt, int dest,
                             int tag, MPI_Comm comm, uint8_t mode, skn_msg *m) {
  return check_send_t(me, fn, buf, count, dt, NULL, dest, tag, comm, mode, m);
}
static inline int check_recv(skn_rank *me, const char *fn, void *buf, int count, MPI_Datatype dt, int source,
                             int tag, MPI_Comm comm, skn_req *r) {
  return check_recv_t(me, fn, buf, count, dt, NULL, source, tag, comm, r);
}

/* A receive request that lives on the caller's stack for the length of a blocking call. */
static inline void stack_recv_init(skn_req *r) {
  atomic_init(&r->sync, 0);
  r->pooled = false;
  r->queued = false;
  r->cancelled = false;
  r->truncated = false;
  r->next = NULL;
}

static inline int recv_result(skn_rank *me, const char *fn, const skn_req *r, MPI_Status *status) {
  skn_api_set_status(status, r);
  if (SKN_UNLIKELY(r->type_mismatch)) {
    if (status != MPI_STATUS_IGNORE) status->MPI_ERROR = MPI_ERR_TYPE;
    return skn_api_error(me, r->comm, MPI_ERR_TYPE, fn, "the message from source %d (tag %d) has a type signature "
                         "that does not match the receive's datatype", r->st_src, r->st_tag);
  }
  if (SKN_UNLIKELY(r->truncated)) {
    if (status != MPI_STATUS_IGNORE) status->MPI_ERROR = MPI_ERR_TRUNCATE;
    return skn_api_error(me, r->comm, MPI_ERR_TRUNCATE, fn, "a message of %zu bytes (source %d, tag %d) arrived "
                         "for a buffer of %zu bytes", r->bytes, r->st_src, r->st_tag, r->count * r->dt->size);
  }
  return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ blocking */

static inline int blocking_send(const char *fn, const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                                MPI_Comm comm, uint8_t mode) {
  skn_rank *me = skn_api_self(fn);
  skn_msg m;
  int rc = check_send(me, fn, buf, count, dt, dest, tag, comm, mode, &m);
  if (SKN_UNLIKELY(rc != MPI_SUCCESS)) return rc < 0 ? MPI_SUCCESS : rc;
  if (mode == SKN_MODE_BUFFERED) return skn_api_bsend_start(me, &m, fn, NULL);
  skn_api_enter(me, fn, NULL, dest, tag);
  skn_p2p_send(me, &m, NULL);
  skn_api_leave(me);
  return MPI_SUCCESS;
}

int PMPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  return blocking_send(send_names[SKN_MODE_STANDARD], buf, count, dt, dest, tag, comm, SKN_MODE_STANDARD);
}
SKN_WEAK_ALIAS(Send);
int PMPI_Ssend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  return blocking_send(send_names[SKN_MODE_SYNC], buf, count, dt, dest, tag, comm, SKN_MODE_SYNC);
}
SKN_WEAK_ALIAS(Ssend);
int PMPI_Rsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  return blocking_send(send_names[SKN_MODE_READY], buf, count, dt, dest, tag, comm, SKN_MODE_READY);
}
SKN_WEAK_ALIAS(Rsend);
int PMPI_Bsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  return blocking_send(send_names[SKN_MODE_BUFFERED], buf, count, dt, dest, tag, comm, SKN_MODE_BUFFERED);
}
SKN_WEAK_ALIAS(Bsend);

int PMPI_Recv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Status *status) {
  skn_rank *me = skn_api_self("MPI_Recv");
  skn_req r;
  stack_recv_init(&r);
  int rc = check_recv(me, "MPI_Recv", buf, count, dt, source, tag, comm, &r);
  if (SKN_UNLIKELY(rc != MPI_SUCCESS)) {
    if (rc < 0) skn_api_proc_null_status(status);
    return rc < 0 ? MPI_SUCCESS : rc;
  }
  skn_p2p_recv(me, &r);
  if (!skn_req_done(&r)) {
    skn_api_enter(me, "MPI_Recv", NULL, source, tag);
    skn_req_wait(&r);
    skn_api_leave(me);
  }
  return recv_result(me, "MPI_Recv", &r, status);
}
SKN_WEAK_ALIAS(Recv);

/* ------------------------------------------------------------------ nonblocking */

/* A request that is complete from the start (MPI_PROC_NULL, buffered sends). */
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

static int nonblocking_send_t(const char *fn, const void *buf, int count, MPI_Datatype dt, const skn_dtype *resolved,
                              int dest, int tag, MPI_Comm comm, uint8_t mode, MPI_Request *req) {
  skn_rank *me = skn_api_self(fn);
  skn_msg m;
  int rc = check_send_t(me, fn, buf, count, dt, resolved, dest, tag, comm, mode, &m);
  if (SKN_UNLIKELY(rc != MPI_SUCCESS)) {
    if (rc < 0) return completed_request(me, fn, comm, MPI_PROC_NULL, req);
    return rc;
  }
  if (SKN_UNLIKELY(!req)) return skn_api_error(me, comm, MPI_ERR_ARG, fn, "request=NULL");
  if (mode == SKN_MODE_BUFFERED) {
    rc = completed_request(me, fn, comm, MPI_ANY_SOURCE, req);
    if (rc != MPI_SUCCESS) return rc;
    skn_req *link = skn_req_lookup(me, *req);
    rc = skn_api_bsend_start(me, &m, fn, link);
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

static int nonblocking_send(const char *fn, const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                            MPI_Comm comm, uint8_t mode, MPI_Request *req) {
  return nonblocking_send_t(fn, buf, count, dt, NULL, dest, tag, comm, mode, req);
}

int PMPI_Isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req) {
  return nonblocking_send(isend_names[SKN_MODE_STANDARD], buf, count, dt, dest, tag, comm, SKN_MODE_STANDARD, req);
}
SKN_WEAK_ALIAS(Isend);
int PMPI_Issend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req) {
  return nonblocking_send(isend_names[SKN_MODE_SYNC], buf, count, dt, dest, tag, comm, SKN_MODE_SYNC, req);
}
SKN_WEAK_ALIAS(Issend);
int PMPI_Irsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req) {
  return nonblocking_send(isend_names[SKN_MODE_READY], buf, count, dt, dest, tag, comm, SKN_MODE_READY, req);
}
SKN_WEAK_ALIAS(Irsend);
int PMPI_Ibsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req) {
  return nonblocking_send(isend_names[SKN_MODE_BUFFERED], buf, count, dt, dest, tag, comm, SKN_MODE_BUFFERED, req);
}
SKN_WEAK_ALIAS(Ibsend);

static int irecv_t(void *buf, int count, MPI_Datatype dt, const skn_dtype *resolved, int source, int tag,
                   MPI_Comm comm, MPI_Request *req) {
  skn_rank *me = skn_api_self("MPI_Irecv");
  if (SKN_UNLIKELY(!req)) return skn_api_error(me, comm, MPI_ERR_ARG, "MPI_Irecv", "request=NULL");
  skn_req *r = skn_req_alloc(me);
  if (SKN_UNLIKELY(!r)) return skn_api_error(me, comm, MPI_ERR_NO_MEM, "MPI_Irecv", "out of memory for a request");
  int rc = check_recv_t(me, "MPI_Irecv", buf, count, dt, resolved, source, tag, comm, r);
  if (SKN_UNLIKELY(rc != MPI_SUCCESS)) {
    skn_req_release(r);
    if (rc < 0) return completed_request(me, "MPI_Irecv", comm, MPI_PROC_NULL, req);
    return rc;
  }
  r->handle_live = true;
  r->origin = "MPI_Irecv";
  r->origin_peer = source;
  skn_p2p_recv(me, r);
  *req = skn_req_handle(r);
  return MPI_SUCCESS;
}

int PMPI_Irecv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Request *req) {
  return irecv_t(buf, count, dt, NULL, source, tag, comm, req);
}
SKN_WEAK_ALIAS(Irecv);

/* ------------------------------------------------------------------ send-receive */

int PMPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status) {
  static const char fn[] = "MPI_Sendrecv";
  skn_rank *me = skn_api_self(fn);
  skn_msg m;
  int src_rc = check_send(me, fn, sendbuf, sendcount, sendtype, dest, sendtag, comm, SKN_MODE_STANDARD, &m);
  if (src_rc > 0) return src_rc;
  skn_req r;
  stack_recv_init(&r);
  int rrc = check_recv(me, fn, recvbuf, recvcount, recvtype, source, recvtag, comm, &r);
  if (rrc > 0) return rrc;
  /* Post the receive first so that a partner's send can copy straight into it. */
  if (rrc == MPI_SUCCESS) skn_p2p_recv(me, &r);
  skn_req *s = NULL;
  if (src_rc == MPI_SUCCESS) {
    if (!(s = skn_req_alloc(me))) return skn_api_error(me, comm, MPI_ERR_NO_MEM, fn, "out of memory for a request");
    skn_p2p_send(me, &m, s);
  }
  skn_api_enter(me, fn, NULL, rrc == MPI_SUCCESS ? source : dest, rrc == MPI_SUCCESS ? recvtag : sendtag);
  if (s) {
    skn_req_wait(s);
    skn_req_release(s);
  }
  if (rrc == MPI_SUCCESS) skn_req_wait(&r);
  skn_api_leave(me);
  if (rrc < 0) {
    skn_api_proc_null_status(status);
    return MPI_SUCCESS;
  }
  return recv_result(me, fn, &r, status);
}
SKN_WEAK_ALIAS(Sendrecv);

int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int sendtag, int source, int recvtag,
                          MPI_Comm comm, MPI_Status *status) {
  static const char fn[] = "MPI_Sendrecv_replace";
  skn_rank *me = skn_api_self(fn);
  const skn_dtype *t = skn_api_dtype(me, dt);
  if (!t) return skn_api_error(me, comm, MPI_ERR_TYPE, fn, "datatype=%#x", (unsigned)dt);
  if (count < 0) return skn_api_error(me, comm, MPI_ERR_COUNT, fn, "count=%d", count);
  size_t bytes = (size_t)count * t->size;
  void *tmp = malloc(bytes ? bytes : 1);
  if (!tmp) return skn_api_error(me, comm, MPI_ERR_NO_MEM, fn, "out of memory for %zu bytes", bytes);
  skn_dt_pack(tmp, buf, t, bytes);
  int rc = PMPI_Sendrecv(tmp, (int)bytes, MPI_BYTE, dest, sendtag, buf, count, dt, source, recvtag, comm, status);
  free(tmp);
  return rc;
}
SKN_WEAK_ALIAS(Sendrecv_replace);

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

static int isendrecv_start(skn_rank *me, const char *fn, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           int dest, int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                           int recvtag, MPI_Comm comm, MPI_Request *req, void *packed) {
  sendrecv_pair *p = calloc(1, sizeof *p);
  skn_req *o = p ? skn_req_alloc(me) : NULL, *r = o ? skn_req_alloc(me) : NULL, *s = r ? skn_req_alloc(me) : NULL;
  int rc = !req ? skn_api_error(me, comm, MPI_ERR_ARG, fn, "request=NULL")
           : !s ? skn_api_error(me, comm, MPI_ERR_NO_MEM, fn, "out of memory for a request")
                : MPI_SUCCESS;
  /* Both sides are checked before either starts: a bad call starts nothing. */
  skn_msg m;
  int src_rc = rc ? rc : check_send(me, fn, sendbuf, sendcount, sendtype, dest, sendtag, comm, SKN_MODE_STANDARD, &m);
  int rrc = src_rc > 0 ? src_rc : check_recv(me, fn, recvbuf, recvcount, recvtype, source, recvtag, comm, r);
  if (rc || src_rc > 0 || rrc > 0) {
    for (skn_req *x[] = {o, r, s}, **i = x; i < x + 3; i++)
      if (*i) skn_req_release(*i);
    free(p);
    free(packed);
    return rc ? rc : src_rc > 0 ? src_rc : rrc;
  }
  *p = (sendrecv_pair){.outer = o, .packed = packed};
  o->kind = SKN_REQ_RECV;
  o->comm = comm;
  o->origin = fn;
  o->origin_peer = rrc == MPI_SUCCESS ? source : dest;
  o->tag = rrc == MPI_SUCCESS ? recvtag : sendtag;
  o->dt = skn_api_dtype(me, MPI_BYTE);
  o->st_src = MPI_PROC_NULL; /* the status when the receive is from MPI_PROC_NULL */
  o->st_tag = MPI_ANY_TAG;
  o->handle_live = true;
  *req = skn_req_handle(o);
  if (rrc == MPI_SUCCESS) {
    r->origin = fn;
    r->origin_peer = source;
    skn_p2p_recv(me, r);
    p->recv = r;
  } else {
    skn_req_release(r);
  }
  if (src_rc == MPI_SUCCESS) {
    s->origin = fn;
    s->origin_peer = dest;
    skn_p2p_send(me, &m, s);
    p->send = s;
  } else {
    skn_req_release(s);
  }
  if ((!p->send || skn_req_done(p->send)) && (!p->recv || skn_req_done(p->recv))) {
    finish_pair(p); /* already complete: no unit needed */
    return MPI_SUCCESS;
  }
  int w = me->unit->worker ? me->unit->worker->id : 0;
  if (!skn_sched_spawn_sized(w, wait_pair, p, me, 64 << 10))
    skn_fatal("rank %d: %s: cannot start the unit that completes the request", me->world_rank, fn);
  return MPI_SUCCESS;
}

int PMPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Request *req) {
  static const char fn[] = "MPI_Isendrecv";
  return isendrecv_start(skn_api_self(fn), fn, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                         recvtype, source, recvtag, comm, req, NULL);
}
SKN_WEAK_ALIAS(Isendrecv);

int PMPI_Isendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int sendtag, int source, int recvtag,
                           MPI_Comm comm, MPI_Request *req) {
  static const char fn[] = "MPI_Isendrecv_replace";
  skn_rank *me = skn_api_self(fn);
  const skn_dtype *t = skn_api_dtype(me, dt);
  if (!t) return skn_api_error(me, comm, MPI_ERR_TYPE, fn, "datatype=%#x is not a valid datatype", (unsigned)dt);
  if (count < 0) return skn_api_error(me, comm, MPI_ERR_COUNT, fn, "count=%d", count);
  /* The outgoing data is packed now: from here on buf is the receive buffer. */
  size_t bytes = (size_t)count * t->size;
  if (bytes > INT_MAX) return skn_api_error(me, comm, MPI_ERR_COUNT, fn, "%zu bytes is more than one send carries", bytes);
  void *packed = malloc(bytes ? bytes : 1);
  if (!packed) return skn_api_error(me, comm, MPI_ERR_NO_MEM, fn, "out of memory for %zu bytes", bytes);
  skn_dt_pack(packed, buf, t, bytes);
  return isendrecv_start(me, fn, packed, (int)bytes, MPI_BYTE, dest, sendtag, buf, count, dt, source, recvtag, comm, req,
                         packed);
}
SKN_WEAK_ALIAS(Isendrecv_replace);

/* ------------------------------------------------------------------ persistent */

static int persistent_init(const char *fn, bool is_recv, uint8_t mode, const void *buf, int count, MPI_Datatype dt,
                           int peer, int tag, MPI_Comm comm, MPI_Request *req) {
  skn_rank *me = skn_api_self(fn);
  if (!req) return skn_api_error(me, comm, MPI_ERR_ARG, fn, "request=NULL");
  /* Check the arguments now, as MPI_Start has no way to report them well. */
  int rc;
  if (is_recv) {
    skn_req probe_args;
    rc = check_recv(me, fn, (void *)(uintptr_t)buf, count, dt, peer, tag, comm, &probe_args);
  } else {
    skn_msg m;
    rc = check_send(me, fn, buf, count, dt, peer, tag, comm, mode, &m);
  }
  if (rc > 0) return rc;
  skn_req *r = skn_req_alloc(me);
  skn_msg_args *a = malloc(sizeof *a);
  if (!r || !a) {
    free(a);
    if (r) skn_req_release(r);
    return skn_api_error(me, comm, MPI_ERR_NO_MEM, fn, "out of memory for a request");
  }
  *a = (skn_msg_args){is_recv, mode, (void *)(uintptr_t)buf, count, peer, tag, dt, comm, skn_api_dtype(me, dt)};
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

int PMPI_Send_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req) {
  return persistent_init("MPI_Send_init", false, SKN_MODE_STANDARD, buf, count, dt, dest, tag, comm, req);
}
SKN_WEAK_ALIAS(Send_init);
int PMPI_Ssend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req) {
  return persistent_init("MPI_Ssend_init", false, SKN_MODE_SYNC, buf, count, dt, dest, tag, comm, req);
}
SKN_WEAK_ALIAS(Ssend_init);
int PMPI_Rsend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req) {
  return persistent_init("MPI_Rsend_init", false, SKN_MODE_READY, buf, count, dt, dest, tag, comm, req);
}
SKN_WEAK_ALIAS(Rsend_init);
int PMPI_Bsend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req) {
  return persistent_init("MPI_Bsend_init", false, SKN_MODE_BUFFERED, buf, count, dt, dest, tag, comm, req);
}
SKN_WEAK_ALIAS(Bsend_init);
int PMPI_Recv_init(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Request *req) {
  return persistent_init("MPI_Recv_init", true, SKN_MODE_STANDARD, buf, count, dt, source, tag, comm, req);
}
SKN_WEAK_ALIAS(Recv_init);

static int start_one(skn_rank *me, MPI_Request *handle) {
  static const char fn[] = "MPI_Start";
  skn_req *p = handle ? skn_req_lookup(me, *handle) : NULL;
  if (!p || p->kind != SKN_REQ_PERSISTENT)
    return skn_api_error(me, MPI_COMM_WORLD, MPI_ERR_REQUEST, fn, "not a persistent request");
  if (p->inner) return skn_api_error(me, p->comm, MPI_ERR_REQUEST, fn, "the request is already active");
  const skn_msg_args *a = p->persist;
  MPI_Request inner;
  int rc;
  if (a->is_recv) rc = irecv_t(a->buf, a->count, a->dt, a->t, a->peer, a->tag, a->comm, &inner);
  else rc = nonblocking_send_t(isend_names[a->mode], a->buf, a->count, a->dt, a->t, a->peer, a->tag, a->comm, a->mode,
                               &inner);
  if (rc != MPI_SUCCESS) return rc;
  p->inner = skn_req_lookup(me, inner);
  p->inner->handle_live = false; /* reachable only through the persistent request */
  p->inner->origin = p->origin;
  return MPI_SUCCESS;
}

int PMPI_Start(MPI_Request *req) {
  return start_one(skn_api_self("MPI_Start"), req);
}
SKN_WEAK_ALIAS(Start);

int PMPI_Startall(int count, MPI_Request reqs[]) {
  skn_rank *me = skn_api_self("MPI_Startall");
  if (count < 0) return skn_api_error(me, MPI_COMM_WORLD, MPI_ERR_COUNT, "MPI_Startall", "count=%d", count);
  for (int i = 0; i < count; i++) {
    int rc = start_one(me, &reqs[i]);
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Startall);

/* Frees a persistent request's arguments when the request itself goes. */
void skn_api_persistent_free(skn_req *r) {
  if (r->persist && r->persist->t) skn_dt_release(r->owner, (skn_dtype *)r->persist->t);
  free(r->persist);
  r->persist = NULL;
}
