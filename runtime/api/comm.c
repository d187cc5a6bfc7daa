/* Communicator management: dup, split, free, compare, names, intercommunicators:
 * argument checks and handles. The entry points are generated (entries_comm.h); the
 * impl_ functions get the communicator's view already checked. How the members agree on a new communicator is the
 * core's (core/agree.c, collective.h "agreement"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "objects.h"

int skn_api_comm_add(skn_rank *me, const char *fn, MPI_Comm parent, skn_comm *c, int rank, int errh,
                     MPI_Comm *out) {
  skn_api_comm_state *st = c ? calloc(1, sizeof *st) : NULL;
  if (st) st->errhandler = errh;
  int idx = st ? skn_rank_comm_add(me, c, rank, st) : -1;
  if (idx < 0) {
    free(st);
    return skn_api_error(me, parent, MPI_ERR_NO_MEM, fn, "out of memory for a communicator");
  }
  *out = SKN_HANDLE(SKN_KIND_COMM, idx);
  return MPI_SUCCESS;
}

/* Frees the calling rank's view v and its MPI state, whose attributes are deleted. */
static void drop_view(skn_rank *me, skn_comm_view *v) {
  skn_api_comm_state *st = v->api;
  skn_rank_lock(me);
  v->comm = NULL; /* the slot is free for the next communicator of this rank */
  v->api = NULL;
  skn_rank_unlock(me);
  skn_info_destroy(st->info);
  free(st);
}

/* The topology of a dup is the parent's, shared (immutable). */
static skn_topo *dup_topo(void *parent_topo, int holders) { return skn_topo_ref(parent_topo, holders); }

int skn_api_comm_dup_now(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, MPI_Comm *newcomm) {
  int rank = v->rank, errh = v->api->errhandler;
  skn_comm *c = v->comm;
  skn_comm *nc = skn_comm_dup_shared(me, c, rank, c->topo ? dup_topo : NULL, c->topo);
  int rc = skn_api_comm_add(me, fn, comm, nc, rank, errh, newcomm);
  if (rc != MPI_SUCCESS) return rc;
  /* This rank's attributes, through their copy callbacks (MPI_Comm_idup too). On failure
   * the new communicator goes away again, its copied attributes deleted, and dup fails. */
  skn_comm_view *nv = skn_api_comm(me, *newcomm);
  rc = skn_attr_copy_all(me, comm, v->api->attrs, &nv->api->attrs);
  if (rc != MPI_SUCCESS) {
    skn_attr_delete_all(me, *newcomm, &nv->api->attrs);
    drop_view(me, nv);
    if (nc->topo) skn_topo_release(nc->topo);
    skn_comm_release(nc);
    *newcomm = MPI_COMM_NULL;
    return skn_api_error(me, comm, skn_attr_errclass(rc), fn, "an attribute copy callback failed (%d)", rc);
  }
  nv->api->info = skn_info_clone(v->api->info); /* hints carry over (lost only when out of memory) */
  return MPI_SUCCESS;
}

static int impl_Comm_dup(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, MPI_Comm *newcomm) {
  skn_api_coll_order(me, v);
  skn_api_enter(me, fn, NULL, MPI_UNDEFINED, MPI_UNDEFINED);
  int rc = skn_api_comm_dup_now(me, fn, comm, v, newcomm);
  skn_api_leave(me);
  return rc;
}

static int impl_Comm_dup_with_info(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, MPI_Info info,
                                   MPI_Comm *newcomm) {
  /* no info keys change how Skein builds a communicator; they are kept for Comm_get_info */
  skn_info *copy;
  int rc = skn_info_copy_handle(me, fn, info, &copy);
  if (rc != MPI_SUCCESS) return rc;
  rc = impl_Comm_dup(me, fn, comm, v, newcomm);
  skn_comm_view *nv = rc == MPI_SUCCESS ? skn_api_comm(me, *newcomm) : NULL;
  if (!nv) {
    skn_info_destroy(copy);
    return rc;
  }
  skn_info_destroy(nv->api->info);
  nv->api->info = copy;
  return MPI_SUCCESS;
}

