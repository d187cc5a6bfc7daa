/* Process groups: per-rank objects holding world ranks in group order (objects.h).
 * Also the rendezvous through which MPI_Comm_create_group agrees on a communicator
 * without synchronizing the whole parent. */
#include <stdlib.h>
#include <string.h>

#include "objects.h"

static skn_group empty_group = {0, NULL};

/* Makes sure handles 0 (null) and 1 (empty) exist. Caller holds the rank lock. */
static bool ensure_table(skn_rank *me) {
  if (me->ngroups >= 2) return true;
  skn_group **t = calloc(8, sizeof *t);
  if (!t) return false;
  t[1] = &empty_group;
  me->groups = t;
  me->ngroups = 2;
  return true;
}

const skn_group *skn_api_group(skn_rank *me, MPI_Group h) {
  unsigned idx = (unsigned)h & 0xffffffu;
  if (((unsigned)h >> 24) != SKN_KIND_GROUP) return NULL;
  if (idx == 1) return &empty_group;
  skn_rank_lock(me);
  const skn_group *g = idx < (unsigned)me->ngroups ? me->groups[idx] : NULL;
  skn_rank_unlock(me);
  return g;
}

static int group_error(skn_rank *me, const char *fn, MPI_Group h, const char *what) {
  return skn_api_error(me, MPI_COMM_WORLD, MPI_ERR_GROUP, fn, "%s=%#x is not a valid group", what, (unsigned)h);
}

static int nomem(skn_rank *me, const char *fn) {
  return skn_api_error(me, MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory for a group");
}

/* Takes ownership of wranks (n entries) and stores a new group in *out. An empty result
 * is MPI_GROUP_EMPTY, as in other MPIs. */
static int group_new(skn_rank *me, const char *fn, int n, int *wranks, MPI_Group *out) {
  if (n == 0) {
    free(wranks);
    *out = MPI_GROUP_EMPTY;
    return MPI_SUCCESS;
  }
  skn_group *g = malloc(sizeof *g);
  if (!g) {
    free(wranks);
    return nomem(me, fn);
  }
  g->size = n;
  g->wranks = wranks;
  skn_rank_lock(me);
  int idx = -1;
  if (ensure_table(me)) SKN_TABLE_SLOT(me->groups, me->ngroups, 2, idx);
  if (idx >= 0) me->groups[idx] = g;
  skn_rank_unlock(me);
  if (idx < 0) {
    free(wranks);
    free(g);
    return nomem(me, fn);
  }
  *out = SKN_HANDLE(SKN_KIND_GROUP, idx);
  return MPI_SUCCESS;
}

static int *alloc_ranks(int n) { return malloc(sizeof(int) * (size_t)(n > 0 ? n : 1)); }

/* pos[w] = position of world rank w in g, or -1; an array of the world's size. */
static int *positions(const skn_group *g) {
  int *pos = malloc(sizeof(int) * (size_t)skn_job_g.size);
  if (!pos) return NULL;
  for (int w = 0; w < skn_job_g.size; w++) pos[w] = -1;
  for (int i = 0; i < g->size; i++) pos[g->wranks[i]] = i;
  return pos;
}

/* ------------------------------------------------------------------ queries */

int skn_api_members_group(skn_rank *me, const char *fn, int n, skn_rank *const *members, MPI_Group *group) {
  int *w = alloc_ranks(n);
  if (!w) return nomem(me, fn);
  for (int i = 0; i < n; i++) w[i] = members[i]->world_rank;
  return group_new(me, fn, n, w, group);
}

/* The implementations below are called by the entry points generated from
 * runtime/binding/functions.txt (included at the end of this file), which have found the
 * calling rank and checked every argument; each handle argument is followed by the object
 * it names. */

static int impl_Comm_group(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, MPI_Group *group) {
  return skn_api_members_group(me, fn, v->comm->size, v->comm->members, group);
}

static int impl_Comm_remote_group(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, MPI_Group *group) {
  if (!skn_comm_is_inter(v->comm)) return skn_api_error(me, comm, MPI_ERR_COMM, fn, "not an intercommunicator");
  return skn_api_members_group(me, fn, v->comm->rsize, v->comm->rmembers, group);
}

static int impl_Group_size(skn_rank *me, const char *fn, MPI_Group group, const skn_group *g, int *size) {
  *size = g->size;
  return MPI_SUCCESS;
}

static int impl_Group_rank(skn_rank *me, const char *fn, MPI_Group group, const skn_group *g, int *rank) {
  *rank = MPI_UNDEFINED;
  for (int i = 0; i < g->size; i++)
    if (g->wranks[i] == me->world_rank) {
      *rank = i;
      break;
    }
  return MPI_SUCCESS;
}

static int impl_Group_translate_ranks(skn_rank *me, const char *fn, MPI_Group group1, const skn_group *a, int n,
                                      const int ranks1[], MPI_Group group2, const skn_group *b, int ranks2[]) {
  for (int i = 0; i < n; i++)
    if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= a->size))
      return skn_api_error(me, MPI_COMM_WORLD, MPI_ERR_RANK, fn, "ranks1[%d]=%d (group1 size %d)", i, ranks1[i],
                           a->size);
  int *pos = positions(b);
  if (!pos) return nomem(me, fn);
  for (int i = 0; i < n; i++) {
    if (ranks1[i] == MPI_PROC_NULL) {
      ranks2[i] = MPI_PROC_NULL;
      continue;
    }
    int p = pos[a->wranks[ranks1[i]]];
    ranks2[i] = p < 0 ? MPI_UNDEFINED : p;
  }
  free(pos);
  return MPI_SUCCESS;
}

