/* bench_util.h — helpers shared by the programs in apps/bench.
 *
 * Header only: static inline functions, no global or static variables (under
 * a thread-based MPI all ranks are threads of one process and would share
 * them). The first part needs only libc, so memcpy_bw.c (not an MPI program)
 * can use it; the MPI part is compiled only when <mpi.h> was included before
 * this header (MPI_VERSION defined), and uses nothing beyond MPI-3.1 so that
 * it builds with Skein, MPICH and Open MPI alike.
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Most repetitions (timed batches) any program takes per figure. */
#define BENCH_MAX_REPS 101

/* ------------------------------------------------------------ statistics */

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n-1]; sorts v. */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* ------------------------------------------------------------ memory */

/* Page-aligned, zeroed (every page touched before timing) buffer of at least
 * 64 bytes; exits with status 2 if it cannot be had. */
static inline void *bench_xalloc(size_t bytes, const char *prog, int rank)
{
    void *p = NULL;
    if (bytes == 0)
        bytes = 64;
    if (posix_memalign(&p, 4096, bytes) != 0) {
        fprintf(stderr, "%s: rank %d: cannot allocate %zu bytes\n", prog, rank, bytes);
        exit(2);
    }
    memset(p, 0, bytes); /* touch every page before timing */
    return p;
}

/* ------------------------------------------------------------ options */

/* A byte count with an optional suffix K or M (powers of 2). Exits with
 * status 2 ("PROG: bad size 'S'") on trailing garbage, a value below min, or
 * (need_digits) no digits at all. */
static inline long bench_parse_size(const char *s, const char *prog, long min, int need_digits)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*end == 'k' || *end == 'K')
        v <<= 10, end++;
    else if (*end == 'm' || *end == 'M')
        v <<= 20, end++;
    if (*end != '\0' || v < min || (need_digits && end == s)) {
        fprintf(stderr, "%s: bad size '%s'\n", prog, s);
        exit(2);
    }
    return v;
}

/* A comma-separated list of sizes (as bench_parse_size) into sizes[], at most
 * max of them; returns how many. */
static inline int bench_parse_size_list(const char *list, long *sizes, int max, const char *prog,
                                        long min, int need_digits)
{
    char buf[1024], *save = NULL;
    int n = 0;
    snprintf(buf, sizeof buf, "%s", list);
    for (char *tok = strtok_r(buf, ",", &save); tok && n < max; tok = strtok_r(NULL, ",", &save))
        sizes[n++] = bench_parse_size(tok, prog, min, need_digits);
    return n;
}

/* The timing options most programs share: --reps R, --target-ms T (stored in
 * seconds), --max-iters N, --time-cap SECONDS. A NULL pointer means the
 * program has no such option. Returns 1 if key k was one of them (and stores
 * val), else 0. */
static inline int bench_timing_opt(const char *k, const char *val, int *reps, double *target,
                                   long *max_iters, double *time_cap)
{
    if (reps && !strcmp(k, "--reps"))
        *reps = atoi(val);
    else if (target && !strcmp(k, "--target-ms"))
        *target = atof(val) * 1e-3;
    else if (max_iters && !strcmp(k, "--max-iters"))
        *max_iters = atol(val);
    else if (time_cap && !strcmp(k, "--time-cap"))
        *time_cap = atof(val);
    else
        return 0;
    return 1;
}

/* Clamp the repetition count to 1..BENCH_MAX_REPS and (unless NULL) the
 * iteration limit to at least 1. */
static inline void bench_clamp_opts(int *reps, long *max_iters)
{
    if (*reps < 1)
        *reps = 1;
    if (*reps > BENCH_MAX_REPS)
        *reps = BENCH_MAX_REPS;
    if (max_iters && *max_iters < 1)
        *max_iters = 1;
}

/* ------------------------------------------------------------ calibration */

/* Calibration step. t = seconds the last batch of *n iterations took; *est
 * keeps the smallest time per iteration seen so far, so that one slow batch
 * (a preemption) cannot end calibration early; *batches counts the batches,
 * and n is final only once >= 3 batches agree that n * est lasts at least
 * target / 2 (or n reached max_iters). Returns 0 when *n is final, else sets
 * the next *n to try (growth at most x64 per step, at most max_iters). */
