/* Completion calls (wait, test and their variants), request management, probes,
 * status queries and buffered sends. Test-style calls yield the worker when nothing is
 * complete, so that a polling rank cannot starve the rank it waits for. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"

static inline skn_req *lookup_or_error(skn_rank *me, const char *fn, MPI_Request h, int *rc) {
  skn_req *r = skn_req_lookup(me, h);
  *rc = r ? MPI_SUCCESS
          : skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_REQUEST, fn, "request=%#x is not a valid request", (unsigned)h);
  return r;
}

int skn_api_request_finish(skn_rank *me, const char *fn, int *handle, skn_req *r, MPI_Status *st) {
  skn_req *a = skn_api_active(r);
  if (!a) { /* inactive persistent request */
    skn_api_empty_status(st);
    return MPI_SUCCESS;
  }
  int grc = SKN_UNLIKELY(a->kind == SKN_REQ_GREQ) ? skn_api_greq_settle(me, a) : MPI_SUCCESS;
  skn_api_set_status(st, a);
  bool truncated = a->truncated, mismatch = a->type_mismatch;
  int io_err = a->io_err, comm = a->comm; /* read before the release below */
  size_t sent = a->sent, cap = a->count * (a->dt ? a->dt->size : 0);
  int src = a->st_src, tag = a->st_tag;
  skn_bsend_unlink(a);
  if (r->kind == SKN_REQ_PERSISTENT) {
    r->inner = NULL;
    skn_req_release(a);
  } else {
    r->handle_live = false;
    *handle = MPI_REQUEST_NULL;
    skn_req_release(r);
  }
  if (SKN_UNLIKELY(io_err)) { /* MPI-IO request: reported through the file's error handler */
    if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = io_err;
    return skn_api_error(me, comm, io_err, fn, "the I/O request failed");
  }
  if (SKN_UNLIKELY(mismatch)) {
    if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = MPI_ERR_TYPE;
    return skn_api_error(me, comm, MPI_ERR_TYPE, fn, "the message from source %d (tag %d) has a type signature "
                         "that does not match the receive's datatype", src, tag);
  }
  if (SKN_UNLIKELY(truncated)) {
    if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = MPI_ERR_TRUNCATE;
    return skn_api_error(me, comm, MPI_ERR_TRUNCATE, fn,
                         "a message of %zu bytes (source %d, tag %d) arrived for a buffer of %zu bytes", sent, src,
                         tag, cap);
  }
  if (SKN_UNLIKELY(grc != MPI_SUCCESS)) {
    if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = grc;
    return skn_api_error(me, SKN_API_NOOBJ, grc, fn, "the query or free function of a generalized request "
                         "returned %d", grc);
  }
  return MPI_SUCCESS;
}

static inline void enter_wait(skn_rank *me, const char *fn, const skn_req *a) {
  skn_api_enter(me, fn, a->origin, a->origin_peer, a->tag);
}

/* ------------------------------------------------------------------ wait */

/* Entry points generated into entries_request.h (included at the end): the request
 * handle is looked up there, once; NULL for MPI_REQUEST_NULL where the call allows it.
 * The request-array calls get the array checked for NULL (len=count) and look each
 * element up here, where MPI_REQUEST_NULL entries are skipped. */
SKN_API_HOT int impl_Wait(skn_rank *me, const char *fn, MPI_Request *req, skn_req *r, MPI_Status *status) {
  if (SKN_UNLIKELY(!r)) { /* MPI_REQUEST_NULL */
    skn_api_empty_status(status);
    return MPI_SUCCESS;
  }
  skn_req *a = skn_api_active(r);
  if (a && !skn_req_done(a)) {
    enter_wait(me, fn, a);
    skn_req_wait(a);
    skn_api_leave(me);
  }
  return skn_api_request_finish(me, fn, req, r, status);
}

