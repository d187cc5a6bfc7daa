/*
 * thread_stress.c - many threads of many ranks talking at once (MPI_THREAD_MULTIPLE).
 *
 * Each rank starts NT pthreads and joins them. Thread t of rank r exchanges with thread
 * t of ranks r+1 and r-1 (tag = t), ITERS rounds of:
 *   - MPI_Sendrecv, sizes from 0 B to 64 KiB;
 *   - MPI_Isend + MPI_Irecv completed by MPI_Waitall;
 *   - MPI_Bsend into the rank's attached buffer (shared by its threads) + MPI_Recv;
 *   - one message of BIG bytes (several MiB) each way, when the job is small;
 *   - requests started by thread t and completed by thread (t+1) % NT of the same rank
 *     with MPI_Waitall (handed over through a pthread barrier).
 * Every payload depends on (source rank, thread, round) and is checked.
 * Argument 1: number of threads per rank (default 4).
 */
#define TEST_NAME "thread_stress"
#include "mpitest.h"
#include <pthread.h>

#define MAXT 16
#define ITERS 4
#define BIG (3 << 20)

typedef struct shared {
    int rank, size, nt;
    pthread_barrier_t bar;
    MPI_Request handoff[MAXT][2];
    int *hbuf[MAXT][2];
} shared;

typedef struct targ {
    shared *sh;
    int t;
} targ;

static unsigned char pat(int src, int t, int it, size_t i) { return (unsigned char)(src * 31 + t * 7 + it * 3 + i); }

static void fill(unsigned char *b, size_t n, int src, int t, int it)
{
    for (size_t i = 0; i < n; i++) b[i] = pat(src, t, it, i);
}

static void check(const unsigned char *b, size_t n, int src, int t, int it, const char *what)
{
    for (size_t i = 0; i < n; i++)
        CHECK(b[i] == pat(src, t, it, i), "%s: thread %d round %d byte %zu from %d (expected %d got %d)",
              what, t, it, i, src, pat(src, t, it, i), b[i]);
}

static void *worker(void *p)
{
    targ *a = p;
    shared *sh = a->sh;
    const int t = a->t, rank = sh->rank, size = sh->size;
    const int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    static const size_t sizes[ITERS] = {0, 100, 4096, 65536};
    unsigned char *sb = mt_malloc(65536), *rb = mt_malloc(65536), *rb2 = mt_malloc(65536);
    for (int it = 0; it < ITERS; it++) {
        size_t n = sizes[it];
        MPI_Status st;
        fill(sb, n, rank, t, it);
        MPI_CHECK(MPI_Sendrecv(sb, (int)n, MPI_BYTE, right, t, rb, 65536, MPI_BYTE, left, t,
                               MPI_COMM_WORLD, &st));
        check(rb, n, left, t, it, "Sendrecv");
        MPI_Request rq[4];
        MPI_CHECK(MPI_Irecv(rb, 65536, MPI_BYTE, left, t, MPI_COMM_WORLD, &rq[0]));
        MPI_CHECK(MPI_Irecv(rb2, 65536, MPI_BYTE, right, t, MPI_COMM_WORLD, &rq[1]));
        MPI_CHECK(MPI_Isend(sb, (int)n, MPI_BYTE, right, t, MPI_COMM_WORLD, &rq[2]));
        MPI_CHECK(MPI_Isend(sb, (int)n, MPI_BYTE, left, t, MPI_COMM_WORLD, &rq[3]));
        MPI_CHECK(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
        check(rb, n, left, t, it, "Irecv from left");
        check(rb2, n, right, t, it, "Irecv from right");
        /* buffered: at most 4 KiB, the attached buffer is shared by the rank's threads */
        size_t bn = n > 4096 ? 4096 : n;
        MPI_CHECK(MPI_Bsend(sb, (int)bn, MPI_BYTE, right, t, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Recv(rb, 65536, MPI_BYTE, left, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        check(rb, bn, left, t, it, "Bsend");
    }
    if (size <= 8 && t < 2) { /* several MiB each way */
        unsigned char *bs = mt_malloc(BIG), *br = mt_malloc(BIG);
        fill(bs, BIG, rank, t, 9);
        MPI_CHECK(MPI_Sendrecv(bs, BIG, MPI_BYTE, right, t, br, BIG, MPI_BYTE, left, t, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE));
        check(br, BIG, left, t, 9, "big Sendrecv");
        free(bs);
        free(br);
    }
    /* requests started here, completed by the next thread of this rank */
    int *hs = mt_malloc(sizeof(int)), *hr = mt_malloc(sizeof(int));
    *hs = rank * 1000 + t;
    *hr = -1;
    sh->hbuf[t][0] = hs;
    sh->hbuf[t][1] = hr;
    MPI_CHECK(MPI_Irecv(hr, 1, MPI_INT, left, 100 + t, MPI_COMM_WORLD, &sh->handoff[t][0]));
    MPI_CHECK(MPI_Isend(hs, 1, MPI_INT, right, 100 + t, MPI_COMM_WORLD, &sh->handoff[t][1]));
    pthread_barrier_wait(&sh->bar);
    int o = (t + 1) % sh->nt;
    MPI_CHECK(MPI_Waitall(2, sh->handoff[o], MPI_STATUSES_IGNORE));
    CHECK(*sh->hbuf[o][1] == left * 1000 + o, "hand-off: thread %d completing thread %d's receive "
          "(expected %d got %d)", t, o, left * 1000 + o, *sh->hbuf[o][1]);
    pthread_barrier_wait(&sh->bar);
    free(hs);
    free(hr);
    free(sb);
    free(rb);
    free(rb2);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    shared *sh = mt_malloc(sizeof *sh);
    memset(sh, 0, sizeof *sh);
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &sh->rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &sh->size));
    sh->nt = argc > 1 ? atoi(argv[1]) : 4;
    CHECK(sh->nt >= 1 && sh->nt <= MAXT, "threads %d", sh->nt);
    int bsize = sh->nt * ITERS * (4096 + MPI_BSEND_OVERHEAD) * 2;
    void *bbuf = mt_malloc((size_t)bsize);
    MPI_CHECK(MPI_Buffer_attach(bbuf, bsize));
    pthread_barrier_init(&sh->bar, NULL, (unsigned)sh->nt);
    pthread_t th[MAXT];
    targ a[MAXT];
    for (int t = 0; t < sh->nt; t++) {
        a[t] = (targ){sh, t};
        CHECK(pthread_create(&th[t], NULL, worker, &a[t]) == 0, "pthread_create");
    }
    for (int t = 0; t < sh->nt; t++) pthread_join(th[t], NULL);
    pthread_barrier_destroy(&sh->bar);
    int bs;
    MPI_CHECK(MPI_Buffer_detach(&bbuf, &bs));
    free(bbuf);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Finalize());
    if (sh->rank == 0) printf("PASS %s\n", TEST_NAME);
    free(sh);
    return 0;
}
