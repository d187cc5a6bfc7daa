/* One-sided communication: the MPI layer. The entry points are generated from
 * runtime/binding/functions.txt (entries_win.h, included at the end): they find the rank,
 * check the window (errors go to its handler; the creations report on the communicator),
 * counts, datatypes, target ranks against the window's group, lock types, assert bits and
 * info, then call the impl_ functions here, which keep what depends on the window's state:
 * epochs, flavors, ranges and type signatures. The windows, synchronization words and data
 * paths are core/rma.c. A window's handle indexes the calling rank's table of views
 * (skn_api_rank.wins, api.h); the window object itself is shared by its members. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objects.h"
#include "core/rma.h"

/* ------------------------------------------------------------------ handles */

skn_win_view *skn_api_win(skn_rank *me, MPI_Win h) {
  skn_api_rank *api = skn_api_of(me);
  unsigned idx = (unsigned)h & 0xffffffu;
  if (((unsigned)h >> 24) != SKN_KIND_WIN || idx == 0 || idx >= (unsigned)api->nwins) return NULL;
  return api->wins[idx];
}

/* An error on the window `win` of the impl_ function it is used in. */
#define WIN_ERR(cls, ...) skn_api_win_error(me, win, cls, fn, __VA_ARGS__)

static void view_free(skn_win_view *v) {
  if (!v) return;
  free(v->wranks);
  free(v->locked);
  free(v->access);
  free(v->in_access);
  free(v);
}

/* ------------------------------------------------------------------ info */

static bool info_flag(MPI_Info info, const char *key, bool *out) {
  char val[MPI_MAX_INFO_VAL + 1];
  int flag = 0;
  if (info == MPI_INFO_NULL || PMPI_Info_get(info, key, MPI_MAX_INFO_VAL, val, &flag) != MPI_SUCCESS || !flag)
    return false;
  *out = !strcmp(val, "true");
  return true;
}

static void info_string(MPI_Info info, const char *key, char *out, size_t cap) {
  char val[MPI_MAX_INFO_VAL + 1];
  int flag = 0;
  if (info == MPI_INFO_NULL || PMPI_Info_get(info, key, MPI_MAX_INFO_VAL, val, &flag) != MPI_SUCCESS || !flag)
    return;
  snprintf(out, cap, "%.*s", (int)cap - 1, val);
}

static void apply_info(skn_win_view *v, MPI_Info info) {
  info_flag(info, "no_locks", &v->no_locks);
  info_flag(info, "same_size", &v->same_size);
  info_flag(info, "same_disp_unit", &v->same_disp_unit);
  info_string(info, "accumulate_ordering", v->acc_ordering, sizeof v->acc_ordering);
  info_string(info, "accumulate_ops", v->acc_ops, sizeof v->acc_ops);
}

/* ------------------------------------------------------------------ creation */

/* Window creation, all flavors; the entry checked the arguments but the communicator's
 * kind. base: the user's memory (create); baseptr: where to store the allocated memory's
 * address (allocate flavors). */
static int create(skn_rank *me, const char *fn, int flavor, void *base, MPI_Aint size, int disp_unit, MPI_Info info,
                  MPI_Comm comm, skn_comm_view *cv, void *baseptr, MPI_Win *win_out) {
  int rc = skn_api_intra_only(me, cv, comm, fn);
  if (rc != MPI_SUCCESS) return rc;
  skn_comm *c = cv->comm;
  /* Every member sees the same communicator and flavor: all refuse alike, nobody waits. */
  if (c->x && flavor == MPI_WIN_FLAVOR_SHARED)
    return skn_api_error(me, comm, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                         "shared-memory windows whose group spans several processes are not supported (the "
                         "communicator has members in %d processes; see docs/user-guide.md, One-sided communication)",
                         c->x->nprocs);
  skn_win_view *v = calloc(1, sizeof *v);
  int n = c->size;
  if (v) {
    v->wranks = malloc(sizeof(int) * (size_t)n);
    v->locked = calloc((size_t)n, 1);
    v->access = malloc(sizeof(int) * (size_t)n);
    v->in_access = calloc((size_t)n, 1);
  }
  if (!v || !v->wranks || !v->locked || !v->access || !v->in_access) {
    view_free(v);
    return skn_api_error(me, comm, MPI_ERR_NO_MEM, fn, "out of memory for a window");
  }
  for (int i = 0; i < n; i++) v->wranks[i] = c->members[i]->world_rank;
  v->rank = cv->rank;
  v->size = n;
  v->errhandler = MPI_ERRORS_ARE_FATAL; /* the standard's default for windows */
  v->naccess = -1;
  v->nexposure = -1;
  snprintf(v->acc_ordering, sizeof v->acc_ordering, "rar,raw,war,waw");
  snprintf(v->acc_ops, sizeof v->acc_ops, "same_op_no_op");
  apply_info(v, info);
  info_flag(info, "alloc_shared_noncontig", &v->noncontig);
  skn_api_coll_order(me, cv); /* the creation uses the communicator's collective slots */
  skn_api_enter(me, fn, NULL, MPI_UNDEFINED, MPI_UNDEFINED);
  skn_win *w = skn_win_create(me, c, cv->rank, flavor, base, flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : (size_t)size,
                              disp_unit, v->noncontig);
  skn_api_leave(me);
  if (!w) {
    view_free(v);
    return skn_api_error(me, comm, MPI_ERR_NO_MEM, fn, "out of memory for a window of %td bytes", size);
  }
  v->win = w;
  v->base = flavor == MPI_WIN_FLAVOR_DYNAMIC ? MPI_BOTTOM : w->t[v->rank].base;
  v->size_attr = flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : size;
  v->disp_unit = disp_unit;
  v->flavor = flavor;
  v->model = MPI_WIN_UNIFIED;
  skn_api_rank *api = skn_api_of(me);
  skn_rank_lock(me);
  int idx;
  SKN_TABLE_SLOT(api->wins, api->nwins, 1, idx);
  if (idx == 0) SKN_TABLE_SLOT(api->wins, api->nwins, 1, idx); /* index 0 is MPI_WIN_NULL */
  if (idx >= 0) api->wins[idx] = v;
  skn_rank_unlock(me);
  if (idx < 0) { /* the others have their handles: this rank's view is what is missing */
    skn_win_free(me, w);
    view_free(v);
    return skn_api_error(me, comm, MPI_ERR_NO_MEM, fn, "out of memory for a window handle");
  }
  *win_out = SKN_HANDLE(SKN_KIND_WIN, idx);
  if (baseptr) *(void **)baseptr = v->base;
  return MPI_SUCCESS;
}

