/*
 * libc_ref.c - reference for the per-rank libc state tests: one plain process (built
 * with the host's cc, not mpicc, and not linked with Skein) runs the sequences of
 * libc_seq.h and prints one "<what> <value>" line per result.
 *
 *   libc_ref seq SEED        random/drand48/strtok/time/static-buffer sequence
 *   libc_ref getopt ARGS...  the getopt parses of ARGS (argv[0] is "libc_ref")
 */
#define _GNU_SOURCE
#include "libc_seq.h"

static void print_line(void *ctx, const char *what, long v)
{
    fprintf((FILE *)ctx, "%s %ld\n", what, v);
}

static void nothing(void *ctx) { (void)ctx; }

int main(int argc, char **argv)
{
    setenv("TZ", LIBC_SEQ_TZ, 1);
    libc_fns f = libc_fns_direct();
    libc_sink k = {print_line, nothing, stdout};
    if (argc == 3 && strcmp(argv[1], "seq") == 0) {
        libc_seq_run(&f, (unsigned)strtoul(argv[2], NULL, 10), &k);
    } else if (argc >= 2 && strcmp(argv[1], "getopt") == 0) {
        argv[1] = argv[0]; /* parse ARGS with a program name in front */
        opterr = 0;         /* the MPI test's error messages would differ only by name */
        getopt_seq_run(&f, argc - 1, argv + 1, &k, 1);
    } else {
        fprintf(stderr, "usage: libc_ref seq SEED | libc_ref getopt ARGS...\n");
        return 2;
    }
    return fflush(stdout) == 0 ? 0 : 1;
}
