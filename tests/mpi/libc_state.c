/*
 * libc_state.c - rand/random/drand48, strtok, the static-buffer time functions and
 * other static buffers are per rank, as they are per process under a process-based MPI.
 *
 * Usage: libc_state [shared=FAMILIES]
 *
 * Every rank runs libc_seq_run (libc_seq.h): srand(42) and 1000 rand(), random(),
 * initstate/setstate, the drand48 family, strtok over a rank-specific string, localtime/
 * gmtime/ctime/asctime, strerror/strsignal of unknown codes, inet_ntoa, tmpnam(NULL),
 * ttyname and getlogin, yielding to other ranks between calls (and between a call and the
 * use of its static result) and meeting in a barrier every 16 yields. Each result is compared with what one plain
 * process gives (libc_ref, built with cc). Ranks use seeds 42, 43, 44 by rank modulo 3
 * for everything but rand().
 *
 * With shared=FAMILIES (rand, drand48, strtok, time, strerror, strsignal, inet_ntoa,
 * tmpnam, '+'-separated, or all), those functions are libc's own definitions (looked up in
 * libc.so.6, bypassing Skein): their state is process-wide, so with two ranks or more on
 * one worker the results must differ from one process (expected: exit 1 and "MISMATCH"
 * lines). This shows that the comparison catches each family.
 */
#define _GNU_SOURCE
#define TEST_NAME "libc_state"
#include "mpitest.h"
#include "libc_cmp.h"

int main(int argc, char **argv)
{
    int rank;
    const char *shared = argc > 1 && strncmp(argv[1], "shared=", 7) == 0 ? argv[1] + 7 : NULL;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    /* The environment is per process, shared by the ranks of a process: each rank in turn
     * sets it if its process has not yet (one rank at a time: setenv against another
     * rank's getenv is a data race, which TSan reported with 2 processes). */
    int size;
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    for (int turn = 0; turn < size; turn++) {
        if (turn == rank) {
            const char *tz = getenv("TZ");
            if (!tz || strcmp(tz, LIBC_SEQ_TZ) != 0) setenv("TZ", LIBC_SEQ_TZ, 1);
        }
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }

    const unsigned seed = 42 + (unsigned)rank % 3;
    char args[32];
    snprintf(args, sizeof args, "seq %u", seed);
    libc_cmp m = {.rank = rank, .barrier_every = 16};
    m.ref = m.pos = libc_ref_output(args);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

    libc_fns f = shared ? libc_fns_shared(shared) : libc_fns_direct();
    libc_sink k = {libc_cmp_emit, libc_cmp_between, &m};
    libc_seq_run(&f, seed, &k);
    return libc_cmp_finish(&m, shared, TEST_NAME);
}
