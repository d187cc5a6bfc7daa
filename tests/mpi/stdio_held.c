/* No silent hang when a user thread holds a stdio lock (issue 31): rank 0 blocks in
 * fgets(stdin) on a pipe nobody writes (made here: stdin is replaced by the pipe's read
 * end), which holds stdin's lock for as long as it waits. Every report path must still
 * end the job with its report; they used to call fflush(NULL), which waits for that lock.
 * argv[1] says what the other ranks do meanwhile:
 *   held      rank 1 wants rank 0's worker (run with 1 worker): the watchdog's report
 *   timeout   rank 1 waits for rank 0 in MPI_Recv (2 workers, --timeout): the timeout's
 *   deadlock  a thread of rank 0 holds stdin's lock (flockfile) and waits in MPI_Recv,
 *             rank 0 and rank 1 wait for each other: the deadlock report
 *   abort     rank 1 calls MPI_Abort(MPI_COMM_WORLD, 7)      (these three: 2 workers or
 *   fatal     rank 1 sends to an invalid rank under           more, else rank 1 cannot
 *             MPI_ERRORS_ARE_FATAL                             run while rank 0 waits)
 *   crash     rank 1 dereferences NULL
 * Other ranks wait in MPI_Finalize. Each line of the testlist expects that report; a hang is a failure (the test's time
 * limit). Rank 1 first writes "rank 1 reached its <mode> step; " on stdout, unflushed and
 * without a newline: but for a crash (whose notice flushes nothing) the report path must
 * flush it, and the testlist's pattern finds it right before the report (stdout comes
 * before stderr in what the test runner matches). */
#define _GNU_SOURCE
#define TEST_NAME "stdio_held"
#include "mpitest.h"
#include <signal.h>
#include <pthread.h>
#include <unistd.h>

static void *lock_stdin_then_wait(void *arg) {
    flockfile(stdin);
    __atomic_store_n((int *)arg, 1, __ATOMIC_RELEASE);
    int x;
    MPI_Recv(&x, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* never sent */
    funlockfile(stdin);
    return NULL;
}

int main(int argc, char **argv) {
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "held";
    CHECK(size >= 2, "needs 2 ranks");
    int fds[2];
    if (rank == 0) {
        CHECK(pipe(fds) == 0, "pipe");
        CHECK(dup2(fds[0], 0) == 0, "dup2");
    }
    if (rank == 1) printf("rank 1 reached its %s step; ", mode);
    MPI_Barrier(MPI_COMM_WORLD);
    if (!strcmp(mode, "deadlock")) {
        int x = 0;
        if (rank == 0) {
            pthread_t t;
            int locked = 0;
            CHECK(pthread_create(&t, NULL, lock_stdin_then_wait, &locked) == 0, "pthread_create");
            while (!__atomic_load_n(&locked, __ATOMIC_ACQUIRE)) usleep(1000);
            MPI_Recv(&x, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            pthread_join(t, NULL);
        } else if (rank == 1) {
            MPI_Recv(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        if (rank < 2) FAIL("a deadlock ended");
    }
    if (rank == 0) {
        char line[64];
        if (fgets(line, sizeof line, stdin)) FAIL("read a line from a pipe nobody writes");
        FAIL("fgets returned");
    }
    if (rank == 1) {
        int x = 0;
        /* rank 0 is in fgets by then (with a worker of its own); not in `held`, whose
         * rank 1 must be ready to run, not sleeping, for the watchdog to see it */
        if (strcmp(mode, "held")) usleep(300000);
        if (!strcmp(mode, "held")) { /* ready to run, on rank 0's worker */
            int flag = 0;
            while (!flag) MPI_Iprobe(0, 1, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        } else if (!strcmp(mode, "timeout")) {
            MPI_Recv(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (!strcmp(mode, "abort")) {
            MPI_Abort(MPI_COMM_WORLD, 7);
        } else if (!strcmp(mode, "fatal")) {
            MPI_Send(&x, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD);
        } else if (!strcmp(mode, "crash")) {
            raise(SIGSEGV); /* not a NULL load: UBSan would stop the run first (as crash.c) */
        }
        FAIL("mode %s went on", mode);
    }
    MPI_Finalize();
    return 0;
}
