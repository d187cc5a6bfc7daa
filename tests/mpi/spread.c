/*
 * spread.c - collectives on communicators whose ranks are spread over processes in
 * every order: MPI_COMM_WORLD, its reverse, and an interleaving (even world ranks first,
 * then odd ones), so a process's ranks are not consecutive.  On each: barrier, bcast
 * from every root, a non-commutative reduce / allreduce / scan / exscan (composition of
 * affine maps, whose result depends on the order), sum allreduce of a large vector,
 * gatherv / scatterv / allgatherv / alltoallv with uneven counts, reduce_scatter, and
 * the in-place forms.  Run it with several processes (skeinrun --procs) and without.
 */
#define TEST_NAME "spread"
#include "mpitest.h"

/* f(x) = a x + b as (a, b), mod 2^31 - 1 to stay exact. */
#define MOD 2147483647LL
typedef struct { long long a, b; } affine;

/* inout = in o inout, i.e. apply inout first?  MPI: inout = in op inout with
 * "in" the lower ranks: (in op inout)(x) = inout(in(x)). */
static void compose(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    affine *f = in, *g = inout;
    for (int i = 0; i < *len; i++) {
        affine r = {(g[i].a * f[i].a) % MOD, (g[i].a * f[i].b + g[i].b) % MOD};
        g[i] = r;
    }
}

static affine map_of(int rank, int k) { return (affine){2 + (rank * 7 + k) % 5, rank * 3 + k + 1}; }

static affine fold(int lo, int hi, int k, const int *world_of) /* ranks lo..hi-1, in order */
{
    affine acc = {1, 0};
    for (int r = lo; r < hi; r++) {
        affine f = map_of(world_of[r], k);
        affine n = {(f.a * acc.a) % MOD, (f.a * acc.b + f.b) % MOD};
        acc = n;
    }
    return acc;
}

