/* rma.c — one-sided communication benchmark (plain MPI-3.1: builds with Skein, MPICH
 * and Open MPI).
 *
 * usage: mpiexec -n 2 rma [reps [small_iters]]   origin rank 0, target rank 1:
 *          put_lat   8 B MPI_Put + MPI_Win_flush under MPI_Win_lock_all (us per op)
 *          get_lat   8 B MPI_Get + MPI_Win_flush under MPI_Win_lock_all
 *          acc_lat   8 B MPI_Accumulate(MPI_SUM, long long) + MPI_Win_flush
 *          epoch     MPI_Win_lock(EXCLUSIVE) + 8 B MPI_Put + MPI_Win_unlock
 *          put_bw    4 MiB MPI_Put + flush (MB/s), get_bw likewise, memcpy_bw the
 *                    same 4 MiB with memcpy in the origin (the ceiling)
 *          overlap   the origin's time for 1000 x (8 B put + flush) while the target
 *                    computes without MPI calls, divided by the same while the target
 *                    waits in MPI_Barrier (1.0: truly one-sided)
 *        mpiexec -n 16 rma [reps]    every rank MPI_Fetch_and_op(+1) on one counter at
 *          rank 0 under lock_all: fop_rate (million ops per second, all ranks together)
 * Each figure is the median of `reps` timed batches (default 7); one line per figure:
 * "name value unit".
 */
#include <mpi.h>
#include <stdint.h>

#include "bench_util.h"

#define BIG (4 << 20)

static double now(void) { return MPI_Wtime(); }

/* Median over reps of (seconds per op) of `iters` calls of op(i). */
#define TIME_OPS(out, reps, iters, body)                                   \
    do {                                                                   \
        double t_[BENCH_MAX_REPS];                                         \
        for (int r_ = 0; r_ < (reps); r_++) {                              \
            double t0_ = now();                                            \
            for (int i = 0; i < (iters); i++) { body; }                    \
            t_[r_] = (now() - t0_) / (iters);                              \
        }                                                                  \
        (out) = bench_median(t_, (reps));                                  \
    } while (0)

/* small_iters: operations per timed batch of the 8-byte figures (argument 2; 5000 by
 * default, fewer across processes where one takes hundreds of microseconds) */
