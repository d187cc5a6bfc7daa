/*
 * libc_getopt_posix.c - getopt in a program built for strict POSIX (glibc binds its
 * getopt calls to __posix_getopt: no argument permutation) is per rank too.
 *
 * Usage: libc_getopt_posix -a -v file -b x
 *
 * Every rank parses its argv, switching to other ranks between calls: it must see -a and
 * -v, stop at the first operand ("file", optind 3) and leave argv unpermuted. With
 * libc's own getopt shared by the ranks, the options would be spread over the ranks.
 */
#define _POSIX_C_SOURCE 200809L /* and not _GNU_SOURCE: getopt is __posix_getopt */
#define TEST_NAME "libc_getopt_posix"
#include "mpitest.h"
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    int size; /* opterr is one per process: ranks set it in turn (at once they race) */
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    for (int turn = 0; turn < size; turn++) {
        if (turn == rank) opterr = 0;
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }
    char seen[16];
    int n = 0, c;
    while ((c = getopt(argc, argv, "avb:")) != -1) {
        if (n < 15) seen[n++] = (char)c;
        int flag; /* a probe that finds nothing: switches to other ranks under Skein */
        MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MT_NEVER_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    }
    int end = optind; /* at once: on several workers another rank may parse next */
    seen[n] = '\0';
    CHECK(strcmp(seen, "av") == 0, "rank %d: options seen (expected \"av\" got \"%s\")", rank, seen);
    CHECK(end == 3, "rank %d: optind after -1 (expected 3 got %d)", rank, end);
    CHECK(argc == 6 && strcmp(argv[3], "file") == 0 && strcmp(argv[4], "-b") == 0,
          "rank %d: argv was permuted (argv[3] = %s)", rank, argc > 3 ? argv[3] : "?");
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Finalize());
    if (rank == 0) printf("PASS %s\n", TEST_NAME);
    return 0;
}
