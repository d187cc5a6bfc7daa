/* Groups and group-based communicator creation: Comm_group, Group_size/rank,
 * translate_ranks, compare, union/intersection/difference, incl/excl, range_incl/excl,
 * free; Comm_create (one group, and disjoint groups per rank); Comm_create_group
 * (only the members call it, repeatedly, while a non-member is blocked elsewhere);
 * error classes of bad arguments under MPI_ERRORS_RETURN. Every result is compared with
 * the member list computed here from the world ranks. */
#define TEST_NAME "group"
#include "mpitest.h"

/* Checks that group g holds exactly the world ranks want[0..n) in that order, and that
 * my rank in it is where my world rank appears. */
static void check_members(MPI_Group g, MPI_Group world, int n, const int *want, int wrank, const char *what) {
  int size = -1, rank = -2;
  MPI_CHECK(MPI_Group_size(g, &size));
  CHECK(size == n, "%s: size (expected %d got %d)", what, n, size);
  int *idx = mt_malloc(sizeof(int) * (size_t)(n + 1)), *got = mt_malloc(sizeof(int) * (size_t)(n + 1));
  for (int i = 0; i < n; i++) idx[i] = i;
  if (n > 0) MPI_CHECK(MPI_Group_translate_ranks(g, n, idx, world, got));
  int my = MPI_UNDEFINED;
  for (int i = 0; i < n; i++) {
    CHECK(got[i] == want[i], "%s: member %d (expected world rank %d got %d)", what, i, want[i], got[i]);
    if (want[i] == wrank) my = i;
  }
  MPI_CHECK(MPI_Group_rank(g, &rank));
  CHECK(rank == my, "%s: Group_rank (expected %d got %d)", what, my, rank);
  free(idx);
  free(got);
}

/* MPI_IDENT / MPI_SIMILAR / MPI_UNEQUAL of two member lists, computed directly. */
static int compare_lists(int na, const int *a, int nb, const int *b) {
  if (na != nb) return MPI_UNEQUAL;
  int same = 1;
  for (int i = 0; i < na; i++)
    if (a[i] != b[i]) same = 0;
  if (same) return MPI_IDENT;
  for (int i = 0; i < na; i++) {
    int found = 0;
    for (int j = 0; j < nb; j++)
      if (a[i] == b[j]) found = 1;
    if (!found) return MPI_UNEQUAL;
  }
  return MPI_SIMILAR;
}

static void expect_class(int rc, int cls, const char *what) {
  int got = -1;
  CHECK(rc != MPI_SUCCESS, "%s: succeeded (expected error class %d)", what, cls);
  MPI_CHECK(MPI_Error_class(rc, &got));
  CHECK(got == cls, "%s: error class (expected %d got %d)", what, cls, got);
}

/* Sum of the world ranks of comm's members, through the communicator itself. */
static int comm_sum(MPI_Comm comm, int wrank) {
  int s = -1;
  MPI_CHECK(MPI_Allreduce(&wrank, &s, 1, MPI_INT, MPI_SUM, comm));
  return s;
}

