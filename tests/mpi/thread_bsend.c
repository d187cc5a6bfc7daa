/*
 * thread_bsend.c - the threads of a rank share its attached buffer (MPI_THREAD_MULTIPLE):
 * each thread t of rank r sends ROUNDS buffered messages to its partner rank r^1 (itself
 * when it has none; tag t) and receives as many from it, sizes cycling from a few bytes (carried inside the envelope) to
 * sizes sent by reference from the attached buffer. A send's request is reclaimed by
 * whichever thread next claims buffer space, while the receiver may still be matching
 * it: the case where a sender must not touch its queued request again (found by TSan in
 * thread_stress). Every payload depends on (source, thread, round) and is checked.
 * Argument 1: threads per rank (default 4).
 */
#define TEST_NAME "thread_bsend"
#include "mpitest.h"
#include <pthread.h>

#define MAXT 16
#define ROUNDS 300
#define MAXN 8192

typedef struct targ {
    int rank, size, t; /* (ranks are threads of one process: no globals) */
} targ;

static unsigned char pat(int src, int t, int round, size_t i) { return (unsigned char)(src * 13 + t * 5 + round + i); }

static size_t round_bytes(int round)
{
    static const size_t sizes[] = {8, 1024, 120, MAXN, 300, 4096};
    return sizes[round % (int)(sizeof sizes / sizeof sizes[0])];
}

static void *worker(void *p)
{
    const targ *a = p;
    const int t = a->t, rank = a->rank, size = a->size;
    /* a pair, not a ring: a thread is at most one round ahead of its partner, so two
     * messages per thread are in flight at most; in a ring a rank runs size-1 ahead */
    const int partner = (rank ^ 1) < size ? rank ^ 1 : rank;
    unsigned char *sb = mt_malloc(MAXN), *rb = mt_malloc(MAXN);
    for (int round = 0; round < ROUNDS; round++) {
        size_t n = round_bytes(round);
        for (size_t i = 0; i < n; i++) sb[i] = pat(rank, t, round, i);
        MPI_CHECK(MPI_Bsend(sb, (int)n, MPI_BYTE, partner, t, MPI_COMM_WORLD));
        MPI_Status st;
        MPI_CHECK(MPI_Recv(rb, MAXN, MPI_BYTE, partner, t, MPI_COMM_WORLD, &st));
        int got;
        MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &got));
        CHECK((size_t)got == n, "thread %d round %d: %d bytes from %d, expected %zu", t, round, got, partner, n);
        for (size_t i = 0; i < n; i++)
            CHECK(rb[i] == pat(partner, t, round, i), "thread %d round %d byte %zu from %d: expected %d got %d", t,
                  round, i, partner, pat(partner, t, round, i), rb[i]);
    }
    free(sb);
    free(rb);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int nt = argc > 1 ? atoi(argv[1]) : 4;
    CHECK(nt >= 1 && nt <= MAXT, "threads %d", nt);
    /* room for two messages in flight per thread: claims and reclaims interleave */
    int bsize = nt * 2 * (MAXN + MPI_BSEND_OVERHEAD);
    void *bbuf = mt_malloc((size_t)bsize);
    MPI_CHECK(MPI_Buffer_attach(bbuf, bsize));
    pthread_t th[MAXT];
    targ a[MAXT];
    for (int t = 0; t < nt; t++) {
        a[t] = (targ){rank, size, t};
        CHECK(pthread_create(&th[t], NULL, worker, &a[t]) == 0, "pthread_create");
    }
    for (int t = 0; t < nt; t++) pthread_join(th[t], NULL);
    int bs;
    MPI_CHECK(MPI_Buffer_detach(&bbuf, &bs));
    CHECK(bs == bsize, "detached %d bytes, attached %d", bs, bsize);
    free(bbuf);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Finalize());
    if (rank == 0) printf("PASS %s\n", TEST_NAME);
    return 0;
}