/* Sets error fields of statuses for MPI_ERR_IN_STATUS. */
static int finish_in_status(skn_rank *me, const char *fn, MPI_Request *h, skn_req *r, MPI_Status *statuses, int i,
                            bool *any_error) {
  MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
  /* errors inside multiple completion are reported once, as MPI_ERR_IN_STATUS */
  skn_req *a = skn_api_active(r);
  int err = !a ? MPI_SUCCESS : a->type_mismatch ? MPI_ERR_TYPE : a->truncated ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
  if (err) {
    a->truncated = a->type_mismatch = false; /* report below, not through finish */
    *any_error = true;
  }
  skn_api_request_finish(me, fn, h, r, st);
  if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = err;
  return err;
}

static int impl_Waitall(skn_rank *me, const char *fn, int count, MPI_Request reqs[], MPI_Status statuses[]) {
  for (int i = 0; i < count; i++) {
    if (reqs[i] == MPI_REQUEST_NULL) continue;
    int rc;
    skn_req *r = lookup_or_error(me, fn, reqs[i], &rc);
    if (!r) return rc;
    skn_req *a = skn_api_active(r);
    if (a && !skn_req_done(a)) {
      enter_wait(me, fn, a);
      skn_req_wait(a);
    }
  }
  skn_api_leave(me);
  bool any_error = false;
  int comm = SKN_API_NOOBJ; /* the first failed request's: its handler is called */
  for (int i = 0; i < count; i++) {
    if (reqs[i] == MPI_REQUEST_NULL) {
      if (statuses != MPI_STATUSES_IGNORE) skn_api_empty_status(&statuses[i]);
      continue;
    }
    skn_req *r = skn_req_lookup(me, reqs[i]);
    int rcomm = skn_api_active(r) ? skn_api_active(r)->comm : SKN_API_NOOBJ;
    bool before = any_error;
    finish_in_status(me, fn, &reqs[i], r, statuses, i, &any_error);
    if (any_error && !before) comm = rcomm;
  }
  if (any_error) return skn_api_error(me, comm, MPI_ERR_IN_STATUS, fn, "a request failed; see the statuses");
  return MPI_SUCCESS;
}

/* Index of the first complete active request, -1 when none, -2 when none is active. */
static int first_done(skn_rank *me, const char *fn, int count, MPI_Request reqs[], int *rc) {
  bool any_active = false;
  *rc = MPI_SUCCESS;
  for (int i = 0; i < count; i++) {
    if (reqs[i] == MPI_REQUEST_NULL) continue;
    skn_req *r = lookup_or_error(me, fn, reqs[i], rc);
    if (!r) return -3;
    skn_req *a = skn_api_active(r);
    if (!a) continue;
    any_active = true;
    if (skn_req_done(a)) return i;
  }
  return any_active ? -1 : -2;
}

/* Blocks until one of the active requests completes. */
static void wait_any(skn_rank *me, const char *fn, int count, MPI_Request reqs[]) {
  skn_unit *self = skn_sched_self();
  for (;;) {
    skn_sched_prepare_wait(self);
    bool done = false;
    const skn_req *first = NULL;
    for (int i = 0; i < count && !done; i++) {
      if (reqs[i] == MPI_REQUEST_NULL) continue;
      skn_req *a = skn_api_active(skn_req_lookup(me, reqs[i]));
      if (!a) continue;
      if (!first) first = a;
      done = !skn_req_register(a, self);
    }
    if (done || !first) break;
    enter_wait(me, fn, first);
    skn_sched_wait(self);
  }
  skn_sched_done_waiting(self);
  skn_api_leave(me);
}

static int impl_Waitany(skn_rank *me, const char *fn, int count, MPI_Request reqs[], int *index, MPI_Status *status) {
  for (;;) {
    int rc, i = first_done(me, fn, count, reqs, &rc);
    if (i == -3) return rc;
    if (i == -2) {
      *index = MPI_UNDEFINED;
      skn_api_empty_status(status);
      return MPI_SUCCESS;
    }
    if (i >= 0) {
      *index = i;
      return skn_api_request_finish(me, fn, &reqs[i], skn_req_lookup(me, reqs[i]), status);
    }
    wait_any(me, fn, count, reqs);
  }
}

