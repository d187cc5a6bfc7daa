/* Intercommunicators: Intercomm_create between the even and the odd world ranks, queries,
 * point-to-point, every collective defined on them (blocking and nonblocking, with a
 * non-commutative user op), dup, merge, errors, and create/free cycles. Expected values
 * are computed from world ranks: local rank i of group g is world rank 2i + g. */
#define TEST_NAME "intercomm"
#include "mpitest.h"

#define P 1000000007LL
#define BASE 37LL

static int world_of(int g, int i) { return 2 * i + g; }

/* An associative, non-commutative op on (value, power) pairs: string concatenation of
 * base-37 digits, modulo P. (a op b) = a's digits followed by b's. */
static void concat_op(void *in, void *inout, int *len, MPI_Datatype *dt) {
  (void)dt;
  long long *a = in, *b = inout;
  for (int k = 0; k < *len; k++, a += 2, b += 2) {
    long long v = (a[0] * b[1] + b[0]) % P, p = (a[1] * b[1]) % P;
    b[0] = v;
    b[1] = p;
  }
}

/* The concatenation of the digits (i + 1) of members 0..n-1, in rank order. */
static long long concat_expected(int n) {
  long long v = 0;
  for (int i = 0; i < n; i++) v = (v * BASE + i + 1) % P;
  return v;
}

static void check_error(int rc, int expected_class, const char *what) {
  int cls = -1;
  MPI_Error_class(rc, &cls);
  CHECK(rc != MPI_SUCCESS && cls == expected_class, "%s returned class %d, expected %d", what, cls, expected_class);
}

