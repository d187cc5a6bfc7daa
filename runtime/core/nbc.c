/* Nonblocking collectives: a queue per (rank, communicator view), run in issue order by
 * one executor unit on the rank's worker, with the same table slot a blocking call uses
 * (collective.h). */
#include <stdlib.h>

#include "core.h"

typedef struct skn_nbc {
  struct skn_nbc *next;
  skn_coll_fn run; /* NULL: custom(me, v, arg) */
  skn_nbc_custom_fn custom;
  void *arg;
  skn_comm *comm;
  int rank;
  skn_req *req;
  skn_coll_args a;
  void *owned; /* freed when the task completes */
} skn_nbc;

/* A queued task keeps its derived datatypes alive even if the user frees them. */
static void hold_types(skn_nbc *t, bool hold) {
  skn_rank *me = skn_rank_self();
  const skn_dtype *single[2] = {t->a.st, t->a.rt};
  for (int i = 0; i < 2; i++) {
    if (!single[i]) continue;
    if (hold) skn_dt_retain((skn_dtype *)single[i]);
    else skn_dt_release(me, (skn_dtype *)single[i]);
  }
  for (int side = 0; side < 2; side++) {
    const skn_dtype *const *arr = side ? t->a.rts : t->a.sts;
    /* w arrays: a type per (remote) rank, or per edge for neighbourhood collectives */
    int n = !t->a.nbrs ? t->comm->rsize : side ? t->a.nbrs->indeg : t->a.nbrs->outdeg;
    for (int i = 0; arr && i < n; i++) {
      if (hold) skn_dt_retain((skn_dtype *)arr[i]);
      else skn_dt_release(me, (skn_dtype *)arr[i]);
    }
  }
}

static void executor(void *arg) {
  skn_comm_view *v = arg;
  skn_rank *me = skn_rank_self();
  for (;;) {
    skn_rank_lock(me);
    skn_nbc *t = v->nbc_head;
    if (!t) {
      v->nbc_running = false;
      skn_unit *drainer = v->nbc_drainer;
      v->nbc_drainer = NULL;
      skn_rank_unlock(me);
      if (drainer) skn_sched_wake(drainer);
      return;
    }
    skn_rank_unlock(me);
    if (!t->run) t->custom(me, v, t->arg);
    else if (t->run(t->comm, t->rank, &t->a) != SKN_OK)
      skn_log("rank %d: a nonblocking collective ran out of memory", me->world_rank);
    skn_rank_lock(me);
    v->nbc_head = t->next;
    if (!v->nbc_head) v->nbc_tail = NULL;
    skn_rank_unlock(me);
    hold_types(t, false);
    skn_req_complete(t->req);
    free(t->owned);
    free(t);
  }
}

void skn_nbc_drain(skn_rank *me, skn_comm_view *v) {
  skn_unit *self = skn_sched_self();
  for (;;) {
    skn_sched_prepare_wait(self);
    skn_rank_lock(me);
    bool empty = v->nbc_head == NULL;
    if (!empty) v->nbc_drainer = self;
    skn_rank_unlock(me);
    if (empty) break;
    skn_sched_wait(self);
  }
  skn_sched_done_waiting(self);
}

skn_req *skn_nbc_start(skn_rank *me, skn_comm_view *v, int comm, const char *fn, skn_coll_fn run,
                       const skn_coll_args *a, void *owned, skn_nbc_custom_fn custom, void *arg) {
  skn_nbc *t = calloc(1, sizeof *t);
  skn_req *r = t ? skn_req_alloc(me) : NULL;
  if (!r) {
    free(t);
    free(owned);
    return NULL;
  }
  r->kind = SKN_REQ_SEND; /* completes without a message status */
  r->comm = comm;
  r->st_src = MPI_ANY_SOURCE;
  r->st_tag = MPI_ANY_TAG;
  r->origin = fn;
  r->origin_peer = MPI_UNDEFINED;
  r->handle_live = true;
  *t = (skn_nbc){.run = run, .custom = custom, .arg = arg, .comm = v->comm, .rank = v->rank, .req = r,
                 .a = a ? *a : (skn_coll_args){0}, .owned = owned};
  hold_types(t, true);
  skn_rank_lock(me);
  if (v->nbc_tail) v->nbc_tail->next = t;
  else v->nbc_head = t;
  v->nbc_tail = t;
  bool start = !v->nbc_running;
  v->nbc_running = true;
  skn_rank_unlock(me);
  if (start) {
    if (!skn_sched_spawn_helper(me->unit, executor, v, 256 << 10))
      skn_fatal("rank %d: %s: cannot start the collective executor", me->world_rank, fn);
  }
  return r;
}