static int impl_Win_create(skn_rank *me, const char *fn, void *base, MPI_Aint size, int disp_unit, MPI_Info info,
                           skn_info *i, MPI_Comm comm, skn_comm_view *cv, MPI_Win *win) {
  return create(me, fn, MPI_WIN_FLAVOR_CREATE, base, size, disp_unit, info, comm, cv, NULL, win);
}

static int impl_Win_allocate(skn_rank *me, const char *fn, MPI_Aint size, int disp_unit, MPI_Info info, skn_info *i,
                             MPI_Comm comm, skn_comm_view *cv, void *baseptr, MPI_Win *win) {
  return create(me, fn, MPI_WIN_FLAVOR_ALLOCATE, NULL, size, disp_unit, info, comm, cv, baseptr, win);
}

static int impl_Win_allocate_shared(skn_rank *me, const char *fn, MPI_Aint size, int disp_unit, MPI_Info info,
                                    skn_info *i, MPI_Comm comm, skn_comm_view *cv, void *baseptr, MPI_Win *win) {
  return create(me, fn, MPI_WIN_FLAVOR_SHARED, NULL, size, disp_unit, info, comm, cv, baseptr, win);
}

static int impl_Win_create_dynamic(skn_rank *me, const char *fn, MPI_Info info, skn_info *i, MPI_Comm comm,
                                   skn_comm_view *cv, MPI_Win *win) {
  return create(me, fn, MPI_WIN_FLAVOR_DYNAMIC, MPI_BOTTOM, 0, 1, info, comm, cv, NULL, win);
}

static int impl_Win_shared_query(skn_rank *me, const char *fn, MPI_Win win, skn_win_view *v, int rank, MPI_Aint *size,
                                 int *disp_unit, void *baseptr) {
  if (v->flavor != MPI_WIN_FLAVOR_SHARED)
    return WIN_ERR(MPI_ERR_RMA_FLAVOR, "the window was not created by MPI_Win_allocate_shared");
  skn_win *w = v->win;
  int r = rank;
  if (rank == MPI_PROC_NULL) { /* the first member with memory */
    r = 0;
    while (r < v->size - 1 && w->t[r].size == 0) r++;
  }
  *size = (MPI_Aint)w->t[r].size;
  *disp_unit = w->t[r].disp_unit;
  *(void **)baseptr = w->t[r].base;
  return MPI_SUCCESS;
}

static int impl_Win_attach(skn_rank *me, const char *fn, MPI_Win win, skn_win_view *v, void *base, MPI_Aint size) {
  if (v->flavor != MPI_WIN_FLAVOR_DYNAMIC)
    return WIN_ERR(MPI_ERR_RMA_FLAVOR, "the window was not created by MPI_Win_create_dynamic");
  if (!base && size > 0) return WIN_ERR(MPI_ERR_ARG, "base=NULL");
  int rc = skn_win_attach(v->win, v->rank, base, (size_t)size);
  if (rc == SKN_ERR_NOMEM && v->win->span)
    return WIN_ERR(MPI_ERR_NO_MEM, "out of memory, a failed registration, or %d regions attached already (the "
                   "limit of windows spanning processes)", SKN_WIN_DYN_MAX);
  if (rc == SKN_ERR_NOMEM) return WIN_ERR(MPI_ERR_NO_MEM, "out of memory");
  if (rc != SKN_OK) return WIN_ERR(MPI_ERR_RMA_ATTACH, "[%p, +%td) overlaps memory attached already", base, size);
  return MPI_SUCCESS;
}

static int impl_Win_detach(skn_rank *me, const char *fn, MPI_Win win, skn_win_view *v, const void *base) {
  if (v->flavor != MPI_WIN_FLAVOR_DYNAMIC)
    return WIN_ERR(MPI_ERR_RMA_FLAVOR, "the window was not created by MPI_Win_create_dynamic");
  if (!skn_win_detach(v->win, v->rank, base))
    return WIN_ERR(MPI_ERR_RMA_ATTACH, "base=%p starts no region attached by this rank", base);
  return MPI_SUCCESS;
}

