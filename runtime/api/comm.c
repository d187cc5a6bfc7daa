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

int skn_api_comm_dup_now(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, MPI_Comm *newcomm) {
  skn_comm *c = v->comm;
  int rank = v->rank, errh = v->errhandler;
  skn_coll_args a = {0};
  if (rank == 0) {
    skn_comm *created = skn_comm_create(c->size, c->members);
    if (created && c->topo) created->topo = skn_topo_ref(c->topo, c->size); /* immutable: shared */
    a.result = created;
  }
  skn_coll_publish(c, rank, &a);
  skn_comm *nc = c->slots[0]->result;
  skn_coll_barrier(me, c);
  int rc = add_view(me, fn, comm, nc, rank, errh, newcomm);
  if (rc != MPI_SUCCESS) return rc;
  /* This rank's attributes, through their copy callbacks (MPI_Comm_idup too). On failure
   * the new communicator goes away again, its copied attributes deleted, and dup fails. */
  skn_comm_view *nv = skn_api_comm(me, *newcomm);
  rc = skn_attr_copy_all(me, comm, v, nv);
  if (rc != MPI_SUCCESS) {
    skn_attr_delete_all(me, *newcomm, nv);
    skn_rank_lock(me);
    nv->comm = NULL;
    nv->attrs = NULL;
    skn_rank_unlock(me);
    if (nc->topo) skn_topo_release(nc->topo);
    skn_comm_release(nc);
    *newcomm = MPI_COMM_NULL;
    return skn_api_error(me, comm, skn_attr_errclass(rc), fn, "an attribute copy callback failed (%d)", rc);
  }
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
  (void)info; /* no info keys change how Skein builds a communicator */
  return PMPI_Comm_dup(comm, newcomm);
}
SKN_WEAK_ALIAS(Comm_dup_with_info);

typedef struct member_key {
  int key, rank;
} member_key;

static int by_key(const void *x, const void *y) {
  const member_key *a = x, *b = y;
  return a->key != b->key ? (a->key < b->key ? -1 : 1) : (a->rank - b->rank);
}

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm) {
  static const char fn[] = "MPI_Comm_split";
  skn_rank *me = skn_api_self(fn);
  skn_comm_view *v = skn_api_comm(me, comm);
  if (!v) return comm_error(me, comm, fn);
  if (color < 0 && color != MPI_UNDEFINED)
    return skn_api_error(me, comm, MPI_ERR_ARG, fn, "color=%d (must be >= 0 or MPI_UNDEFINED)", color);
  skn_api_coll_order(me, v);
  skn_comm *c = v->comm;
  int rank = v->rank, errh = v->errhandler, n = c->size;
  skn_coll_args a = {.color = color, .key = key};
  skn_api_enter(me, fn, NULL, MPI_UNDEFINED, MPI_UNDEFINED);
  skn_coll_publish(c, rank, &a);
  /* Members of my color, ordered by (key, old rank); the first creates the communicator. */
  member_key *mk = malloc(sizeof *mk * (size_t)n);
  skn_rank **members = malloc(sizeof *members * (size_t)n);
  int m = 0, my_new = -1;
  if (mk && members && color != MPI_UNDEFINED) {
    for (int j = 0; j < n; j++)
      if (c->slots[j]->color == color) mk[m++] = (member_key){c->slots[j]->key, j};
    qsort(mk, (size_t)m, sizeof *mk, by_key);
    for (int i = 0; i < m; i++) {
      members[i] = c->members[mk[i].rank];
      if (mk[i].rank == rank) my_new = i;
    }
    if (my_new == 0) a.result = skn_comm_create(m, members);
  }
  skn_coll_barrier(me, c); /* leaders have created theirs */
  skn_comm *nc = (color != MPI_UNDEFINED && mk && members) ? c->slots[mk[0].rank]->result : NULL;
  skn_coll_barrier(me, c); /* nobody reads the slots any more */
  skn_api_leave(me);
  free(mk);
  free(members);
  if (color == MPI_UNDEFINED) {
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  return add_view(me, fn, comm, nc, my_new, errh, newcomm);
}
SKN_WEAK_ALIAS(Comm_split);

int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm) {
  (void)info;
  skn_rank *me = skn_api_self("MPI_Comm_split_type");
  if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED)
    return skn_api_error(me, comm, MPI_ERR_ARG, "MPI_Comm_split_type", "split_type=%d", split_type);
  /* Every member of a communicator lives in this process: they all share memory. */
  return PMPI_Comm_split(comm, split_type == MPI_UNDEFINED ? MPI_UNDEFINED : 0, key, newcomm);
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
  int rc = skn_attr_delete_all(me, *comm, v);
  if (rc != MPI_SUCCESS)
    return skn_api_error(me, *comm, skn_attr_errclass(rc), fn, "an attribute delete callback failed (%d)", rc);
  skn_comm *c = v->comm;
  skn_topo *t = c->topo;
  skn_rank_lock(me);
  v->comm = NULL; /* the slot is free for the next communicator of this rank */
  v->attrs = NULL;
  skn_rank_unlock(me);
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

