/* Generalized requests (MPI-3.1 12.2): a request the program completes itself with
 * MPI_Grequest_complete, waited on like any other by every Wait and Test variant. It is an
 * ordinary request of kind SKN_REQ_GREQ (so skn_req_wait, the deadlock report and the
 * completion calls need nothing new) whose payload holds the callbacks. The query
 * function fills the status when a completion call reports it, then the free function
 * runs; MPI_Request_free before completion defers the free function to
 * MPI_Grequest_complete. MPI_Grequest_complete may come from any thread of the rank (or
 * another rank): skn_req_complete wakes the waiter. */
#include <stdlib.h>
#include <string.h>

#include "api.h"

typedef struct skn_greq {
  MPI_Grequest_query_function *query;
  MPI_Grequest_free_function *free_fn;
  MPI_Grequest_cancel_function *cancel;
  void *extra;
  /* GREQ_FREED: the user freed the handle; GREQ_COMPLETED: Grequest_complete was called.
   * Whoever sets the second runs the free function when the handle was freed first. */
  _Atomic(int) state;
} skn_greq;

enum { GREQ_FREED = 1, GREQ_COMPLETED = 2 };

static skn_greq *greq_of(skn_req *r) { return (skn_greq *)r->payload; }

/* impl_ functions: called by the entry points generated from runtime/binding/functions.txt
 * (entries_grequest.h, included below), which found the rank and checked the pointers. */

static int impl_Grequest_start(skn_rank *me, const char *fn, MPI_Grequest_query_function *query_fn,
                               MPI_Grequest_free_function *free_fn, MPI_Grequest_cancel_function *cancel_fn,
                               void *extra_state, MPI_Request *request) {
  if (!query_fn || !free_fn || !cancel_fn)
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "query_fn, free_fn and cancel_fn are required");
  skn_greq *g = malloc(sizeof *g);
  skn_req *r = g ? skn_req_alloc(me) : NULL;
  if (!r) {
    free(g);
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_NO_MEM, fn, "out of memory for a request");
  }
  *g = (skn_greq){query_fn, free_fn, cancel_fn, extra_state, 0};
  r->kind = SKN_REQ_GREQ;
  r->payload = g;
  r->comm = SKN_API_NOOBJ;
  r->origin = "a generalized request";
  r->origin_peer = MPI_UNDEFINED;
  r->tag = MPI_UNDEFINED;
  r->st_src = MPI_UNDEFINED;
  r->st_tag = MPI_UNDEFINED;
  r->handle_live = true;
  *request = skn_req_handle(r);
  return MPI_SUCCESS;
}

/* The request behind h even if its handle was freed (Grequest_complete is called with a
 * copy of it): a generalized request of this rank that is not complete yet. */
static skn_req *greq_lookup(skn_rank *me, MPI_Request h) {
  unsigned idx = (unsigned)h & 0xffffffu;
  if (((unsigned)h >> 24) != SKN_KIND_REQUEST || idx == 0 || idx > (unsigned)me->req_count) return NULL;
  skn_req *r = ((skn_req **)skn_chunk_at(&me->req_chunks, idx / SKN_REQ_CHUNK))[idx % SKN_REQ_CHUNK];
  if (!r || r->kind != SKN_REQ_GREQ || !r->payload) return NULL;
  return r;
}

/* The free function, then the request goes back to the pool. */
static int greq_dispose(skn_req *r) {
  skn_greq *g = greq_of(r);
  int rc = g->free_fn(g->extra);
  r->payload = NULL;
  free(g);
  skn_req_release(r);
  return rc;
}

/* request: nocheck, as its handle may have been freed already (greq_lookup). */
static int impl_Grequest_complete(skn_rank *me, const char *fn, MPI_Request request) {
  skn_req *r = greq_lookup(me, request);
  if (!r || skn_req_done(r))
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_REQUEST, fn,
                         "request=%#x is not an incomplete generalized request", (unsigned)request);
  skn_greq *g = greq_of(r);
  int before = atomic_fetch_or(&g->state, GREQ_COMPLETED);
  if (before & GREQ_FREED) { /* nobody waits for it any more */
    atomic_store(&r->sync, SKN_REQ_DONE);
    int rc = greq_dispose(r);
    if (rc != MPI_SUCCESS)
      return skn_api_error(me, SKN_API_NOOBJ, rc, fn, "the free function returned %d", rc);
    return MPI_SUCCESS;
  }
  skn_req_complete(r);
  return MPI_SUCCESS;
}

#include "entries_grequest.h"

int skn_api_greq_query(skn_rank *me, skn_req *r, MPI_Status *st) {
  (void)me;
  skn_greq *g = greq_of(r);
  MPI_Status tmp;
  skn_api_empty_status(&tmp);
  tmp.MPI_SOURCE = MPI_UNDEFINED;
  tmp.MPI_TAG = MPI_UNDEFINED;
  int rc = g->query(g->extra, &tmp);
  r->st_src = tmp.MPI_SOURCE;
  r->st_tag = tmp.MPI_TAG;
  r->cancelled = tmp.skn_cancelled != 0;
  r->bytes = tmp.skn_bytes > 0 ? (size_t)tmp.skn_bytes : 0;
  if (st != MPI_STATUS_IGNORE) {
    *st = tmp;
    st->MPI_ERROR = rc;
  }
  return rc;
}

int skn_api_greq_settle(skn_rank *me, skn_req *r) {
  int rc = skn_api_greq_query(me, r, MPI_STATUS_IGNORE);
  skn_greq *g = greq_of(r);
  int frc = g->free_fn(g->extra);
  r->payload = NULL;
  free(g);
  return rc != MPI_SUCCESS ? rc : frc;
}

int skn_api_greq_cancel(skn_rank *me, skn_req *r) {
  (void)me;
  skn_greq *g = greq_of(r);
  return g->cancel(g->extra, skn_req_done(r));
}

int skn_api_greq_user_free(skn_rank *me, skn_req *r) {
  (void)me;
  skn_greq *g = greq_of(r);
  r->handle_live = false;
  int before = atomic_fetch_or(&g->state, GREQ_FREED);
  if (before & GREQ_COMPLETED) return greq_dispose(r);
  return MPI_SUCCESS; /* MPI_Grequest_complete disposes of it */
}