static bool in_epoch_any(const skn_win_view *v) {
  return v->lock_all || v->nlocked || v->naccess >= 0 || v->nexposure >= 0;
}

static int impl_Win_free(skn_rank *me, const char *fn, MPI_Win *winp, skn_win_view *v) {
  MPI_Win win = *winp;
  if (in_epoch_any(v))
    return WIN_ERR(MPI_ERR_RMA_SYNC, "an epoch is still open (%s)",
                   v->lock_all ? "MPI_Win_lock_all without MPI_Win_unlock_all"
                   : v->nlocked ? "MPI_Win_lock without MPI_Win_unlock"
                   : v->naccess >= 0 ? "MPI_Win_start without MPI_Win_complete"
                                     : "MPI_Win_post without MPI_Win_wait");
  int rc = skn_attr_delete_all(me, win, &v->attrs);
  if (rc != MPI_SUCCESS)
    return WIN_ERR(skn_attr_errclass(rc), "an attribute delete callback failed (%d)", rc);
  skn_api_enter(me, fn, NULL, MPI_UNDEFINED, MPI_UNDEFINED);
  skn_win_free(me, v->win);
  skn_api_leave(me);
  skn_rank_lock(me);
  skn_api_of(me)->wins[(unsigned)win & 0xffffffu] = NULL;
  skn_rank_unlock(me);
  view_free(v);
  *winp = MPI_WIN_NULL;
  return MPI_SUCCESS;
}

static int impl_Win_get_group(skn_rank *me, const char *fn, MPI_Win win, skn_win_view *v, MPI_Group *group) {
  return skn_api_members_group(me, fn, v->size, v->win->comm->members, group);
}

static int impl_Win_set_info(skn_rank *me, const char *fn, MPI_Win win, skn_win_view *v, MPI_Info info, skn_info *i) {
  apply_info(v, info);
  return MPI_SUCCESS;
}

static int impl_Win_get_info(skn_rank *me, const char *fn, MPI_Win win, skn_win_view *v, MPI_Info *info_used) {
  MPI_Info i;
  if (PMPI_Info_create(&i) != MPI_SUCCESS) return WIN_ERR(MPI_ERR_NO_MEM, "out of memory for an info object");
  PMPI_Info_set(i, "no_locks", v->no_locks ? "true" : "false");
  PMPI_Info_set(i, "accumulate_ordering", v->acc_ordering);
  PMPI_Info_set(i, "accumulate_ops", v->acc_ops);
  PMPI_Info_set(i, "same_size", v->same_size ? "true" : "false");
  PMPI_Info_set(i, "same_disp_unit", v->same_disp_unit ? "true" : "false");
  if (v->flavor == MPI_WIN_FLAVOR_SHARED) PMPI_Info_set(i, "alloc_shared_noncontig", v->noncontig ? "true" : "false");
  *info_used = i;
  return MPI_SUCCESS;
}

static int impl_Win_set_name(skn_rank *me, const char *fn, MPI_Win win, skn_win_view *v, const char *name) {
  snprintf(v->name, sizeof v->name, "%s", name);
  return MPI_SUCCESS;
}

static int impl_Win_get_name(skn_rank *me, const char *fn, MPI_Win win, skn_win_view *v, char *name, int *resultlen) {
  snprintf(name, MPI_MAX_OBJECT_NAME, "%s", v->name);
  *resultlen = (int)strlen(name);
  return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ communication */

/* The target of an operation: *addr is where its data starts; *skip when target_rank is
 * MPI_PROC_NULL (nothing to do). The entry checked the rank against the window's group and
 * the target count and datatype; this checks the epoch and the range: nothing outside the
 * target's window is ever touched. */
typedef struct rma_target {
  skn_win *w;
  char *addr; /* in the target's address space */
  skn_rank *peer;
  bool skip;
} rma_target;

/* An origin or result count and datatype the entry could not check (an accumulate's origin
 * is ignored with MPI_NO_OP). */
static int check_type(skn_rank *me, const char *fn, MPI_Win win, int count, MPI_Datatype dt, const skn_dtype **t,
                      const char *what) {
  if (count < 0) return WIN_ERR(MPI_ERR_COUNT, "%s count=%d is negative", what, count);
  *t = skn_api_dtype(me, dt);
  if (!*t) return WIN_ERR(MPI_ERR_TYPE, "%s datatype=%#x %s", what, (unsigned)dt, skn_api_dtype_fault(me, dt));
  return MPI_SUCCESS;
}

static int target(skn_rank *me, const char *fn, MPI_Win win, skn_win_view *v, int rank, MPI_Aint disp, int tcount,
                  const skn_dtype *tt, bool passive_only, rma_target *out) {
  out->skip = false;
  if (rank == MPI_PROC_NULL) {
    out->skip = true;
    return MPI_SUCCESS;
  }
  if (SKN_UNLIKELY(passive_only ? !(v->lock_all || v->locked[rank])
                                : !(v->fence || v->lock_all || v->locked[rank] || v->in_access[rank])))
    return WIN_ERR(MPI_ERR_RMA_SYNC, "no %s epoch gives access to target %d", passive_only ? "passive-target" : "access",
                   rank);
  skn_win *w = v->win;
  skn_win_target *t = &w->t[rank];
  out->w = w;
  out->peer = skn_win_member(w, rank);
  /* bytes touched, relative to the first element's origin */
  ptrdiff_t last = tcount > 0 ? (ptrdiff_t)(tcount - 1) * tt->extent : 0;
  ptrdiff_t lo = tt->true_lb + (last < 0 ? last : 0), hi = tt->true_lb + tt->true_extent + (last > 0 ? last : 0);
  bool empty = tcount == 0 || tt->size == 0;
  if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) { /* displacements are addresses */
    out->addr = (char *)(uintptr_t)disp;
    int cover = empty ? SKN_WIN_COVERED
                      : skn_win_dynamic_covers(w, rank, (uintptr_t)disp + (uintptr_t)lo, (uintptr_t)disp + (uintptr_t)hi);
    if (cover == SKN_WIN_OUTSIDE)
      return WIN_ERR(MPI_ERR_RMA_RANGE, "target %d has no attached memory holding [%#tx, %#tx)", rank, disp + lo,
                     disp + hi);
    if (cover == SKN_WIN_SPLIT)
      return WIN_ERR(MPI_ERR_RMA_RANGE, "[%#tx, %#tx) spans several regions attached by target %d, which is in "
                     "another process: an access there must lie in one region", disp + lo, disp + hi, rank);
    return MPI_SUCCESS;
  }
  if (disp < 0) return WIN_ERR(MPI_ERR_DISP, "target_disp=%td is negative", disp);
  ptrdiff_t off;
  if (__builtin_mul_overflow(disp, (ptrdiff_t)t->disp_unit, &off) ||
      (!empty && (off + lo < 0 || off + hi > (ptrdiff_t)t->size)))
    return WIN_ERR(MPI_ERR_RMA_RANGE, "target_disp=%td x disp_unit %d, %d element(s): bytes [%td, %td) outside the "
                   "%zu-byte window of target %d", disp, t->disp_unit, tcount, off + lo, off + hi, t->size, rank);
  out->addr = t->base + off;
  return MPI_SUCCESS;
}