static void pair(int rank, int reps, int SMALL_ITERS) {
    char *mem;
    MPI_Win win;
    MPI_Win_allocate(BIG, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    memset(mem, 0, BIG);
    char *src = bench_xalloc(BIG, "rma", rank), *dst = bench_xalloc(BIG, "rma", rank);
    long long one = 1, v8 = 0;
    double put_lat = 0, get_lat = 0, acc_lat = 0, epoch = 0, put_bw = 0, get_bw = 0, mc_bw = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock_all(0, win);
        for (int i = 0; i < 1000; i++) { /* warm up */
            MPI_Put(&v8, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, win);
            MPI_Win_flush(1, win);
        }
        TIME_OPS(put_lat, reps, SMALL_ITERS, {
            MPI_Put(&v8, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, win);
            MPI_Win_flush(1, win);
        });
        TIME_OPS(get_lat, reps, SMALL_ITERS, {
            MPI_Get(&v8, 8, MPI_BYTE, 1, 8, 8, MPI_BYTE, win);
            MPI_Win_flush(1, win);
        });
        TIME_OPS(acc_lat, reps, SMALL_ITERS, {
            MPI_Accumulate(&one, 1, MPI_LONG_LONG, 1, 64, 1, MPI_LONG_LONG, MPI_SUM, win);
            MPI_Win_flush(1, win);
        });
        int big_iters = 10;
        TIME_OPS(put_bw, reps, big_iters, {
            MPI_Put(src, BIG, MPI_BYTE, 1, 0, BIG, MPI_BYTE, win);
            MPI_Win_flush(1, win);
        });
        TIME_OPS(get_bw, reps, big_iters, {
            MPI_Get(dst, BIG, MPI_BYTE, 1, 0, BIG, MPI_BYTE, win);
            MPI_Win_flush(1, win);
        });
        MPI_Win_unlock_all(win);
        TIME_OPS(mc_bw, reps, big_iters, {
            memcpy(dst, src, BIG);
            __asm__ __volatile__("" ::: "memory");
        });
        TIME_OPS(epoch, reps, SMALL_ITERS / 4, {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
            MPI_Put(&v8, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, win);
            MPI_Win_unlock(1, win);
        });
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* overlap: the target computes (no MPI) or waits in a barrier */
    double t_idle = 0, t_busy = 0, compute = 0;
    for (int busy = 0; busy < 2; busy++) {
        double tv[BENCH_MAX_REPS];
        for (int r = 0; r < reps; r++) {
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0) {
                double t0 = now();
                MPI_Win_lock_all(0, win);
                for (int i = 0; i < (SMALL_ITERS < 1000 ? SMALL_ITERS : 1000); i++) {
                    MPI_Put(&v8, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, win);
                    MPI_Win_flush(1, win);
                }
                MPI_Win_unlock_all(win);
                tv[r] = now() - t0;
            } else if (busy) {
                double t0 = now();
                volatile double x = 0;
                while (now() - t0 < compute)
                    for (int i = 0; i < 100; i++) x += i;
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
        double m = rank == 0 ? bench_median(tv, reps) : 0;
        MPI_Bcast(&m, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (busy) t_busy = m;
        else t_idle = m;
        compute = t_idle * 4 > 0.002 ? t_idle * 4 : 0.002; /* the target computes 4x the idle time, >= 2 ms */
    }
    if (rank == 0) {
        printf("put_lat %.4f us\n", put_lat * 1e6);
        printf("get_lat %.4f us\n", get_lat * 1e6);
        printf("acc_lat %.4f us\n", acc_lat * 1e6);
        printf("epoch %.4f us\n", epoch * 1e6);
        printf("put_bw %.0f MB/s\n", BIG / put_bw / 1e6);
        printf("get_bw %.0f MB/s\n", BIG / get_bw / 1e6);
        printf("memcpy_bw %.0f MB/s\n", BIG / mc_bw / 1e6);
        printf("overlap_idle %.1f us\n", t_idle * 1e6);
        printf("overlap_busy %.1f us (target computed %.1f us)\n", t_busy * 1e6, compute * 1e6);
        printf("overlap %.2f ratio\n", t_busy / t_idle);
    }
    MPI_Win_free(&win);
    free(src);
    free(dst);
}

static void counter(int rank, int size, int reps) {
    long long *mem;
    MPI_Win win;
    MPI_Win_allocate(64, sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    mem[0] = 0;
    MPI_Barrier(MPI_COMM_WORLD); /* zeroed before anyone adds */
    double tv[BENCH_MAX_REPS];
    long long one = 1, got;
    MPI_Win_lock_all(0, win);
    /* calibration: batches of about 0.2 s, 20 to 2000 ops per rank (an MPI that needs the
     * target's progress can take tens of microseconds per op here) */
    double t0 = now(), cal, slow;
    for (int i = 0; i < 20; i++) {
        MPI_Fetch_and_op(&one, &got, MPI_LONG_LONG, 0, 0, MPI_SUM, win);
        MPI_Win_flush(0, win);
    }
    cal = now() - t0;
    MPI_Allreduce(&cal, &slow, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    int iters = (int)(0.2 / (slow / 20));
    iters = iters < 20 ? 20 : iters > 2000 ? 2000 : iters;
    for (int r = 0; r < reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = now();
        for (int i = 0; i < iters; i++) {
            MPI_Fetch_and_op(&one, &got, MPI_LONG_LONG, 0, 0, MPI_SUM, win);
            MPI_Win_flush(0, win);
        }
        double mine = now() - t0, slowest;
        MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        tv[r] = slowest;
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        long long want = (long long)size * (iters * reps + 20);
        if (mem[0] != want) {
            fprintf(stderr, "rma: counter %lld, expected %lld\n", mem[0], want);
            exit(1);
        }
        printf("fop_rate %.4f Mops/s (%d ranks, %d ops each per batch)\n", (double)size * iters / bench_median(tv, reps) / 1e6, size, iters);
    }
    MPI_Win_free(&win);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int reps = argc > 1 ? atoi(argv[1]) : 7;
    if (reps < 1 || reps > BENCH_MAX_REPS) reps = 7;
    int small = argc > 2 ? atoi(argv[2]) : 5000;
    if (small < 4) small = 5000;
    if (size == 2) pair(rank, reps, small);
    else counter(rank, size, reps);
    MPI_Finalize();
    return 0;
}
