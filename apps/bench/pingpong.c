/* pingpong.c — point-to-point latency and bandwidth, plain MPI-3.1.
 *
 * Builds unchanged against Skein, MPICH and Open MPI. Uses only MPI_Init,
 * MPI_Finalize, MPI_Comm_rank/size, MPI_Send, MPI_Recv, MPI_Barrier,
 * MPI_Wtime, MPI_Isend/MPI_Irecv/MPI_Waitall (plus POSIX semaphores for
 * `iters --handoff`).
 *
 *   pingpong latency   [--sizes LIST | --max BYTES] [--reps R] [--target-ms T]
 *   pingpong bandwidth [--sizes LIST | --max BYTES] [--window W] [...]
 *   pingpong pairs     [--bytes B] [--reps R] [--target-ms T]
 *                      [--max-iters N] [--time-cap SECONDS]
 *   pingpong iters N [--handoff]
 *
 * Method. Rank 0 is the only clock. One "batch" = one untimed warm-up round
 * trip, then n timed iterations. Rank 0 first calibrates n (growing it until
 * n times the fastest time per iteration seen lasts at least --target-ms / 2;
 * at least 1, at most --max-iters iterations), then times --reps batches;
 * each figure printed is the median over those batches. Rank 0 tells its partners n before every batch with a
 * small control message (outside the timed region), n = 0 meaning "stop".
 *
 *   latency   half round trip between ranks 0 and 1, microseconds.
 *   bandwidth default: ping-pong, MB/s = bytes / half round trip (1 MB = 1e6 B),
 *             one message in flight; with --window W > 0: rank 0 posts W
 *             MPI_Isend of the same buffer, rank 1 W MPI_Irecv into distinct
 *             buffers (W shrunk so W*bytes <= 64 MiB), then a 4-byte ack;
 *             MB/s = n*W*bytes / time.
 *   pairs     every rank pairs with rank^1 ((0,1),(2,3),...; an odd last rank
 *             idles); all pairs ping-pong at once after a barrier. The value
 *             is the median over pairs of each pair's median half round trip.
 *   iters N   N round trips of 8 bytes between ranks 0 and 1, nothing else:
 *             for instruction counting (I(2N) - I(N)) / N. With --handoff
 *             the ranks pass the turn through semaphores outside MPI so that
 *             no receive ever waits inside MPI: see pp_handoff.
 *
 * Every size of latency/bandwidth is first checked once for data integrity
 * (full compare, untimed); a mismatch prints an ERROR line and the program
 * exits with status 1 after MPI_Finalize.
 *
 * Output: one line per figure, `key=value` fields, comments start with '#'.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

enum { TAG_DATA = 1, TAG_CTRL = 2, TAG_RESULT = 3, TAG_ACK = 4 };

#define MAX_SIZES 64
#define WINDOW_BYTES_CAP (64L << 20)

struct opts {
    long sizes[MAX_SIZES];
    int nsizes;
    int reps;
    double target;     /* seconds per timed batch */
    long max_iters;
    double time_cap;   /* seconds; pairs mode: stop taking repetitions after */
    int window;        /* bandwidth: 0 = ping-pong */
    long bytes;        /* pairs: message size */
    int rank, size;    /* in MPI_COMM_WORLD */
    int errors;        /* data mismatches seen by this rank */
};

/* No mutable global or static variables anywhere in this program: under a
 * thread-based MPI all ranks share them. */

/* ---------------------------------------------------------------- helpers */

static void parse_size_list(struct opts *o, const char *list)
{
    o->nsizes = bench_parse_size_list(list, o->sizes, MAX_SIZES, "pingpong", 0, 0);
}

static long parse_size(const char *s)
{
    return bench_parse_size(s, "pingpong", 0, 0);
}

static void default_sizes(struct opts *o, long max)
{
    o->nsizes = 0;
    o->sizes[o->nsizes++] = 0;
    for (long s = 1; s <= max && o->nsizes < MAX_SIZES; s *= 2)
        o->sizes[o->nsizes++] = s;
}

