/* Accumulates and compare-and-swap on elements UCX has no atomic for, across processes
 * (run with procs=2..3): 1- and 2-byte elements, aligned or not, next to each other in
 * one word; unaligned 4- and 8-byte elements; 16-byte complex and double-int pairs. Every
 * rank (some in the target's process, others not) hammers the elements of two targets at
 * once; the final values are exact, the fetched old values of a byte counter are all
 * distinct, and the bytes between the elements are untouched. */
#define TEST_NAME "rma_xacc"
#include "mpitest.h"

#include <complex.h>

enum {
    BYTES4 = 0,   /* 4 x uint8 SUM, one call */
    S1 = 4,       /* sentinel */
    FOP8 = 5,     /* uint8 Fetch_and_op SUM: old values distinct */
    SHORT_AL = 6, /* int16 SUM, aligned */
    S2 = 8,
    SHORT_UN = 9, /* int16 SUM, unaligned */
    S3 = 11,
    INT_UN = 13,  /* int32 SUM, across an 8-byte boundary */
    S4 = 17,
    DBL_UN = 18,  /* double SUM, unaligned */
    CAS16 = 26,   /* int16 compare-and-swap counter, aligned */
    S5 = 28,
    CAS8 = 29,    /* int8 compare-and-swap counter, odd address */
    CAS32U = 30,  /* int32 compare-and-swap counter, unaligned (30..33) */
    CPLX = 48,    /* double complex SUM */
    DINT = 64,    /* MPI_DOUBLE_INT MAXLOC */
    GACC = 80,    /* int16 Get_accumulate MAX, aligned */
    S6 = 82,
    WIN_BYTES = 96
};
static const int sentinels[] = {S1, S2, S3, S4, S5, S6};

typedef struct {
    double v;
    int loc;
} dint;

