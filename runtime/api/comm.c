/* Communicator management: dup, split, free, compare, names. New communicators are
 * agreed on through the parent's collective slots: one member creates the shared part
 * (fresh context id, member list) and the others pick it up. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "objects.h"

static int comm_error(skn_rank *me, MPI_Comm comm, const char *fn) {
  return skn_api_error(me, comm, MPI_ERR_COMM, fn, "comm=%#x is not a valid communicator", (unsigned)comm);
}

static int add_view(skn_rank *me, const char *fn, MPI_Comm parent, skn_comm *c, int rank, int errh, MPI_Comm *out) {
  int idx = c ? skn_rank_comm_add(me, c, rank, errh, "") : -1;
  if (idx < 0) return skn_api_error(me, parent, MPI_ERR_NO_MEM, fn, "out of memory for a communicator");
  *out = SKN_HANDLE(SKN_KIND_COMM, idx);
  return MPI_SUCCESS;
}

typedef struct member_key {
  int key, rank;
} member_key;

static int by_key(const void *x, const void *y) {
  const member_key *a = x, *b = y;
  return a->key != b->key ? (a->key < b->key ? -1 : 1) : (a->rank - b->rank);
}

/* The topology of a dup is the parent's, shared (immutable). */
static skn_topo *dup_topo(void *parent_topo, int holders) { return skn_topo_ref(parent_topo, holders); }

static skn_comm *inter_dup_procs(skn_rank *me, skn_comm *c, int rank);
static skn_comm *inter_split_procs(skn_rank *me, skn_comm *c, int rank, int color, int key);
static int side_rank_of(const skn_comm *side, const skn_rank *me);

static skn_comm *dup_shared(skn_rank *me, skn_comm *c, int rank) {
  int new_rank = rank;
  if (skn_comm_is_inter(c) && skn_job_g.nprocs > 1) return inter_dup_procs(me, c, rank);
  if (c->x) return skn_comm_span_split(me, c, rank, 0, rank, &new_rank, c->topo ? dup_topo : NULL, c->topo);
  /* Both groups of an intercommunicator agree through its bridge; the creator (bridge
   * rank 0) is in side 0, and side 1's members take the new side 0's `other`. */
  bool inter = skn_comm_is_inter(c);
  skn_comm *sync = inter ? c->bridge : c;
  int sync_rank = inter ? c->bridge_off + rank : rank;
  skn_coll_args a = {0};
  if (sync_rank == 0) {
    skn_comm *created = inter ? skn_intercomm_create(c->size, c->members, c->rsize, c->rmembers)
                              : skn_comm_create(c->size, c->members);
    if (created && c->topo) created->topo = skn_topo_ref(c->topo, c->size); /* immutable: shared */
    a.result = created;
  }
  skn_coll_publish(sync, sync_rank, &a);
  skn_comm *nc = sync->slots[0]->result;
  if (nc && inter && c->bridge_off != 0) nc = nc->other;
  skn_coll_barrier(me, sync);
  return nc;
}

int skn_api_comm_dup_now(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, MPI_Comm *newcomm) {
  int rank = v->rank, errh = v->errhandler;
  skn_comm *nc = dup_shared(me, v->comm, rank);
  int rc = add_view(me, fn, comm, nc, rank, errh, newcomm);
  if (rc != MPI_SUCCESS) return rc;
  /* This rank's attributes, through their copy callbacks (MPI_Comm_idup too). On failure
   * the new communicator goes away again, its copied attributes deleted, and dup fails. */
  skn_comm_view *nv = skn_api_comm(me, *newcomm);
  rc = skn_attr_copy_all(me, comm, v->attrs, &nv->attrs);
  if (rc != MPI_SUCCESS) {
    skn_attr_delete_all(me, *newcomm, &nv->attrs);
    skn_rank_lock(me);
    nv->comm = NULL;
    nv->attrs = NULL;
    skn_rank_unlock(me);
    if (nc->topo) skn_topo_release(nc->topo);
    skn_comm_release(nc);
    *newcomm = MPI_COMM_NULL;
    return skn_api_error(me, comm, skn_attr_errclass(rc), fn, "an attribute copy callback failed (%d)", rc);
  }
  nv->info = skn_info_clone(v->info); /* hints carry over (lost only when out of memory) */
  return MPI_SUCCESS;
}

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm) {
  static const char fn[] = "MPI_Comm_dup";
  skn_rank *me = skn_api_self(fn);
  skn_comm_view *v = skn_api_comm(me, comm);
  if (!v) return comm_error(me, comm, fn);
  skn_api_coll_order(me, v);
  skn_api_enter(me, fn, NULL, MPI_UNDEFINED, MPI_UNDEFINED);
  int rc = skn_api_comm_dup_now(me, fn, comm, v, newcomm);
  skn_api_leave(me);
  return rc;
}
SKN_WEAK_ALIAS(Comm_dup);

int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm) {
  /* no info keys change how Skein builds a communicator; they are kept for Comm_get_info */
  static const char fn[] = "MPI_Comm_dup_with_info";
  skn_rank *me = skn_api_self(fn);
  skn_info *copy;
  int rc = skn_info_copy_handle(me, fn, info, &copy);
  if (rc != MPI_SUCCESS) return rc;
  rc = PMPI_Comm_dup(comm, newcomm);
  skn_comm_view *nv = rc == MPI_SUCCESS ? skn_api_comm(me, *newcomm) : NULL;
  if (!nv) {
    skn_info_destroy(copy);
    return rc;
  }
  skn_info_destroy(nv->info);
  nv->info = copy;
  return MPI_SUCCESS;
}