static void usage(int rank)
{
    if (rank == 0)
        fprintf(stderr,
                "usage: pingpong latency|bandwidth [--sizes a,b,..|--max BYTES] [--reps R]\n"
                "                [--target-ms T] [--max-iters N] [--window W]\n"
                "       pingpong pairs [--bytes B] [--reps R] [--target-ms T] [--max-iters N]\n"
                "                [--time-cap SECONDS]\n"
                "       pingpong iters N [--handoff]\n");
}

/* Fill with a pattern that differs per size and direction. */
static void fill(char *p, long bytes, unsigned seed)
{
    for (long i = 0; i < bytes; i++)
        p[i] = (char)((i * 7 + seed) & 0xff);
}

static long check(const char *p, long bytes, unsigned seed)
{
    for (long i = 0; i < bytes; i++)
        if (p[i] != (char)((i * 7 + seed) & 0xff))
            return i;
    return -1;
}

/* Control messages: rank 0 -> each listed partner, n = 0 means stop. */
static void ctrl_send(long n, int first, int last)
{
    bench_ctrl_send(n, first, last, TAG_CTRL);
}

static long ctrl_recv(void)
{
    return bench_ctrl_recv(TAG_CTRL);
}

/* ------------------------------------------------------------ kernels */

/* The benchmark loop itself; noinline so that profilers can find it. */
__attribute__((noinline)) static void pp_loop(int leader, int peer, char *sbuf, char *rbuf,
                                             long bytes, long n)
{
    if (leader) {
        for (long i = 0; i < n; i++) {
            MPI_Send(sbuf, (int)bytes, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD);
            MPI_Recv(rbuf, (int)bytes, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else {
        for (long i = 0; i < n; i++) {
            MPI_Recv(rbuf, (int)bytes, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, (int)bytes, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD);
        }
    }
}

/* gcc 12 warns (wrongly) that MPI_Waitall writes through MPI_STATUSES_IGNORE. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

/* One window round: W messages from rank 0 to rank 1, then an ack back. */
static void win_loop(int leader, int peer, char *sbuf, char *rbuf, long bytes, int w, long n)
{
    MPI_Request req[256];
    int ack = 0;
    for (long i = 0; i < n; i++) {
        if (leader) {
            for (int j = 0; j < w; j++)
                MPI_Isend(sbuf, (int)bytes, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &req[j]);
            MPI_Waitall(w, req, MPI_STATUSES_IGNORE);
            MPI_Recv(&ack, 1, MPI_INT, peer, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            for (int j = 0; j < w; j++)
                MPI_Irecv(rbuf + (size_t)j * (size_t)bytes, (int)bytes, MPI_BYTE, peer, TAG_DATA,
                          MPI_COMM_WORLD, &req[j]);
            MPI_Waitall(w, req, MPI_STATUSES_IGNORE);
            MPI_Send(&ack, 1, MPI_INT, peer, TAG_ACK, MPI_COMM_WORLD);
        }
    }
}

static int window_for(const struct opts *o, long bytes)
{
    int w = o->window;
    if (w > 256)
        w = 256;
    if (bytes > 0 && (long)w * bytes > WINDOW_BYTES_CAP)
        w = (int)(WINDOW_BYTES_CAP / bytes);
    return w < 1 ? 1 : w;
}

/* One batch between ranks 0 and 1 (called by both); returns elapsed seconds
 * on rank 0. Warm-up round outside the timed region. */
static double batch_01(const struct opts *o, char *sbuf, char *rbuf, long bytes, long n)
{
    int leader = o->rank == 0, peer = 1 - o->rank;
    if (o->window > 0) {
        int w = window_for(o, bytes);
        win_loop(leader, peer, sbuf, rbuf, bytes, w, 1);
        double t0 = MPI_Wtime();
        win_loop(leader, peer, sbuf, rbuf, bytes, w, n);
        return MPI_Wtime() - t0;
    }
    pp_loop(leader, peer, sbuf, rbuf, bytes, 1);
    double t0 = MPI_Wtime();
    pp_loop(leader, peer, sbuf, rbuf, bytes, n);
    return MPI_Wtime() - t0;
}

/* Untimed integrity check of one size, both directions. */
static void verify_01(struct opts *o, char *sbuf, char *rbuf, long bytes)
{
    unsigned seed0 = (unsigned)(bytes * 3 + 1), seed1 = (unsigned)(bytes * 5 + 2);
    int peer = 1 - o->rank;
    memset(rbuf, 0, bytes ? (size_t)bytes : 1);
    if (o->rank == 0) {
        fill(sbuf, bytes, seed0);
        MPI_Send(sbuf, (int)bytes, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD);
        MPI_Recv(rbuf, (int)bytes, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        long bad = check(rbuf, bytes, seed1);
        if (bad >= 0) {
            printf("ERROR rank=0 bytes=%ld first_bad_offset=%ld\n", bytes, bad);
            o->errors++;
        }
    } else {
        fill(sbuf, bytes, seed1);
        MPI_Recv(rbuf, (int)bytes, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        long bad = check(rbuf, bytes, seed0);
        if (bad >= 0) {
            printf("ERROR rank=1 bytes=%ld first_bad_offset=%ld\n", bytes, bad);
            fflush(stdout);
            o->errors++;
        }
        MPI_Send(sbuf, (int)bytes, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD);
    }
}

/* Calibration step: see bench_calib_next. */
static int calib_next(const struct opts *o, double t, double *est, long *n, int *batches)
{
    return bench_calib_next(o->target, o->max_iters, t, est, n, batches);
}

/* -------------------------------------------------------- modes */

/* latency / bandwidth: ranks 0 and 1 work, others wait in the final barrier. */
static void run_p2p(struct opts *o, int bw)
{
    long maxb = 0;
    for (int i = 0; i < o->nsizes; i++)
        if (o->sizes[i] > maxb)
            maxb = o->sizes[i];
    if (o->rank > 1)
        return;

    size_t rsz = (size_t)maxb;
    if (bw && o->window > 0) {
        size_t need = 0;
        for (int i = 0; i < o->nsizes; i++) {
            size_t s = (size_t)window_for(o, o->sizes[i]) * (size_t)o->sizes[i];
            if (s > need)
                need = s;
        }
        rsz = need;
    }
    char *sbuf = bench_xalloc((size_t)maxb, "pingpong", o->rank),
         *rbuf = bench_xalloc(rsz, "pingpong", o->rank);

    if (o->rank == 0) {
        if (bw && o->window > 0)
            printf("# bandwidth: window of MPI_Isend (W<=%d, W*bytes<=64MiB) + ack; MB/s = 1e6 B/s\n",
                   o->window);
        else if (bw)
            printf("# bandwidth: ping-pong, bytes / half round trip; MB/s = 1e6 B/s\n");
        else
            printf("# latency: half round trip between ranks 0 and 1, microseconds\n");
        printf("# median of %d batches of ~%.1f ms each (at least 1 iteration), per size\n",
               o->reps, o->target * 1e3);
        fflush(stdout);
    }

    for (int si = 0; si < o->nsizes; si++) {
        long bytes = o->sizes[si];
        verify_01(o, sbuf, rbuf, bytes);

        if (o->rank == 1) {
            long n;
            while ((n = ctrl_recv()) > 0)
                batch_01(o, sbuf, rbuf, bytes, n);
            continue;
        }

        /* rank 0: calibrate n, then time reps batches */
        long n = 1;
        double est = 1e30;
        int nb = 0;
        for (;;) {
            ctrl_send(n, 1, 1);
            double t = batch_01(o, sbuf, rbuf, bytes, n);
            if (!calib_next(o, t, &est, &n, &nb))
                break;
        }
        double v[BENCH_MAX_REPS];
        for (int r = 0; r < o->reps; r++) {
            ctrl_send(n, 1, 1);
            v[r] = batch_01(o, sbuf, rbuf, bytes, n);
        }
        ctrl_send(0, 1, 1);
        double t = bench_median(v, o->reps); /* seconds per batch */

        if (!bw) {
            printf("latency bytes=%ld usec=%.4f iters=%ld reps=%d\n", bytes, t / n / 2 * 1e6, n,
                   o->reps);
        } else if (o->window > 0) {
            int w = window_for(o, bytes);
            double mbs = (double)bytes * w * n / t / 1e6;
            printf("bandwidth bytes=%ld MBps=%.1f method=window window=%d iters=%ld reps=%d\n",
                   bytes, mbs, w, n, o->reps);
        } else {
            double half = t / n / 2;
            printf("bandwidth bytes=%ld MBps=%.1f usec=%.3f method=pingpong iters=%ld reps=%d\n",
                   bytes, (double)bytes / half / 1e6, half * 1e6, n, o->reps);
        }
        fflush(stdout);
    }
    free(sbuf);
    free(rbuf);
}

/* Rank 0's side of one batch on all pairs: tell everyone n, barrier, time its
 * own pair, collect the other pairs' times. tp[p] = seconds for pair p. */
static void pairs_batch(const struct opts *o, char *sbuf, char *rbuf, long bytes, long n,
                        double *tp, int npairs)
{
    ctrl_send(n, 1, o->size - 1);
    MPI_Barrier(MPI_COMM_WORLD);
    pp_loop(1, 1, sbuf, rbuf, bytes, 1);
    double t0 = MPI_Wtime();
    pp_loop(1, 1, sbuf, rbuf, bytes, n);
    tp[0] = MPI_Wtime() - t0;
    for (int p = 1; p < npairs; p++)
        MPI_Recv(&tp[p], 1, MPI_DOUBLE, 2 * p, TAG_RESULT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void run_pairs(const struct opts *o)
{
    int npairs = o->size / 2;
    int in_pair = o->rank < 2 * npairs;
    int leader = (o->rank % 2) == 0;
    int peer = o->rank ^ 1;
    long bytes = o->bytes;
    char *sbuf = bench_xalloc((size_t)bytes, "pingpong", o->rank),
         *rbuf = bench_xalloc((size_t)bytes, "pingpong", o->rank);

    if (npairs < 1) {
        if (o->rank == 0)
            printf("# pairs: needs at least 2 ranks\n");
        return;
    }

    if (o->rank != 0) {
        long n;
        while ((n = ctrl_recv()) > 0) {
            MPI_Barrier(MPI_COMM_WORLD);
            if (!in_pair)
                continue;
            pp_loop(leader, peer, sbuf, rbuf, bytes, 1);
            double t0 = MPI_Wtime();
            pp_loop(leader, peer, sbuf, rbuf, bytes, n);
            double t = MPI_Wtime() - t0;
            if (leader)
                MPI_Send(&t, 1, MPI_DOUBLE, 0, TAG_RESULT, MPI_COMM_WORLD);
        }
        free(sbuf);
        free(rbuf);
        return;
    }

    /* rank 0: coordinator and leader of pair 0 */
    double *tp = malloc(sizeof(double) * (size_t)npairs);
    double (*v)[BENCH_MAX_REPS] = malloc(sizeof *v * (size_t)npairs);
    double start = MPI_Wtime();


    long n = 1;
    double est = 1e30;
    int nb = 0;
    for (;;) {
        pairs_batch(o, sbuf, rbuf, bytes, n, tp, npairs);
        double tmax = 0;
        for (int p = 0; p < npairs; p++)
            if (tp[p] > tmax)
                tmax = tp[p];
        if (!calib_next(o, tmax, &est, &n, &nb) || MPI_Wtime() - start > o->time_cap / 2)
            break;
    }
    int reps = 0;
    while (reps < o->reps && (reps == 0 || MPI_Wtime() - start < o->time_cap)) {
        pairs_batch(o, sbuf, rbuf, bytes, n, tp, npairs);
        for (int p = 0; p < npairs; p++)
            v[p][reps] = tp[p] / n / 2;
        reps++;
    }
    ctrl_send(0, 1, o->size - 1);

    double *pm = malloc(sizeof(double) * (size_t)npairs);
    for (int p = 0; p < npairs; p++)
        pm[p] = bench_median(v[p], reps);
    double med = bench_median(pm, npairs); /* sorts pm */
    printf("# pairs: %d pairs ping-pong concurrently; median over pairs of each pair's median "
           "half round trip\n", npairs);
    printf("pairs ranks=%d pairs=%d bytes=%ld usec=%.4f min=%.4f max=%.4f iters=%ld reps=%d "
           "seconds=%.2f\n",
           o->size, npairs, bytes, med * 1e6, pm[0] * 1e6, pm[npairs - 1] * 1e6, n, reps,
           MPI_Wtime() - start);
    fflush(stdout);
    free(pm);
    free(v);
    free(tp);
    free(sbuf);
    free(rbuf);
}

/* Handoff variant for instruction counting without polling. A process-based
 * MPI busy-polls while it waits, so under callgrind the count of a plain
 * ping-pong includes a varying number of empty progress polls (more when the
 * machine is busy). Here the ranks hand the turn to each other through two
 * POSIX named semaphores, outside MPI: a rank posts its peer's semaphore only
 * after its MPI_Send returned, and calls MPI_Recv only after its own semaphore
 * was posted, so every receive finds its message already sent (for an 8-byte
 * eager message on a shared-memory transport: already in the receiver's queue)
 * and never waits inside MPI. The semaphore calls live in pp_oob_post and
 * pp_oob_wait, which callgrind leaves out with --toggle-collect.
 * Both ranks must run on different kernel threads (true for processes; for a
 * thread-based MPI, ranks on different workers): a semaphore wait blocks the
 * whole kernel thread. If a wait times out (5 s), the handoff is dropped and
 * the loop goes on as a plain ping-pong, with a warning. */
__attribute__((noinline)) void pp_oob_post(sem_t *s)
{
    sem_post(s);
}

__attribute__((noinline)) void pp_oob_wait(sem_t *s, int *broken, int rank)
{
    if (*broken)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 5;
    int rc;
    while ((rc = sem_timedwait(s, &ts)) != 0 && errno == EINTR)
        ;
    if (rc != 0) {
        *broken = 1;
        fprintf(stderr, "pingpong: rank %d: handoff wait timed out (both ranks on one kernel "
                        "thread?); continuing without handoff\n", rank);
    }
}

__attribute__((noinline)) void pp_handoff(int rank, char *sbuf, char *rbuf, long n,
                                          sem_t *mine, sem_t *theirs)
{
    int peer = 1 - rank, leader = rank == 0, broken = 0;
    if (leader) {
        for (long i = 0; i < n; i++) {
            MPI_Send(sbuf, 8, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD);
            pp_oob_post(theirs);
            pp_oob_wait(mine, &broken, rank);
            MPI_Recv(rbuf, 8, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else {
        for (long i = 0; i < n; i++) {
            pp_oob_wait(mine, &broken, rank);
            MPI_Recv(rbuf, 8, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, 8, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD);
            pp_oob_post(theirs);
        }
    }
}

/* iters N: N round trips of 8 bytes, nothing else. With --handoff: first a
 * setup (rank 0 creates the semaphores and sends their name, rank 1 opens
 * them and answers, rank 0 unlinks the names), then the handoff loop. */
static void run_iters(int rank, long n, int handoff)
{
    char sbuf[8] = {0}, rbuf[8];
    if (rank > 1)
        return;
    if (!handoff) {
        pp_loop(rank == 0, 1 - rank, sbuf, rbuf, 8, n);
        return;
    }
    char name[2][64];
    sem_t *sem[2];
    int ok = 1;
    if (rank == 0) {
        for (int i = 0; i < 2; i++) {
            snprintf(name[i], sizeof name[i], "/pingpong-%ld-%d", (long)getpid(), i);
            sem[i] = sem_open(name[i], O_CREAT | O_EXCL, 0600, 0);
            if (sem[i] == SEM_FAILED) {
                perror("pingpong: sem_open");
                exit(2);
            }
        }
        MPI_Send(name, (int)sizeof name, MPI_CHAR, 1, TAG_CTRL, MPI_COMM_WORLD);
        MPI_Recv(&ok, 1, MPI_INT, 1, TAG_CTRL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        sem_unlink(name[0]);
        sem_unlink(name[1]);
    } else {
        MPI_Recv(name, (int)sizeof name, MPI_CHAR, 0, TAG_CTRL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < 2; i++) {
            sem[i] = sem_open(name[i], 0);
            if (sem[i] == SEM_FAILED) {
                perror("pingpong: sem_open");
                exit(2);
            }
        }
        MPI_Send(&ok, 1, MPI_INT, 0, TAG_CTRL, MPI_COMM_WORLD);
    }
    pp_handoff(rank, sbuf, rbuf, n, sem[rank], sem[1 - rank]);
    sem_close(sem[0]);
    sem_close(sem[1]);
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    struct opts o = {.reps = 7, .target = 3e-3, .max_iters = 1L << 24, .time_cap = 60.0,
                     .window = 0, .bytes = 0};
    MPI_Comm_rank(MPI_COMM_WORLD, &o.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &o.size);
    default_sizes(&o, 16L << 20);

    if (argc < 2) {
        usage(o.rank);
        return bench_finalize(2);
    }
    const char *mode = argv[1];
    long iters_n = 0;
    int handoff = 0;
    int a = 2;
    if (strcmp(mode, "iters") == 0) {
        if (argc < 3) {
            usage(o.rank);
            return bench_finalize(2);
        }
        iters_n = atol(argv[2]);
        a = 3;
    }
    for (; a < argc; a++) {
        const char *k = argv[a];
        if (!strcmp(k, "--handoff")) {
            handoff = 1;
            continue;
        }
        const char *val = a + 1 < argc ? argv[a + 1] : NULL;
        if (!val) {
            usage(o.rank);
            return bench_finalize(2);
        }
        if (!strcmp(k, "--sizes"))
            parse_size_list(&o, val);
        else if (!strcmp(k, "--max"))
            default_sizes(&o, parse_size(val));
        else if (bench_timing_opt(k, val, &o.reps, &o.target, &o.max_iters, &o.time_cap))
            ;
        else if (!strcmp(k, "--window"))
            o.window = atoi(val);
        else if (!strcmp(k, "--bytes"))
            o.bytes = parse_size(val);
        else {
            usage(o.rank);
            return bench_finalize(2);
        }
        a++;
    }
    bench_clamp_opts(&o.reps, &o.max_iters);

    int need2 = strcmp(mode, "pairs") != 0;
    if (need2 && o.size < 2) {
        if (o.rank == 0)
            fprintf(stderr, "pingpong: mode %s needs at least 2 ranks\n", mode);
        MPI_Finalize();
        return 2;
    }

    if (!strcmp(mode, "latency"))
        run_p2p(&o, 0);
    else if (!strcmp(mode, "bandwidth"))
        run_p2p(&o, 1);
    else if (!strcmp(mode, "pairs"))
        run_pairs(&o);
    else if (!strcmp(mode, "iters")) {
        run_iters(o.rank, iters_n, handoff);
        MPI_Finalize();
        return 0; /* nothing else: no barrier, no output */
    } else {
        usage(o.rank);
        return bench_finalize(2);
    }

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return o.errors ? 1 : 0;
}
