/* Communicators: dup, split, compare, names, free; messages never cross communicators;
 * context ids survive many dup/free cycles. */
#define TEST_NAME "comm"
#include "mpitest.h"

int main(int argc, char **argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  int rank, size;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));

  /* dup: same group, different context */
  MPI_Comm dup;
  int cmp = -1;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  MPI_CHECK(MPI_Comm_compare(MPI_COMM_WORLD, dup, &cmp));
  CHECK(cmp == MPI_CONGRUENT, "compare(world, dup) = %d, expected MPI_CONGRUENT", cmp);
  MPI_CHECK(MPI_Comm_compare(dup, dup, &cmp));
  CHECK(cmp == MPI_IDENT, "compare(dup, dup) = %d", cmp);
  int r2, s2;
  MPI_CHECK(MPI_Comm_rank(dup, &r2));
  MPI_CHECK(MPI_Comm_size(dup, &s2));
  CHECK(r2 == rank && s2 == size, "dup rank/size %d/%d", r2, s2);

  /* A message on dup must not match a receive on world, even with wildcards. */
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  int a = 100 + rank, b = 200 + rank, got = -1, flag = 1;
  MPI_Request rq[2];
  MPI_CHECK(MPI_Isend(&a, 1, MPI_INT, next, 5, dup, &rq[0]));
  MPI_CHECK(MPI_Isend(&b, 1, MPI_INT, next, 5, MPI_COMM_WORLD, &rq[1]));
  MPI_CHECK(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CHECK(got == 200 + prev, "world receive got %d, expected %d (the dup message leaked?)", got, 200 + prev);
  MPI_CHECK(MPI_Recv(&got, 1, MPI_INT, prev, 5, dup, MPI_STATUS_IGNORE));
  CHECK(got == 100 + prev, "dup receive got %d", got);
  MPI_CHECK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
  MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &flag, MPI_STATUS_IGNORE));
  CHECK(!flag, "stray message on dup");

  /* names are per communicator and per rank */
  char name[MPI_MAX_OBJECT_NAME];
  int len;
  MPI_CHECK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
  CHECK(!strcmp(name, "MPI_COMM_WORLD"), "world name '%s'", name);
  snprintf(name, sizeof name, "dup-of-rank-%d", rank);
  MPI_CHECK(MPI_Comm_set_name(dup, name));
  MPI_CHECK(MPI_Barrier(dup));
  char back[MPI_MAX_OBJECT_NAME];
  MPI_CHECK(MPI_Comm_get_name(dup, back, &len));
  CHECK(!strcmp(back, name), "dup name '%s' expected '%s' (another rank's name?)", back, name);

  /* split: odd/even, reversed order inside each half */
  MPI_Comm half;
  MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half));
  int hr, hs;
  MPI_CHECK(MPI_Comm_rank(half, &hr));
  MPI_CHECK(MPI_Comm_size(half, &hs));
  int want_size = (size + (rank % 2 ? 0 : 1)) / 2;
  CHECK(hs == want_size, "split size %d expected %d", hs, want_size);
  /* ranks of my parity above me come first */
  int above = 0;
  for (int j = rank + 2; j < size; j += 2) above++;
  CHECK(hr == above, "split rank %d expected %d", hr, above);
  int sum = 0, one = rank;
  MPI_CHECK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, half));
  int want_sum = 0;
  for (int j = rank % 2; j < size; j += 2) want_sum += j;
  CHECK(sum == want_sum, "allreduce on split %d expected %d", sum, want_sum);
  MPI_CHECK(MPI_Comm_compare(half, MPI_COMM_WORLD, &cmp));
  CHECK(size == 1 ? cmp == MPI_CONGRUENT : cmp == MPI_UNEQUAL, "compare(half, world) = %d", cmp);

  /* MPI_UNDEFINED color gives MPI_COMM_NULL */
  MPI_Comm none;
  MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 1, 0, &none));
  CHECK((rank == 0) == (none == MPI_COMM_NULL), "split with MPI_UNDEFINED");
  if (none != MPI_COMM_NULL) MPI_CHECK(MPI_Comm_free(&none));

  /* shared-memory split: every rank of a node */
  MPI_Comm node;
  MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
  MPI_CHECK(MPI_Comm_compare(node, MPI_COMM_WORLD, &cmp));
  CHECK(cmp == MPI_CONGRUENT || cmp == MPI_SIMILAR || cmp == MPI_UNEQUAL, "split_type compare %d", cmp);
  MPI_CHECK(MPI_Comm_free(&node));

  /* many dup/free cycles: context ids must neither run out nor collide */
  int cycles = size <= 8 ? 2000 : 200;
  for (int i = 0; i < cycles; i++) {
    MPI_Comm c;
    MPI_CHECK(MPI_Comm_dup(half, &c));
    MPI_CHECK(MPI_Comm_free(&c));
    CHECK(c == MPI_COMM_NULL, "Comm_free did not null the handle");
  }
  for (int i = 0; i < 100000; i++) { /* COMM_SELF dups cost no synchronization */
    MPI_Comm c;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_SELF, &c));
    MPI_CHECK(MPI_Comm_free(&c));
  }
  MPI_CHECK(MPI_Comm_free(&half));
  MPI_CHECK(MPI_Comm_free(&dup));
  CHECK(dup == MPI_COMM_NULL, "dup not nulled");
  return mt_finish();
}