int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info) {
  static const char fn[] = "MPI_Comm_set_info";
  skn_rank *me = skn_api_self(fn);
  skn_comm_view *v = skn_api_comm(me, comm);
  if (!v) return comm_error(me, comm, fn);
  skn_info *copy;
  int rc = skn_info_copy_handle(me, fn, info, &copy);
  if (rc != MPI_SUCCESS) return rc;
  skn_rank_lock(me);
  skn_info *old = v->info;
  v->info = copy;
  skn_rank_unlock(me);
  skn_info_destroy(old);
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Comm_set_info);

int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used) {
  static const char fn[] = "MPI_Comm_get_info";
  skn_rank *me = skn_api_self(fn);
  skn_comm_view *v = skn_api_comm(me, comm);
  if (!v) return comm_error(me, comm, fn);
  return skn_info_new_handle(me, fn, v->info, info_used);
}
SKN_WEAK_ALIAS(Comm_get_info);

int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *req) {
  static const char fn[] = "MPI_Comm_idup_with_info";
  skn_rank *me = skn_api_self(fn);
  skn_info *copy;
  int rc = skn_info_copy_handle(me, fn, info, &copy); /* checks the argument */
  skn_info_destroy(copy); /* hints may be ignored: the new one has comm's, as after Comm_idup */
  return rc != MPI_SUCCESS ? rc : PMPI_Comm_idup(comm, newcomm, req);
}
SKN_WEAK_ALIAS(Comm_idup_with_info);
SKN_WEAK_ALIAS(Comm_dup_with_info);


/* Members of `color` among sync's members [lo, lo + n), ordered by (key, old rank), into
 * mk; returns how many. */
static int select_color(const skn_comm *sync, int lo, int n, int color, member_key *mk) {
  int m = 0;
  for (int j = lo; j < lo + n; j++)
    if (sync->slots[j]->color == color) mk[m++] = (member_key){sync->slots[j]->key, j};
  qsort(mk, (size_t)m, sizeof *mk, by_key);
  return m;
}

/* Comm_split, and Comm_create on an intercommunicator. On an intercommunicator both
 * groups agree through the bridge: a color forms a new intercommunicator of its members
 * in each group (MPI_COMM_NULL when one group has none), created by its first member in
 * side 0. */
static int split_now(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, int color, int key,
                     MPI_Comm *newcomm) {
  skn_comm *c = v->comm;
  bool inter = skn_comm_is_inter(c);
  skn_comm *sync = inter ? c->bridge : c;
  int rank = v->rank, errh = v->errhandler, n = sync->size, my_s = c->bridge_off + rank;
  skn_coll_args a = {.color = color, .key = key};
  skn_api_coll_order(me, v);
  skn_api_enter(me, fn, NULL, MPI_UNDEFINED, MPI_UNDEFINED);
  if (inter && skn_job_g.nprocs > 1) {
    skn_comm *side = inter_split_procs(me, c, rank, color, key);
    skn_api_leave(me);
    if (!side) {
      *newcomm = MPI_COMM_NULL;
      if (color == MPI_UNDEFINED) return MPI_SUCCESS;
    }
    return color == MPI_UNDEFINED ? MPI_SUCCESS : add_view(me, fn, comm, side, side_rank_of(side, me), errh, newcomm);
  }
  if (c->x) {
    int new_rank = -1;
    skn_comm *nc = skn_comm_span_split(me, c, rank, color, key, &new_rank, NULL, NULL);
    skn_api_leave(me);
    if (color == MPI_UNDEFINED) {
      *newcomm = MPI_COMM_NULL;
      return MPI_SUCCESS;
    }
    return add_view(me, fn, comm, nc, new_rank, errh, newcomm);
  }
  skn_coll_publish(sync, my_s, &a);
  member_key *mk = malloc(sizeof *mk * (size_t)n);
  skn_rank **members = malloc(sizeof *members * (size_t)n);
  int m = 0, mr = 0, my_new = -1;
  bool ok = mk && members;
  if (ok && color != MPI_UNDEFINED) {
    m = select_color(sync, c->bridge_off, c->size, color, mk);
    if (inter) mr = select_color(sync, c->remote_off, c->rsize, color, mk + m);
    for (int i = 0; i < m + mr; i++) members[i] = sync->members[mk[i].rank];
    for (int i = 0; i < m; i++)
      if (mk[i].rank == my_s) my_new = i;
    if (my_new == 0 && !inter) a.result = skn_comm_create(m, members);
    if (my_new == 0 && inter && mr > 0 && c->bridge_off == 0)
      a.result = skn_intercomm_create(m, members, mr, members + m);
  }
  skn_coll_barrier(me, sync); /* creators have created theirs */
  skn_comm *nc = NULL;
  if (ok && color != MPI_UNDEFINED && (!inter || mr > 0)) {
    int creator = !inter || c->bridge_off == 0 ? mk[0].rank : mk[m].rank;
    nc = sync->slots[creator]->result;
    if (nc && inter && c->bridge_off != 0) nc = nc->other;
  }
  skn_coll_barrier(me, sync); /* nobody reads the slots any more */
  skn_api_leave(me);
  free(mk);
  free(members);
  if (color == MPI_UNDEFINED || (inter && mr == 0)) {
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  if (!ok) return skn_api_error(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
  return add_view(me, fn, comm, nc, my_new, errh, newcomm);
}

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm) {
  static const char fn[] = "MPI_Comm_split";
  skn_rank *me = skn_api_self(fn);
  skn_comm_view *v = skn_api_comm(me, comm);
  if (!v) return comm_error(me, comm, fn);
  if (color < 0 && color != MPI_UNDEFINED)
    return skn_api_error(me, comm, MPI_ERR_ARG, fn, "color=%d (must be >= 0 or MPI_UNDEFINED)", color);
  if (!newcomm) return skn_api_error(me, comm, MPI_ERR_ARG, fn, "newcomm=NULL");
  return split_now(me, fn, comm, v, color, key, newcomm);
}
SKN_WEAK_ALIAS(Comm_split);

int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm) {
  (void)info;
  skn_rank *me = skn_api_self("MPI_Comm_split_type");
  if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED)
    return skn_api_error(me, comm, MPI_ERR_ARG, "MPI_Comm_split_type", "split_type=%d", split_type);
  /* The ranks of one process share memory. */
  return PMPI_Comm_split(comm, split_type == MPI_UNDEFINED ? MPI_UNDEFINED : me->proc, key, newcomm);
}
SKN_WEAK_ALIAS(Comm_split_type);