static int check_sizes(skn_rank *me, const char *fn, MPI_Win win, size_t obytes, const skn_dtype *ot, size_t tbytes,
                       const skn_dtype *tt) {
  if (obytes != tbytes)
    return WIN_ERR(MPI_ERR_TYPE, "origin data is %zu bytes, target data %zu: the type signatures differ", obytes,
                   tbytes);
  if (!skn_dt_sig_match(tt, ot, tbytes))
    return WIN_ERR(MPI_ERR_TYPE, "the origin and target type signatures differ");
  return MPI_SUCCESS;
}

/* The request of an Rput/Rget/Raccumulate/Rget_accumulate (the entry checked the pointer). */
static int done_request(skn_rank *me, const char *fn, MPI_Win win, MPI_Request *req) {
  skn_req *r = skn_req_alloc(me);
  if (!r) return WIN_ERR(MPI_ERR_NO_MEM, "out of memory for a request");
  r->kind = SKN_REQ_SEND; /* completes without a message status */
  r->comm = MPI_COMM_WORLD;
  r->st_src = MPI_ANY_SOURCE;
  r->st_tag = MPI_ANY_TAG;
  r->origin = fn;
  r->origin_peer = MPI_UNDEFINED;
  r->handle_live = true;
  atomic_store_explicit(&r->sync, SKN_REQ_DONE, memory_order_release); /* complete at target already */
  *req = skn_req_handle(r);
  return MPI_SUCCESS;
}

/* Put and Get's fast path: one contiguous predefined type on both sides, a window with
 * memory in this process, an open epoch and bytes inside the window. Whether it applied. */
static inline __attribute__((always_inline)) bool put_get_fast(bool put, void *obuf, int ocount, MPI_Datatype odt,
                                                               int rank, MPI_Aint disp, int tcount, MPI_Datatype tdt,
                                                               const skn_dtype *t, skn_win_view *v) {
  if (!(odt == tdt && ocount == tcount && !(t->flags & SKN_DT_DERIVED) && t->contig &&
        (unsigned)rank < (unsigned)v->size && !v->win->span))
    return false;
  skn_win_target *wt = &v->win->t[rank];
  size_t bytes = (size_t)(unsigned)ocount * t->size;
  if (!(v->flavor != MPI_WIN_FLAVOR_DYNAMIC && (v->fence | v->lock_all | v->locked[rank] | v->in_access[rank]) &&
        disp >= 0 && (size_t)disp <= wt->size && bytes <= wt->size &&
        (size_t)disp * (size_t)wt->disp_unit <= wt->size - bytes && (size_t)disp <= SIZE_MAX / 65536 &&
        (unsigned)wt->disp_unit <= 65536))
    return false;
  char *addr = wt->base + (size_t)disp * (size_t)wt->disp_unit;
  if (put) skn_dt_copy_inline(addr, (size_t)tcount, t, obuf, (size_t)ocount, t);
  else skn_dt_copy_inline(obuf, (size_t)ocount, t, addr, (size_t)tcount, t);
  return true;
}