static int impl_Group_compare(skn_rank *me, const char *fn, MPI_Group group1, const skn_group *a, MPI_Group group2,
                              const skn_group *b, int *result) {
  if (a->size != b->size) {
    *result = MPI_UNEQUAL;
    return MPI_SUCCESS;
  }
  if (a->size == 0 || !memcmp(a->wranks, b->wranks, sizeof(int) * (size_t)a->size)) {
    *result = MPI_IDENT;
    return MPI_SUCCESS;
  }
  int *pos = positions(b);
  if (!pos) return nomem(me, fn);
  *result = MPI_SIMILAR;
  for (int i = 0; i < a->size; i++)
    if (pos[a->wranks[i]] < 0) {
      *result = MPI_UNEQUAL;
      break;
    }
  free(pos);
  return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ set operations */

enum { OP_UNION, OP_INTERSECTION, OP_DIFFERENCE };

static int set_op(skn_rank *me, const char *fn, int op, const skn_group *a, const skn_group *b, MPI_Group *newgroup) {
  int *inb = positions(b), *w = alloc_ranks(a->size + b->size);
  if (!inb || !w) {
    free(inb);
    free(w);
    return nomem(me, fn);
  }
  int n = 0;
  for (int i = 0; i < a->size; i++) {
    bool both = inb[a->wranks[i]] >= 0;
    if (op == OP_UNION || (op == OP_INTERSECTION) == both) w[n++] = a->wranks[i];
  }
  if (op == OP_UNION) { /* then b's members that are not in a, in b's order */
    int *ina = positions(a);
    if (!ina) {
      free(inb);
      free(w);
      return nomem(me, fn);
    }
    for (int i = 0; i < b->size; i++)
      if (ina[b->wranks[i]] < 0) w[n++] = b->wranks[i];
    free(ina);
  }
  free(inb);
  return group_new(me, fn, n, w, newgroup);
}

static int impl_Group_union(skn_rank *me, const char *fn, MPI_Group group1, const skn_group *a, MPI_Group group2,
                            const skn_group *b, MPI_Group *newgroup) {
  return set_op(me, fn, OP_UNION, a, b, newgroup);
}

static int impl_Group_intersection(skn_rank *me, const char *fn, MPI_Group group1, const skn_group *a,
                                   MPI_Group group2, const skn_group *b, MPI_Group *newgroup) {
  return set_op(me, fn, OP_INTERSECTION, a, b, newgroup);
}

static int impl_Group_difference(skn_rank *me, const char *fn, MPI_Group group1, const skn_group *a,
                                 MPI_Group group2, const skn_group *b, MPI_Group *newgroup) {
  return set_op(me, fn, OP_DIFFERENCE, a, b, newgroup);
}

/* ------------------------------------------------------------------ subsets */

/* Builds the group of g's members whose ranks are listed (incl) or not listed (excl).
 * sel[i] is a rank of g, all distinct (checked by the callers). */
static int subset(skn_rank *me, const char *fn, const skn_group *g, int n, const int *sel, bool incl,
                  MPI_Group *newgroup) {
  int *w = alloc_ranks(incl ? n : g->size - n);
  if (!w) return nomem(me, fn);
  int m = 0;
  if (incl) {
    for (int i = 0; i < n; i++) w[m++] = g->wranks[sel[i]];
  } else {
    bool *drop = calloc((size_t)(g->size ? g->size : 1), sizeof *drop);
    if (!drop) {
      free(w);
      return nomem(me, fn);
    }
    for (int i = 0; i < n; i++) drop[sel[i]] = true;
    for (int i = 0; i < g->size; i++)
      if (!drop[i]) w[m++] = g->wranks[i];
    free(drop);
  }
  return group_new(me, fn, m, w, newgroup);
}

/* Checks that the n (>= 0) ranks are valid and distinct. */
static int check_ranks(skn_rank *me, const char *fn, const skn_group *g, int n, const int *ranks) {
  if (n > g->size) return skn_api_error(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "n=%d (group size %d)", n, g->size);
  bool *seen = calloc((size_t)(g->size ? g->size : 1), sizeof *seen);
  if (!seen) return nomem(me, fn);
  for (int i = 0; i < n; i++) {
    if (ranks[i] < 0 || ranks[i] >= g->size || seen[ranks[i]]) {
      int r = ranks[i];
      bool dup = r >= 0 && r < g->size;
      free(seen);
      return skn_api_error(me, MPI_COMM_WORLD, MPI_ERR_RANK, fn, "ranks[%d]=%d (%s; group size %d)", i, r,
                           dup ? "listed twice" : "out of range", g->size);
    }
    seen[ranks[i]] = true;
  }
  free(seen);
  return MPI_SUCCESS;
}

static int incl_excl(skn_rank *me, const char *fn, const skn_group *g, int n, const int ranks[], MPI_Group *newgroup,
                     bool incl) {
  int rc = check_ranks(me, fn, g, n, ranks);
  if (rc != MPI_SUCCESS) return rc;
  return subset(me, fn, g, n, ranks, incl, newgroup);
}

static int impl_Group_incl(skn_rank *me, const char *fn, MPI_Group group, const skn_group *g, int n,
                           const int ranks[], MPI_Group *newgroup) {
  return incl_excl(me, fn, g, n, ranks, newgroup, true);
}

static int impl_Group_excl(skn_rank *me, const char *fn, MPI_Group group, const skn_group *g, int n,
                           const int ranks[], MPI_Group *newgroup) {
  return incl_excl(me, fn, g, n, ranks, newgroup, false);
}

/* Expands n (>= 0) (first, last, stride) triplets into the list of ranks they name. */
static int expand_ranges(skn_rank *me, const char *fn, const skn_group *g, int n, int ranges[][3], int **out,
                         int *count) {
  long long total = 0;
  for (int i = 0; i < n; i++) {
    int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
    if (stride == 0) return skn_api_error(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "ranges[%d] has stride 0", i);
    if (first < 0 || first >= g->size || last < 0 || last >= g->size)
      return skn_api_error(me, MPI_COMM_WORLD, MPI_ERR_RANK, fn, "ranges[%d] = (%d, %d, %d) (group size %d)", i,
                           first, last, stride, g->size);
    long long k = ((long long)last - first) / stride;
    if (k >= 0) total += k + 1;
    if (total > g->size)
      return skn_api_error(me, MPI_COMM_WORLD, MPI_ERR_RANK, fn, "the ranges name a rank twice");
  }
  int *r = alloc_ranks((int)total), m = 0;
  if (!r) return nomem(me, fn);
  for (int i = 0; i < n; i++) {
    int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
    long long k = ((long long)last - first) / stride;
    for (long long j = 0; j <= k; j++) r[m++] = first + (int)(j * stride);
  }
  *out = r;
  *count = m;
  return MPI_SUCCESS;
}

static int range_incl_excl(skn_rank *me, const char *fn, const skn_group *g, int n, int ranges[][3],
                           MPI_Group *newgroup, bool incl) {
  int *sel = NULL, m = 0;
  int rc = expand_ranges(me, fn, g, n, ranges, &sel, &m);
  if (rc != MPI_SUCCESS) return rc;
  rc = check_ranks(me, fn, g, m, sel);
  if (rc == MPI_SUCCESS) rc = subset(me, fn, g, m, sel, incl, newgroup);
  free(sel);
  return rc;
}

static int impl_Group_range_incl(skn_rank *me, const char *fn, MPI_Group group, const skn_group *g, int n,
                                 int ranges[][3], MPI_Group *newgroup) {
  return range_incl_excl(me, fn, g, n, ranges, newgroup, true);
}

static int impl_Group_range_excl(skn_rank *me, const char *fn, MPI_Group group, const skn_group *g, int n,
                                 int ranges[][3], MPI_Group *newgroup) {
  return range_incl_excl(me, fn, g, n, ranges, newgroup, false);
}

static int impl_Group_free(skn_rank *me, const char *fn, MPI_Group *group) {
  unsigned idx = (unsigned)*group & 0xffffffu;
  if (*group == MPI_GROUP_EMPTY) { /* predefined: the handle goes, the group stays (as in MPICH) */
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
  }
  skn_group *g = NULL;
  skn_rank_lock(me);
  if (((unsigned)*group >> 24) == SKN_KIND_GROUP && idx >= 2 && idx < (unsigned)me->ngroups) {
    g = me->groups[idx];
    me->groups[idx] = NULL;
  }
  skn_rank_unlock(me);
  if (!g) return group_error(me, fn, *group, "group");
  free(g->wranks);
  free(g);
  *group = MPI_GROUP_NULL;
  return MPI_SUCCESS;
}

#include "entries_group.h"

/* ------------------------------------------------------------------ Comm_create_group rendezvous
 * One entry per (parent context, tag, member list) instance in a process-wide FIFO list.
 * A member joins the first matching entry it has not joined yet (or appends a new one),
 * so successive calls with the same arguments pair up in call order. The creator (the
 * group's first member in this process) creates the communicator before joining and
 * publishes it in the entry; the other members here wait through the scheduler until it
 * is there. The last member to pick the communicator up unlinks and frees the entry. */

typedef struct rdv_entry {
  struct rdv_entry *next;
  int ctx, tag, n;
  int *wranks;        /* the member list (copy) */
  bool *joined;       /* by group rank */
  skn_unit **waiters; /* by group rank: blocked members */
  int remaining;      /* members that have not picked the result up */
  _Atomic(int) done;
  skn_comm *comm;
} rdv_entry;

static skn_spinlock rdv_lock = SKN_SPINLOCK_INIT;
static rdv_entry *rdv_head;

static rdv_entry *rdv_find(int ctx, int tag, int n, const int *wranks, int my, int nlocal) {
  rdv_entry **tail = &rdv_head;
  for (rdv_entry *e = rdv_head; e; e = e->next) {
    tail = &e->next;
    if (e->ctx == ctx && e->tag == tag && e->n == n && !e->joined[my] &&
        !memcmp(e->wranks, wranks, sizeof(int) * (size_t)n))
      return e;
  }
  rdv_entry *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  e->wranks = malloc(sizeof(int) * (size_t)n);
  e->joined = calloc((size_t)n, sizeof(bool));
  e->waiters = calloc((size_t)n, sizeof(skn_unit *));
  if (!e->wranks || !e->joined || !e->waiters) {
    free(e->wranks);
    free(e->joined);
    free(e->waiters);
    free(e);
    return NULL;
  }
  memcpy(e->wranks, wranks, sizeof(int) * (size_t)n);
  e->ctx = ctx;
  e->tag = tag;
  e->n = n;
  e->remaining = nlocal;
  *tail = e;
  return e;
}

static void rdv_leave(rdv_entry *e) { /* rdv_lock held */
  if (--e->remaining > 0) return;
  for (rdv_entry **p = &rdv_head; *p; p = &(*p)->next)
    if (*p == e) {
      *p = e->next;
      break;
    }
  free(e->wranks);
  free(e->joined);
  free(e->waiters);
  free(e);
}

skn_comm *skn_group_rendezvous(skn_rank *me, int ctx, int tag, int n, skn_rank *const *members, const int *wranks,
                               int my, int new_ctx, skn_comm *(*create)(void *arg), void *arg) {
  (void)me;
  int creator = -1, nlocal = 0;
  for (int i = 0; i < n; i++)
    if (!skn_rank_is_remote(members[i])) {
      if (creator < 0) creator = i;
      nlocal++;
    }
  skn_comm *mine = NULL;
  if (my == creator)
    mine = create ? create(arg) : new_ctx < 0 ? skn_comm_create(n, members) : skn_comm_create_ctx(new_ctx, n, members);
  if (nlocal == 1) return mine; /* nobody here to agree with */
  skn_unit *self = skn_sched_self();
  skn_spin_lock(&rdv_lock);
  rdv_entry *e = rdv_find(ctx, tag, n, wranks, my, nlocal);
  if (!e) { /* out of memory: nobody can be told; fail this member */
    skn_spin_unlock(&rdv_lock);
    if (mine) skn_comm_release(mine);
    return NULL;
  }
  e->joined[my] = true;
  if (my == creator) {
    e->comm = mine;
    atomic_store(&e->done, 1);
    for (int i = 0; i < n; i++)
      if (e->waiters[i]) skn_sched_wake(e->waiters[i]);
    rdv_leave(e);
    skn_spin_unlock(&rdv_lock);
    return mine;
  }
  if (!atomic_load(&e->done)) {
    e->waiters[my] = self;
    skn_spin_unlock(&rdv_lock);
    for (;;) {
      skn_sched_prepare_wait(self);
      if (atomic_load(&e->done)) break;
      skn_sched_wait(self);
    }
    skn_sched_done_waiting(self);
    skn_spin_lock(&rdv_lock);
  }
  skn_comm *c = e->comm;
  rdv_leave(e);
  skn_spin_unlock(&rdv_lock);
  return c;
}