int PMPI_Comm_free(MPI_Comm *comm) {
  static const char fn[] = "MPI_Comm_free";
  skn_rank *me = skn_api_self(fn);
  skn_comm_view *v = comm ? skn_api_comm(me, *comm) : NULL;
  if (!v) return comm_error(me, comm ? *comm : MPI_COMM_NULL, fn);
  if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
    return skn_api_error(me, *comm, MPI_ERR_COMM, fn, "%s cannot be freed", v->name);
  skn_api_coll_order(me, v); /* pending nonblocking collectives still use it */
  /* This rank's cached attributes first, while the communicator is still valid. */
  int rc = skn_attr_delete_all(me, *comm, &v->attrs);
  if (rc != MPI_SUCCESS)
    return skn_api_error(me, *comm, skn_attr_errclass(rc), fn, "an attribute delete callback failed (%d)", rc);
  skn_comm *c = v->comm;
  skn_topo *t = c->topo;
  skn_rank_lock(me);
  v->comm = NULL; /* the slot is free for the next communicator of this rank */
  v->attrs = NULL;
  skn_info *info = v->info;
  v->info = NULL;
  skn_rank_unlock(me);
  skn_info_destroy(info);
  if (t) skn_topo_release(t);
  skn_comm_release(c);
  *comm = MPI_COMM_NULL;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Comm_free);

static int cmp_rank_ptr(const void *x, const void *y) {
  uintptr_t a = (uintptr_t) * (skn_rank *const *)x, b = (uintptr_t) * (skn_rank *const *)y;
  return a < b ? -1 : a > b;
}

/* MPI_CONGRUENT (same members, same order), MPI_SIMILAR, MPI_UNEQUAL, or -1 when out of memory. */
static int compare_members(int n, skn_rank *const *x, int ny, skn_rank *const *y) {
  if (n != ny) return MPI_UNEQUAL;
  size_t bytes = sizeof(skn_rank *) * (size_t)n;
  if (!memcmp(x, y, bytes)) return MPI_CONGRUENT;
  skn_rank **sx = malloc(bytes), **sy = malloc(bytes);
  int result = -1;
  if (sx && sy) {
    memcpy(sx, x, bytes);
    memcpy(sy, y, bytes);
    qsort(sx, (size_t)n, sizeof *sx, cmp_rank_ptr);
    qsort(sy, (size_t)n, sizeof *sy, cmp_rank_ptr);
    result = memcmp(sx, sy, bytes) ? MPI_UNEQUAL : MPI_SIMILAR;
  }
  free(sx);
  free(sy);
  return result;
}

int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result) {
  static const char fn[] = "MPI_Comm_compare";
  skn_rank *me = skn_api_self(fn);
  skn_comm_view *a = skn_api_comm(me, comm1), *b = skn_api_comm(me, comm2);
  if (!a) return comm_error(me, comm1, fn);
  if (!b) return comm_error(me, comm2, fn);
  if (!result) return skn_api_error(me, comm1, MPI_ERR_ARG, fn, "result=NULL");
  skn_comm *x = a->comm, *y = b->comm;
  if (x == y) {
    *result = MPI_IDENT;
    return MPI_SUCCESS;
  }
  if (skn_comm_is_inter(x) != skn_comm_is_inter(y)) {
    *result = MPI_UNEQUAL;
    return MPI_SUCCESS;
  }
  /* Intercommunicators compare both groups; the weaker answer wins. */
  int local = compare_members(x->size, x->members, y->size, y->members), remote = MPI_CONGRUENT;
  if (skn_comm_is_inter(x) && local >= 0) remote = compare_members(x->rsize, x->rmembers, y->rsize, y->rmembers);
  if (local < 0 || remote < 0) return skn_api_error(me, comm1, MPI_ERR_NO_MEM, fn, "out of memory");
  *result = local > remote ? local : remote;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Comm_compare);

int PMPI_Comm_set_name(MPI_Comm comm, const char *name) {
  skn_rank *me = skn_api_self("MPI_Comm_set_name");
  skn_comm_view *v = skn_api_comm(me, comm);
  if (!v) return comm_error(me, comm, "MPI_Comm_set_name");
  if (!name) return skn_api_error(me, comm, MPI_ERR_ARG, "MPI_Comm_set_name", "name=NULL");
  snprintf(v->name, sizeof v->name, "%s", name);
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Comm_set_name);

int PMPI_Comm_get_name(MPI_Comm comm, char *name, int *resultlen) {
  skn_rank *me = skn_api_self("MPI_Comm_get_name");
  skn_comm_view *v = skn_api_comm(me, comm);
  if (!v) return comm_error(me, comm, "MPI_Comm_get_name");
  snprintf(name, MPI_MAX_OBJECT_NAME, "%s", v->name);
  *resultlen = (int)strlen(name);
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Comm_get_name);