/* Completes every complete request; returns how many (MPI_UNDEFINED if none active). */
static int collect_done(skn_rank *me, const char *fn, int count, MPI_Request reqs[], int indices[],
                        MPI_Status statuses[], int *rc) {
  int n = 0;
  bool any_active = false, any_error = false;
  int comm = SKN_API_NOOBJ;
  *rc = MPI_SUCCESS;
  for (int i = 0; i < count; i++) {
    if (reqs[i] == MPI_REQUEST_NULL) continue;
    skn_req *r = lookup_or_error(me, fn, reqs[i], rc);
    if (!r) return 0;
    skn_req *a = skn_api_active(r);
    if (!a) continue;
    any_active = true;
    if (!skn_req_done(a)) continue;
    int rcomm = a->comm;
    bool before = any_error;
    indices[n] = i;
    finish_in_status(me, fn, &reqs[i], r, statuses, n, &any_error);
    if (any_error && !before) comm = rcomm; /* the first failed request's */
    n++;
  }
  if (any_error) *rc = skn_api_error(me, comm, MPI_ERR_IN_STATUS, fn, "a request failed; see the statuses");
  return any_active ? n : MPI_UNDEFINED;
}

static int impl_Waitsome(skn_rank *me, const char *fn, int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[]) {
  for (;;) {
    int rc;
    int n = collect_done(me, fn, incount, reqs, indices, statuses, &rc);
    if (rc != MPI_SUCCESS || n != 0) {
      *outcount = n;
      return rc;
    }
    wait_any(me, fn, incount, reqs);
  }
}

/* ------------------------------------------------------------------ test */

SKN_API_HOT int impl_Test(skn_rank *me, const char *fn, MPI_Request *req, skn_req *r, int *flag, MPI_Status *status) {
  if (SKN_UNLIKELY(!r)) { /* MPI_REQUEST_NULL */
    *flag = 1;
    skn_api_empty_status(status);
    return MPI_SUCCESS;
  }
  skn_req *a = skn_api_active(r);
  if (a && !skn_req_done(a)) {
    skn_sched_yield();
    if (!skn_req_done(a)) {
      *flag = 0;
      return MPI_SUCCESS;
    }
  }
  *flag = 1;
  return skn_api_request_finish(me, fn, req, r, status);
}

static int impl_Testall(skn_rank *me, const char *fn, int count, MPI_Request reqs[], int *flag, MPI_Status statuses[]) {
  for (int pass = 0; pass < 2; pass++) {
    bool all = true;
    for (int i = 0; i < count && all; i++) {
      if (reqs[i] == MPI_REQUEST_NULL) continue;
      int rc;
      skn_req *r = lookup_or_error(me, fn, reqs[i], &rc);
      if (!r) return rc;
      skn_req *a = skn_api_active(r);
      all = !a || skn_req_done(a);
    }
    if (all) {
      *flag = 1;
      return impl_Waitall(me, fn, count, reqs, statuses);
    }
    if (pass == 0) skn_sched_yield();
  }
  *flag = 0;
  return MPI_SUCCESS;
}

static int impl_Testany(skn_rank *me, const char *fn, int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status) {
  for (int pass = 0; pass < 2; pass++) {
    int rc, i = first_done(me, fn, count, reqs, &rc);
    if (i == -3) return rc;
    if (i == -2) {
      *flag = 1;
      *index = MPI_UNDEFINED;
      skn_api_empty_status(status);
      return MPI_SUCCESS;
    }
    if (i >= 0) {
      *flag = 1;
      *index = i;
      return skn_api_request_finish(me, fn, &reqs[i], skn_req_lookup(me, reqs[i]), status);
    }
    if (pass == 0) skn_sched_yield();
  }
  *flag = 0;
  *index = MPI_UNDEFINED;
  return MPI_SUCCESS;
}

