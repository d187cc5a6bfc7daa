/* Accumulate atomicity and ordering:
 *  - a contended counter: every rank MPI_Fetch_and_op(+1) ITERS times on one long long
 *    at rank 0 under lock_all; the final value must be exact and every fetched value
 *    unique (each rank's fetched values increase);
 *  - a compare-and-swap spin lock protecting a non-atomic read-modify-write (get, +1,
 *    put, flush) of a second counter: exact only if the lock excludes;
 *  - accumulate ordering: one origin's REPLACE then SUM then Get_accumulate(NO_OP) on
 *    the same location see each other in order;
 *  - every predefined op on a type it is defined on, with Get_accumulate returning the
 *    old values (MINLOC/MAXLOC on MPI_2INT and MPI_SHORT_INT, a type with a hole, to go
 *    through the locked path), and long double (no hardware atomics) summed under
 *    contention. */
#define TEST_NAME "rma_atomic"
#include "mpitest.h"

#ifndef ITERS
#define ITERS 10000
#endif

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = argc > 1 ? atoi(argv[1]) : ITERS;
    if (size > 16 && iters > 2000) iters = 2000; /* 64 ranks: keep the run short */

    /* layout of rank 0's window: [0] counter, [1] lock word, [2] protected counter,
     * [3] ordering slot, [4..] op results; long doubles at the end */
    long long *mem;
    MPI_Win win;
    MPI_CHECK(MPI_Win_allocate(64 * sizeof(long long), sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                               &win));
    for (int i = 0; i < 64; i++) mem[i] = 0;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

    /* ---- contended counter */
    MPI_CHECK(MPI_Win_lock_all(0, win));
    long long one = 1, prev = -1, got;
    for (int i = 0; i < iters; i++) {
        MPI_CHECK(MPI_Fetch_and_op(&one, &got, MPI_LONG_LONG, 0, 0, MPI_SUM, win));
        CHECK(got > prev, "fetched values must increase (previous %lld got %lld)", prev, got);
        prev = got;
    }
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        CHECK(mem[0] == (long long)size * iters, "counter (expected %lld got %lld)", (long long)size * iters, mem[0]);

    /* ---- compare-and-swap lock around get/+1/put */
    int rounds = iters / 10 > 0 ? iters / 10 : 1;
    MPI_CHECK(MPI_Win_lock_all(0, win));
    for (int i = 0; i < rounds; i++) {
        long long mine = rank + 1, zero = 0, old = -1;
        for (;;) {
            MPI_CHECK(MPI_Compare_and_swap(&mine, &zero, &old, MPI_LONG_LONG, 0, 1, win));
            if (old == 0) break;
            CHECK(old >= 1 && old <= size, "lock word holds %lld", old);
        }
        long long v;
        MPI_CHECK(MPI_Get(&v, 1, MPI_LONG_LONG, 0, 2, 1, MPI_LONG_LONG, win));
        MPI_CHECK(MPI_Win_flush(0, win));
        v++;
        MPI_CHECK(MPI_Put(&v, 1, MPI_LONG_LONG, 0, 2, 1, MPI_LONG_LONG, win));
        MPI_CHECK(MPI_Win_flush(0, win));
        MPI_CHECK(MPI_Compare_and_swap(&zero, &mine, &old, MPI_LONG_LONG, 0, 1, win));
        CHECK(old == mine, "unlocking: the lock word held %lld, not my %lld", old, mine);
    }
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        CHECK(mem[2] == (long long)size * rounds, "CAS-locked counter (expected %lld got %lld)",
              (long long)size * rounds, mem[2]);

    /* ---- ordering: each rank in turn, on slot 3 */
    for (int r = 0; r < size; r++) {
        if (r == rank) {
            MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
            long long x = 1000 + rank, add = 7, res = -1, dummy = 0;
            MPI_CHECK(MPI_Accumulate(&x, 1, MPI_LONG_LONG, 0, 3, 1, MPI_LONG_LONG, MPI_REPLACE, win));
            MPI_CHECK(MPI_Accumulate(&add, 1, MPI_LONG_LONG, 0, 3, 1, MPI_LONG_LONG, MPI_SUM, win));
            MPI_CHECK(MPI_Get_accumulate(&dummy, 1, MPI_LONG_LONG, &res, 1, MPI_LONG_LONG, 0, 3, 1, MPI_LONG_LONG,
                                         MPI_NO_OP, win));
            MPI_CHECK(MPI_Win_unlock(0, win));
            CHECK(res == 1007 + rank, "ordered REPLACE, SUM, NO_OP (expected %lld got %lld)", 1007LL + rank, res);
        }
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }

    /* ---- every op (one rank at a time, results checked against a local model) */
    if (rank == size - 1) {
        MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        int ops_i[] = {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_BAND, MPI_LOR, MPI_BOR, MPI_LXOR, MPI_BXOR,
                       MPI_REPLACE, MPI_NO_OP};
        int init[] = {5, 5, 5, 5, 3, 12, 0, 12, 3, 12, 5, 5};
        int arg[] = {9, 2, 4, 3, 0, 10, 0, 3, 6, 10, 8, 99};
        int want[] = {9, 2, 9, 15, 0, 8, 0, 15, 0, 6, 8, 5};
        for (int k = 0; k < 12; k++) {
            int v = init[k], old = -1, now = -1, dummy = 0;
            MPI_CHECK(MPI_Put(&v, 1, MPI_INT, 0, 4, 1, MPI_INT, win)); /* disp unit 8: slot 4 */
            MPI_CHECK(MPI_Win_flush(0, win));
            MPI_CHECK(MPI_Fetch_and_op(&arg[k], &old, MPI_INT, 0, 4, ops_i[k], win));
            MPI_CHECK(MPI_Get_accumulate(&dummy, 1, MPI_INT, &now, 1, MPI_INT, 0, 4, 1, MPI_INT, MPI_NO_OP, win));
            CHECK(old == init[k], "op #%d: fetched old value (expected %d got %d)", k, init[k], old);
            CHECK(now == want[k], "op #%d: result (expected %d got %d)", k, want[k], now);
        }
        /* MINLOC / MAXLOC on pairs, vectors of 3 */
        struct { int v, i; } p0[3] = {{5, 1}, {5, 1}, {2, 0}}, pa[3] = {{3, 9}, {5, 0}, {7, 4}}, pr[3];
        MPI_CHECK(MPI_Put(p0, 3, MPI_2INT, 0, 8, 3, MPI_2INT, win));
        MPI_CHECK(MPI_Win_flush(0, win));
        MPI_CHECK(MPI_Get_accumulate(pa, 3, MPI_2INT, pr, 3, MPI_2INT, 0, 8, 3, MPI_2INT, MPI_MINLOC, win));
        MPI_CHECK(MPI_Win_flush(0, win));
        CHECK(pr[0].v == 5 && pr[0].i == 1 && pr[2].v == 2, "MINLOC old values");
        MPI_CHECK(MPI_Get(pr, 3, MPI_2INT, 0, 8, 3, MPI_2INT, win));
        MPI_CHECK(MPI_Win_flush(0, win));
        CHECK(pr[0].v == 3 && pr[0].i == 9, "MINLOC[0] (got %d,%d)", pr[0].v, pr[0].i);
        CHECK(pr[1].v == 5 && pr[1].i == 0, "MINLOC[1] ties take the smaller index (got %d,%d)", pr[1].v, pr[1].i);
        CHECK(pr[2].v == 2 && pr[2].i == 0, "MINLOC[2] (got %d,%d)", pr[2].v, pr[2].i);
        struct { int v, i; } pn[3]; /* NO_OP: origin arguments ignored */
        MPI_CHECK(MPI_Get_accumulate(NULL, 0, MPI_DATATYPE_NULL, pn, 3, MPI_2INT, 0, 8, 3, MPI_2INT, MPI_NO_OP, win));
        CHECK(pn[0].v == 3 && pn[1].i == 0 && pn[2].v == 2, "Get_accumulate(MPI_NO_OP) of 3 pairs");
        /* derived target (every other long long), contiguous origin and result */
        long long seq[8], add4[4] = {100, 100, 100, 100}, old4[4], now8[8];
        for (int i = 0; i < 8; i++) seq[i] = i;
        MPI_CHECK(MPI_Put(seq, 8, MPI_LONG_LONG, 0, 20, 8, MPI_LONG_LONG, win));
        MPI_CHECK(MPI_Win_flush(0, win));
        MPI_Datatype every2;
        MPI_Type_vector(4, 1, 2, MPI_LONG_LONG, &every2);
        MPI_Type_commit(&every2);
        MPI_CHECK(MPI_Get_accumulate(add4, 4, MPI_LONG_LONG, old4, 4, MPI_LONG_LONG, 0, 20, 1, every2, MPI_SUM, win));
        MPI_CHECK(MPI_Win_flush(0, win));
        MPI_CHECK(MPI_Get(now8, 8, MPI_LONG_LONG, 0, 20, 8, MPI_LONG_LONG, win));
        MPI_CHECK(MPI_Win_flush(0, win));
        for (int i = 0; i < 4; i++) CHECK(old4[i] == 2 * i, "strided Get_accumulate old[%d] = %lld", i, old4[i]);
        for (int i = 0; i < 8; i++)
            CHECK(now8[i] == (i % 2 ? i : i + 100), "strided Get_accumulate target[%d] = %lld", i, now8[i]);
        MPI_Type_free(&every2);
        struct { short v; int i; } s0[2] = {{4, 4}, {8, 8}}, sa[2] = {{6, 1}, {1, 2}}, sr[2];
        MPI_CHECK(MPI_Put(s0, 2, MPI_SHORT_INT, 0, 12, 2, MPI_SHORT_INT, win));
        MPI_CHECK(MPI_Win_flush(0, win));
        MPI_CHECK(MPI_Accumulate(sa, 2, MPI_SHORT_INT, 0, 12, 2, MPI_SHORT_INT, MPI_MAXLOC, win));
        MPI_CHECK(MPI_Win_flush(0, win));
        MPI_CHECK(MPI_Get(sr, 2, MPI_SHORT_INT, 0, 12, 2, MPI_SHORT_INT, win));
        MPI_CHECK(MPI_Win_flush(0, win));
        CHECK(sr[0].v == 6 && sr[0].i == 1 && sr[1].v == 8 && sr[1].i == 8, "MAXLOC on MPI_SHORT_INT (got %d,%d %d,%d)",
              sr[0].v, sr[0].i, sr[1].v, sr[1].i);
        /* a double: MPI_PROD and MPI_MAX through compare-and-swap loops */
        double d = 1.5, f = 4.0, dold;
        MPI_CHECK(MPI_Put(&d, 1, MPI_DOUBLE, 0, 16, 1, MPI_DOUBLE, win));
        MPI_CHECK(MPI_Win_flush(0, win));
        MPI_CHECK(MPI_Fetch_and_op(&f, &dold, MPI_DOUBLE, 0, 16, MPI_PROD, win));
        MPI_CHECK(MPI_Fetch_and_op(&f, &dold, MPI_DOUBLE, 0, 16, MPI_MAX, win));
        CHECK(dold == 6.0, "double PROD then MAX (expected 6 got %g)", dold);
        MPI_CHECK(MPI_Win_unlock(0, win));
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

    /* ---- long double sums under contention (striped locks) */
    MPI_CHECK(MPI_Win_lock_all(0, win));
    long double ld = 1.0L;
    for (int i = 0; i < iters / 10 + 1; i++)
        MPI_CHECK(MPI_Accumulate(&ld, 1, MPI_LONG_DOUBLE, 0, 48, 1, MPI_LONG_DOUBLE, MPI_SUM, win));
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        long double sum = *(long double *)&mem[48];
        CHECK(sum == (long double)size * (iters / 10 + 1), "long double sum (expected %d got %Lg)",
              size * (iters / 10 + 1), sum);
    }
    MPI_CHECK(MPI_Win_free(&win));
    return mt_finish();
}