/* Everything else: the epoch, the range and the type signatures. */
static int put_get(skn_rank *me, const char *fn, bool put, void *obuf, int ocount, const skn_dtype *ot, int rank,
                   MPI_Aint disp, int tcount, const skn_dtype *tt, MPI_Win win, skn_win_view *v, MPI_Request *req) {
  rma_target t;
  int rc = target(me, fn, win, v, rank, disp, tcount, tt, req != NULL, &t);
  if (rc == MPI_SUCCESS && !t.skip) rc = check_sizes(me, fn, win, (size_t)ocount * ot->size, ot, (size_t)tcount * tt->size, tt);
  if (rc != MPI_SUCCESS) return rc;
  if (!t.skip) { /* the target's transport: a copy here, UCX to another process */
    skn_rma_loc l = skn_win_loc(t.w, rank, t.addr);
    if (put) skn_rank_tp(t.peer)->put(t.peer, &l, obuf, (size_t)ocount, ot, (size_t)tcount, tt);
    else skn_rank_tp(t.peer)->get(t.peer, &l, obuf, (size_t)ocount, ot, (size_t)tcount, tt);
  }
  return req ? done_request(me, fn, win, req) : MPI_SUCCESS;
}

SKN_API_HOT int impl_Put(skn_rank *me, const char *fn, const void *obuf, int ocount, MPI_Datatype odt,
                         const skn_dtype *ot, int rank, MPI_Aint disp, int tcount, MPI_Datatype tdt,
                         const skn_dtype *tt, MPI_Win win, skn_win_view *v) {
  void *o = (void *)(uintptr_t)obuf;
  if (SKN_LIKELY(put_get_fast(true, o, ocount, odt, rank, disp, tcount, tdt, tt, v))) return MPI_SUCCESS;
  return put_get(me, fn, true, o, ocount, ot, rank, disp, tcount, tt, win, v, NULL);
}

SKN_API_HOT int impl_Get(skn_rank *me, const char *fn, void *obuf, int ocount, MPI_Datatype odt, const skn_dtype *ot,
                         int rank, MPI_Aint disp, int tcount, MPI_Datatype tdt, const skn_dtype *tt, MPI_Win win,
                         skn_win_view *v) {
  if (SKN_LIKELY(put_get_fast(false, obuf, ocount, odt, rank, disp, tcount, tdt, tt, v))) return MPI_SUCCESS;
  return put_get(me, fn, false, obuf, ocount, ot, rank, disp, tcount, tt, win, v, NULL);
}

static int impl_Rput(skn_rank *me, const char *fn, const void *obuf, int ocount, MPI_Datatype odt, const skn_dtype *ot,
                     int rank, MPI_Aint disp, int tcount, MPI_Datatype tdt, const skn_dtype *tt, MPI_Win win,
                     skn_win_view *v, MPI_Request *req) {
  return put_get(me, fn, true, (void *)(uintptr_t)obuf, ocount, ot, rank, disp, tcount, tt, win, v, req);
}

static int impl_Rget(skn_rank *me, const char *fn, void *obuf, int ocount, MPI_Datatype odt, const skn_dtype *ot,
                     int rank, MPI_Aint disp, int tcount, MPI_Datatype tdt, const skn_dtype *tt, MPI_Win win,
                     skn_win_view *v, MPI_Request *req) {
  return put_get(me, fn, false, obuf, ocount, ot, rank, disp, tcount, tt, win, v, req);
}

/* Accumulate and Get_accumulate. rt: the result's datatype (fetch only), checked by the
 * entry; the origin's is checked here unless op is MPI_NO_OP, which ignores it. */
static int accumulate(skn_rank *me, const char *fn, const void *obuf, int ocount, MPI_Datatype odt, void *rbuf,
                      int rcount, const skn_dtype *rt, int rank, MPI_Aint disp, int tcount, const skn_dtype *tt,
                      MPI_Op op, MPI_Win win, skn_win_view *v, bool fetch, MPI_Request *req) {
  unsigned opi = (unsigned)op & 0xffffffu;
  if (((unsigned)op >> 24) != SKN_KIND_OP || opi == 0 || opi >= SKN_OP_PREDEFINED_COUNT)
    return WIN_ERR(MPI_ERR_OP, "op=%#x: one-sided accumulates take predefined operations only", (unsigned)op);
  bool no_op = opi == (unsigned)(MPI_NO_OP & 0xffffff);
  const skn_dtype *ot = NULL;
  rma_target t;
  int rc = MPI_SUCCESS;
  if (!no_op) rc = check_type(me, fn, win, ocount, odt, &ot, "origin");
  if (rc == MPI_SUCCESS) rc = target(me, fn, win, v, rank, disp, tcount, tt, req != NULL, &t);
  if (rc != MPI_SUCCESS) return rc;
  if (!t.skip) {
    size_t tbytes = (size_t)tcount * tt->size;
    /* nothing moves: no type or op to match (MPICH returns at once too) */
    if (!tbytes && (no_op || (size_t)ocount * ot->size == 0) && (!fetch || (size_t)rcount * rt->size == 0))
      return req ? done_request(me, fn, win, req) : MPI_SUCCESS;
    int basic = skn_rma_basic(tt);
    if (basic < 0 || (tbytes && !skn_dt_predefined[basic].size))
      return WIN_ERR(MPI_ERR_TYPE, "the target datatype must consist of one predefined type");
    if (!skn_op_defined((int)opi, basic))
      return WIN_ERR(MPI_ERR_OP, "op=%#x is not defined on %s", (unsigned)op, skn_dt_predefined[basic].name);
    if (!no_op) {
      if ((ot->flags & SKN_DT_DERIVED ? skn_rma_basic(ot) : (int)(ot - skn_dt_predefined)) != basic)
        return WIN_ERR(MPI_ERR_TYPE, "the origin datatype's basic type differs from the target's (%s)",
                       skn_dt_predefined[basic].name);
      if ((rc = check_sizes(me, fn, win, (size_t)ocount * ot->size, ot, tbytes, tt)) != MPI_SUCCESS) return rc;
    }
    if (fetch && (size_t)rcount * rt->size != tbytes)
      return WIN_ERR(MPI_ERR_TYPE, "result data is %zu bytes, target data %zu", (size_t)rcount * rt->size, tbytes);
    skn_rma_loc l = skn_win_loc(t.w, rank, t.addr);
    if (skn_rank_tp(t.peer)->accumulate(t.peer, &l, (int)opi, basic, obuf, (size_t)ocount, ot, fetch ? rbuf : NULL,
                               (size_t)rcount, rt, (size_t)tcount, tt) != SKN_OK)
      return WIN_ERR(MPI_ERR_UNSUPPORTED_OPERATION, "accumulates on %s to rank %d: not supported by its transport",
                     skn_dt_predefined[basic].name, rank);
  }
  return req ? done_request(me, fn, win, req) : MPI_SUCCESS;
}