static int impl_Testsome(skn_rank *me, const char *fn, int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[]) {
  int rc;
  int n = collect_done(me, fn, incount, reqs, indices, statuses, &rc);
  if (rc == MPI_SUCCESS && n == 0) {
    skn_sched_yield();
    n = collect_done(me, fn, incount, reqs, indices, statuses, &rc);
  }
  *outcount = n;
  return rc;
}

/* ------------------------------------------------------------------ request management */

static int impl_Request_free(skn_rank *me, const char *fn, MPI_Request *req, skn_req *r) {
  int rc;
  if (r->kind == SKN_REQ_GREQ) {
    *req = MPI_REQUEST_NULL;
    rc = skn_api_greq_user_free(me, r);
    return rc == MPI_SUCCESS ? MPI_SUCCESS
                             : skn_api_error(me, SKN_API_NOOBJ, rc, fn,
                                             "the free function of a generalized request returned %d", rc);
  }
  if (r->kind == SKN_REQ_PERSISTENT) {
    skn_bsend_unlink(r->inner);
    if (r->inner) skn_req_release(r->inner); /* it completes on its own */
    skn_api_persistent_free(r);
  }
  skn_bsend_unlink(r);
  r->handle_live = false;
  *req = MPI_REQUEST_NULL;
  skn_req_release(r);
  return MPI_SUCCESS;
}

static int impl_Request_get_status(skn_rank *me, const char *fn, MPI_Request req, skn_req *r, int *flag,
                                   MPI_Status *status) {
  if (!r) { /* MPI_REQUEST_NULL */
    *flag = 1;
    skn_api_empty_status(status);
    return MPI_SUCCESS;
  }
  skn_req *a = skn_api_active(r);
  if (!a) {
    *flag = 1;
    skn_api_empty_status(status);
    return MPI_SUCCESS;
  }
  if (!skn_req_done(a)) skn_sched_yield();
  *flag = skn_req_done(a);
  if (*flag && a->kind == SKN_REQ_GREQ) { /* the query function, without freeing */
    int qrc = skn_api_greq_query(me, a, status);
    if (qrc != MPI_SUCCESS)
      return skn_api_error(me, SKN_API_NOOBJ, qrc, fn,
                           "the query function of a generalized request returned %d", qrc);
  } else if (*flag) {
    skn_api_set_status(status, a);
  }
  return MPI_SUCCESS;
}

static int impl_Cancel(skn_rank *me, const char *fn, MPI_Request *req, skn_req *r) {
  skn_req *a = skn_api_active(r);
  if (a && a->kind == SKN_REQ_GREQ) {
    int crc = skn_api_greq_cancel(me, a);
    if (crc != MPI_SUCCESS)
      return skn_api_error(me, SKN_API_NOOBJ, crc, fn,
                           "the cancel function of a generalized request returned %d", crc);
  } else if (a && a->mode == SKN_MODE_BUFFERED && a->inner) skn_bsend_cancel(me, a);
  else if (a && !a->cancelled) skn_p2p_cancel(me, a); /* not cancelled if it already matched */
  return MPI_SUCCESS;
}

static int impl_Test_cancelled(skn_rank *me, const char *fn, const MPI_Status *status, int *flag) {
  (void)me, (void)fn;
  *flag = status->skn_cancelled;
  return MPI_SUCCESS;
}

static int impl_Status_set_cancelled(skn_rank *me, const char *fn, MPI_Status *status, int flag) {
  (void)me, (void)fn;
  status->skn_cancelled = flag != 0;
  return MPI_SUCCESS;
}

/* Storage of Fortran's MPI_STATUS(ES)_IGNORE (mpif.h COMMON blocks, mpi_f08 bind(C)):
 * defined here, not with the Fortran glue, so that C's MPI_F_STATUS_IGNORE exists in
 * every build. */
#define F_STATUS_WORDS (sizeof(MPI_Status) / sizeof(MPI_Fint))
__attribute__((visibility("default"))) MPI_Fint skn_mpi_status_ignore_[F_STATUS_WORDS];
__attribute__((visibility("default"))) MPI_Fint skn_mpi_statuses_ignore_[F_STATUS_WORDS];

