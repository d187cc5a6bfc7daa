/* Process groups: per-rank objects holding world ranks in group order (objects.h). */
#include <stdlib.h>
#include <string.h>

#include "objects.h"

static skn_group empty_group = {0, NULL};

/* Makes sure handles 0 (null) and 1 (empty) exist. Caller holds the rank lock. */
static bool ensure_table(skn_rank *me) {
  skn_api_rank *api = skn_api_of(me);
  if (api->ngroups >= 2) return true;
  skn_group **t = calloc(8, sizeof *t);
  if (!t) return false;
  t[1] = &empty_group;
  api->groups = t;
  api->ngroups = 2;
  return true;
}

const skn_group *skn_api_group(skn_rank *me, MPI_Group h) {
  skn_api_rank *api = skn_api_of(me);
  unsigned idx = (unsigned)h & 0xffffffu;
  if (((unsigned)h >> 24) != SKN_KIND_GROUP) return NULL;
  if (idx == 1) return &empty_group;
  skn_rank_lock(me);
  const skn_group *g = idx < (unsigned)api->ngroups ? api->groups[idx] : NULL;
  skn_rank_unlock(me);
  return g;
}

static int group_error(skn_rank *me, const char *fn, MPI_Group h, const char *what) {
  return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_GROUP, fn, "%s=%#x is not a valid group", what, (unsigned)h);
}

static int nomem(skn_rank *me, const char *fn) {
  return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_NO_MEM, fn, "out of memory for a group");
}

/* Takes ownership of wranks (n entries) and stores a new group in *out. An empty result
 * is MPI_GROUP_EMPTY, as in other MPIs. */
static int group_new(skn_rank *me, const char *fn, int n, int *wranks, MPI_Group *out) {
  skn_api_rank *api = skn_api_of(me);
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
  if (ensure_table(me)) SKN_TABLE_SLOT(api->groups, api->ngroups, 2, idx);
  if (idx >= 0) api->groups[idx] = g;
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
      return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_RANK, fn, "ranks1[%d]=%d (group1 size %d)", i, ranks1[i],
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
  if (n > g->size) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "n=%d (group size %d)", n, g->size);
  bool *seen = calloc((size_t)(g->size ? g->size : 1), sizeof *seen);
  if (!seen) return nomem(me, fn);
  for (int i = 0; i < n; i++) {
    if (ranks[i] < 0 || ranks[i] >= g->size || seen[ranks[i]]) {
      int r = ranks[i];
      bool dup = r >= 0 && r < g->size;
      free(seen);
      return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_RANK, fn, "ranks[%d]=%d (%s; group size %d)", i, r,
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
    if (stride == 0) return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "ranges[%d] has stride 0", i);
    if (first < 0 || first >= g->size || last < 0 || last >= g->size)
      return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_RANK, fn, "ranges[%d] = (%d, %d, %d) (group size %d)", i,
                           first, last, stride, g->size);
    long long k = ((long long)last - first) / stride;
    if (k >= 0) total += k + 1;
    if (total > g->size)
      return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_RANK, fn, "the ranges name a rank twice");
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
  skn_api_rank *api = skn_api_of(me);
  unsigned idx = (unsigned)*group & 0xffffffu;
  if (*group == MPI_GROUP_EMPTY) { /* predefined: the handle goes, the group stays (as in MPICH) */
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
  }
  skn_group *g = NULL;
  skn_rank_lock(me);
  if (((unsigned)*group >> 24) == SKN_KIND_GROUP && idx >= 2 && idx < (unsigned)api->ngroups) {
    g = api->groups[idx];
    api->groups[idx] = NULL;
  }
  skn_rank_unlock(me);
  if (!g) return group_error(me, fn, *group, "group");
  free(g->wranks);
  free(g);
  *group = MPI_GROUP_NULL;
  return MPI_SUCCESS;
}

#include "entries_group.h"