static int impl_Accumulate(skn_rank *me, const char *fn, const void *obuf, int ocount, MPI_Datatype odt, int rank,
                           MPI_Aint disp, int tcount, MPI_Datatype tdt, const skn_dtype *tt, MPI_Op op, MPI_Win win,
                           skn_win_view *v) {
  return accumulate(me, fn, obuf, ocount, odt, NULL, 0, NULL, rank, disp, tcount, tt, op, win, v, false, NULL);
}

static int impl_Get_accumulate(skn_rank *me, const char *fn, const void *obuf, int ocount, MPI_Datatype odt,
                               void *rbuf, int rcount, MPI_Datatype rdt, const skn_dtype *rt, int rank, MPI_Aint disp,
                               int tcount, MPI_Datatype tdt, const skn_dtype *tt, MPI_Op op, MPI_Win win,
                               skn_win_view *v) {
  return accumulate(me, fn, obuf, ocount, odt, rbuf, rcount, rt, rank, disp, tcount, tt, op, win, v, true, NULL);
}

static int impl_Raccumulate(skn_rank *me, const char *fn, const void *obuf, int ocount, MPI_Datatype odt, int rank,
                            MPI_Aint disp, int tcount, MPI_Datatype tdt, const skn_dtype *tt, MPI_Op op, MPI_Win win,
                            skn_win_view *v, MPI_Request *req) {
  return accumulate(me, fn, obuf, ocount, odt, NULL, 0, NULL, rank, disp, tcount, tt, op, win, v, false, req);
}

static int impl_Rget_accumulate(skn_rank *me, const char *fn, const void *obuf, int ocount, MPI_Datatype odt,
                                void *rbuf, int rcount, MPI_Datatype rdt, const skn_dtype *rt, int rank, MPI_Aint disp,
                                int tcount, MPI_Datatype tdt, const skn_dtype *tt, MPI_Op op, MPI_Win win,
                                skn_win_view *v, MPI_Request *req) {
  return accumulate(me, fn, obuf, ocount, odt, rbuf, rcount, rt, rank, disp, tcount, tt, op, win, v, true, req);
}

/* The entry checked that the datatype is predefined. */
static int impl_Fetch_and_op(skn_rank *me, const char *fn, const void *obuf, void *rbuf, MPI_Datatype dt,
                             const skn_dtype *t, int rank, MPI_Aint disp, MPI_Op op, MPI_Win win, skn_win_view *v) {
  return accumulate(me, fn, obuf, 1, dt, rbuf, 1, t, rank, disp, 1, t, op, win, v, true, NULL);
}