bool skn_api_f_status_ignored(const MPI_Fint *f) {
  return !f || f == skn_mpi_status_ignore_ || f == skn_mpi_statuses_ignore_;
}

/* Both statuses are checked by the entry points (required, fstatus). */
static int impl_Status_f2c(skn_rank *me, const char *fn, const MPI_Fint *f_status, MPI_Status *c_status) {
  (void)me, (void)fn;
  memcpy(c_status, f_status, sizeof *c_status);
  return MPI_SUCCESS;
}

static int impl_Status_c2f(skn_rank *me, const char *fn, const MPI_Status *c_status, MPI_Fint *f_status) {
  (void)me, (void)fn;
  memcpy(f_status, c_status, sizeof *c_status);
  return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ status queries */

/* The status (required) and the datatype are checked by the entry points. */
static int impl_Get_count(skn_rank *me, const char *fn, const MPI_Status *status, MPI_Datatype dt,
                          const skn_dtype *t, int *count) {
  (void)me, (void)fn, (void)dt;
  long long bytes = status->skn_bytes;
  if (t->size == 0) *count = 0;
  else *count = bytes % (long long)t->size ? MPI_UNDEFINED : (int)(bytes / (long long)t->size);
  return MPI_SUCCESS;
}

static int impl_Get_elements_x(skn_rank *me, const char *fn, const MPI_Status *status, MPI_Datatype dt,
                               const skn_dtype *t, MPI_Count *count) {
  (void)me, (void)fn, (void)dt;
  long long n = skn_dt_elements(t, status->skn_bytes);
  *count = n < 0 ? MPI_UNDEFINED : n;
  return MPI_SUCCESS;
}

static int impl_Get_elements(skn_rank *me, const char *fn, const MPI_Status *status, MPI_Datatype dt,
                             const skn_dtype *t, int *count) {
  MPI_Count c;
  int rc = impl_Get_elements_x(me, fn, status, dt, t, &c);
  if (rc == MPI_SUCCESS) *count = (c == MPI_UNDEFINED || c > INT_MAX) ? MPI_UNDEFINED : (int)c;
  return rc;
}

/* count < 0 is refused by the entry point (MPI_ERR_ARG, as a count the layout cannot take) */
static int impl_Status_set_elements_x(skn_rank *me, const char *fn, MPI_Status *status, MPI_Datatype dt,
                                      const skn_dtype *t, MPI_Count count) {
  (void)dt;
  long long bytes = skn_dt_element_bytes(t, count);
  if (bytes < 0)
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "count=%lld elements do not fill the datatype's layout",
                         (long long)count);
  status->skn_bytes = bytes;
  return MPI_SUCCESS;
}

static int impl_Status_set_elements(skn_rank *me, const char *fn, MPI_Status *status, MPI_Datatype dt,
                                    const skn_dtype *t, int count) {
  return impl_Status_set_elements_x(me, fn, status, dt, t, count);
}

/* ------------------------------------------------------------------ probes */

/* The entry points check the communicator, the source (a rank, MPI_ANY_SOURCE or
 * MPI_PROC_NULL) and the tag (or MPI_ANY_TAG). */

static void probe_status(MPI_Status *st, const skn_probe_info *info) {
  if (st == MPI_STATUS_IGNORE) return;
  st->MPI_SOURCE = info->src;
  st->MPI_TAG = info->tag;
  st->skn_cancelled = 0;
  st->skn_bytes = (long long)info->bytes;
}

static int impl_Iprobe(skn_rank *me, const char *fn, int source, int tag, MPI_Comm comm, skn_comm_view *v, int *flag,
                       MPI_Status *status) {
  (void)fn, (void)comm;
  if (source == MPI_PROC_NULL) {
    *flag = 1;
    skn_api_proc_null_status(status);
    return MPI_SUCCESS;
  }
  int ctx = v->comm->ctx;
  skn_probe_info info;
  if (!skn_p2p_probe(me, ctx, source, tag, false, &info)) {
    skn_sched_yield();
    if (!skn_p2p_probe(me, ctx, source, tag, false, &info)) {
      *flag = 0;
      return MPI_SUCCESS;
    }
  }
  *flag = 1;
  probe_status(status, &info);
  return MPI_SUCCESS;
}

