/* coll.c — collective benchmarks, plain MPI-3.1.
 *
 * Builds unchanged against Skein, MPICH and Open MPI. Uses MPI_Init,
 * MPI_Finalize, MPI_Comm_rank/size, MPI_Send, MPI_Recv, MPI_Wtime and the
 * collectives MPI_Allreduce, MPI_Bcast, MPI_Alltoall, MPI_Barrier, MPI_Reduce.
 *
 *   coll allreduce|bcast|alltoall|barrier [--sizes LIST] [--reps R]
 *        [--target-ms T] [--max-iters N] [--time-cap SECONDS]
 *
 * Sizes (default 8,1K,64K,1M,16M; suffixes K and M are powers of 2):
 *   allreduce  bytes of MPI_DOUBLE summed (MPI_SUM), rounded down to a multiple
 *              of 8, at least 8;
 *   bcast      bytes of MPI_BYTE from rank 0;
 *   alltoall   bytes per destination block (MPI_BYTE); capped so that one
 *              rank's whole send buffer (bytes * ranks) stays <= 64 MiB;
 *   barrier    sizes ignored (one figure, printed with bytes=0).
 *
 * Method. One "batch" = rank 0 tells every rank n (point-to-point control
 * message, outside the timing; n = 0 means "next size"), one untimed call,
 * MPI_Barrier, then n timed calls. Each rank times its own n calls; the batch
 * time is the maximum over ranks (MPI_Reduce with MPI_MAX to rank 0). Before
 * the batches of a size come a warm-up (--warmup calls, default 2) and a
 * calibration: n grows until n times the fastest time per call seen lasts at
 * least --target-ms / 2 (default 3 ms per batch; at least 1, at most
 * --max-iters calls), confirmed over >= 3 batches. Then --reps batches
 * (default 7) are timed, and the figure is the median batch time / n.
 * Calibration batches that already ran with the final n (all but the first
 * batch of the size) count among those --reps: they are the same batches.
 * Time cap (--time-cap, default 10 s, per figure, measured by rank 0 from the
 * start of the size): calibration stops at half the cap, and no further batch
 * starts once the cap is reached (at least one timed batch is always taken),
 * so oversubscribed busy-polling MPIs (tens of ms per call) stay bounded;
 * `reps=` says how many batches were taken.
 *
 * Every size is first checked once (untimed, full compare): allreduce sums
 * rank-dependent integers (exact in doubles), bcast and alltoall carry a
 * pattern that depends on the sender, destination and offset. A mismatch
 * prints `ERROR ...`, that size is not timed (no figure line), and the
 * program exits with status 1 after MPI_Finalize.
 *
 * Output (rank 0): one line per figure, `key=value` fields, comments start
 * with '#':
 *   allreduce ranks=16 bytes=8 usec=12.3 MBps=0.7 iters=... reps=... seconds=...
 *   alltoall ranks=16 bytes=65536 total=1048576 usec=...   (total = bytes*ranks
 *   per rank sent; requested= appears when the size was capped)
 * MBps (allreduce, bcast) = bytes / time per call, 1 MB = 1e6 B.
 *
 * No mutable global or static variables: under a thread-based MPI all ranks
 * of a node share them.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

enum { TAG_CTRL = 11 };
enum { M_ALLREDUCE, M_BCAST, M_ALLTOALL, M_BARRIER };

#define MAX_SIZES 64
#define ALLTOALL_CAP (64L << 20)

struct opts {
    int mode;
    const char *mode_name;
    long sizes[MAX_SIZES];
    int nsizes;
    int reps;
    int warmup;
    double target;   /* seconds per timed batch */
    long max_iters;
    double time_cap; /* seconds per figure */
    int rank, size;
    int errors;      /* data mismatches seen by this rank */
};

/* Buffers of one rank, sized for the largest size of the run. */
struct bufs {
    char *s, *r;
    size_t cap;
};

/* ---------------------------------------------------------------- helpers */

static void parse_size_list(struct opts *o, const char *list)
{
    o->nsizes = bench_parse_size_list(list, o->sizes, MAX_SIZES, "coll", 0, 1);
}

static void usage(int rank)
{
    if (rank == 0)
        fprintf(stderr, "usage: coll allreduce|bcast|alltoall|barrier [--sizes a,b,..] [--reps R]\n"
                        "            [--target-ms T] [--max-iters N] [--time-cap SECONDS] [--warmup W]\n");
}

/* The size actually used for a requested size (see the header comment). */
static long effective_bytes(const struct opts *o, long req)
{
    switch (o->mode) {
    case M_ALLREDUCE:
        return req < 8 ? 8 : req / 8 * 8;
    case M_ALLTOALL: {
        long cap = ALLTOALL_CAP / o->size;
        return req > cap ? cap : req;
    }
    case M_BARRIER:
        return 0;
    default:
        return req;
    }
}

