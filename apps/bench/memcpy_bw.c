/* memcpy_bw.c — single-thread memcpy bandwidth, the ceiling for a 1-copy
 * intranode message.
 *
 *   memcpy_bw [--sizes a,b,...] [--reps R] [--target-ms T]
 *
 * For each size: separate source and destination buffers (page-aligned,
 * touched before timing); one repetition = n copies of the whole buffer, n
 * calibrated so that a repetition lasts about --target-ms; the figure is the
 * median over --reps repetitions. MB/s counts the bytes copied once
 * (1 MB = 1e6 B), as a message bandwidth does; the memory traffic is 2-3x that.
 *
 * Output: `memcpy bytes=4194304 MBps=14400.0 usec=291.3 iters=10 reps=9`.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

#define MAX_SIZES 32

/* Called through a volatile pointer so the compiler cannot elide or inline
 * repeated identical copies. */
static void *(*volatile copy_fn)(void *, const void *, size_t) = memcpy;
static volatile unsigned char sink;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double run(unsigned char *dst, const unsigned char *src, size_t bytes, long n)
{
    double t0 = now();
    for (long i = 0; i < n; i++)
        copy_fn(dst, src, bytes);
    double t = now() - t0;
    sink = dst[bytes / 2];
    return t;
}

int main(int argc, char **argv)
{
    long sizes[MAX_SIZES] = {32L << 10, 256L << 10, 1L << 20, 4L << 20, 16L << 20, 64L << 20};
    int nsizes = 6, reps = 9;
    double target = 5e-3;

    for (int a = 1; a < argc; a += 2) {
        if (a + 1 >= argc)
            goto usage;
        if (!strcmp(argv[a], "--sizes")) {
            nsizes = bench_parse_size_list(argv[a + 1], sizes, MAX_SIZES, "memcpy_bw", 1, 0);
        } else if (!bench_timing_opt(argv[a], argv[a + 1], &reps, &target, NULL, NULL)) {
            goto usage;
        }
    }
    bench_clamp_opts(&reps, NULL);

    printf("# memcpy: single thread, separate src/dst, median of %d repetitions of ~%.1f ms; "
           "MB/s = bytes copied / s / 1e6\n", reps, target * 1e3);
    for (int si = 0; si < nsizes; si++) {
        size_t bytes = (size_t)sizes[si];
        unsigned char *src, *dst;
        if (posix_memalign((void **)&src, 4096, bytes) || posix_memalign((void **)&dst, 4096, bytes)) {
            fprintf(stderr, "memcpy_bw: cannot allocate %zu bytes\n", bytes);
            return 2;
        }
        for (size_t i = 0; i < bytes; i++)
            src[i] = (unsigned char)(i * 7);
        memset(dst, 0, bytes);

        /* calibrate: smallest time per copy over growing batches */
        long n = 1;
        double per = 1e30;
        for (int k = 0; k < 20; k++) {
            double t = run(dst, src, bytes, n);
            if (t / n < per)
                per = t / n;
            if (n * per >= 0.5 * target && k >= 2)
                break;
            long want = (long)(target / per);
            n = want > n ? (want > 64 * n ? 64 * n : want) : n;
        }
        if (memcmp(dst, src, bytes) != 0) {
            printf("ERROR bytes=%zu copy mismatch\n", bytes);
            return 1;
        }
        double v[BENCH_MAX_REPS];
        for (int r = 0; r < reps; r++)
            v[r] = run(dst, src, bytes, n) / n;
        double t = bench_median(v, reps);
        printf("memcpy bytes=%zu MBps=%.1f usec=%.3f iters=%ld reps=%d\n", bytes,
               (double)bytes / t / 1e6, t * 1e6, n, reps);
        fflush(stdout);
        free(src);
        free(dst);
    }
    return 0;

usage:
    fprintf(stderr, "usage: memcpy_bw [--sizes a,b,...] [--reps R] [--target-ms T]\n");
    return 2;
}