static int impl_Probe(skn_rank *me, const char *fn, int source, int tag, MPI_Comm comm, skn_comm_view *v,
                      MPI_Status *status) {
  (void)comm;
  if (source == MPI_PROC_NULL) {
    skn_api_proc_null_status(status);
    return MPI_SUCCESS;
  }
  int ctx = v->comm->ctx;
  skn_probe_info info;
  skn_api_enter(me, fn, NULL, source, tag);
  skn_p2p_probe_wait(me, ctx, source, tag, false, &info);
  skn_api_leave(me);
  probe_status(status, &info);
  return MPI_SUCCESS;
}

/* A matched message becomes a message handle: a request slot holding the envelope. */
static int make_message(skn_rank *me, const char *fn, MPI_Comm comm, skn_req *env, MPI_Message *message) {
  skn_req *m = skn_req_alloc(me);
  if (!m) return skn_api_error(me, comm, MPI_ERR_NO_MEM, fn, "out of memory for a message");
  m->kind = SKN_REQ_MESSAGE;
  m->inner = env;
  m->comm = comm;
  m->handle_live = true;
  *message = SKN_HANDLE(SKN_KIND_MESSAGE, m->index);
  return MPI_SUCCESS;
}

static int impl_Improbe(skn_rank *me, const char *fn, int source, int tag, MPI_Comm comm, skn_comm_view *v,
                        int *flag, MPI_Message *message, MPI_Status *status) {
  if (source == MPI_PROC_NULL) {
    *flag = 1;
    *message = MPI_MESSAGE_NO_PROC;
    skn_api_proc_null_status(status);
    return MPI_SUCCESS;
  }
  int ctx = v->comm->ctx;
  skn_probe_info info;
  skn_req *env = skn_p2p_probe(me, ctx, source, tag, true, &info);
  if (!env) {
    skn_sched_yield();
    env = skn_p2p_probe(me, ctx, source, tag, true, &info);
  }
  *flag = env != NULL;
  if (!env) return MPI_SUCCESS;
  probe_status(status, &info);
  return make_message(me, fn, comm, env, message);
}

static int impl_Mprobe(skn_rank *me, const char *fn, int source, int tag, MPI_Comm comm, skn_comm_view *v,
                       MPI_Message *message, MPI_Status *status) {
  if (source == MPI_PROC_NULL) {
    *message = MPI_MESSAGE_NO_PROC;
    skn_api_proc_null_status(status);
    return MPI_SUCCESS;
  }
  int ctx = v->comm->ctx;
  skn_probe_info info;
  skn_api_enter(me, fn, NULL, source, tag);
  skn_req *env = skn_p2p_probe_wait(me, ctx, source, tag, true, &info);
  skn_api_leave(me);
  probe_status(status, &info);
  return make_message(me, fn, comm, env, message);
}

static skn_req *message_lookup(skn_rank *me, MPI_Message h) {
  unsigned idx = (unsigned)h & 0xffffffu;
  if (((unsigned)h >> 24) != SKN_KIND_MESSAGE || idx == 0 || idx > (unsigned)me->req_count) return NULL;
  skn_req *m = ((skn_req **)skn_chunk_at(&me->req_chunks, idx / SKN_REQ_CHUNK))[idx % SKN_REQ_CHUNK];
  return (m && m->handle_live && m->kind == SKN_REQ_MESSAGE) ? m : NULL;
}