/* Send and receive buffer bytes needed for a size. */
static size_t buf_bytes(const struct opts *o, long bytes)
{
    if (o->mode == M_ALLTOALL)
        return (size_t)bytes * (size_t)o->size;
    return (size_t)bytes;
}

/* ------------------------------------------------------------ kernels */

/* n calls of the collective under test; noinline so that profilers find it. */
__attribute__((noinline)) static void coll_loop(const struct opts *o, struct bufs *b, long bytes,
                                               long n)
{
    switch (o->mode) {
    case M_ALLREDUCE: {
        int count = (int)(bytes / 8);
        for (long i = 0; i < n; i++)
            MPI_Allreduce(b->s, b->r, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        break;
    }
    case M_BCAST:
        for (long i = 0; i < n; i++)
            MPI_Bcast(b->s, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
        break;
    case M_ALLTOALL:
        for (long i = 0; i < n; i++)
            MPI_Alltoall(b->s, (int)bytes, MPI_BYTE, b->r, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
        break;
    case M_BARRIER:
        for (long i = 0; i < n; i++)
            MPI_Barrier(MPI_COMM_WORLD);
        break;
    }
}

/* The arguments of coll_loop, for bench_batch_max & co. */
struct loop_ctx {
    const struct opts *o;
    struct bufs *b;
    long bytes;
};

static void loop_cb(void *ctx, long n)
{
    struct loop_ctx *c = ctx;
    coll_loop(c->o, c->b, c->bytes, n);
}

/* Byte pattern for bcast/alltoall: depends on sender, destination, offset
 * and size, so that a block delivered to the wrong place is caught. */
static inline char pat(long i, int from, int to, long bytes)
{
    return (char)((i * 7 + (long)from * 31 + (long)to * 101 + bytes * 13 + 1) & 0xff);
}

/* Untimed check of one size; returns this rank's mismatch count (after
 * printing the first mismatch). Leaves the buffers filled with valid data. */
static int verify(const struct opts *o, struct bufs *b, long bytes)
{
    int bad = 0;
    long first = -1;
    switch (o->mode) {
    case M_ALLREDUCE: {
        long count = bytes / 8;
        double *s = (double *)b->s, *r = (double *)b->r;
        /* element i of rank k: k + 1 + (i % 7) * 1024; the sum is exact */
        for (long i = 0; i < count; i++) {
            s[i] = (double)(o->rank + 1) + (double)(i % 7) * 1024.0;
            r[i] = -1.0;
        }
        MPI_Allreduce(s, r, (int)count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        double p = (double)o->size, base = p * (p + 1) / 2;
        for (long i = 0; i < count; i++)
            if (r[i] != base + p * (double)(i % 7) * 1024.0) {
                if (first < 0)
                    first = i;
                bad++;
            }
        if (bad)
            printf("ERROR mode=allreduce rank=%d bytes=%ld bad_elements=%d first_bad=%ld got=%g "
                   "want=%g\n",
                   o->rank, bytes, bad, first, r[first], base + p * (double)(first % 7) * 1024.0);
        break;
    }
    case M_BCAST:
        for (long i = 0; i < bytes; i++)
            b->s[i] = o->rank == 0 ? pat(i, 0, 0, bytes) : 0;
        MPI_Bcast(b->s, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
        for (long i = 0; i < bytes; i++)
            if (b->s[i] != pat(i, 0, 0, bytes)) {
                if (first < 0)
                    first = i;
                bad++;
            }
        if (bad)
            printf("ERROR mode=bcast rank=%d bytes=%ld bad_bytes=%d first_bad_offset=%ld\n",
                   o->rank, bytes, bad, first);
        break;
    case M_ALLTOALL:
        for (int d = 0; d < o->size; d++)
            for (long i = 0; i < bytes; i++) {
                b->s[(size_t)d * (size_t)bytes + (size_t)i] = pat(i, o->rank, d, bytes);
                b->r[(size_t)d * (size_t)bytes + (size_t)i] = 0;
            }
        MPI_Alltoall(b->s, (int)bytes, MPI_BYTE, b->r, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
        for (int src = 0; src < o->size; src++)
            for (long i = 0; i < bytes; i++)
                if (b->r[(size_t)src * (size_t)bytes + (size_t)i] != pat(i, src, o->rank, bytes)) {
                    if (first < 0)
                        first = (long)src * bytes + i;
                    bad++;
                }
        if (bad)
            printf("ERROR mode=alltoall rank=%d bytes=%ld bad_bytes=%d first_bad_offset=%ld "
                   "(from rank %ld)\n",
                   o->rank, bytes, bad, first, first / (bytes ? bytes : 1));
        break;
    case M_BARRIER:
        MPI_Barrier(MPI_COMM_WORLD);
        break;
    }
    if (bad)
        fflush(stdout);
    return bad;
}

/* ---------------------------------------------------------------- one size */

static void run_size(struct opts *o, struct bufs *b, long req)
{
    long bytes = effective_bytes(o, req);
    double start = MPI_Wtime();

    /* check, and agree on the outcome (rank 0 decides, tells the others) */
    int bad = verify(o, b, bytes), anybad = 0;
    o->errors += bad;
    MPI_Reduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);

    struct loop_ctx ctx = {.o = o, .b = b, .bytes = bytes};
    if (o->rank != 0) {
        if (bench_ctrl_recv(TAG_CTRL) == 0)
            return; /* verification failed somewhere: skip the size */
        coll_loop(o, b, bytes, o->warmup);
        bench_follow_batches(loop_cb, &ctx, TAG_CTRL);
        return;
    }

    if (anybad) {
        bench_ctrl_send(0, 1, o->size - 1, TAG_CTRL);
        printf("# %s bytes=%ld: data check failed, not timed\n", o->mode_name, bytes);
        fflush(stdout);
        return;
    }
    bench_ctrl_send(1, 1, o->size - 1, TAG_CTRL);
    coll_loop(o, b, bytes, o->warmup);

    /* Calibration, then the timed batches (see bench_lead_batches): for slow
     * calls (n = 1 from the start) keeping calibration batches with the final
     * n as repetitions halves the time. */
    struct bench_figure fig = bench_lead_batches(loop_cb, &ctx, TAG_CTRL, o->size, o->target,
                                                 o->max_iters, o->reps, o->time_cap, start);
    long n = fig.n;
    int reps = fig.reps;
    double tmin = fig.tmin;
    double per = fig.med / (double)n; /* seconds per call */
    printf("%s ranks=%d bytes=%ld usec=%.3f", o->mode_name, o->size, bytes, per * 1e6);
    if (o->mode == M_ALLREDUCE || o->mode == M_BCAST)
        printf(" MBps=%.1f", (double)bytes / per / 1e6);
    if (o->mode == M_ALLTOALL) {
        printf(" total=%ld", bytes * o->size);
        if (bytes != req)
            printf(" requested=%ld", req);
    }
    printf(" min_usec=%.3f iters=%ld reps=%d seconds=%.2f\n", tmin / (double)n * 1e6, n, reps,
           MPI_Wtime() - start);
    fflush(stdout);
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    struct opts o = {.reps = 7, .warmup = 2, .target = 3e-3, .max_iters = 1L << 24,
                     .time_cap = 10.0};
    MPI_Comm_rank(MPI_COMM_WORLD, &o.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &o.size);
    parse_size_list(&o, "8,1K,64K,1M,16M");

    if (argc < 2) {
        usage(o.rank);
        return bench_finalize(2);
    }
    o.mode_name = argv[1];
    if (!strcmp(argv[1], "allreduce"))
        o.mode = M_ALLREDUCE;
    else if (!strcmp(argv[1], "bcast"))
        o.mode = M_BCAST;
    else if (!strcmp(argv[1], "alltoall"))
        o.mode = M_ALLTOALL;
    else if (!strcmp(argv[1], "barrier"))
        o.mode = M_BARRIER;
    else {
        usage(o.rank);
        return bench_finalize(2);
    }
    for (int a = 2; a < argc; a += 2) {
        const char *k = argv[a], *val = a + 1 < argc ? argv[a + 1] : NULL;
        if (!val) {
            usage(o.rank);
            return bench_finalize(2);
        }
        if (!strcmp(k, "--sizes"))
            parse_size_list(&o, val);
        else if (!strcmp(k, "--warmup"))
            o.warmup = atoi(val);
        else if (!bench_timing_opt(k, val, &o.reps, &o.target, &o.max_iters, &o.time_cap)) {
            usage(o.rank);
            return bench_finalize(2);
        }
    }
    bench_clamp_opts(&o.reps, &o.max_iters);
    if (o.warmup < 0)
        o.warmup = 0;
    if (o.mode == M_BARRIER) { /* one figure */
        o.nsizes = 1;
        o.sizes[0] = 0;
    }

    size_t need = 0;
    for (int i = 0; i < o.nsizes; i++) {
        size_t s = buf_bytes(&o, effective_bytes(&o, o.sizes[i]));
        if (s > need)
            need = s;
    }
    struct bufs b = {.s = bench_xalloc(need, "coll", o.rank), .r = bench_xalloc(need, "coll", o.rank),
                     .cap = need};

    if (o.rank == 0) {
        printf("# coll %s: %d ranks; median over batches of max over ranks of the batch time, "
               "per call; batches of ~%.1f ms, %d reps, time cap %.0f s per figure\n",
               o.mode_name, o.size, o.target * 1e3, o.reps, o.time_cap);
        if (o.mode == M_ALLREDUCE || o.mode == M_BCAST)
            printf("# MBps = bytes / time per call, 1 MB = 1e6 B\n");
        fflush(stdout);
    }
    for (int i = 0; i < o.nsizes; i++)
        run_size(&o, &b, o.sizes[i]);

    int errs = o.errors, total = 0;
    MPI_Reduce(&errs, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    free(b.s);
    free(b.r);
    MPI_Finalize();
    return (o.rank == 0 ? total : errs) ? 1 : 0;
}
