/* io_util.h - helpers shared by the MPI-IO tests (tests/mpi/io_*.c). */
#ifndef SKEIN_TESTS_IO_UTIL_H
#define SKEIN_TESTS_IO_UTIL_H

#include <unistd.h>

/* A scratch file name every rank agrees on: $TMPDIR (or /tmp), the test's name, rank 0's
 * process id and a tag. */
static inline void io_path(char *out, size_t n, const char *tag)
{
    int rank;
    long pid = (long)getpid();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    const char *dir = getenv("TMPDIR");
    snprintf(out, n, "%s/skein-%s-%ld-%s", dir && *dir ? dir : "/tmp", TEST_NAME, pid, tag);
}

#define IO_CHECK(call)                                                       \
    do {                                                                     \
        int io_rc_ = (call);                                                 \
        if (io_rc_ != MPI_SUCCESS)                                           \
            mt_fail_rc(__FILE__, __LINE__, #call, io_rc_);                   \
    } while (0)

/* Expects an error of class cls. */
#define IO_EXPECT(call, cls)                                                 \
    do {                                                                     \
        int io_rc_ = (call), io_cls_ = -1;                                   \
        MPI_Error_class(io_rc_, &io_cls_);                                   \
        if (io_cls_ != (cls))                                                \
            FAIL("%s: error class (expected %s=%d got %d)", #call, #cls, (cls), io_cls_); \
    } while (0)

#endif