int main(int argc, char **argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  int wrank, wsize;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &wsize));
  if (wsize < 2) { /* an intercommunicator needs two non-empty groups */
    MPI_CHECK(MPI_Finalize());
    printf("PASS " TEST_NAME "\n");
    return 0;
  }
  int g = wrank % 2, lr = wrank / 2;
  int n_even = (wsize + 1) / 2, n_odd = wsize / 2;
  int nl = g ? n_odd : n_even, nr = g ? n_even : n_odd;

  MPI_Comm local, inter;
  MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, g, wrank, &local));
  MPI_CHECK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, g ? 0 : 1, 77, &inter));

  /* ---- queries */
  int flag = 0, sz, rk, rsz;
  MPI_CHECK(MPI_Comm_test_inter(inter, &flag));
  CHECK(flag == 1, "test_inter(inter) = %d", flag);
  MPI_CHECK(MPI_Comm_test_inter(local, &flag));
  CHECK(flag == 0, "test_inter(local) = %d", flag);
  MPI_CHECK(MPI_Comm_size(inter, &sz));
  MPI_CHECK(MPI_Comm_rank(inter, &rk));
  MPI_CHECK(MPI_Comm_remote_size(inter, &rsz));
  CHECK(sz == nl && rk == lr && rsz == nr, "size/rank/remote size %d/%d/%d, expected %d/%d/%d", sz, rk, rsz, nl, lr,
        nr);
  MPI_Group rgroup, wgroup, lgroup;
  MPI_CHECK(MPI_Comm_remote_group(inter, &rgroup));
  MPI_CHECK(MPI_Comm_group(inter, &lgroup));
  MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &wgroup));
  int *idx = malloc(sizeof(int) * (size_t)wsize), *tr = malloc(sizeof(int) * (size_t)wsize);
  for (int i = 0; i < wsize; i++) idx[i] = i;
  MPI_CHECK(MPI_Group_translate_ranks(rgroup, nr, idx, wgroup, tr));
  for (int i = 0; i < nr; i++) CHECK(tr[i] == world_of(1 - g, i), "remote group rank %d is world %d", i, tr[i]);
  MPI_CHECK(MPI_Group_translate_ranks(lgroup, nl, idx, wgroup, tr));
  for (int i = 0; i < nl; i++) CHECK(tr[i] == world_of(g, i), "local group rank %d is world %d", i, tr[i]);
  MPI_CHECK(MPI_Group_free(&rgroup));
  MPI_CHECK(MPI_Group_free(&lgroup));
  MPI_CHECK(MPI_Group_free(&wgroup));

  /* ---- point-to-point: member i sends to remote rank i % nr; each receiver takes its
   * senders with MPI_ANY_SOURCE and checks the source is the sender's local rank */
  int out = wrank * 10;
  MPI_Request sreq;
  MPI_CHECK(MPI_Isend(&out, 1, MPI_INT, lr % nr, 3, inter, &sreq));
  int expect_msgs = 0;
  for (int i = 0; i < nr; i++) expect_msgs += i % nl == lr;
  for (int m = 0; m < expect_msgs; m++) {
    int in = -1;
    MPI_Status st;
    MPI_CHECK(MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 3, inter, &st));
    CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < nr && st.MPI_SOURCE % nl == lr, "source %d", st.MPI_SOURCE);
    CHECK(in == world_of(1 - g, st.MPI_SOURCE) * 10, "from %d got %d", st.MPI_SOURCE, in);
  }
  MPI_CHECK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
  /* a directed exchange with remote rank 0 (everyone) and back */
  MPI_CHECK(MPI_Isend(&wrank, 1, MPI_INT, 0, 4, inter, &sreq));
  if (lr == 0) {
    for (int i = 0; i < nr; i++) {
      int v = -1;
      MPI_CHECK(MPI_Recv(&v, 1, MPI_INT, i, 4, inter, MPI_STATUS_IGNORE));
      CHECK(v == world_of(1 - g, i), "directed message from %d: %d", i, v);
    }
  }
  MPI_CHECK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));

  /* ---- bcast, root in the even group (rank 0), then in the odd group (last rank) */
  for (int rootg = 0; rootg < 2; rootg++) {
    int root_local = rootg ? n_odd - 1 : 0;
    int buf[10];
    for (int k = 0; k < 10; k++) buf[k] = g == rootg && lr == root_local ? 1000 * rootg + k : -1;
    int root = g == rootg ? (lr == root_local ? MPI_ROOT : MPI_PROC_NULL) : root_local;
    MPI_CHECK(MPI_Bcast(buf, 10, MPI_INT, root, inter));
    for (int k = 0; k < 10; k++) {
      int want = g == rootg && lr != root_local ? -1 : 1000 * rootg + k;
      CHECK(buf[k] == want, "bcast (root group %d) buf[%d]=%d, expected %d", rootg, k, buf[k], want);
    }
  }

  /* ---- allreduce: each group gets the sum over the other group */
  {
    enum { N = 1000 };
    long long *s = malloc(sizeof(long long) * N), *r = malloc(sizeof(long long) * N);
    for (int k = 0; k < N; k++) s[k] = wrank + k;
    MPI_CHECK(MPI_Allreduce(s, r, N, MPI_LONG_LONG, MPI_SUM, inter));
    long long base = 0;
    for (int i = 0; i < nr; i++) base += world_of(1 - g, i);
    for (int k = 0; k < N; k++)
      CHECK(r[k] == base + (long long)k * nr, "allreduce[%d] = %lld, expected %lld", k, r[k], base + (long long)k * nr);
    free(s);
    free(r);
    /* non-commutative: the other group's digits in rank order */
    MPI_Op op;
    MPI_Datatype pair;
    MPI_CHECK(MPI_Type_contiguous(2, MPI_LONG_LONG, &pair));
    MPI_CHECK(MPI_Type_commit(&pair));
    MPI_CHECK(MPI_Op_create(concat_op, 0, &op));
    long long mine[6], res[6];
    for (int k = 0; k < 3; k++) {
      mine[2 * k] = lr + 1;
      mine[2 * k + 1] = BASE;
    }
    MPI_CHECK(MPI_Allreduce(mine, res, 3, pair, op, inter));
    for (int k = 0; k < 3; k++)
      CHECK(res[2 * k] == concat_expected(nr), "non-commutative allreduce[%d] = %lld, expected %lld", k, res[2 * k],
            concat_expected(nr));
    /* reduce to the odd group's last rank */
    int root = g == 1 ? (lr == n_odd - 1 ? MPI_ROOT : MPI_PROC_NULL) : n_odd - 1;
    for (int k = 0; k < 6; k++) res[k] = -1;
    MPI_CHECK(MPI_Reduce(mine, res, 3, pair, op, root, inter));
    if (root == MPI_ROOT)
      CHECK(res[0] == concat_expected(n_even), "reduce = %lld, expected %lld", res[0], concat_expected(n_even));
    else if (root == MPI_PROC_NULL)
      CHECK(res[0] == -1, "reduce touched the receive buffer of a non-root");
    MPI_CHECK(MPI_Op_free(&op));
    MPI_CHECK(MPI_Type_free(&pair));
  }

  /* ---- gather(v) to the even group's rank 0; scatter(v) from the odd group's rank 0 */
  {
    int *rbuf = malloc(sizeof(int) * (size_t)(2 * wsize + 64)), *counts = malloc(sizeof(int) * (size_t)wsize),
        *displs = malloc(sizeof(int) * (size_t)wsize);
    int sbuf[2] = {wrank, 2 * wrank};
    int root = g == 0 ? (lr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    MPI_CHECK(MPI_Gather(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, root, inter));
    if (root == MPI_ROOT)
      for (int i = 0; i < n_odd; i++)
        CHECK(rbuf[2 * i] == world_of(1, i) && rbuf[2 * i + 1] == 2 * world_of(1, i), "gather block %d", i);
    /* gatherv: odd member i sends i % 3 + 1 ints, placed in reverse order */
    int off = 0;
    for (int i = n_odd - 1; i >= 0; i--) {
      counts[i] = i % 3 + 1;
      displs[i] = off;
      off += counts[i] + 1;
    }
    int vs[3] = {wrank, wrank + 1, wrank + 2};
    MPI_CHECK(MPI_Gatherv(vs, lr % 3 + 1, MPI_INT, rbuf, counts, displs, MPI_INT, root, inter));
    if (root == MPI_ROOT)
      for (int i = 0; i < n_odd; i++)
        for (int k = 0; k < counts[i]; k++)
          CHECK(rbuf[displs[i] + k] == world_of(1, i) + k, "gatherv from %d elem %d", i, k);

    root = g == 1 ? (lr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    int *sc = malloc(sizeof(int) * (size_t)(3 * wsize + 3));
    for (int i = 0; i < 3 * wsize; i++) sc[i] = 5000 + i;
    int got[3] = {-1, -1, -1};
    MPI_CHECK(MPI_Scatter(sc, 3, MPI_INT, got, 3, MPI_INT, root, inter));
    if (g == 0)
      for (int k = 0; k < 3; k++) CHECK(got[k] == 5000 + 3 * lr + k, "scatter elem %d = %d", k, got[k]);
    for (int i = 0; i < n_even; i++) {
      counts[i] = i % 2 + 1;
      displs[i] = 3 * (n_even - 1 - i);
    }
    got[0] = got[1] = -1;
    MPI_CHECK(MPI_Scatterv(sc, counts, displs, MPI_INT, got, lr % 2 + 1, MPI_INT, root, inter));
    if (g == 0)
      for (int k = 0; k < lr % 2 + 1; k++)
        CHECK(got[k] == 5000 + 3 * (n_even - 1 - lr) + k, "scatterv elem %d = %d", k, got[k]);
    free(sc);
    free(rbuf);
    free(counts);
    free(displs);
  }

  /* ---- allgather(v), alltoall(v,w) */
  {
    int *rbuf = malloc(sizeof(int) * (size_t)(4 * wsize)), *rc = malloc(sizeof(int) * (size_t)wsize),
        *rd = malloc(sizeof(int) * (size_t)wsize), *sc = malloc(sizeof(int) * (size_t)wsize),
        *sd = malloc(sizeof(int) * (size_t)wsize), *sbuf = malloc(sizeof(int) * (size_t)(4 * wsize));
    MPI_CHECK(MPI_Allgather(&wrank, 1, MPI_INT, rbuf, 1, MPI_INT, inter));
    for (int i = 0; i < nr; i++) CHECK(rbuf[i] == world_of(1 - g, i), "allgather[%d] = %d", i, rbuf[i]);
    int off = 0;
    for (int i = 0; i < nr; i++) {
      rc[i] = i % 2 + 1;
      rd[i] = off;
      off += rc[i];
    }
    int two[2] = {wrank, -wrank};
    MPI_CHECK(MPI_Allgatherv(two, lr % 2 + 1, MPI_INT, rbuf, rc, rd, MPI_INT, inter));
    for (int i = 0; i < nr; i++)
      for (int k = 0; k < rc[i]; k++)
        CHECK(rbuf[rd[i] + k] == (k ? -1 : 1) * world_of(1 - g, i), "allgatherv from %d elem %d", i, k);

    for (int j = 0; j < nr; j++) sbuf[j] = wrank * 1000 + j;
    MPI_CHECK(MPI_Alltoall(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, inter));
    for (int j = 0; j < nr; j++)
      CHECK(rbuf[j] == world_of(1 - g, j) * 1000 + lr, "alltoall from %d = %d", j, rbuf[j]);

    /* alltoallv: sender i sends (i + j) % 3 + 1 ints to remote j */
    int so = 0, ro = 0;
    for (int j = 0; j < nr; j++) {
      sc[j] = (lr + j) % 3 + 1;
      sd[j] = so;
      for (int k = 0; k < sc[j]; k++) sbuf[so + k] = wrank * 1000 + j * 10 + k;
      so += sc[j];
      rc[j] = (j + lr) % 3 + 1;
      rd[j] = ro;
      ro += rc[j];
    }
    MPI_CHECK(MPI_Alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, inter));
    for (int j = 0; j < nr; j++)
      for (int k = 0; k < rc[j]; k++)
        CHECK(rbuf[rd[j] + k] == world_of(1 - g, j) * 1000 + lr * 10 + k, "alltoallv from %d elem %d", j, k);
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)wsize);
    for (int j = 0; j < nr; j++) {
      types[j] = MPI_INT;
      sd[j] *= (int)sizeof(int);
      rd[j] *= (int)sizeof(int);
    }
    for (int i = 0; i < ro; i++) rbuf[i] = -1;
    MPI_CHECK(MPI_Alltoallw(sbuf, sc, sd, types, rbuf, rc, rd, types, inter));
    for (int j = 0; j < nr; j++)
      for (int k = 0; k < rc[j]; k++)
        CHECK(rbuf[rd[j] / (int)sizeof(int) + k] == world_of(1 - g, j) * 1000 + lr * 10 + k, "alltoallw from %d", j);
    free(types);
    free(rbuf);
    free(rc);
    free(rd);
    free(sc);
    free(sd);
    free(sbuf);
  }

  /* ---- reduce_scatter(_block): the other group's sum, scattered over my group. Both
   * groups' vectors hold n_even * n_odd elements. */
  {
    int total = n_even * n_odd;
    int *s = malloc(sizeof(int) * (size_t)total), *r = malloc(sizeof(int) * (size_t)total);
    int *counts = malloc(sizeof(int) * (size_t)wsize);
    for (int k = 0; k < total; k++) s[k] = wrank + k;
    int rcount = total / nl;
    MPI_CHECK(MPI_Reduce_scatter_block(s, r, rcount, MPI_INT, MPI_SUM, inter));
    long long base = 0;
    for (int i = 0; i < nr; i++) base += world_of(1 - g, i);
    for (int k = 0; k < rcount; k++) {
      long long e = base + (long long)nr * (lr * rcount + k);
      CHECK(r[k] == e, "reduce_scatter_block[%d] = %d, expected %lld", k, r[k], e);
    }
    /* uneven counts: my group's first member gets one more, its last one less */
    for (int i = 0; i < nl; i++) counts[i] = rcount + (nl > 1 ? (i == 0) - (i == nl - 1) : 0);
    int start = 0;
    for (int i = 0; i < lr; i++) start += counts[i];
    MPI_CHECK(MPI_Reduce_scatter(s, r, counts, MPI_INT, MPI_SUM, inter));
    for (int k = 0; k < counts[lr]; k++) {
      long long e = base + (long long)nr * (start + k);
      CHECK(r[k] == e, "reduce_scatter[%d] = %d, expected %lld", k, r[k], e);
    }
    free(s);
    free(r);
    free(counts);
  }

  /* ---- nonblocking: ibarrier, ibcast, iallreduce and ialltoall in flight together */
  {
    MPI_Request rq[4];
    int root = g == 0 ? (lr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    int b = g == 0 ? 4242 : -1, sum = -1;
    int *a2a_s = malloc(sizeof(int) * (size_t)wsize), *a2a_r = malloc(sizeof(int) * (size_t)wsize);
    for (int j = 0; j < nr; j++) a2a_s[j] = wrank + 100 * j;
    MPI_CHECK(MPI_Ibarrier(inter, &rq[0]));
    MPI_CHECK(MPI_Ibcast(&b, 1, MPI_INT, root, inter, &rq[1]));
    MPI_CHECK(MPI_Iallreduce(&wrank, &sum, 1, MPI_INT, MPI_SUM, inter, &rq[2]));
    MPI_CHECK(MPI_Ialltoall(a2a_s, 1, MPI_INT, a2a_r, 1, MPI_INT, inter, &rq[3]));
    MPI_CHECK(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
    int esum = 0;
    for (int i = 0; i < nr; i++) esum += world_of(1 - g, i);
    CHECK(b == 4242, "ibcast got %d", b);
    CHECK(sum == esum, "iallreduce got %d, expected %d", sum, esum);
    for (int j = 0; j < nr; j++) CHECK(a2a_r[j] == world_of(1 - g, j) + 100 * lr, "ialltoall from %d", j);
    free(a2a_s);
    free(a2a_r);
  }
  MPI_CHECK(MPI_Barrier(inter));

  /* ---- dup and idup: same groups, separate contexts */
  {
    MPI_Comm dup, idup;
    MPI_Request rq;
    int cmp = -1;
    MPI_CHECK(MPI_Comm_dup(inter, &dup));
    MPI_CHECK(MPI_Comm_idup(inter, &idup, &rq));
    MPI_CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Comm_compare(inter, dup, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "compare(inter, dup) = %d", cmp);
    MPI_CHECK(MPI_Comm_compare(inter, local, &cmp));
    CHECK(cmp == MPI_UNEQUAL, "compare(inter, local) = %d", cmp);
    MPI_CHECK(MPI_Comm_test_inter(idup, &flag));
    MPI_CHECK(MPI_Comm_remote_size(idup, &rsz));
    CHECK(flag && rsz == nr, "idup: inter %d remote size %d", flag, rsz);
    int a = wrank, b2 = wrank + 1, got = -1;
    MPI_Request s2[2];
    MPI_CHECK(MPI_Isend(&a, 1, MPI_INT, lr % nr, 9, dup, &s2[0]));
    MPI_CHECK(MPI_Isend(&b2, 1, MPI_INT, lr % nr, 9, idup, &s2[1]));
    for (int m = 0; m < expect_msgs; m++) {
      MPI_Status st;
      MPI_CHECK(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, idup, &st));
      CHECK(got == world_of(1 - g, st.MPI_SOURCE) + 1, "idup got %d (a message crossed communicators?)", got);
      MPI_CHECK(MPI_Recv(&got, 1, MPI_INT, st.MPI_SOURCE, 9, dup, MPI_STATUS_IGNORE));
      CHECK(got == world_of(1 - g, st.MPI_SOURCE), "dup got %d", got);
    }
    MPI_CHECK(MPI_Waitall(2, s2, MPI_STATUSES_IGNORE));
    int sum = -1;
    MPI_CHECK(MPI_Allreduce(&wrank, &sum, 1, MPI_INT, MPI_SUM, dup));
    MPI_CHECK(MPI_Comm_free(&dup));
    MPI_CHECK(MPI_Comm_free(&idup));
  }

  /* ---- split: color lr % 2 in both groups, reverse order; a color missing in one group
   * gives MPI_COMM_NULL */
  {
    MPI_Comm sp;
    int color = lr % 2;
    MPI_CHECK(MPI_Comm_split(inter, color, -lr, &sp));
    int nl_c = (nl - color + 1) / 2, nr_c = (nr - color + 1) / 2; /* members with my color */
    if (nr_c == 0) {
      CHECK(sp == MPI_COMM_NULL, "split: color %d has no remote members but got a communicator", color);
    } else {
      int s_rank, s_size, s_rsize;
      MPI_CHECK(MPI_Comm_rank(sp, &s_rank));
      MPI_CHECK(MPI_Comm_size(sp, &s_size));
      MPI_CHECK(MPI_Comm_remote_size(sp, &s_rsize));
      CHECK(s_size == nl_c && s_rsize == nr_c && s_rank == nl_c - 1 - lr / 2,
            "split: size %d remote %d rank %d, expected %d %d %d", s_size, s_rsize, s_rank, nl_c, nr_c,
            nl_c - 1 - lr / 2);
      /* everyone sends its world rank to remote rank 0 of the split */
      MPI_Request sr;
      MPI_CHECK(MPI_Isend(&wrank, 1, MPI_INT, 0, 11, sp, &sr));
      if (s_rank == 0)
        for (int i = 0; i < nr_c; i++) {
          int v = -1;
          MPI_CHECK(MPI_Recv(&v, 1, MPI_INT, i, 11, sp, MPI_STATUS_IGNORE));
          int remote_lr = 2 * (nr_c - 1 - i) + color; /* reverse order */
          CHECK(v == world_of(1 - g, remote_lr), "split: remote rank %d is world %d, expected %d", i, v,
                world_of(1 - g, remote_lr));
        }
      MPI_CHECK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
      MPI_CHECK(MPI_Comm_free(&sp));
    }
    /* Comm_create with each group dropping its rank 0 (when it has more than one member) */
    MPI_Group lg, sub;
    MPI_CHECK(MPI_Comm_group(inter, &lg));
    int zero = 0;
    if (nl > 1) MPI_CHECK(MPI_Group_excl(lg, 1, &zero, &sub));
    else MPI_CHECK(MPI_Group_incl(lg, 1, &zero, &sub));
    MPI_Comm cr;
    MPI_CHECK(MPI_Comm_create(inter, sub, &cr));
    int in_sub = nl == 1 || lr > 0;
    if (!in_sub) {
      CHECK(cr == MPI_COMM_NULL, "create: a member outside the group got a communicator");
    } else {
      int c_rank, c_rsize;
      MPI_CHECK(MPI_Comm_rank(cr, &c_rank));
      MPI_CHECK(MPI_Comm_remote_size(cr, &c_rsize));
      CHECK(c_rank == (nl > 1 ? lr - 1 : 0) && c_rsize == (nr > 1 ? nr - 1 : 1), "create: rank %d remote size %d",
            c_rank, c_rsize);
      int sum = -1, esum = 0;
      for (int i = nr > 1 ? 1 : 0; i < nr; i++) esum += world_of(1 - g, i);
      MPI_CHECK(MPI_Allreduce(&wrank, &sum, 1, MPI_INT, MPI_SUM, cr));
      CHECK(sum == esum, "create: allreduce %d, expected %d", sum, esum);
      MPI_CHECK(MPI_Comm_free(&cr));
    }
    MPI_CHECK(MPI_Group_free(&sub));
    MPI_CHECK(MPI_Group_free(&lg));
  }

  /* ---- merge: the low group first; on a tie, the group of the lower leader (even) */
  for (int variant = 0; variant < 3; variant++) {
    int high = variant == 0 ? g : variant == 1 ? 1 - g : 0;
    MPI_Comm merged;
    MPI_CHECK(MPI_Intercomm_merge(inter, high, &merged));
    int first = variant == 1 ? 1 : 0; /* the group that comes first */
    int n_first = first ? n_odd : n_even;
    int want = g == first ? lr : n_first + lr, mr, ms;
    MPI_CHECK(MPI_Comm_rank(merged, &mr));
    MPI_CHECK(MPI_Comm_size(merged, &ms));
    CHECK(mr == want && ms == wsize, "merge variant %d: rank %d size %d, expected %d %d", variant, mr, ms, want, wsize);
    MPI_CHECK(MPI_Comm_test_inter(merged, &flag));
    CHECK(!flag, "merged communicator is an intercommunicator");
    int *all = malloc(sizeof(int) * (size_t)wsize);
    MPI_CHECK(MPI_Allgather(&wrank, 1, MPI_INT, all, 1, MPI_INT, merged));
    for (int i = 0; i < wsize; i++) {
      int e = i < n_first ? world_of(first, i) : world_of(1 - first, i - n_first);
      CHECK(all[i] == e, "merge variant %d: rank %d is world %d, expected %d", variant, i, all[i], e);
    }
    free(all);
    MPI_CHECK(MPI_Comm_free(&merged));
  }

  /* ---- errors come back through the intercommunicator's handler */
  {
    MPI_CHECK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int x = 1, y = 0;
    check_error(MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_COMM, "MPI_Scan on an intercommunicator");
    check_error(MPI_Allreduce(MPI_IN_PLACE, &y, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_BUFFER,
                "in-place allreduce on an intercommunicator");
    check_error(MPI_Bcast(&x, 1, MPI_INT, nr, inter), MPI_ERR_ROOT, "bcast with root = remote size");
    check_error(MPI_Send(&x, 1, MPI_INT, nr, 0, inter), MPI_ERR_RANK, "send to dest = remote size");
    check_error(MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &local), MPI_ERR_COMM, "merge of an intracommunicator");
    MPI_Comm bad;
    int dims[1] = {nl}, periods[1] = {0};
    check_error(MPI_Cart_create(inter, 1, dims, periods, 0, &bad), MPI_ERR_COMM, "Cart_create on an intercommunicator");
    check_error(MPI_Intercomm_create(inter, 0, MPI_COMM_WORLD, 0, 1, &bad), MPI_ERR_COMM,
                "Intercomm_create with an intercommunicator as local_comm");
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  }
  MPI_CHECK(MPI_Comm_free(&inter));
  CHECK(inter == MPI_COMM_NULL, "free did not reset the handle");

  /* ---- create/free cycles: contexts are reused safely */
  for (int it = 0; it < 200; it++) {
    MPI_Comm ic;
    MPI_CHECK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, g ? 0 : 1, 1000 + it % 7, &ic));
    int v = it, got = -1;
    MPI_Request sr;
    MPI_CHECK(MPI_Isend(&v, 1, MPI_INT, lr % nr, 0, ic, &sr));
    for (int m = 0; m < expect_msgs; m++) {
      MPI_CHECK(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 0, ic, MPI_STATUS_IGNORE));
      CHECK(got == it, "cycle %d got %d (a message from an earlier intercommunicator?)", it, got);
    }
    MPI_CHECK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Comm_free(&ic));
  }
  MPI_CHECK(MPI_Comm_free(&local));
  free(idx);
  free(tr);
  MPI_CHECK(MPI_Finalize());
  if (wrank == 0) printf("PASS " TEST_NAME "\n");
  return 0;
}
