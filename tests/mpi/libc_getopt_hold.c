/*
 * libc_getopt_hold.c - a rank that stops calling getopt before it returns -1 keeps
 * getopt's parser (optind & co. are one per process) until it ends; the other ranks'
 * getopt calls wait for it.
 *
 * Usage: libc_getopt_hold end|deadlock -a -b x file
 *
 *   end       rank 0 takes one option, then finalizes and returns from main without
 *             finishing its parse; the other ranks, after MPI_Finalize, parse the whole
 *             argv once rank 0 has ended. The last rank prints PASS.
 *   deadlock  rank 0 takes one option, then waits in MPI_Barrier for ranks that wait in
 *             getopt: the runtime must report it (expected: "blocked in getopt").
 */
#define _GNU_SOURCE
#define TEST_NAME "libc_getopt_hold"
#include "mpitest.h"
#include <getopt.h>

int main(int argc, char **argv)
{
    int rank, size;
    if (argc < 2) FAIL("usage: libc_getopt_hold end|deadlock ARGS...");
    const int deadlock = strcmp(argv[1], "deadlock") == 0;
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