static int impl_Compare_and_swap(skn_rank *me, const char *fn, const void *obuf, const void *cbuf, void *rbuf,
                                 MPI_Datatype dt, const skn_dtype *dt_t, int rank, MPI_Aint disp, MPI_Win win,
                                 skn_win_view *v) {
  int basic = (int)(dt_t - skn_dt_predefined);
  /* integer, logical and byte types (MPI-3.1 11.3.4): those MPI_BAND is defined on, or bool */
  if (!skn_op_defined(6, basic) && !skn_op_defined(5, basic))
    return WIN_ERR(MPI_ERR_TYPE, "%s: MPI_Compare_and_swap takes integer, logical or byte types",
                   skn_dt_predefined[basic].name);
  rma_target t;
  int rc = target(me, fn, win, v, rank, disp, 1, dt_t, false, &t);
  if (rc != MPI_SUCCESS || t.skip) return rc;
  skn_rma_loc l = skn_win_loc(t.w, rank, t.addr);
  if (skn_rank_tp(t.peer)->cas(t.peer, &l, basic, obuf, cbuf, rbuf) != SKN_OK)
    return WIN_ERR(MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Compare_and_swap on %s to rank %d: not supported by its "
                   "transport", skn_dt_predefined[basic].name, rank);
  return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ synchronization */

static int impl_Win_fence(skn_rank *me, const char *fn, int assert, MPI_Win win, skn_win_view *v) {
  if (in_epoch_any(v)) return WIN_ERR(MPI_ERR_RMA_SYNC, "a PSCW or passive-target epoch is open");
  /* Operations are complete at the target once flushed (when issued, within the
   * process): the barrier orders everyone's before everyone's after. */
  skn_api_enter(me, fn, NULL, MPI_UNDEFINED, MPI_UNDEFINED);
  if (v->win->span) skn_win_flush(v->win, -1);
  skn_win_dyn_forget(v->win, -1); /* regions may be attached or detached from here on */
  skn_coll_barrier(me, v->win->comm);
  skn_api_leave(me);
  atomic_thread_fence(memory_order_seq_cst);
  v->fence = !(assert & MPI_MODE_NOSUCCEED);
  return MPI_SUCCESS;
}

/* Window ranks of group's members into out (n = group size); MPI_ERR_GROUP when one is
 * not a member. */
static int translate(skn_rank *me, const char *fn, MPI_Win win, skn_win_view *v, const skn_group *g, int *out,
                     int *n) {
  if (g->size > v->size) return WIN_ERR(MPI_ERR_GROUP, "the group is larger than the window's");
  for (int i = 0; i < g->size; i++) {
    int r = -1;
    for (int j = 0; j < v->size && r < 0; j++)
      if (v->wranks[j] == g->wranks[i]) r = j;
    if (r < 0) return WIN_ERR(MPI_ERR_GROUP, "world rank %d of the group is not in the window", g->wranks[i]);
    out[i] = r;
  }
  *n = g->size;
  return MPI_SUCCESS;
}

static int impl_Win_post(skn_rank *me, const char *fn, MPI_Group group, const skn_group *g, int assert,
                         MPI_Win win, skn_win_view *v) {
  if (v->nexposure >= 0) return WIN_ERR(MPI_ERR_RMA_SYNC, "an exposure epoch is open already");
  int *origins = malloc(sizeof(int) * (size_t)v->size), n = 0;
  if (!origins) return WIN_ERR(MPI_ERR_NO_MEM, "out of memory");
  int rc = translate(me, fn, win, v, g, origins, &n);
  if (rc == MPI_SUCCESS) {
    if (!(assert & MPI_MODE_NOCHECK)) skn_win_post(v->win, v->rank, origins, n);
    v->nexposure = n;
  }
  free(origins);
  return rc;
}

static int impl_Win_start(skn_rank *me, const char *fn, MPI_Group group, const skn_group *g, int assert,
                         MPI_Win win, skn_win_view *v) {
  if (v->naccess >= 0) return WIN_ERR(MPI_ERR_RMA_SYNC, "an access epoch was started already");
  if (v->lock_all || v->nlocked)
    return WIN_ERR(MPI_ERR_RMA_CONFLICT, "a passive-target epoch is open: PSCW access would conflict with it");
  int n = 0;
  int rc = translate(me, fn, win, v, g, v->access, &n);
  if (rc != MPI_SUCCESS) return rc;
  if (!(assert & MPI_MODE_NOCHECK)) {
    skn_api_enter(me, fn, NULL, MPI_UNDEFINED, MPI_UNDEFINED);
    skn_win_start(v->win, v->rank, v->access, n);
    skn_api_leave(me);
  }
  for (int i = 0; i < n; i++) v->in_access[v->access[i]] = 1;
  v->naccess = n;
  return MPI_SUCCESS;
}

static int impl_Win_complete(skn_rank *me, const char *fn, MPI_Win win, skn_win_view *v) {
  if (v->naccess < 0) return WIN_ERR(MPI_ERR_RMA_SYNC, "no access epoch was started (MPI_Win_start)");
  skn_win_complete(v->win, v->access, v->naccess);
  for (int i = 0; i < v->naccess; i++) v->in_access[v->access[i]] = 0;
  v->naccess = -1;
  return MPI_SUCCESS;
}

static int impl_Win_wait(skn_rank *me, const char *fn, MPI_Win win, skn_win_view *v) {
  if (v->nexposure < 0) return WIN_ERR(MPI_ERR_RMA_SYNC, "no exposure epoch was posted (MPI_Win_post)");
  skn_api_enter(me, fn, NULL, MPI_UNDEFINED, MPI_UNDEFINED);
  skn_win_wait(v->win, v->rank, v->nexposure);
  skn_api_leave(me);
  v->nexposure = -1;
  return MPI_SUCCESS;
}

static int impl_Win_test(skn_rank *me, const char *fn, MPI_Win win, skn_win_view *v, int *flag) {
  if (v->nexposure < 0) return WIN_ERR(MPI_ERR_RMA_SYNC, "no exposure epoch was posted (MPI_Win_post)");
  *flag = skn_win_test(v->win, v->rank, v->nexposure);
  if (*flag) v->nexposure = -1;
  else skn_sched_yield(); /* a polling target must not starve the origins it waits for */
  return MPI_SUCCESS;
}

static int impl_Win_lock(skn_rank *me, const char *fn, int lock_type, int rank, int assert, MPI_Win win,
                         skn_win_view *v) {
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  if (v->no_locks) return WIN_ERR(MPI_ERR_RMA_SYNC, "the window was created with info no_locks=true");
  if (v->naccess >= 0)
    return WIN_ERR(MPI_ERR_RMA_CONFLICT, "a PSCW access epoch is open: a lock would conflict with it");
  if (v->locked[rank] || v->lock_all)
    return WIN_ERR(MPI_ERR_RMA_SYNC, "an access epoch to target %d is open already", rank);
  bool excl = lock_type == MPI_LOCK_EXCLUSIVE;
  if (!(assert & MPI_MODE_NOCHECK) && !skn_win_try_lock(v->win, rank, excl)) {
    skn_api_enter(me, fn, NULL, rank, MPI_UNDEFINED);
    skn_win_lock(v->win, rank, excl);
    skn_api_leave(me);
  }
  v->locked[rank] = (uint8_t)((excl ? SKN_WLOCK_EXCL : SKN_WLOCK_SHARED) | (assert & MPI_MODE_NOCHECK ? SKN_WLOCK_NOCHECK : 0));
  v->nlocked++;
  return MPI_SUCCESS;
}

static int impl_Win_unlock(skn_rank *me, const char *fn, int rank, MPI_Win win, skn_win_view *v) {
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  uint8_t l = v->locked[rank];
  if (!l) return WIN_ERR(MPI_ERR_RMA_SYNC, "target %d is not locked by this rank", rank);
  if (!(l & SKN_WLOCK_NOCHECK)) skn_win_unlock(v->win, rank, l & SKN_WLOCK_EXCL);
  else if (v->win->span) skn_win_flush(v->win, rank);
  else atomic_thread_fence(memory_order_seq_cst);
  v->locked[rank] = 0;
  v->nlocked--;
  return MPI_SUCCESS;
}

static int impl_Win_lock_all(skn_rank *me, const char *fn, int assert, MPI_Win win, skn_win_view *v) {
  if (v->no_locks) return WIN_ERR(MPI_ERR_RMA_SYNC, "the window was created with info no_locks=true");
  if (v->naccess >= 0)
    return WIN_ERR(MPI_ERR_RMA_CONFLICT, "a PSCW access epoch is open: a lock would conflict with it");
  if (v->lock_all || v->nlocked) return WIN_ERR(MPI_ERR_RMA_SYNC, "an access epoch is open already");
  if (!(assert & MPI_MODE_NOCHECK)) {
    skn_api_enter(me, fn, NULL, MPI_UNDEFINED, MPI_UNDEFINED);
    for (int t = 0; t < v->size; t++) skn_win_lock(v->win, t, false);
    skn_api_leave(me);
  }
  v->lock_all = 1 + !!(assert & MPI_MODE_NOCHECK);
  return MPI_SUCCESS;
}

static int impl_Win_unlock_all(skn_rank *me, const char *fn, MPI_Win win, skn_win_view *v) {
  if (!v->lock_all) return WIN_ERR(MPI_ERR_RMA_SYNC, "MPI_Win_lock_all was not called");
  if (v->lock_all == 1)
    for (int t = 0; t < v->size; t++) skn_win_unlock(v->win, t, false);
  else if (v->win->span) skn_win_flush(v->win, -1);
  else atomic_thread_fence(memory_order_seq_cst);
  v->lock_all = 0;
  return MPI_SUCCESS;
}

/* Within the process every operation is complete at the target when its call returns:
 * flushes only order memory, after checking that a passive-target epoch is open. Across
 * processes a flush waits for remote completion (flush_local too: puts are complete
 * locally when they return, so only the stronger flush is left to do). */
static int flush(skn_rank *me, const char *fn, int rank, MPI_Win win, skn_win_view *v, bool all) {
  bool open = v->lock_all || (all ? v->nlocked > 0 : (rank == MPI_PROC_NULL || v->locked[rank]));
  if (!open) return WIN_ERR(MPI_ERR_RMA_SYNC, "no passive-target epoch is open%s", all ? "" : " to that target");
  if (v->win->span) {
    skn_api_enter(me, fn, NULL, MPI_UNDEFINED, MPI_UNDEFINED);
    skn_win_flush(v->win, all || rank == MPI_PROC_NULL ? -1 : rank);
    skn_api_leave(me);
    return MPI_SUCCESS;
  }
  /* The data is in place already; what follows (a flag put, a message, an unlock) must
   * not be seen before it: a release fence, free on x86. Win_sync is the full fence. */
  atomic_thread_fence(memory_order_acq_rel);
  return MPI_SUCCESS;
}

static int impl_Win_flush(skn_rank *me, const char *fn, int rank, MPI_Win win, skn_win_view *v) {
  return flush(me, fn, rank, win, v, false);
}
static int impl_Win_flush_local(skn_rank *me, const char *fn, int rank, MPI_Win win, skn_win_view *v) {
  return flush(me, fn, rank, win, v, false);
}
static int impl_Win_flush_all(skn_rank *me, const char *fn, MPI_Win win, skn_win_view *v) {
  return flush(me, fn, 0, win, v, true);
}
static int impl_Win_flush_local_all(skn_rank *me, const char *fn, MPI_Win win, skn_win_view *v) {
  return flush(me, fn, 0, win, v, true);
}

static int impl_Win_sync(skn_rank *me, const char *fn, MPI_Win win, skn_win_view *v) {
  atomic_thread_fence(memory_order_seq_cst); /* unified model: public and private copies are one */
  return MPI_SUCCESS;
}

#include "entries_win.h"
