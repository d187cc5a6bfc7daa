/* migrate: what a rank sees as its own survives blocking MPI calls that move it to
 * another kernel thread (Skein's work stealing moves ranks between workers).
 *
 * The upper half of the ranks computes four times as long as the lower half between
 * collectives (Skein places them in blocks: the loaded ranks share workers), so that workers
 * run out of ranks at different times and take ranks from each other. Around
 * each blocking call (MPI_Allreduce, MPI_Sendrecv around a ring, MPI_Barrier) a rank
 * checks that these are unchanged:
 *   - errno, set by a failing libc call, then to a value of the rank's own, before the
 *     call (read after it through the address the compiler computed before it, since
 *     glibc declares __errno_location const: Skein's mpi.h makes that safe);
 *   - a privatized global and a privatized _Thread_local (built with -fprivatize: one
 *     copy per rank), and a variable on its stack;
 *   - a recursive mutex it holds across the call on every fourth step (libc records the
 *     owner thread: the unlock after the call must succeed; Skein keeps the rank on its
 *     kernel thread meanwhile);
 *   - its rank in MPI_COMM_WORLD.
 * A rank counts the calls after which gettid() differs (it resumed on another
 * kernel thread). Arguments: "moves" makes a job without any move fail (Skein with
 * stealing on and more ranks than workers); "nomoves" makes any move fail (stealing off).
 */
#define _GNU_SOURCE
#define TEST_NAME "migrate"
#include "mpitest.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

static int per_rank_global;           /* privatized: one per rank */
static _Thread_local int per_rank_tls; /* privatized: one per rank (and thread) */

static uint64_t compute(int units)
{
    uint64_t x = 88172645463325252ull;
    double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < units * 300e-6)
        for (int i = 0; i < 1000; i++) x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return x;
}

/* Makes errno ENOENT through a real libc failure. */
static void set_errno_enoent(void)
{
    int fd = open("/nonexistent/skein-migrate", O_RDONLY);
    if (fd >= 0) close(fd);
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int want_moves = argc > 1 && !strcmp(argv[1], "moves");
    int want_none = argc > 1 && !strcmp(argv[1], "nomoves");

    pthread_mutex_t *mu = malloc(sizeof *mu);
    pthread_mutexattr_t ma;
    CHECK(mu != NULL, "malloc failed");
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(mu, &ma);
    pthread_mutexattr_destroy(&ma);

    long moved = 0;
    uint64_t sink = 0;
    const int steps = 40;
    for (int step = 0; step < steps; step++) {
        sink += compute(rank >= size / 2 ? 4 : 1);
        int stack_value = rank * 100003 + step;
        per_rank_global = rank * 1000 + step;
        per_rank_tls = rank * 7 + step;
        int hold = step % 4 == 1;
        if (hold) {
            CHECK(pthread_mutex_lock(mu) == 0, "lock failed");
            CHECK(pthread_mutex_lock(mu) == 0, "recursive lock failed");
        }
        pid_t before = gettid(); /* not pthread_self(): glibc declares it const, so the compiler may reuse one call */
        set_errno_enoent();
        CHECK(errno == ENOENT, "open of a missing file did not set ENOENT (got %d)", errno);
        const int my_errno = 10000 + rank * 64 + step;
        errno = my_errno;

        int which = step % 3, in = rank + step, out = -1;
        if (which == 0) {
            MPI_CHECK(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
            CHECK(out == size - 1 + step, "allreduce (expected %d got %d)", size - 1 + step, out);
        } else if (which == 1) {
            MPI_CHECK(MPI_Sendrecv(&in, 1, MPI_INT, (rank + 1) % size, step, &out, 1, MPI_INT,
                                   (rank + size - 1) % size, step, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            int from = (rank + size - 1) % size;
            CHECK(out == from + step, "ring (expected %d got %d)", from + step, out);
        } else {
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        }

        int e = errno;
        CHECK(e == my_errno, "step %d: errno changed across a blocking MPI call (expected %d got %d)", step, my_errno,
              e);
        if (gettid() != before) moved++;
        CHECK(stack_value == rank * 100003 + step, "stack variable changed");
        CHECK(per_rank_global == rank * 1000 + step, "step %d: privatized global (expected %d got %d)", step,
              rank * 1000 + step, per_rank_global);
        CHECK(per_rank_tls == rank * 7 + step, "step %d: privatized _Thread_local (expected %d got %d)", step,
              rank * 7 + step, per_rank_tls);
        int r2;
        MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &r2));
        CHECK(r2 == rank, "rank changed (expected %d got %d)", rank, r2);
        if (hold) {
            CHECK(pthread_mutex_unlock(mu) == 0, "step %d: unlock of a recursive mutex held across the call failed",
                  step);
            CHECK(pthread_mutex_unlock(mu) == 0, "step %d: second unlock failed", step);
        }
    }
    long total = 0;
    MPI_CHECK(MPI_Allreduce(&moved, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    if (want_moves) CHECK(total > 0, "no rank ever moved to another kernel thread");
    if (want_none) CHECK(total == 0, "%ld calls came back on another kernel thread with stealing off", total);
    pthread_mutex_destroy(mu);
    free(mu);
    MPI_CHECK(MPI_Finalize());
    if (rank == 0) printf("PASS %s (%ld moves)%s\n", TEST_NAME, total, sink == 42 ? " " : "");
    return 0;
}