static inline int bench_calib_next(double target, long max_iters, double t, double *est, long *n,
                                   int *batches)
{
    double per = t / (double)*n;
    if (per < *est)
        *est = per;
    if ((double)*n * *est >= 0.5 * target || *n >= max_iters)
        return ++*batches < 3; /* confirm the estimate over >= 3 batches */
    ++*batches;
    double want = *est > 0 ? target / *est : 1e18;
    double cap = (double)*n * 64.0;
    if (want > cap)
        want = cap;
    if (want > (double)max_iters)
        want = (double)max_iters;
    *n = want > (double)*n ? (long)want : *n + 1;
    return 1;
}

/* ------------------------------------------------------------ MPI part */
#ifdef MPI_VERSION

/* MPI_Finalize, then rc: `return bench_finalize(2);` ends main. */
static inline int bench_finalize(int rc)
{
    MPI_Finalize();
    return rc;
}

/* Control messages: rank 0 -> ranks first..last, n = 0 means "stop". */
static inline void bench_ctrl_send(long n, int first, int last, int tag)
{
    for (int r = first; r <= last; r++)
        MPI_Send(&n, 1, MPI_LONG, r, tag, MPI_COMM_WORLD);
}

static inline long bench_ctrl_recv(int tag)
{
    long n;
    MPI_Recv(&n, 1, MPI_LONG, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return n;
}

/* n iterations of the kernel under test, ctx its arguments. */
typedef void (*bench_loop_fn)(void *ctx, long n);

/* One batch, called by every rank: one untimed iteration, MPI_Barrier, n
 * timed ones. Returns the maximum over ranks of the n iterations' time on
 * rank 0 (meaningless elsewhere). */
static inline double bench_batch_max(bench_loop_fn loop, void *ctx, long n)
{
    loop(ctx, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    loop(ctx, n);
    double t = MPI_Wtime() - t0, tmax = 0;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    return tmax;
}

/* Ranks other than 0: run the batches rank 0 asks for until it sends n = 0. */
static inline void bench_follow_batches(bench_loop_fn loop, void *ctx, int tag)
{
    long n;
    while ((n = bench_ctrl_recv(tag)) > 0)
        bench_batch_max(loop, ctx, n);
}

/* What bench_lead_batches measured: the final n, the number of timed
 * batches, the median and the minimum batch time (seconds). */
struct bench_figure {
    long n;
    int reps;
    double med, tmin;
};

/* Rank 0's side of one figure, the others running bench_follow_batches:
 * calibrate n (bench_calib_next; no more calibration after time_cap / 2
 * seconds since start), then time up to reps batches (at least one; none
 * started after time_cap). Calibration batches that ran with the final n
 * (except the very first batch) are identical to timed ones and are kept as
 * repetitions. Ends with n = 0 to ranks 1..nranks-1. */
static inline struct bench_figure bench_lead_batches(bench_loop_fn loop, void *ctx, int tag,
                                                     int nranks, double target, long max_iters,
                                                     int max_reps, double time_cap, double start)
{
    long n = 1, prev_n;
    double est = 1e30, v[BENCH_MAX_REPS];
    int reps = 0, nb = 0;
    for (;;) {
        bench_ctrl_send(n, 1, nranks - 1, tag);
        double t = bench_batch_max(loop, ctx, n);
        prev_n = n;
        int more = bench_calib_next(target, max_iters, t, &est, &n, &nb) &&
                   MPI_Wtime() - start <= time_cap / 2;
        if (n != prev_n)
            reps = 0; /* n changed: earlier batches do not count */
        else if (nb > 1 && reps < max_reps)
            v[reps++] = t;
        if (!more)
            break;
    }
    while (reps < max_reps && (reps == 0 || MPI_Wtime() - start < time_cap)) {
        bench_ctrl_send(n, 1, nranks - 1, tag);
        v[reps++] = bench_batch_max(loop, ctx, n);
    }
    bench_ctrl_send(0, 1, nranks - 1, tag);

    struct bench_figure fig = {.n = n, .reps = reps, .tmin = v[0]};
    for (int r = 1; r < reps; r++)
        if (v[r] < fig.tmin)
            fig.tmin = v[r];
    fig.med = bench_median(v, reps);
    return fig;
}

#endif /* MPI_VERSION */

#endif /* BENCH_UTIL_H */