static void cas_counter(MPI_Win win, int t, MPI_Aint disp, MPI_Datatype dt, size_t sz) {
    long long guess = 0, next, old = -1;
    for (;;) {
        next = guess + 1;
        old = 0;
        MPI_CHECK(MPI_Compare_and_swap(&next, &guess, &old, dt, t, disp, win)); /* little-endian: low bytes */
        MPI_CHECK(MPI_Win_flush(t, win));
        long long o = 0;
        memcpy(&o, &old, sz);
        long long g = 0;
        memcpy(&g, &guess, sz);
        if (o == g) return;
        guess = o;
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = argc > 1 ? atoi(argv[1]) : 8;
    CHECK(size * iters < 128, "size*iters=%d must stay below 128 (byte counters)", size * iters);

    unsigned char *mem;
    MPI_Win win;
    MPI_CHECK(MPI_Win_allocate(WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    MPI_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    memset(mem, 0, WIN_BYTES);
    for (size_t k = 0; k < sizeof sentinels / sizeof *sentinels; k++) mem[sentinels[k]] = 0x5a;
    dint d0 = {-1.0, -1};
    memcpy(mem + DINT, &d0, sizeof d0);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

    int targets[2] = {0, size - 1};
    int nt = size > 1 ? 2 : 1;
    unsigned char *olds = calloc((size_t)iters * 2, 1);
    short gmax_seen[2] = {-1, -1};
    MPI_CHECK(MPI_Win_lock_all(0, win));
    for (int it = 0; it < iters; it++)
        for (int k = 0; k < nt; k++) {
            int t = targets[k];
            unsigned char ones[4] = {1, 1, 1, 1};
            MPI_CHECK(MPI_Accumulate(ones, 4, MPI_UINT8_T, t, BYTES4, 4, MPI_UINT8_T, MPI_SUM, win));
            unsigned char one8 = 1;
            MPI_CHECK(MPI_Fetch_and_op(&one8, &olds[it * 2 + k], MPI_UINT8_T, t, FOP8, MPI_SUM, win));
            short s1 = 1;
            MPI_CHECK(MPI_Accumulate(&s1, 1, MPI_SHORT, t, SHORT_AL, 1, MPI_SHORT, MPI_SUM, win));
            MPI_CHECK(MPI_Accumulate(&s1, 1, MPI_SHORT, t, SHORT_UN, 1, MPI_SHORT, MPI_SUM, win));
            int i1 = 1;
            MPI_CHECK(MPI_Accumulate(&i1, 1, MPI_INT, t, INT_UN, 1, MPI_INT, MPI_SUM, win));
            double d1 = 1.0;
            MPI_CHECK(MPI_Accumulate(&d1, 1, MPI_DOUBLE, t, DBL_UN, 1, MPI_DOUBLE, MPI_SUM, win));
            double complex c = 1.0 - 2.0 * I;
            MPI_CHECK(MPI_Accumulate(&c, 1, MPI_C_DOUBLE_COMPLEX, t, CPLX, 1, MPI_C_DOUBLE_COMPLEX, MPI_SUM, win));
            dint di = {rank * 1000.0 + it, rank};
            MPI_CHECK(MPI_Accumulate(&di, 1, MPI_DOUBLE_INT, t, DINT, 1, MPI_DOUBLE_INT, MPI_MAXLOC, win));
            short gv = (short)(rank * 10 + it), gold = -2;
            MPI_CHECK(MPI_Get_accumulate(&gv, 1, MPI_SHORT, &gold, 1, MPI_SHORT, t, GACC, 1, MPI_SHORT, MPI_MAX, win));
            MPI_CHECK(MPI_Win_flush(t, win));
            CHECK(gold >= gmax_seen[k] && gold >= 0 && gold < size * 10 + iters, "Get_accumulate MAX: old %d after %d",
                  gold, gmax_seen[k]);
            gmax_seen[k] = gold > gv ? gold : gv; /* the element never decreases */
            cas_counter(win, t, CAS16, MPI_SHORT, 2);
            cas_counter(win, t, CAS8, MPI_INT8_T, 1);
            cas_counter(win, t, CAS32U, MPI_INT, 4);
        }
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

    int hits = size * iters; /* every rank hit each target once per iteration */
    if (rank == 0 || rank == size - 1) {
        MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
        for (int b = 0; b < 4; b++) CHECK(mem[BYTES4 + b] == hits, "byte counter %d = %d, expected %d", b, mem[BYTES4 + b], hits);
        CHECK(mem[FOP8] == hits, "Fetch_and_op byte counter = %d, expected %d", mem[FOP8], hits);
        short s;
        memcpy(&s, mem + SHORT_AL, 2);
        CHECK(s == hits, "aligned short = %d, expected %d", s, hits);
        memcpy(&s, mem + SHORT_UN, 2);
        CHECK(s == hits, "unaligned short = %d, expected %d", s, hits);
        int i;
        memcpy(&i, mem + INT_UN, 4);
        CHECK(i == hits, "unaligned int = %d, expected %d", i, hits);
        double d;
        memcpy(&d, mem + DBL_UN, 8);
        CHECK(d == hits, "unaligned double = %g, expected %d", d, hits);
        memcpy(&s, mem + CAS16, 2);
        CHECK(s == hits, "short CAS counter = %d, expected %d", s, hits);
        CHECK((signed char)mem[CAS8] == hits, "int8 CAS counter = %d, expected %d", (signed char)mem[CAS8], hits);
        memcpy(&i, mem + CAS32U, 4);
        CHECK(i == hits, "unaligned int CAS counter = %d, expected %d", i, hits);
        double complex c;
        memcpy(&c, mem + CPLX, sizeof c);
        CHECK(creal(c) == hits && cimag(c) == -2.0 * hits, "complex sum = %g%+gi, expected %d%+di", creal(c), cimag(c),
              hits, -2 * hits);
        dint di;
        memcpy(&di, mem + DINT, sizeof di);
        CHECK(di.v == (size - 1) * 1000.0 + iters - 1 && di.loc == size - 1, "MAXLOC = (%g, %d)", di.v, di.loc);
        memcpy(&s, mem + GACC, 2);
        CHECK(s == (size - 1) * 10 + iters - 1, "Get_accumulate MAX = %d, expected %d", s, (size - 1) * 10 + iters - 1);
        for (size_t k = 0; k < sizeof sentinels / sizeof *sentinels; k++)
            CHECK(mem[sentinels[k]] == 0x5a, "byte %d between elements changed to %#x", sentinels[k], mem[sentinels[k]]);
        MPI_CHECK(MPI_Win_unlock(rank, win));
    }

    /* the fetched old values of each byte counter: one of each of 0 .. hits-1 */
    for (int k = 0; k < nt; k++) {
        unsigned char mine[256], *all = rank == targets[k] ? malloc((size_t)size * (size_t)iters) : NULL;
        for (int it = 0; it < iters; it++) mine[it] = olds[it * 2 + k];
        MPI_CHECK(MPI_Gather(mine, iters, MPI_UNSIGNED_CHAR, all, iters, MPI_UNSIGNED_CHAR, targets[k], MPI_COMM_WORLD));
        if (all) {
            int total = size * iters;
            unsigned char seen[256] = {0};
            for (int j = 0; j < size * iters; j++) {
                CHECK(all[j] < total && !seen[all[j]], "Fetch_and_op old value %d twice or out of range", all[j]);
                seen[all[j]] = 1;
            }
            free(all);
        }
    }
    free(olds);
    MPI_CHECK(MPI_Win_free(&win));
    if (rank == 0) printf("PASS %s\n", TEST_NAME);
    MPI_Finalize();
    return 0;
}
