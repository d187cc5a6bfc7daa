/*
 * libc_getopt.c - every rank parses its argv with getopt_long, getopt (after
 * optind = 0) and getopt_long_only (after optind = 1) and sees every option, as one
 * plain process does (libc_ref getopt ARGS, built with cc).
 *
 * Usage: libc_getopt [shared=getopt] ARGS...
 *
 * Ranks yield to each other between getopt calls, so every rank starts its parse (or
 * resets optind for the next one) while others are in the middle of theirs. Compared per
 * option: the result, optarg, optopt, the long option index, optind, then the flag set
 * through `struct option`, the permuted argv, optind after -1, and one more call after
 * -1 (which returns -1 again). With several workers the program's own reads of optind
 * are not compared and the extra call is not made: optind is one variable of the process,
 * and another worker's rank may be parsing, or assigning optind = 0 to start a parse,
 * at that moment (see docs/user-guide.md, "Per-rank libc state").
 *
 * With shared=getopt as the first argument, libc's own getopt functions are called, bypassing
 * Skein: expected to differ from one process (exit 1, "MISMATCH" lines) with two ranks
 * or more on one worker.
 */
#define _GNU_SOURCE
#define TEST_NAME "libc_getopt"
#include "mpitest.h"
#include "libc_cmp.h"

int main(int argc, char **argv)
{
    int rank;
    const char *shared = argc > 1 && strncmp(argv[1], "shared=", 7) == 0 ? argv[1] + 7 : NULL;
    MPI_CHECK(MPI_Init(&argc, &argv));
    char **av = calloc((size_t)argc + 1, sizeof *av); /* argv is the runtime's: no aliasing */
    if (!av) FAIL("out of memory");
    av[0] = argv[0];
    for (int i = 1 + (shared != NULL), j = 1; i < argc; i++, j++) av[j] = argv[i];
    if (shared) argc--;
    argv = av;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    /* no messages on stderr. opterr is one per process: ranks set it in turn (written at
     * once by ranks on several workers, it is a data race, which TSan reported) */
    int size;
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    for (int turn = 0; turn < size; turn++) {
        if (turn == rank) opterr = 0;
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }
    const char *w = getenv("SKEIN_WORKERS");
    const int one_worker = !w || atoi(w) <= 1;

    char args[4096] = "getopt";
    for (int i = 1; i < argc; i++) {
        size_t n = strlen(args);
        snprintf(args + n, sizeof args - n, " '%s'", argv[i]);
    }
    libc_cmp m = {.rank = rank, .skip_optind = !one_worker};
    m.ref = m.pos = libc_ref_output(args);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

    libc_fns f = shared ? libc_fns_shared(shared) : libc_fns_direct();
    libc_sink k = {libc_cmp_emit, libc_cmp_between, &m};
    getopt_seq_run(&f, argc, argv, &k, one_worker);
    int rc = libc_cmp_finish(&m, shared, TEST_NAME);
    free(av);
    return rc;
}