int PMPI_Comm_test_inter(MPI_Comm comm, int *flag) {
  skn_rank *me = skn_api_self("MPI_Comm_test_inter");
  skn_comm_view *v = skn_api_comm(me, comm);
  if (!v) return comm_error(me, comm, "MPI_Comm_test_inter");
  if (!flag) return skn_api_error(me, comm, MPI_ERR_ARG, "MPI_Comm_test_inter", "flag=NULL");
  *flag = skn_comm_is_inter(v->comm);
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Comm_test_inter);

/* ------------------------------------------------------------------ Comm_create, Comm_create_group */

/* Checks that g is a subset of c; fills members (g's ranks, in group order), *my (the
 * caller's group rank or -1) and, when asked, cranks (their comm ranks). */
static int group_members(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm *c, const skn_group *g,
                         skn_rank **members, int *my, int *cranks) {
  int *where = malloc(sizeof(int) * (size_t)skn_job_g.size); /* world rank -> comm rank */
  if (!where) return skn_api_error(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
  for (int w = 0; w < skn_job_g.size; w++) where[w] = -1;
  for (int i = 0; i < c->size; i++) where[c->members[i]->world_rank] = i;
  *my = -1;
  for (int i = 0; i < g->size; i++) {
    int w = g->wranks[i];
    if (where[w] < 0) {
      free(where);
      return skn_api_error(me, comm, MPI_ERR_GROUP, fn,
                           "the group's rank %d (world rank %d) is not in the communicator", i, w);
    }
    members[i] = skn_job_g.ranks[w];
    if (cranks) cranks[i] = where[w];
    if (w == me->world_rank) *my = i;
  }
  free(where);
  return MPI_SUCCESS;
}

int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm) {
  static const char fn[] = "MPI_Comm_create";
  skn_rank *me = skn_api_self(fn);
  skn_comm_view *v = skn_api_comm(me, comm);
  if (!v) return comm_error(me, comm, fn);
  const skn_group *g = skn_api_group(me, group);
  if (!g) return skn_api_error(me, comm, MPI_ERR_GROUP, fn, "group=%#x is not a valid group", (unsigned)group);
  if (!newcomm) return skn_api_error(me, comm, MPI_ERR_ARG, fn, "newcomm=NULL");
  skn_comm *c = v->comm;
  int rank = v->rank, errh = v->errhandler, my = -1;
  skn_rank **members = malloc(sizeof *members * (size_t)(g->size ? g->size : 1));
  int *cranks = malloc(sizeof(int) * (size_t)(g->size ? g->size : 1));
  int rc = members && cranks ? group_members(me, fn, comm, c, g, members, &my, cranks)
                             : skn_api_error(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
  int leader = rc == MPI_SUCCESS && g->size ? cranks[0] : -1;
  free(cranks);
  if (rc != MPI_SUCCESS) {
    free(members);
    return rc;
  }
  if (skn_comm_is_inter(c)) { /* each group gives a subgroup of its own: a split by membership */
    free(members);
    return split_now(me, fn, comm, v, my >= 0 ? 0 : MPI_UNDEFINED, my, newcomm);
  }
  if (c->x) { /* disjoint groups have distinct first members */
    int color = my >= 0 ? g->wranks[0] : MPI_UNDEFINED;
    free(members);
    return split_now(me, fn, comm, v, color, my, newcomm);
  }
  skn_api_coll_order(me, v);
  /* As in split: the group's rank 0 creates the communicator and the other members read
   * it from that rank's slot, so disjoint groups given by different ranks work too. */
  skn_coll_args a = {0};
  if (my == 0) a.result = skn_comm_create(g->size, members);
  free(members);
  skn_api_enter(me, fn, NULL, MPI_UNDEFINED, MPI_UNDEFINED);
  skn_coll_publish(c, rank, &a);
  skn_comm *nc = my >= 0 ? c->slots[leader]->result : NULL;
  skn_coll_barrier(me, c);
  skn_api_leave(me);
  if (my < 0) {
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  return add_view(me, fn, comm, nc, my, errh, newcomm);
}
SKN_WEAK_ALIAS(Comm_create);

/* Only the group's members call it: they agree through a process-wide rendezvous
 * (group.c), never through the parent's slots or barrier. */
int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm) {
  static const char fn[] = "MPI_Comm_create_group";
  skn_rank *me = skn_api_self(fn);
  skn_comm_view *v = skn_api_comm(me, comm);
  if (!v) return comm_error(me, comm, fn);
  const skn_group *g = skn_api_group(me, group);
  if (!g) return skn_api_error(me, comm, MPI_ERR_GROUP, fn, "group=%#x is not a valid group", (unsigned)group);
  if (tag < 0) return skn_api_error(me, comm, MPI_ERR_TAG, fn, "tag=%d (must be in [0, %d])", tag, SKN_TAG_UB);
  if (!newcomm) return skn_api_error(me, comm, MPI_ERR_ARG, fn, "newcomm=NULL");
  int rc = skn_api_intra_only(me, v, comm, fn);
  if (rc != MPI_SUCCESS) return rc;
  skn_comm *c = v->comm;
  int errh = v->errhandler, my = -1, n = g->size;
  skn_rank **members = malloc(sizeof *members * (size_t)(n ? n : 1));
  int *cranks = malloc(sizeof(int) * (size_t)(n ? n : 1));
  rc = members && cranks ? group_members(me, fn, comm, c, g, members, &my, cranks)
                         : skn_api_error(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
  if (rc != MPI_SUCCESS || my < 0) { /* a caller outside the group gets MPI_COMM_NULL */
    free(members);
    free(cranks);
    if (rc == MPI_SUCCESS) *newcomm = MPI_COMM_NULL;
    return rc;
  }
  skn_api_enter(me, fn, NULL, MPI_UNDEFINED, tag);
  /* Members in several processes: the group's rank 0 picks the context id and tells the
   * others over the parent's collective context, under a tag of their own. */
  int new_ctx = -1;
  bool spans = false;
  for (int i = 0; i < n; i++) spans |= skn_rank_is_remote(members[i]);
  if (spans) {
    const skn_dtype *int_t = skn_api_dtype(me, MPI_INT);
    if (my == 0) {
      new_ctx = skn_cid_alloc();
      for (int i = 1; i < n; i++) skn_xcoll_send(c, v->rank, cranks[i], -2 - tag, &new_ctx, 1, int_t);
    } else {
      skn_xcoll_recv(c, cranks[0], -2 - tag, &new_ctx, 1, int_t);
    }
  }
  skn_comm *nc = skn_group_rendezvous(me, c->ctx, tag, n, members, g->wranks, my, new_ctx, NULL, NULL);
  skn_api_leave(me);
  free(members);
  free(cranks);
  return add_view(me, fn, comm, nc, my, errh, newcomm);
}
SKN_WEAK_ALIAS(Comm_create_group);

/* ------------------------------------------------------------------ intercommunicators */

int PMPI_Comm_remote_size(MPI_Comm comm, int *size) {
  static const char fn[] = "MPI_Comm_remote_size";
  skn_rank *me = skn_api_self(fn);
  skn_comm_view *v = skn_api_comm(me, comm);
  if (!v) return comm_error(me, comm, fn);
  if (!skn_comm_is_inter(v->comm)) return skn_api_error(me, comm, MPI_ERR_COMM, fn, "not an intercommunicator");
  if (!size) return skn_api_error(me, comm, MPI_ERR_ARG, fn, "size=NULL");
  *size = v->comm->rsize;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Comm_remote_size);

/* What the two leaders tell each other: their group and who they are. */
typedef struct leader_hello {
  skn_comm *group;
  int world_rank;
} leader_hello;

static bool groups_overlap(const skn_comm *a, const skn_comm *b) {
  bool *in_a = calloc((size_t)skn_job_g.size, sizeof *in_a), overlap = false;
  if (!in_a) return true; /* refuse rather than risk it; reported as an argument error */
  for (int i = 0; i < a->size; i++) in_a[a->members[i]->world_rank] = true;
  for (int i = 0; i < b->size && !overlap; i++) overlap = in_a[b->members[i]->world_rank];
  free(in_a);
  return overlap;
}

/* The leaders' part of MPI_Intercomm_create: agree with the remote leader over peer_comm
 * on the new intercommunicator. The leader with the lower world rank creates it (its
 * group becomes side 0) and sends the other leader a pointer: both live in this process.
 * Returns this group's side, or NULL with *err set. */
static skn_comm *leaders_agree(skn_rank *me, const char *fn, skn_comm *local, MPI_Comm peer_comm, int remote_leader,
                               int tag, int *err) {
  skn_comm_view *pv = skn_api_comm(me, peer_comm);
  if (!pv) {
    *err = skn_api_error(me, peer_comm, MPI_ERR_COMM, fn, "peer_comm=%#x is not a valid communicator",
                         (unsigned)peer_comm);
    return NULL;
  }
  if (remote_leader < 0 || remote_leader >= pv->comm->rsize) {
    *err = skn_api_error(me, peer_comm, MPI_ERR_RANK, fn, "remote_leader=%d (peer_comm size %d)", remote_leader,
                         pv->comm->rsize);
    return NULL;
  }
  leader_hello mine = {local, me->world_rank}, theirs;
  int rc = PMPI_Sendrecv(&mine, sizeof mine, MPI_BYTE, remote_leader, tag, &theirs, sizeof theirs, MPI_BYTE,
                         remote_leader, tag, peer_comm, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS) {
    *err = rc;
    return NULL;
  }
  skn_comm *side = NULL;
  if (me->world_rank < theirs.world_rank) {
    skn_comm *remote = theirs.group; /* its members wait in this call: it stays valid */
    if (!groups_overlap(local, remote))
      side = skn_intercomm_create(local->size, local->members, remote->size, remote->members);
    rc = PMPI_Send(&side, sizeof side, MPI_BYTE, remote_leader, tag, peer_comm);
  } else {
    rc = PMPI_Recv(&side, sizeof side, MPI_BYTE, remote_leader, tag, peer_comm, MPI_STATUS_IGNORE);
    if (side) side = side->other;
  }
  if (rc != MPI_SUCCESS) *err = rc;
  else if (!side) *err = skn_api_error(me, peer_comm, MPI_ERR_ARG, fn, "the two groups overlap, or out of memory");
  return side;
}

/* ---- intercommunicators in jobs of several processes
 * Nothing can be handed over by pointer: the groups are world-rank lists, the context ids
 * are offered by one leader, and each process builds its own copy of the pair of sides
 * and their bridge, through the process-wide rendezvous of api/group.c (its first member
 * of either group creates it). */

typedef struct inter_spec {
  int na, nb;             /* side 0 and side 1 sizes */
  skn_rank **members;     /* side 0 then side 1 */
  int ctx, bridge_ctx;
} inter_spec;

static skn_comm *create_inter(void *arg) {
  const inter_spec *sp = arg;
  return skn_intercomm_create_ctx(sp->na, sp->members, sp->nb, sp->members + sp->na, sp->ctx, sp->bridge_ctx);
}

/* This process's copy of the intercommunicator of `sp`; `my` is the caller's index in
 * sp->members. Returns the caller's side, or NULL when out of memory. A side-1 member
 * reads side 0's `other`: callers keep everyone in the call (a bridge barrier) until all
 * have, since side 0 goes away when its last member here frees it. */
static skn_comm *inter_build(skn_rank *me, inter_spec *sp, int my) {
  int n = sp->na + sp->nb;
  int *wranks = malloc(sizeof(int) * (size_t)n);
  if (!wranks) skn_fatal("rank %d: out of memory creating an intercommunicator", me->world_rank);
  for (int i = 0; i < n; i++) wranks[i] = sp->members[i]->world_rank;
  skn_comm *s0 = skn_group_rendezvous(me, sp->ctx, -1, n, sp->members, wranks, my, -1, create_inter, sp);
  free(wranks);
  return s0 && my >= sp->na ? s0->other : s0;
}

static void bcast_ints(skn_rank *me, skn_comm *c, int rank, int root, int *buf, int n) {
  skn_coll_args a = {.rbuf = buf, .rcount = (size_t)n, .rt = skn_api_dtype(me, MPI_INT), .root = root};
  c->coll->bcast(c, rank, &a);
}

enum { LC_ERR, LC_RSIZE, LC_SIDE0, LC_CTX, LC_BCTX, LC_N };

/* The leaders' part: swap cards and member lists over peer_comm. Fills info (LC_*) and
 * *remote (the remote group's world ranks, malloc'ed). */
static void leaders_swap(skn_rank *me, const char *fn, skn_comm *local, MPI_Comm peer_comm, int remote_leader, int tag,
                         int info[LC_N], int **remote) {
  skn_comm_view *pv = skn_api_comm(me, peer_comm);
  if (!pv) {
    info[LC_ERR] = skn_api_error(me, peer_comm, MPI_ERR_COMM, fn, "peer_comm=%#x is not a valid communicator",
                                 (unsigned)peer_comm);
    return;
  }
  if (remote_leader < 0 || remote_leader >= pv->comm->rsize) {
    info[LC_ERR] = skn_api_error(me, peer_comm, MPI_ERR_RANK, fn, "remote_leader=%d (peer_comm size %d)",
                                 remote_leader, pv->comm->rsize);
    return;
  }
  /* each leader offers context ids; the lower world rank's are used (its group is side 0) */
  int mine[4] = {me->world_rank, local->size, skn_cid_alloc(), skn_cid_alloc()}, theirs[4];
  int rc = PMPI_Sendrecv(mine, 4, MPI_INT, remote_leader, tag, theirs, 4, MPI_INT, remote_leader, tag, peer_comm,
                         MPI_STATUS_IGNORE);
  int *ours = malloc(sizeof(int) * (size_t)local->size);
  *remote = rc == MPI_SUCCESS ? malloc(sizeof(int) * (size_t)(theirs[1] > 0 ? theirs[1] : 1)) : NULL;
  if (rc == MPI_SUCCESS && (!ours || !*remote)) skn_fatal("rank %d: %s: out of memory", me->world_rank, fn);
  for (int i = 0; ours && i < local->size; i++) ours[i] = local->members[i]->world_rank;
  if (rc == MPI_SUCCESS)
    rc = PMPI_Sendrecv(ours, local->size, MPI_INT, remote_leader, tag, *remote, theirs[1], MPI_INT, remote_leader, tag,
                       peer_comm, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS) {
    free(ours);
    info[LC_ERR] = rc;
    return;
  }
  bool side0 = me->world_rank < theirs[0];
  info[LC_RSIZE] = theirs[1];
  info[LC_SIDE0] = side0;
  info[LC_CTX] = side0 ? mine[2] : theirs[2];
  info[LC_BCTX] = side0 ? mine[3] : theirs[3];
  bool *in_ours = calloc((size_t)skn_job_g.size, sizeof *in_ours);
  if (!in_ours) skn_fatal("rank %d: %s: out of memory", me->world_rank, fn);
  for (int i = 0; i < local->size; i++) in_ours[ours[i]] = true;
  bool overlap = false;
  for (int i = 0; i < theirs[1]; i++)
    overlap |= (*remote)[i] < 0 || (*remote)[i] >= skn_job_g.size || in_ours[(*remote)[i]];
  free(in_ours);
  free(ours);
  if (overlap) info[LC_ERR] = skn_api_error(me, peer_comm, MPI_ERR_ARG, fn, "the two groups overlap");
}

/* Comm_split of an intercommunicator: every member of both groups learns every (color,
 * key, context id offers) through an allgather on the bridge; a color forms an
 * intercommunicator of its members in each group (none when a group has none), with the
 * offers of its first member in side 0. Returns the caller's side, or NULL. */
static skn_comm *inter_split_procs(skn_rank *me, skn_comm *c, int rank, int color, int key) {
  skn_comm *b = c->bridge;
  int n = b->size, n0 = c->bridge_off == 0 ? c->size : c->rsize, me_b = c->bridge_off + rank;
  int offer[4] = {color, key, 0, 0};
  if (color != MPI_UNDEFINED) {
    offer[2] = skn_cid_alloc();
    offer[3] = skn_cid_alloc();
  }
  int *all = malloc(sizeof(int) * 4 * (size_t)n);
  member_key *mk = malloc(sizeof *mk * (size_t)n);
  if (!all || !mk) skn_fatal("rank %d: out of memory splitting an intercommunicator", me->world_rank);
  const skn_dtype *int_t = skn_api_dtype(me, MPI_INT);
  skn_coll_args g = {.sbuf = offer, .scount = 4, .st = int_t, .rbuf = all, .rcount = 4, .rt = int_t};
  skn_xcoll_allgather(b, me_b, &g);
  skn_comm *side = NULL;
  int m0 = 0, m1 = 0;
  if (color != MPI_UNDEFINED) {
    for (int j = 0; j < n0; j++)
      if (all[4 * j] == color) mk[m0++] = (member_key){all[4 * j + 1], j};
    for (int j = n0; j < n; j++)
      if (all[4 * j] == color) mk[m0 + m1++] = (member_key){all[4 * j + 1], j};
    qsort(mk, (size_t)m0, sizeof *mk, by_key);
    qsort(mk + m0, (size_t)m1, sizeof *mk, by_key);
  }
  if (m0 > 0 && m1 > 0) {
    inter_spec sp = {.na = m0, .nb = m1, .ctx = all[4 * mk[0].rank + 2], .bridge_ctx = all[4 * mk[0].rank + 3]};
    if (!(sp.members = malloc(sizeof *sp.members * (size_t)(m0 + m1))))
      skn_fatal("rank %d: out of memory splitting an intercommunicator", me->world_rank);
    int my = -1;
    for (int i = 0; i < m0 + m1; i++) {
      sp.members[i] = b->members[mk[i].rank];
      if (mk[i].rank == me_b) my = i;
    }
    side = inter_build(me, &sp, my);
    free(sp.members);
  }
  skn_coll_barrier(me, b);
  free(all);
  free(mk);
  return side;
}

/* The caller's rank in (its group of) a communicator it belongs to. */
static int side_rank_of(const skn_comm *side, const skn_rank *me) {
  for (int i = 0; i < side->size; i++)
    if (side->members[i] == me) return i;
  return -1;
}

/* Comm_dup of an intercommunicator: bridge rank 0 offers the context ids. */
static skn_comm *inter_dup_procs(skn_rank *me, skn_comm *c, int rank) {
  int br = c->bridge_off + rank, ids[2] = {0, 0};
  if (br == 0) {
    ids[0] = skn_cid_alloc();
    ids[1] = skn_cid_alloc();
  }
  bcast_ints(me, c->bridge, br, 0, ids, 2);
  int n0 = c->bridge_off == 0 ? c->size : c->rsize;
  inter_spec sp = {.na = n0, .nb = c->bridge->size - n0, .members = c->bridge->members, .ctx = ids[0],
                   .bridge_ctx = ids[1]};
  skn_comm *side = inter_build(me, &sp, br);
  skn_coll_barrier(me, c->bridge);
  return side;
}

static int intercomm_create_procs(skn_rank *me, const char *fn, MPI_Comm local_comm, skn_comm_view *v,
                                  int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
                                  MPI_Comm *newintercomm) {
  skn_comm *c = v->comm;
  int rank = v->rank, errh = v->errhandler, info[LC_N] = {0};
  int *remote = NULL;
  skn_api_coll_order(me, v);
  if (rank == local_leader) leaders_swap(me, fn, c, peer_comm, remote_leader, tag, info, &remote);
  skn_api_enter(me, fn, NULL, MPI_UNDEFINED, tag);
  bcast_ints(me, c, rank, local_leader, info, LC_N);
  if (info[LC_ERR]) {
    skn_api_leave(me);
    free(remote);
    *newintercomm = MPI_COMM_NULL;
    if (rank == local_leader) return info[LC_ERR];
    return skn_api_error(me, local_comm, skn_attr_errclass(info[LC_ERR]), fn,
                         "the local leader (rank %d) could not create the intercommunicator", local_leader);
  }
  int nr = info[LC_RSIZE];
  if (rank != local_leader && !(remote = malloc(sizeof(int) * (size_t)(nr ? nr : 1))))
    skn_fatal("rank %d: %s: out of memory", me->world_rank, fn);
  bcast_ints(me, c, rank, local_leader, remote, nr);
  bool side0 = info[LC_SIDE0];
  inter_spec sp = {.na = side0 ? c->size : nr, .nb = side0 ? nr : c->size, .ctx = info[LC_CTX],
                   .bridge_ctx = info[LC_BCTX]};
  if (!(sp.members = malloc(sizeof *sp.members * (size_t)(c->size + nr))))
    skn_fatal("rank %d: %s: out of memory", me->world_rank, fn);
  skn_rank **ours = sp.members + (side0 ? 0 : nr), **theirs = sp.members + (side0 ? c->size : 0);
  for (int i = 0; i < c->size; i++) ours[i] = c->members[i];
  for (int i = 0; i < nr; i++) theirs[i] = skn_job_g.ranks[remote[i]];
  skn_comm *side = inter_build(me, &sp, (side0 ? 0 : nr) + rank);
  if (side) skn_coll_barrier(me, side->bridge);
  skn_api_leave(me);
  free(remote);
  free(sp.members);
  return add_view(me, fn, local_comm, side, rank, errh, newintercomm);
}

int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
                          MPI_Comm *newintercomm) {
  static const char fn[] = "MPI_Intercomm_create";
  skn_rank *me = skn_api_self(fn);
  skn_comm_view *v = skn_api_comm(me, local_comm);
  if (!v) return comm_error(me, local_comm, fn);
  int rc = skn_api_intra_only(me, v, local_comm, fn);
  if (rc != MPI_SUCCESS) return rc;
  if (!newintercomm) return skn_api_error(me, local_comm, MPI_ERR_ARG, fn, "newintercomm=NULL");
  skn_comm *c = v->comm;
  if (local_leader < 0 || local_leader >= c->size)
    return skn_api_error(me, local_comm, MPI_ERR_RANK, fn, "local_leader=%d (communicator size %d)", local_leader,
                         c->size);
  if (tag < 0) return skn_api_error(me, local_comm, MPI_ERR_TAG, fn, "tag=%d", tag);
  if (skn_job_g.nprocs > 1) /* the groups may live in several processes: no pointers */
    return intercomm_create_procs(me, fn, local_comm, v, local_leader, peer_comm, remote_leader, tag, newintercomm);
  int rank = v->rank, errh = v->errhandler;
  skn_api_coll_order(me, v);
  /* The leader reports its own errors; the others learn the error class from its slot, so
   * nobody waits for a leader that gave up. */
  skn_coll_args a = {0};
  if (rank == local_leader) a.result = leaders_agree(me, fn, c, peer_comm, remote_leader, tag, &a.color);
  skn_api_enter(me, fn, NULL, MPI_UNDEFINED, tag);
  skn_coll_publish(c, rank, &a);
  skn_comm *side = c->slots[local_leader]->result;
  int err = c->slots[local_leader]->color;
  skn_coll_barrier(me, c);
  skn_api_leave(me);
  if (!side) {
    *newintercomm = MPI_COMM_NULL;
    if (rank == local_leader) return err;
    return skn_api_error(me, local_comm, err ? skn_attr_errclass(err) : MPI_ERR_OTHER, fn,
                         "the local leader (rank %d) could not create the intercommunicator", local_leader);
  }
  return add_view(me, fn, local_comm, side, rank, errh, newintercomm);
}
SKN_WEAK_ALIAS(Intercomm_create);

/* Intercomm_merge when the groups span processes: every member learns every `high` flag
 * through an allgather on the bridge, then a split of the bridge orders the groups. */
static int merge_procs(skn_rank *me, const char *fn, MPI_Comm intercomm, skn_comm_view *v, int high,
                       MPI_Comm *newintracomm) {
  skn_comm *c = v->comm, *bridge = c->bridge;
  int rank = v->rank, me_b = c->bridge_off + rank, n = bridge->size;
  int n0 = c->bridge_off == 0 ? c->size : c->rsize, new_rank = -1;
  int *highs = malloc(sizeof(int) * (size_t)n);
  if (!highs) skn_fatal("rank %d: %s: out of memory", me->world_rank, fn);
  const skn_dtype *int_t = skn_api_dtype(me, MPI_INT);
  skn_coll_args g = {.sbuf = &high, .scount = 1, .st = int_t, .rbuf = highs, .rcount = 1, .rt = int_t};
  skn_xcoll_allgather(bridge, me_b, &g);
  int h0 = highs[0], h1 = highs[n0];
  bool consistent = true;
  for (int i = 0; i < n; i++) consistent &= highs[i] == (i < n0 ? h0 : h1);
  free(highs);
  bool side0_first = h0 == h1 || !h0; /* the low group first; side 0 first on a tie */
  int key = side0_first ? me_b : me_b >= n0 ? me_b - n0 : (n - n0) + me_b;
  skn_comm *nc = skn_comm_span_split(me, bridge, me_b, consistent ? 0 : MPI_UNDEFINED, key, &new_rank, NULL, NULL);
  skn_api_leave(me);
  if (!consistent) {
    *newintracomm = MPI_COMM_NULL;
    return skn_api_error(me, intercomm, MPI_ERR_ARG, fn, "the members of one group passed different values of high");
  }
  return add_view(me, fn, intercomm, nc, new_rank, v->errhandler, newintracomm);
}

int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm) {
  static const char fn[] = "MPI_Intercomm_merge";
  skn_rank *me = skn_api_self(fn);
  skn_comm_view *v = skn_api_comm(me, intercomm);
  if (!v) return comm_error(me, intercomm, fn);
  if (!skn_comm_is_inter(v->comm)) return skn_api_error(me, intercomm, MPI_ERR_COMM, fn, "not an intercommunicator");
  if (!newintracomm) return skn_api_error(me, intercomm, MPI_ERR_ARG, fn, "newintracomm=NULL");
  skn_comm *c = v->comm, *bridge = c->bridge;
  int rank = v->rank, errh = v->errhandler, me_b = c->bridge_off + rank;
  int n0 = c->bridge_off == 0 ? c->size : c->rsize, n = bridge->size;
  skn_api_coll_order(me, v);
  skn_coll_args a = {.color = high != 0};
  skn_api_enter(me, fn, NULL, MPI_UNDEFINED, MPI_UNDEFINED);
  if (bridge->x) return merge_procs(me, fn, intercomm, v, high != 0, newintracomm);
  skn_coll_publish(bridge, me_b, &a);
  /* Every member sees every flag, so all agree on the order and on any error. */
  int h0 = bridge->slots[0]->color, h1 = bridge->slots[n0]->color;
  bool consistent = true;
  for (int i = 0; i < n; i++) consistent &= bridge->slots[i]->color == (i < n0 ? h0 : h1);
  bool side0_first = h0 == h1 || !h0; /* the low group first; side 0 first on a tie */
  if (me_b == 0 && consistent) {
    skn_rank **m = malloc(sizeof *m * (size_t)n);
    if (m) {
      int k = 0;
      for (int pass = 0; pass < 2; pass++) {
        bool take_side0 = (pass == 0) == side0_first;
        for (int i = take_side0 ? 0 : n0; i < (take_side0 ? n0 : n); i++) m[k++] = bridge->members[i];
      }
      a.result = skn_comm_create(n, m);
      free(m);
    }
  }
  skn_coll_barrier(me, bridge); /* the merged communicator exists */
  skn_comm *nc = bridge->slots[0]->result;
  skn_coll_barrier(me, bridge); /* slot 0 is no longer read */
  skn_api_leave(me);
  if (!consistent) {
    *newintracomm = MPI_COMM_NULL;
    return skn_api_error(me, intercomm, MPI_ERR_ARG, fn, "the members of one group passed different values of high");
  }
  bool mine_first = (c->bridge_off == 0) == side0_first;
  int new_rank = mine_first ? rank : c->rsize + rank;
  return add_view(me, fn, intercomm, nc, new_rank, errh, newintracomm);
}
SKN_WEAK_ALIAS(Intercomm_merge);