static int impl_Comm_set_info(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, MPI_Info info) {
  (void)comm;
  skn_info *copy;
  int rc = skn_info_copy_handle(me, fn, info, &copy);
  if (rc != MPI_SUCCESS) return rc;
  skn_rank_lock(me);
  skn_info *old = v->api->info;
  v->api->info = copy;
  skn_rank_unlock(me);
  skn_info_destroy(old);
  return MPI_SUCCESS;
}

static int impl_Comm_get_info(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, MPI_Info *info_used) {
  (void)comm;
  return skn_info_new_handle(me, fn, v->api->info, info_used);
}

/* Comm_split, and Comm_create on an intercommunicator. */
static int split_now(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, int color, int key,
                     MPI_Comm *newcomm) {
  int errh = v->api->errhandler, new_rank;
  bool nomem;
  skn_api_coll_order(me, v);
  skn_api_enter(me, fn, NULL, MPI_UNDEFINED, MPI_UNDEFINED);
  skn_comm *nc = skn_comm_split_agree(me, v->comm, v->rank, color, key, &new_rank, &nomem);
  skn_api_leave(me);
  if (nomem) return skn_api_error(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
  if (!nc) {
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  return skn_api_comm_add(me, fn, comm, nc, new_rank, errh, newcomm);
}

static int impl_Comm_split(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, int color, int key,
                           MPI_Comm *newcomm) {
  if (color < 0 && color != MPI_UNDEFINED)
    return skn_api_error(me, comm, MPI_ERR_ARG, fn, "color=%d (must be >= 0 or MPI_UNDEFINED)", color);
  return split_now(me, fn, comm, v, color, key, newcomm);
}

static int impl_Comm_split_type(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, int split_type, int key,
                                MPI_Info info, skn_info *info_i, MPI_Comm *newcomm) {
  (void)info, (void)info_i; /* no hints change the split */
  if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED)
    return skn_api_error(me, comm, MPI_ERR_ARG, fn, "split_type=%d", split_type);
  /* The ranks of one process share memory. */
  return split_now(me, fn, comm, v, split_type == MPI_UNDEFINED ? MPI_UNDEFINED : me->proc, key, newcomm);
}

static int impl_Comm_free(skn_rank *me, const char *fn, MPI_Comm *comm) {
  skn_comm_view *v = skn_api_comm(me, *comm);
  if (!v) return skn_api_error(me, *comm, MPI_ERR_COMM, fn, "comm=%#x is not a valid communicator", (unsigned)*comm);
  if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
    return skn_api_error(me, *comm, MPI_ERR_COMM, fn, "%s cannot be freed", v->api->name);
  skn_api_coll_order(me, v); /* pending nonblocking collectives still use it */
  /* This rank's cached attributes first, while the communicator is still valid. */
  int rc = skn_attr_delete_all(me, *comm, &v->api->attrs);
  if (rc != MPI_SUCCESS)
    return skn_api_error(me, *comm, skn_attr_errclass(rc), fn, "an attribute delete callback failed (%d)", rc);
  skn_comm *c = v->comm;
  skn_topo *t = c->topo;
  drop_view(me, v);
  if (t) skn_topo_release(t);
  skn_comm_release(c);
  *comm = MPI_COMM_NULL;
  return MPI_SUCCESS;
}

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

static int impl_Comm_compare(skn_rank *me, const char *fn, MPI_Comm comm1, skn_comm_view *a, MPI_Comm comm2,
                             skn_comm_view *b, int *result) {
  (void)comm2;
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

static int impl_Comm_set_name(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, const char *name) {
  (void)me, (void)fn, (void)comm;
  snprintf(v->api->name, sizeof v->api->name, "%s", name);
  return MPI_SUCCESS;
}

static int impl_Comm_get_name(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, char *name,
                              int *resultlen) {
  (void)me, (void)fn, (void)comm;
  snprintf(name, MPI_MAX_OBJECT_NAME, "%s", v->api->name);
  *resultlen = (int)strlen(name);
  return MPI_SUCCESS;
}

static int impl_Comm_test_inter(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, int *flag) {
  (void)me, (void)fn, (void)comm;
  *flag = skn_comm_is_inter(v->comm);
  return MPI_SUCCESS;
}

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

static int impl_Comm_create(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, MPI_Group group,
                            const skn_group *g, MPI_Comm *newcomm) {
  (void)group;
  skn_comm *c = v->comm;
  int rank = v->rank, errh = v->api->errhandler, my = -1;
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
  /* The group's rank 0 creates the communicator and the other members take it from
   * that rank, so disjoint groups given by different ranks work too. */
  skn_comm *made = my == 0 ? skn_comm_create(g->size, members) : NULL;
  free(members);
  skn_api_enter(me, fn, NULL, MPI_UNDEFINED, MPI_UNDEFINED);
  int err = 0;
  skn_comm *nc = skn_comm_from_leader(me, c, rank, leader, made, &err);
  if (my < 0) nc = NULL; /* another group's */
  skn_api_leave(me);
  if (my < 0) {
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  return skn_api_comm_add(me, fn, comm, nc, my, errh, newcomm);
}

/* Only the group's members call it: they agree through a process-wide rendezvous
 * (core/agree.c), never through the parent's slots or barrier. */
static int impl_Comm_create_group(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, MPI_Group group,
                                  const skn_group *g, int tag, MPI_Comm *newcomm) {
  (void)group;
  int rc = skn_api_intra_only(me, v, comm, fn);
  if (rc != MPI_SUCCESS) return rc;
  skn_comm *c = v->comm;
  int errh = v->api->errhandler, my = -1, n = g->size;
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
  skn_comm *nc = skn_comm_group_agree(c, v->rank, tag, n, members, g->wranks, cranks, my);
  skn_api_leave(me);
  free(members);
  free(cranks);
  return skn_api_comm_add(me, fn, comm, nc, my, errh, newcomm);
}

/* ------------------------------------------------------------------ intercommunicators */

static int impl_Comm_remote_size(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, int *size) {
  if (!skn_comm_is_inter(v->comm)) return skn_api_error(me, comm, MPI_ERR_COMM, fn, "not an intercommunicator");
  *size = v->comm->rsize;
  return MPI_SUCCESS;
}

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
 * Nothing can be handed over by pointer: the leaders swap cards (context id offers,
 * member lists as world ranks) over peer_comm, and each process builds its own copy
 * (core/agree.c). */

/* The leaders' part: swap cards and member lists over peer_comm. Fills the card and
 * *remote (the remote group's world ranks, malloc'ed). */
static void leaders_swap(skn_rank *me, const char *fn, skn_comm *local, MPI_Comm peer_comm, int remote_leader, int tag,
                         skn_leader_card *info, int **remote) {
  skn_comm_view *pv = skn_api_comm(me, peer_comm);
  if (!pv) {
    info->err = skn_api_error(me, peer_comm, MPI_ERR_COMM, fn, "peer_comm=%#x is not a valid communicator",
                              (unsigned)peer_comm);
    return;
  }
  if (remote_leader < 0 || remote_leader >= pv->comm->rsize) {
    info->err = skn_api_error(me, peer_comm, MPI_ERR_RANK, fn, "remote_leader=%d (peer_comm size %d)",
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
    info->err = rc;
    return;
  }
  bool side0 = me->world_rank < theirs[0];
  info->rsize = theirs[1];
  info->side0 = side0;
  info->ctx = side0 ? mine[2] : theirs[2];
  info->bridge_ctx = side0 ? mine[3] : theirs[3];
  bool *in_ours = calloc((size_t)skn_job_g.size, sizeof *in_ours);
  if (!in_ours) skn_fatal("rank %d: %s: out of memory", me->world_rank, fn);
  for (int i = 0; i < local->size; i++) in_ours[ours[i]] = true;
  bool overlap = false;
  for (int i = 0; i < theirs[1]; i++)
    overlap |= (*remote)[i] < 0 || (*remote)[i] >= skn_job_g.size || in_ours[(*remote)[i]];
  free(in_ours);
  free(ours);
  if (overlap) info->err = skn_api_error(me, peer_comm, MPI_ERR_ARG, fn, "the two groups overlap");
}

static int intercomm_create_procs(skn_rank *me, const char *fn, MPI_Comm local_comm, skn_comm_view *v,
                                  int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
                                  MPI_Comm *newintercomm) {
  skn_comm *c = v->comm;
  int rank = v->rank, errh = v->api->errhandler;
  skn_leader_card card = {0};
  int *remote = NULL;
  skn_api_coll_order(me, v);
  if (rank == local_leader) leaders_swap(me, fn, c, peer_comm, remote_leader, tag, &card, &remote);
  skn_api_enter(me, fn, NULL, MPI_UNDEFINED, tag);
  skn_comm *side = skn_intercomm_span_join(me, c, rank, local_leader, &card, remote);
  skn_api_leave(me);
  free(remote);
  if (card.err) {
    *newintercomm = MPI_COMM_NULL;
    if (rank == local_leader) return card.err;
    return skn_api_error(me, local_comm, skn_attr_errclass(card.err), fn,
                         "the local leader (rank %d) could not create the intercommunicator", local_leader);
  }
  return skn_api_comm_add(me, fn, local_comm, side, rank, errh, newintercomm);
}

/* peer_comm and remote_leader are significant at the local leader only: checked there. */
static int impl_Intercomm_create(skn_rank *me, const char *fn, MPI_Comm local_comm, skn_comm_view *v, int local_leader,
                                 MPI_Comm peer_comm, int remote_leader, int tag, MPI_Comm *newintercomm) {
  int rc = skn_api_intra_only(me, v, local_comm, fn);
  if (rc != MPI_SUCCESS) return rc;
  skn_comm *c = v->comm;
  if (local_leader < 0 || local_leader >= c->size)
    return skn_api_error(me, local_comm, MPI_ERR_RANK, fn, "local_leader=%d (communicator size %d)", local_leader,
                         c->size);
  if (skn_job_g.nprocs > 1) /* the groups may live in several processes: no pointers */
    return intercomm_create_procs(me, fn, local_comm, v, local_leader, peer_comm, remote_leader, tag, newintercomm);
  int rank = v->rank, errh = v->api->errhandler;
  skn_api_coll_order(me, v);
  /* The leader reports its own errors; the others learn the error class from its slot, so
   * nobody waits for a leader that gave up. */
  int err = 0;
  skn_comm *made = rank == local_leader ? leaders_agree(me, fn, c, peer_comm, remote_leader, tag, &err) : NULL;
  skn_api_enter(me, fn, NULL, MPI_UNDEFINED, tag);
  skn_comm *side = skn_comm_from_leader(me, c, rank, local_leader, made, &err);
  skn_api_leave(me);
  if (!side) {
    *newintercomm = MPI_COMM_NULL;
    if (rank == local_leader) return err;
    return skn_api_error(me, local_comm, err ? skn_attr_errclass(err) : MPI_ERR_OTHER, fn,
                         "the local leader (rank %d) could not create the intercommunicator", local_leader);
  }
  return skn_api_comm_add(me, fn, local_comm, side, rank, errh, newintercomm);
}

static int impl_Intercomm_merge(skn_rank *me, const char *fn, MPI_Comm intercomm, skn_comm_view *v, int high,
                                MPI_Comm *newintracomm) {
  if (!skn_comm_is_inter(v->comm)) return skn_api_error(me, intercomm, MPI_ERR_COMM, fn, "not an intercommunicator");
  int errh = v->api->errhandler, new_rank = -1;
  bool consistent;
  skn_api_coll_order(me, v);
  skn_api_enter(me, fn, NULL, MPI_UNDEFINED, MPI_UNDEFINED);
  skn_comm *nc = skn_intercomm_merge(me, v->comm, v->rank, high != 0, &new_rank, &consistent);
  skn_api_leave(me);
  if (!consistent) {
    *newintracomm = MPI_COMM_NULL;
    return skn_api_error(me, intercomm, MPI_ERR_ARG, fn, "the members of one group passed different values of high");
  }
  return skn_api_comm_add(me, fn, intercomm, nc, new_rank, errh, newintracomm);
}

#include "entries_comm.h"
