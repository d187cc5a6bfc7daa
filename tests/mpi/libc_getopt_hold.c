/*
 * libc_getopt_hold.c - a rank that stops calling getopt before it returns -1 keeps
 * getopt's parser (optind & co. are one per process) until it ends; the other ranks'
 * getopt calls wait for it.
 *
 * Usage: libc_getopt_hold end|deadlock|after -a -b x file
 *
 *   end       rank 0 takes one option, then finalizes and returns from main without
 *             finishing its parse; the other ranks, after MPI_Finalize, parse the whole
 *             argv once rank 0 has ended. The last rank prints PASS.
 *   deadlock  rank 0 takes one option, then waits in MPI_Barrier for ranks that wait in
 *             getopt: the runtime must report it (expected: "blocked in getopt").
 *   after     every rank parses (odd ranks only -a and file, ending at optind 2, even
 *             ranks all, at 4), then keeps reading optind for 100 ms without calling MPI:
 *             a rank keeps the parser after -1 until its next MPI call, so optind stays
 *             its own however long that takes (on several workers another rank's parse
 *             would otherwise change it meanwhile).
 */
#define _GNU_SOURCE
#define TEST_NAME "libc_getopt_hold"
#include "mpitest.h"
#include <getopt.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int rank, size;
    if (argc < 2) FAIL("usage: libc_getopt_hold end|deadlock ARGS...");
    const int deadlock = strcmp(argv[1], "deadlock") == 0, after = strcmp(argv[1], "after") == 0;
    MPI_CHECK(MPI_Init(&argc, &argv));
    /* parse the rest with a program name in front (a new array: argv is the runtime's) */
    char **args = calloc((size_t)argc, sizeof *args);
    if (!args) FAIL("out of memory");
    args[0] = argv[0];
    for (int i = 2; i < argc; i++) args[i - 1] = argv[i];
    argc--;
    argv = args;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    if (after) {
        /* odd ranks parse a shorter argv: another rank's finished parse leaves its own optind */
        char *odd[] = {argv[0], argv[1], argv[argc - 1], NULL};
        char **av = rank % 2 ? odd : argv;
        const int ac = rank % 2 ? 3 : argc, want_n = rank % 2 ? 1 : 2, want_end = rank % 2 ? 2 : 4;
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* parse at about the same time */
        int c, n = 0;
        while ((c = getopt(ac, av, "ab:")) != -1) n++;
        CHECK(n == want_n, "%d options (expected %d)", n, want_n);
        double t0 = now_s();
        long reads = 0;
        do { /* no MPI call: the parse's hold lasts */
            int end = *(volatile int *)&optind;
            CHECK(end == want_end, "optind %d after %ld reads, %.1f ms after its parse (expected %d)", end, reads,
                  (now_s() - t0) * 1e3, want_end);
            reads++;
        } while (now_s() - t0 < 0.1);
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* ends the hold: the next rank parses */
        MPI_CHECK(MPI_Finalize());
        if (rank == 0) printf("PASS %s\n", TEST_NAME);
        free(args);
        return 0;
    }
    if (rank == 0) {
        int c = getopt(argc, argv, "ab:");
        CHECK(c == 'a', "rank 0's first option (expected 'a' got %d)", c);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* rank 0 holds the parser from here on */
    if (deadlock && rank != 0) {
        int c;
        while ((c = getopt(argc, argv, "ab:")) != -1) continue;
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Finalize());
    if (rank == 0) { /* its parse never reached -1 */
        free(args);
        return 0;
    }
    int c, seen_a = 0, seen_b = 0;
    while ((c = getopt(argc, argv, "ab:")) != -1) {
        if (c == 'a') seen_a++;
        else if (c == 'b' && strcmp(optarg, "x") == 0) seen_b++;
        else FAIL("rank %d: unexpected option %d", rank, c);
    }
    int end = optind; /* read at once: another worker's rank may parse next */
    if (seen_a != 1 || seen_b != 1 || end != 4 || strcmp(argv[end], "file") != 0)
        FAIL("rank %d: -a %d times, -b x %d times, optind %d (expected 1, 1, 4)", rank, seen_a, seen_b, end);
    if (rank == size - 1) printf("PASS %s\n", TEST_NAME);
    free(args);
    return 0;
}