static void run(MPI_Comm comm, const char *name, const int *world_of, MPI_Datatype affine_t, MPI_Op op)
{
    int rank, size;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    MPI_CHECK(MPI_Comm_size(comm, &size));
    int me = world_of[rank];
    enum { K = 3 };

    MPI_CHECK(MPI_Barrier(comm));
    for (int root = 0; root < size; root++) {
        long long v[4] = {0};
        if (rank == root)
            for (int i = 0; i < 4; i++) v[i] = (long long)root * 100 + i;
        MPI_CHECK(MPI_Bcast(v, 4, MPI_LONG_LONG, root, comm));
        for (int i = 0; i < 4; i++)
            CHECK(v[i] == (long long)root * 100 + i, "%s: bcast from %d: element %d (expected %lld got %lld)",
                  name, root, i, (long long)root * 100 + i, v[i]);
    }

    /* non-commutative reductions: the order of ranks shows in the result */
    affine in[K], out[K];
    for (int k = 0; k < K; k++) in[k] = map_of(me, k);
    for (int root = 0; root < size; root += size > 2 ? size / 2 : 1) {
        MPI_CHECK(MPI_Reduce(in, out, K, affine_t, op, root, comm));
        if (rank == root)
            for (int k = 0; k < K; k++) {
                affine e = fold(0, size, k, world_of);
                CHECK(out[k].a == e.a && out[k].b == e.b, "%s: reduce to %d, element %d (expected (%lld,%lld) got "
                      "(%lld,%lld))", name, root, k, e.a, e.b, out[k].a, out[k].b);
            }
    }
    MPI_CHECK(MPI_Allreduce(in, out, K, affine_t, op, comm));
    for (int k = 0; k < K; k++) {
        affine e = fold(0, size, k, world_of);
        CHECK(out[k].a == e.a && out[k].b == e.b, "%s: allreduce element %d", name, k);
    }
    MPI_CHECK(MPI_Scan(in, out, K, affine_t, op, comm));
    for (int k = 0; k < K; k++) {
        affine e = fold(0, rank + 1, k, world_of);
        CHECK(out[k].a == e.a && out[k].b == e.b, "%s: scan element %d", name, k);
    }
    MPI_CHECK(MPI_Exscan(in, out, K, affine_t, op, comm));
    for (int k = 0; rank > 0 && k < K; k++) {
        affine e = fold(0, rank, k, world_of);
        CHECK(out[k].a == e.a && out[k].b == e.b, "%s: exscan element %d", name, k);
    }

    /* a large sum, in place on odd ranks (rendezvous between processes) */
    int n = 1 << 17;
    long long *big = mt_malloc(sizeof *big * (size_t)n), *sum = mt_malloc(sizeof *sum * (size_t)n);
    for (int i = 0; i < n; i++) big[i] = sum[i] = (long long)me * n + i;
    MPI_CHECK(MPI_Allreduce(rank % 2 ? MPI_IN_PLACE : big, sum, n, MPI_LONG_LONG, MPI_SUM, comm));
    long long wsum = 0;
    for (int r = 0; r < size; r++) wsum += world_of[r];
    for (int i = 0; i < n; i += 997)
        CHECK(sum[i] == wsum * n + (long long)size * i, "%s: allreduce sum element %d (expected %lld got %lld)",
              name, i, wsum * n + (long long)size * i, sum[i]);
    free(big);
    free(sum);

    /* uneven v-collectives: rank j contributes j + 1 ints valued 1000 * world rank + i */
    int *counts = mt_malloc(sizeof(int) * (size_t)size), *displs = mt_malloc(sizeof(int) * (size_t)size);
    int total = 0;
    for (int j = 0; j < size; j++) {
        counts[j] = j + 1;
        displs[j] = total;
        total += j + 1;
    }
    int *mine = mt_malloc(sizeof(int) * (size_t)(rank + 1)), *all = mt_malloc(sizeof(int) * (size_t)total);
    for (int i = 0; i <= rank; i++) mine[i] = 1000 * me + i;
    int root = size - 1;
    MPI_CHECK(MPI_Gatherv(mine, rank + 1, MPI_INT, all, counts, displs, MPI_INT, root, comm));
    for (int j = 0; rank == root && j < size; j++)
        for (int i = 0; i <= j; i++)
            CHECK(all[displs[j] + i] == 1000 * world_of[j] + i, "%s: gatherv block %d element %d", name, j, i);
    memset(mine, 0, sizeof(int) * (size_t)(rank + 1));
    MPI_CHECK(MPI_Scatterv(all, counts, displs, MPI_INT, mine, rank + 1, MPI_INT, root, comm));
    for (int i = 0; i <= rank; i++)
        CHECK(mine[i] == 1000 * me + i, "%s: scatterv element %d", name, i);
    memset(all, 0, sizeof(int) * (size_t)total);
    for (int i = 0; i <= rank; i++) all[displs[rank] + i] = 1000 * me + i;
    MPI_CHECK(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, counts, displs, MPI_INT, comm));
    for (int j = 0; j < size; j++)
        for (int i = 0; i <= j; i++)
            CHECK(all[displs[j] + i] == 1000 * world_of[j] + i, "%s: allgatherv block %d element %d", name, j, i);

    /* alltoallv: to rank j, j + 1 ints valued 1000 * me + 10 * j + i */
    int *scounts = mt_malloc(sizeof(int) * (size_t)size), *sdispls = mt_malloc(sizeof(int) * (size_t)size);
    int *rcounts = mt_malloc(sizeof(int) * (size_t)size), *rdispls = mt_malloc(sizeof(int) * (size_t)size);
    int stotal = 0, rtotal = 0;
    for (int j = 0; j < size; j++) {
        scounts[j] = j + 1;
        sdispls[j] = stotal;
        stotal += j + 1;
        rcounts[j] = rank + 1;
        rdispls[j] = rtotal;
        rtotal += rank + 1;
    }
    int *sb = mt_malloc(sizeof(int) * (size_t)stotal), *rb = mt_malloc(sizeof(int) * (size_t)rtotal);
    for (int j = 0; j < size; j++)
        for (int i = 0; i <= j; i++) sb[sdispls[j] + i] = 1000 * me + 10 * j + i;
    MPI_CHECK(MPI_Alltoallv(sb, scounts, sdispls, MPI_INT, rb, rcounts, rdispls, MPI_INT, comm));
    for (int j = 0; j < size; j++)
        for (int i = 0; i <= rank; i++)
            CHECK(rb[rdispls[j] + i] == 1000 * world_of[j] + 10 * rank + i, "%s: alltoallv from %d element %d", name,
                  j, i);

    /* reduce_scatter: block j (j + 1 ints) of the sum of everyone's vector v[i] = i + me */
    int *vec = mt_malloc(sizeof(int) * (size_t)total), *blk = mt_malloc(sizeof(int) * (size_t)(rank + 1));
    for (int i = 0; i < total; i++) vec[i] = i + me;
    MPI_CHECK(MPI_Reduce_scatter(vec, blk, counts, MPI_INT, MPI_SUM, comm));
    for (int i = 0; i <= rank; i++)
        CHECK(blk[i] == size * (displs[rank] + i) + (int)wsum, "%s: reduce_scatter element %d", name, i);

    free(counts); free(displs); free(mine); free(all);
    free(scounts); free(sdispls); free(rcounts); free(rdispls); free(sb); free(rb); free(vec); free(blk);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_Datatype affine_t;
    MPI_CHECK(MPI_Type_contiguous(2, MPI_LONG_LONG, &affine_t));
    MPI_CHECK(MPI_Type_commit(&affine_t));
    MPI_Op op;
    MPI_CHECK(MPI_Op_create(compose, 0, &op));

    int *world_of = mt_malloc(sizeof(int) * (size_t)size);
    for (int r = 0; r < size; r++) world_of[r] = r;
    run(MPI_COMM_WORLD, "world", world_of, affine_t, op);

    MPI_Comm rev, inter;
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev));
    for (int r = 0; r < size; r++) world_of[r] = size - 1 - r;
    run(rev, "reversed", world_of, affine_t, op);

    int evens = (size + 1) / 2;
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, 7, rank % 2 ? evens + rank / 2 : rank / 2, &inter));
    for (int r = 0; r < size; r++) world_of[r] = r < evens ? 2 * r : 2 * (r - evens) + 1;
    int irank;
    MPI_CHECK(MPI_Comm_rank(inter, &irank));
    CHECK(world_of[irank] == rank, "interleaved split: rank %d (expected world rank %d)", irank, world_of[irank]);
    run(inter, "interleaved", world_of, affine_t, op);

    /* a dup of the interleaving keeps order; a split into halves works too */
    MPI_Comm dup, half;
    MPI_CHECK(MPI_Comm_dup(inter, &dup));
    run(dup, "interleaved dup", world_of, affine_t, op);
    MPI_CHECK(MPI_Comm_split(inter, irank < size / 2, irank, &half));
    int hsize, hrank;
    MPI_CHECK(MPI_Comm_size(half, &hsize));
    MPI_CHECK(MPI_Comm_rank(half, &hrank));
    CHECK(hsize == (irank < size / 2 ? size / 2 : size - size / 2), "half: size %d", hsize);
    int lo = irank < size / 2 ? 0 : size / 2;
    run(half, "half", world_of + lo, affine_t, op);

    MPI_CHECK(MPI_Comm_free(&half));
    MPI_CHECK(MPI_Comm_free(&dup));
    MPI_CHECK(MPI_Comm_free(&inter));
    MPI_CHECK(MPI_Comm_free(&rev));
    MPI_CHECK(MPI_Op_free(&op));
    MPI_CHECK(MPI_Type_free(&affine_t));
    free(world_of);
    return mt_finish();
}