int main(int argc, char **argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  int rank, size;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  int *all = mt_malloc(sizeof(int) * (size_t)size), *evens = mt_malloc(sizeof(int) * (size_t)size);
  int *odds = mt_malloc(sizeof(int) * (size_t)size), *rev = mt_malloc(sizeof(int) * (size_t)size);
  int *tmp = mt_malloc(sizeof(int) * (size_t)size * 2), *tmp2 = mt_malloc(sizeof(int) * (size_t)size * 2);
  int ne = 0, no = 0;
  for (int i = 0; i < size; i++) {
    all[i] = i;
    rev[i] = size - 1 - i;
    if (i % 2)
      odds[no++] = i;
    else
      evens[ne++] = i;
  }

  /* ---- Comm_group, incl, excl */
  MPI_Group world, g_even, g_odd, g_rev, g;
  MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
  check_members(world, world, size, all, rank, "Comm_group(world)");
  MPI_CHECK(MPI_Group_incl(world, ne, evens, &g_even));
  check_members(g_even, world, ne, evens, rank, "incl(evens)");
  MPI_CHECK(MPI_Group_excl(world, ne, evens, &g_odd));
  check_members(g_odd, world, no, odds, rank, "excl(evens)");
  MPI_CHECK(MPI_Group_incl(world, size, rev, &g_rev));
  check_members(g_rev, world, size, rev, rank, "incl(reversed)");
  MPI_CHECK(MPI_Group_excl(world, 0, NULL, &g));
  check_members(g, world, size, all, rank, "excl(nothing)");
  MPI_CHECK(MPI_Group_free(&g));
  CHECK(g == MPI_GROUP_NULL, "Group_free did not set MPI_GROUP_NULL");
  MPI_CHECK(MPI_Group_incl(world, 0, NULL, &g));
  check_members(g, world, 0, NULL, rank, "incl(nothing)");
  int cmp = -1;
  MPI_CHECK(MPI_Group_compare(g, MPI_GROUP_EMPTY, &cmp));
  CHECK(cmp == MPI_IDENT, "compare(incl(nothing), MPI_GROUP_EMPTY) (expected MPI_IDENT got %d)", cmp);
  MPI_CHECK(MPI_Group_free(&g));

  /* ---- translate_ranks: world -> reversed, with MPI_PROC_NULL; world -> evens */
  for (int i = 0; i < size; i++) tmp[i] = i;
  tmp[size] = MPI_PROC_NULL;
  MPI_CHECK(MPI_Group_translate_ranks(world, size + 1, tmp, g_rev, tmp2));
  for (int i = 0; i < size; i++)
    CHECK(tmp2[i] == size - 1 - i, "translate world %d -> reversed (expected %d got %d)", i, size - 1 - i, tmp2[i]);
  CHECK(tmp2[size] == MPI_PROC_NULL, "translate MPI_PROC_NULL (expected %d got %d)", MPI_PROC_NULL, tmp2[size]);
  MPI_CHECK(MPI_Group_translate_ranks(world, size, tmp, g_even, tmp2));
  for (int i = 0; i < size; i++) {
    int want = i % 2 ? MPI_UNDEFINED : i / 2;
    CHECK(tmp2[i] == want, "translate world %d -> evens (expected %d got %d)", i, want, tmp2[i]);
  }

  /* ---- compare */
  struct {
    MPI_Group a, b;
    int na, nb;
    const int *la, *lb;
    const char *what;
  } cmps[] = {
      {world, world, size, size, all, all, "world/world"},  {world, g_rev, size, size, all, rev, "world/reversed"},
      {world, g_even, size, ne, all, evens, "world/evens"}, {g_even, g_odd, ne, no, evens, odds, "evens/odds"},
      {g_rev, g_rev, size, size, rev, rev, "reversed/reversed"},
  };
  for (size_t i = 0; i < sizeof cmps / sizeof cmps[0]; i++) {
    int want = compare_lists(cmps[i].na, cmps[i].la, cmps[i].nb, cmps[i].lb);
    MPI_CHECK(MPI_Group_compare(cmps[i].a, cmps[i].b, &cmp));
    CHECK(cmp == want, "compare %s (expected %d got %d)", cmps[i].what, want, cmp);
  }

  /* ---- union, intersection, difference (order: group1's, then group2's new members) */
  MPI_CHECK(MPI_Group_union(g_odd, g_even, &g));
  int n = 0;
  for (int i = 0; i < no; i++) tmp[n++] = odds[i];
  for (int i = 0; i < ne; i++) tmp[n++] = evens[i];
  check_members(g, world, n, tmp, rank, "union(odds, evens)");
  MPI_CHECK(MPI_Group_compare(g, world, &cmp));
  int want = compare_lists(n, tmp, size, all);
  CHECK(cmp == want, "compare(union, world) (expected %d got %d)", want, cmp);
  MPI_CHECK(MPI_Group_free(&g));
  MPI_CHECK(MPI_Group_union(g_rev, g_even, &g)); /* nothing new from evens */
  check_members(g, world, size, rev, rank, "union(reversed, evens)");
  MPI_CHECK(MPI_Group_free(&g));
  MPI_CHECK(MPI_Group_intersection(g_rev, g_even, &g)); /* evens in reversed order */
  n = 0;
  for (int i = 0; i < size; i++)
    if (rev[i] % 2 == 0) tmp[n++] = rev[i];
  check_members(g, world, n, tmp, rank, "intersection(reversed, evens)");
  MPI_CHECK(MPI_Group_free(&g));
  MPI_CHECK(MPI_Group_intersection(g_even, g_odd, &g));
  check_members(g, world, 0, NULL, rank, "intersection(evens, odds)");
  MPI_CHECK(MPI_Group_compare(g, MPI_GROUP_EMPTY, &cmp));
  CHECK(cmp == MPI_IDENT, "intersection(evens, odds) vs MPI_GROUP_EMPTY (expected MPI_IDENT got %d)", cmp);
  MPI_CHECK(MPI_Group_free(&g));
  MPI_CHECK(MPI_Group_difference(g_rev, g_odd, &g));
  check_members(g, world, n, tmp, rank, "difference(reversed, odds)");
  MPI_CHECK(MPI_Group_free(&g));
  MPI_CHECK(MPI_Group_difference(world, world, &g));
  check_members(g, world, 0, NULL, rank, "difference(world, world)");
  MPI_CHECK(MPI_Group_free(&g));

  /* ---- range_incl / range_excl, positive and negative strides */
  /* ranks 0, 3, 6, ... then the ranks 1 (mod 3), downwards */
  int top1 = (size - 1) - ((size - 1) % 3 + 2) % 3; /* largest rank = 1 (mod 3) */
  int ranges[2][3] = {{0, size - 1, 3}, {top1, 1, -3}};
  int nr = size > 1 ? 2 : 1;
  n = 0;
  for (int r = 0; r <= size - 1; r += 3) tmp[n++] = r;
  if (nr == 2)
    for (int r = top1; r >= 1; r -= 3) tmp[n++] = r;
  MPI_CHECK(MPI_Group_range_incl(world, nr, ranges, &g));
  check_members(g, world, n, tmp, rank, "range_incl");
  MPI_CHECK(MPI_Group_free(&g));
  MPI_CHECK(MPI_Group_range_excl(world, nr, ranges, &g));
  int m = 0;
  for (int r = 0; r < size; r++) {
    int in = 0;
    for (int i = 0; i < n; i++)
      if (tmp[i] == r) in = 1;
    if (!in) tmp2[m++] = r;
  }
  check_members(g, world, m, tmp2, rank, "range_excl");
  MPI_CHECK(MPI_Group_free(&g));
  int odd_range[1][3] = {{1, size - 1, 2}};
  if (size > 1) {
    MPI_CHECK(MPI_Group_range_excl(world, 1, odd_range, &g));
    check_members(g, world, ne, evens, rank, "range_excl(odds)");
    MPI_CHECK(MPI_Group_free(&g));
    MPI_CHECK(MPI_Group_range_incl(g_rev, 1, odd_range, &g)); /* ranks 1, 3, .. of reversed */
    n = 0;
    for (int r = 1; r < size; r += 2) tmp[n++] = rev[r];
    check_members(g, world, n, tmp, rank, "range_incl(reversed, odd positions)");
    MPI_CHECK(MPI_Group_free(&g));
  }

  /* ---- Comm_create with the evens: odds get MPI_COMM_NULL */
  MPI_Comm c;
  MPI_CHECK(MPI_Comm_create(MPI_COMM_WORLD, g_even, &c));
  if (rank % 2) {
    CHECK(c == MPI_COMM_NULL, "Comm_create: a non-member got a communicator");
  } else {
    int r = -1, s = -1, sum = 0;
    CHECK(c != MPI_COMM_NULL, "Comm_create: a member got MPI_COMM_NULL");
    MPI_CHECK(MPI_Comm_rank(c, &r));
    MPI_CHECK(MPI_Comm_size(c, &s));
    CHECK(r == rank / 2 && s == ne, "Comm_create: rank/size (expected %d/%d got %d/%d)", rank / 2, ne, r, s);
    for (int i = 0; i < ne; i++) sum += evens[i];
    int got = comm_sum(c, rank);
    CHECK(got == sum, "Comm_create: allreduce (expected %d got %d)", sum, got);
    MPI_CHECK(MPI_Comm_free(&c));
  }
  /* ... with the reversed group: rank order follows the group */
  MPI_CHECK(MPI_Comm_create(MPI_COMM_WORLD, g_rev, &c));
  {
    int r = -1;
    MPI_CHECK(MPI_Comm_rank(c, &r));
    CHECK(r == size - 1 - rank, "Comm_create(reversed): rank (expected %d got %d)", size - 1 - rank, r);
    int v = rank, got = -1;
    MPI_CHECK(MPI_Bcast(&v, 1, MPI_INT, 0, c));
    got = v;
    CHECK(got == size - 1, "Comm_create(reversed): bcast from rank 0 (expected %d got %d)", size - 1, got);
    MPI_CHECK(MPI_Comm_free(&c));
  }
  /* ... with disjoint groups: each rank passes its own parity's group */
  MPI_CHECK(MPI_Comm_create(MPI_COMM_WORLD, rank % 2 ? g_odd : g_even, &c));
  {
    int r = -1, s = -1, sum = 0;
    CHECK(c != MPI_COMM_NULL, "Comm_create(disjoint): got MPI_COMM_NULL");
    MPI_CHECK(MPI_Comm_rank(c, &r));
    MPI_CHECK(MPI_Comm_size(c, &s));
    int ws = rank % 2 ? no : ne;
    CHECK(r == rank / 2 && s == ws, "Comm_create(disjoint): rank/size (expected %d/%d got %d/%d)", rank / 2, ws, r, s);
    for (int i = rank % 2; i < size; i += 2) sum += i;
    int got = comm_sum(c, rank);
    CHECK(got == sum, "Comm_create(disjoint): allreduce (expected %d got %d)", sum, got);
    MPI_CHECK(MPI_Comm_free(&c));
  }

  /* ---- Comm_create_group: odds and evens separately (different tags), several times
   * in a row with the same arguments */
  for (int it = 0; it < 20; it++) {
    MPI_Group mine;
    int nm = 0;
    /* members in reversed order within my parity */
    for (int i = size - 1; i >= 0; i--)
      if (i % 2 == rank % 2) tmp[nm++] = i;
    MPI_CHECK(MPI_Group_incl(world, nm, tmp, &mine));
    MPI_CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, mine, 10 + rank % 2, &c));
    int r = -1, s = -1, wr = -1, sum = 0;
    for (int i = 0; i < nm; i++) {
      sum += tmp[i];
      if (tmp[i] == rank) wr = i;
    }
    CHECK(c != MPI_COMM_NULL, "Comm_create_group: got MPI_COMM_NULL");
    MPI_CHECK(MPI_Comm_rank(c, &r));
    MPI_CHECK(MPI_Comm_size(c, &s));
    CHECK(r == wr && s == nm, "Comm_create_group iteration %d: rank/size (expected %d/%d got %d/%d)", it, wr, nm, r,
          s);
    int got = comm_sum(c, rank);
    CHECK(got == sum, "Comm_create_group: allreduce (expected %d got %d)", sum, got);
    MPI_CHECK(MPI_Comm_free(&c));
    MPI_CHECK(MPI_Group_free(&mine));
  }
  /* ... back to back with the same arguments, no synchronization in between: the k-th
   * calls of all members make the k-th communicator */
  {
    MPI_Comm cs[5];
    for (int k = 0; k < 5; k++) MPI_CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, world, 3, &cs[k]));
    for (int k = 0; k < 5; k++)
      for (int j = 0; j < k; j++) {
        MPI_CHECK(MPI_Comm_compare(cs[j], cs[k], &cmp));
        CHECK(cmp == MPI_CONGRUENT, "Comm_create_group back to back: compare(#%d, #%d) (expected MPI_CONGRUENT got %d)",
              j, k, cmp);
      }
    for (int k = 4; k >= 0; k--) { /* messages on one never match receives on another */
      int v = 10 * rank + k, got = -1;
      MPI_CHECK(MPI_Sendrecv(&v, 1, MPI_INT, (rank + 1) % size, 0, &got, 1, MPI_INT, (rank + size - 1) % size, 0,
                             cs[k], MPI_STATUS_IGNORE));
      int want = 10 * ((rank + size - 1) % size) + k;
      CHECK(got == want, "Comm_create_group back to back #%d: ring (expected %d got %d)", k, want, got);
      MPI_CHECK(MPI_Comm_free(&cs[k]));
    }
  }
  /* ... without rank 0, which waits in a receive meanwhile: only the members take part */
  if (size > 1) {
    MPI_Group rest;
    int zero[1] = {0};
    MPI_CHECK(MPI_Group_excl(world, 1, zero, &rest));
    if (rank == 0) {
      int v = -1;
      MPI_CHECK(MPI_Recv(&v, 1, MPI_INT, 1, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      int s = 0;
      for (int i = 1; i < size; i++) s += i;
      CHECK(v == s, "Comm_create_group without rank 0: sum (expected %d got %d)", s, v);
    } else {
      MPI_CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, rest, 5, &c));
      int r = -1;
      MPI_CHECK(MPI_Comm_rank(c, &r));
      CHECK(r == rank - 1, "Comm_create_group without rank 0: rank (expected %d got %d)", rank - 1, r);
      int v = comm_sum(c, rank);
      if (rank == 1) MPI_CHECK(MPI_Send(&v, 1, MPI_INT, 0, 77, MPI_COMM_WORLD));
      MPI_CHECK(MPI_Comm_free(&c));
    }
    MPI_CHECK(MPI_Group_free(&rest));
  }
  /* ... a group of one */
  {
    MPI_Group self;
    MPI_CHECK(MPI_Comm_group(MPI_COMM_SELF, &self));
    MPI_CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, self, 0, &c));
    int s = -1;
    MPI_CHECK(MPI_Comm_size(c, &s));
    CHECK(s == 1, "Comm_create_group(self): size (expected 1 got %d)", s);
    MPI_CHECK(MPI_Comm_free(&c));
    MPI_CHECK(MPI_Group_free(&self));
  }

  /* ---- bad arguments give the right error class */
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN)); /* errors of no object (MPI-4.0) */
  int out = 0, bad[2] = {size, 0};
  MPI_Group gn = MPI_GROUP_NULL;
  expect_class(MPI_Group_size(MPI_GROUP_NULL, &out), MPI_ERR_GROUP, "Group_size(MPI_GROUP_NULL)");
  expect_class(MPI_Group_rank(MPI_GROUP_NULL, &out), MPI_ERR_GROUP, "Group_rank(MPI_GROUP_NULL)");
  expect_class(MPI_Group_compare(world, MPI_GROUP_NULL, &out), MPI_ERR_GROUP, "Group_compare(.., MPI_GROUP_NULL)");
  expect_class(MPI_Group_union(MPI_GROUP_NULL, world, &g), MPI_ERR_GROUP, "Group_union(MPI_GROUP_NULL, ..)");
  expect_class(MPI_Group_free(&gn), MPI_ERR_GROUP, "Group_free(MPI_GROUP_NULL)");
  expect_class(MPI_Group_incl(world, 1, bad, &g), MPI_ERR_RANK, "Group_incl(rank == size)");
  expect_class(MPI_Group_excl(world, 1, bad, &g), MPI_ERR_RANK, "Group_excl(rank == size)");
  expect_class(MPI_Group_incl(world, -1, bad, &g), MPI_ERR_ARG, "Group_incl(n = -1)");
  expect_class(MPI_Group_translate_ranks(world, 1, bad, world, tmp), MPI_ERR_RANK,
               "Group_translate_ranks(rank == size)");
  expect_class(MPI_Group_translate_ranks(world, -1, bad, world, tmp), MPI_ERR_ARG, "Group_translate_ranks(n = -1)");
  int zero_stride[1][3] = {{0, 0, 0}};
  expect_class(MPI_Group_range_incl(world, 1, zero_stride, &g), MPI_ERR_ARG, "Group_range_incl(stride 0)");
  expect_class(MPI_Group_range_excl(world, -1, zero_stride, &g), MPI_ERR_ARG, "Group_range_excl(n = -1)");
  expect_class(MPI_Group_size(world, NULL), MPI_ERR_ARG, "Group_size(size = NULL)");
  expect_class(MPI_Group_translate_ranks(world, 1, NULL, world, tmp), MPI_ERR_ARG,
               "Group_translate_ranks(ranks1 = NULL)");
  expect_class(MPI_Comm_remote_group(MPI_COMM_WORLD, &g), MPI_ERR_COMM, "Comm_remote_group(intracommunicator)");
  expect_class(MPI_Comm_group(MPI_COMM_NULL, &g), MPI_ERR_COMM, "Comm_group(MPI_COMM_NULL)");
  expect_class(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, &c), MPI_ERR_GROUP, "Comm_create(MPI_GROUP_NULL)");
  expect_class(MPI_Comm_create_group(MPI_COMM_WORLD, world, -5, &c), MPI_ERR_TAG, "Comm_create_group(tag -5)");
  MPI_Group e = MPI_GROUP_EMPTY;
  MPI_CHECK(MPI_Group_free(&e)); /* allowed (and a no-op) in MPICH and here */

  MPI_CHECK(MPI_Group_free(&g_even));
  MPI_CHECK(MPI_Group_free(&g_odd));
  MPI_CHECK(MPI_Group_free(&g_rev));
  MPI_CHECK(MPI_Group_free(&world));
  free(all);
  free(evens);
  free(odds);
  free(rev);
  free(tmp);
  free(tmp2);
  return mt_finish();
}