int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result) {
  static const char fn[] = "MPI_Comm_compare";
  skn_rank *me = skn_api_self(fn);
  skn_comm_view *a = skn_api_comm(me, comm1), *b = skn_api_comm(me, comm2);
  if (!a) return comm_error(me, comm1, fn);
  if (!b) return comm_error(me, comm2, fn);
  skn_comm *x = a->comm, *y = b->comm;
  if (x == y) {
    *result = MPI_IDENT;
    return MPI_SUCCESS;
  }
  if (x->size != y->size) {
    *result = MPI_UNEQUAL;
    return MPI_SUCCESS;
  }
  if (!memcmp(x->members, y->members, sizeof(skn_rank *) * (size_t)x->size)) {
    *result = MPI_CONGRUENT;
    return MPI_SUCCESS;
  }
  size_t bytes = sizeof(skn_rank *) * (size_t)x->size;
  skn_rank **sx = malloc(bytes), **sy = malloc(bytes);
  if (!sx || !sy) {
    free(sx);
    free(sy);
    return skn_api_error(me, comm1, MPI_ERR_NO_MEM, fn, "out of memory");
  }
  memcpy(sx, x->members, bytes);
  memcpy(sy, y->members, bytes);
  qsort(sx, (size_t)x->size, sizeof *sx, cmp_rank_ptr);
  qsort(sy, (size_t)y->size, sizeof *sy, cmp_rank_ptr);
  *result = memcmp(sx, sy, bytes) ? MPI_UNEQUAL : MPI_SIMILAR;
  free(sx);
  free(sy);
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
  if (!skn_api_comm(me, comm)) return comm_error(me, comm, "MPI_Comm_test_inter");
  *flag = 0; /* intercommunicators are not implemented yet */
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Comm_test_inter);

/* ------------------------------------------------------------------ Comm_create, Comm_create_group */

/* Checks that g is a subset of c; fills members (g's ranks, in group order), *my (the
 * caller's group rank or -1) and, when asked, *crank0 (the comm rank of g's rank 0). */
static int group_members(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm *c, const skn_group *g,
                         skn_rank **members, int *my, int *crank0) {
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
    if (w == me->world_rank) *my = i;
  }
  if (crank0) *crank0 = g->size ? where[g->wranks[0]] : -1;
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
  int rank = v->rank, errh = v->errhandler, my = -1, leader = -1;
  skn_rank **members = malloc(sizeof *members * (size_t)(g->size ? g->size : 1));
  if (!members) return skn_api_error(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
  int rc = group_members(me, fn, comm, c, g, members, &my, &leader);
  if (rc != MPI_SUCCESS) {
    free(members);
    return rc;
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
  skn_comm *c = v->comm;
  int errh = v->errhandler, my = -1;
  skn_rank **members = malloc(sizeof *members * (size_t)(g->size ? g->size : 1));
  if (!members) return skn_api_error(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
  int rc = group_members(me, fn, comm, c, g, members, &my, NULL);
  if (rc != MPI_SUCCESS || my < 0) { /* a caller outside the group gets MPI_COMM_NULL */
    free(members);
    if (rc == MPI_SUCCESS) *newcomm = MPI_COMM_NULL;
    return rc;
  }
  skn_api_enter(me, fn, NULL, MPI_UNDEFINED, tag);
  skn_comm *nc = skn_group_rendezvous(me, c->ctx, tag, g->size, members, g->wranks, my);
  skn_api_leave(me);
  free(members);
  return add_view(me, fn, comm, nc, my, errh, newcomm);
}
SKN_WEAK_ALIAS(Comm_create_group);
