/*
 * hybrid.c - MPI_THREAD_MULTIPLE with OpenMP threads inside each rank.
 * Build with -fopenmp.
 *
 * MPI_Init_thread(MPI_THREAD_MULTIPLE) must provide MPI_THREAD_MULTIPLE;
 * MPI_Query_thread agrees; MPI_Is_thread_main is true only on the OpenMP
 * master thread.  In a parallel region of 4 threads, thread t of rank r
 * exchanges messages with thread t of its neighbours, tag = thread number:
 *   - MPI_Sendrecv right/left, sizes 0 .. 64 KiB, several iterations;
 *   - MPI_Isend + MPI_Irecv + MPI_Waitall in both directions;
 *   - MPI_Ssend/MPI_Recv ordered by rank parity (self-exchange with 1 rank
 *     uses MPI_Issend instead).
 * Every message's pattern depends on (source rank, thread, iteration).
 * A failure inside the region is reported by the failing thread (which
 * calls MPI_Abort).
 */
#define TEST_NAME "hybrid"
#include "mpitest.h"
#ifndef _OPENMP
#error "hybrid.c must be compiled with -fopenmp"
#endif
#include <omp.h>

#define NT 4
#define ITERS 6

static int sizes_for(int it)
{
    static const int s[ITERS] = {0, 1, 100, 4096, 65536, 12345};
    return s[it];
}

int main(int argc, char **argv)
{
    int rank, size, provided = -1, q = -1, main_flag = 0;
    MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_Init_thread provided level wrong (expected "
          "MPI_THREAD_MULTIPLE=%d got %d)", MPI_THREAD_MULTIPLE, provided);
    MPI_CHECK(MPI_Query_thread(&q));
    CHECK(q == provided, "MPI_Query_thread disagrees with MPI_Init_thread (expected %d got %d)",
          provided, q);
    MPI_CHECK(MPI_Is_thread_main(&main_flag));
    CHECK(main_flag, "MPI_Is_thread_main false on the thread that called MPI_Init_thread");
    const int right = (rank + 1) % size, left = (rank - 1 + size) % size;

#pragma omp parallel num_threads(NT)
    {
        const int t = omp_get_thread_num();
        int flag = -1;
        CHECK(omp_get_num_threads() == NT, "OpenMP team size wrong (expected %d got %d)", NT,
              omp_get_num_threads());
        MPI_CHECK(MPI_Is_thread_main(&flag));
        CHECK(!!flag == (t == 0), "MPI_Is_thread_main wrong on OpenMP thread %d (expected %d "
              "got %d)", t, t == 0, flag);

        unsigned char *sb = mt_malloc(65536 + 16), *rb = mt_malloc(65536 + 16),
                      *rb2 = mt_malloc(65536 + 16);
        MPI_Status st, sts[4];
        for (int it = 0; it < ITERS; it++) {
            const int n = sizes_for(it);
            /* Sendrecv to the right */
            mt_fill(sb, (size_t)n, mt_seed(rank, t, it, 1));
            MPI_CHECK(MPI_Sendrecv(sb, n, MPI_BYTE, right, t, rb, n + 16, MPI_BYTE, left, t,
                                   MPI_COMM_WORLD, &st));
            CHECK_STATUS(&st, MPI_BYTE, left, t, n, "thread %d Sendrecv iteration %d", t, it);
            VERIFY(rb, (size_t)n, mt_seed(left, t, it, 1), "thread %d Sendrecv iteration %d", t, it);

            /* both directions, nonblocking (tag t for rightward, NT+t leftward) */
            MPI_Request rq[4];
            mt_fill(sb, (size_t)n, mt_seed(rank, t, it, 2));
            MPI_CHECK(MPI_Irecv(rb, n + 16, MPI_BYTE, left, t, MPI_COMM_WORLD, &rq[0]));
            MPI_CHECK(MPI_Irecv(rb2, n + 16, MPI_BYTE, right, NT + t, MPI_COMM_WORLD, &rq[1]));
            MPI_CHECK(MPI_Isend(sb, n, MPI_BYTE, right, t, MPI_COMM_WORLD, &rq[2]));
            MPI_CHECK(MPI_Isend(sb, n, MPI_BYTE, left, NT + t, MPI_COMM_WORLD, &rq[3]));
            MPI_CHECK(MPI_Waitall(4, rq, sts));
            CHECK_STATUS(&sts[0], MPI_BYTE, left, t, n, "thread %d Irecv from left it %d", t, it);
            CHECK_STATUS(&sts[1], MPI_BYTE, right, NT + t, n, "thread %d Irecv from right it %d",
                         t, it);
            VERIFY(rb, (size_t)n, mt_seed(left, t, it, 2), "thread %d Irecv from left it %d", t, it);
            VERIFY(rb2, (size_t)n, mt_seed(right, t, it, 2), "thread %d Irecv from right it %d",
                   t, it);

            /* synchronous sends ordered by parity (odd size: last rank pairs with 0) */
            mt_fill(sb, (size_t)n, mt_seed(rank, t, it, 3));
            const int tag = 2 * NT + t;
            if (size == 1) {
                MPI_Request r;
                MPI_CHECK(MPI_Issend(sb, n, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &r));
                MPI_CHECK(MPI_Recv(rb, n + 16, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &st));
                MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            } else if (rank % 2 == 0 && !(size % 2 == 1 && rank == size - 1)) {
                MPI_CHECK(MPI_Ssend(sb, n, MPI_BYTE, right, tag, MPI_COMM_WORLD));
                MPI_CHECK(MPI_Recv(rb, n + 16, MPI_BYTE, left, tag, MPI_COMM_WORLD, &st));
            } else {
                MPI_CHECK(MPI_Recv(rb, n + 16, MPI_BYTE, left, tag, MPI_COMM_WORLD, &st));
                MPI_CHECK(MPI_Ssend(sb, n, MPI_BYTE, right, tag, MPI_COMM_WORLD));
            }
            CHECK_STATUS(&st, MPI_BYTE, left, tag, n, "thread %d Ssend/Recv it %d", t, it);
            VERIFY(rb, (size_t)n, mt_seed(left, t, it, 3), "thread %d Ssend/Recv it %d", t, it);
        }
        free(sb);
        free(rb);
        free(rb2);
    }
    return mt_finish();
}