/* Receives a matched message into r; frees the message handle. */
static int mrecv_common(skn_rank *me, const char *fn, void *buf, int count, MPI_Datatype dt, MPI_Message *message,
                        skn_req *r) {
  skn_req *m = message_lookup(me, *message);
  if (!m) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_REQUEST, fn, "message is not a matched message");
  const skn_dtype *t = skn_api_dtype(me, dt);
  if (!t) return skn_api_error(me, m->comm, MPI_ERR_TYPE, fn, "datatype=%#x", (unsigned)dt);
  if (count < 0) return skn_api_error(me, m->comm, MPI_ERR_COUNT, fn, "count=%d", count);
  r->kind = SKN_REQ_RECV;
  r->buf = buf;
  r->count = (size_t)count;
  r->dt = t;
  r->comm = m->comm;
  skn_req *env = m->inner;
  m->handle_live = false;
  skn_req_release(m);
  *message = MPI_MESSAGE_NULL;
  skn_p2p_recv_matched(r, env);
  return MPI_SUCCESS;
}

/* count and dt are checked in mrecv_common, errors going to the message's communicator. */
static int impl_Mrecv(skn_rank *me, const char *fn, void *buf, int count, MPI_Datatype dt, MPI_Message *message,
                      MPI_Status *status) {
  if (*message == MPI_MESSAGE_NO_PROC) {
    *message = MPI_MESSAGE_NULL;
    skn_api_proc_null_status(status);
    return MPI_SUCCESS;
  }
  skn_req r;
  memset(&r, 0, offsetof(skn_req, cell));
  int rc = mrecv_common(me, fn, buf, count, dt, message, &r);
  if (rc) return rc;
  if (!skn_req_done(&r)) { /* data still with a sender in another process */
    skn_api_enter(me, fn, NULL, MPI_UNDEFINED, MPI_UNDEFINED);
    skn_req_wait(&r);
    skn_api_leave(me);
  }
  skn_api_set_status(status, &r);
  if (r.truncated) {
    if (status != MPI_STATUS_IGNORE) status->MPI_ERROR = MPI_ERR_TRUNCATE;
    return skn_api_error(me, r.comm, MPI_ERR_TRUNCATE, fn, "a message of %zu bytes (source %d, tag %d) arrived "
                         "for a buffer of %zu bytes", r.sent, r.st_src, r.st_tag, r.count * (r.dt ? r.dt->size : 0));
  }
  return MPI_SUCCESS;
}

static int impl_Imrecv(skn_rank *me, const char *fn, void *buf, int count, MPI_Datatype dt, MPI_Message *message,
                       MPI_Request *req) {
  if (*message == MPI_MESSAGE_NO_PROC) {
    *message = MPI_MESSAGE_NULL;
    skn_req *r = skn_req_alloc(me);
    if (!r) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_NO_MEM, fn, "out of memory");
    r->kind = SKN_REQ_RECV;
    r->st_src = MPI_PROC_NULL;
    r->st_tag = MPI_ANY_TAG;
    r->handle_live = true;
    atomic_store(&r->sync, SKN_REQ_DONE);
    *req = skn_req_handle(r);
    return MPI_SUCCESS;
  }
  skn_req *r = skn_req_alloc(me);
  if (!r) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_NO_MEM, fn, "out of memory");
  int rc = mrecv_common(me, fn, buf, count, dt, message, r);
  if (rc) {
    skn_req_release(r);
    return rc;
  }
  r->handle_live = true;
  r->origin = "MPI_Imrecv";
  *req = skn_req_handle(r);
  return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ buffered sends */

/* The protocol is the core's (core/bsend.c); here only the attach and detach calls. */
static int impl_Buffer_attach(skn_rank *me, const char *fn, void *buffer, int size) {
  if (me->bsend_buf) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_BUFFER, fn, "a buffer is already attached");
  if (!buffer && size > 0) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "buffer=NULL size=%d", size);
  me->bsend_buf = buffer;
  me->bsend_size = (size_t)size;
  return MPI_SUCCESS;
}

static int impl_Buffer_detach(skn_rank *me, const char *fn, void *buffer_addr, int *size) {
  size_t bytes;
  skn_api_enter(me, fn, NULL, MPI_UNDEFINED, MPI_UNDEFINED);
  skn_bsend_detach(me, (void **)buffer_addr, &bytes);
  skn_api_leave(me);
  *size = (int)bytes;
  return MPI_SUCCESS;
}

#include "entries_request.h"
