/* MPI-IO error classes through the file error handlers: MPI_FILE_NULL's default
 * MPI_ERRORS_RETURN, File_set/get/call_errhandler, and MPI_ERR_NO_SUCH_FILE (missing
 * file and missing directory), FILE_EXISTS, AMODE, ACCESS, READ_ONLY, NO_SPACE
 * (/dev/full, and a full tmpfs when the test may mount one), UNSUPPORTED_OPERATION,
 * UNSUPPORTED_DATAREP, FILE, ARG, COUNT, TYPE, BAD_FILE, DUP_DATAREP; errors of the
 * calls with no file handle (open, delete, close(NULL), Register_datarep) go to
 * MPI_FILE_NULL's handler. */
#define _GNU_SOURCE
#define TEST_NAME "io_errors"
#include "mpitest.h"
#include "io_util.h"
#include <errno.h>
#include <sys/mount.h>
#include <sys/stat.h>

SKEIN_SHARED static int user_calls[4096]; /* indexed by rank: ranks may be threads of one process */
static void on_error(MPI_File *fh, int *code, ...)
{
    (void)fh; (void)code;
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    user_calls[r % 4096]++;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Errhandler eh;
    IO_CHECK(MPI_File_get_errhandler(MPI_FILE_NULL, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "MPI_FILE_NULL's default handler is MPI_ERRORS_RETURN");
    char path[512], dir[512], missing[600];
    io_path(path, sizeof path, "e");
    io_path(dir, sizeof dir, "nodir");
    snprintf(missing, sizeof missing, "%s/file", dir);
    MPI_File fh = MPI_FILE_NULL;
    IO_EXPECT(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), MPI_ERR_NO_SUCH_FILE);
    IO_EXPECT(MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh),
              MPI_ERR_NO_SUCH_FILE);
    IO_EXPECT(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh), MPI_ERR_AMODE);
    IO_EXPECT(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh), MPI_ERR_AMODE);
    IO_EXPECT(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL, &fh),
              MPI_ERR_AMODE);
    IO_EXPECT(MPI_File_open(MPI_COMM_WORLD, "/", MPI_MODE_RDWR, MPI_INFO_NULL, &fh), MPI_ERR_BAD_FILE);
    CHECK(fh == MPI_FILE_NULL, "failed opens leave MPI_FILE_NULL");
    IO_EXPECT(MPI_File_delete(path, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE);
    IO_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_File again;
    IO_EXPECT(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR, MPI_INFO_NULL, &again),
              MPI_ERR_FILE_EXISTS);
    int x[4] = {1, 2, 3, 4};
    MPI_Status st;
    IO_EXPECT(MPI_File_write_at(fh, -1, x, 4, MPI_INT, &st), MPI_ERR_ARG);
    IO_EXPECT(MPI_File_write_at(fh, 0, x, -1, MPI_INT, &st), MPI_ERR_COUNT);
    IO_EXPECT(MPI_File_write_at(fh, 0, x, 1, MPI_DATATYPE_NULL, &st), MPI_ERR_TYPE);
    IO_EXPECT(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "bogus", MPI_INFO_NULL), MPI_ERR_UNSUPPORTED_DATAREP);
    IO_EXPECT(MPI_File_seek(fh, -5, MPI_SEEK_SET), MPI_ERR_ARG);
    IO_EXPECT(MPI_File_write_at(MPI_FILE_NULL, 0, x, 1, MPI_INT, &st), MPI_ERR_FILE);
    /* a file's own handler: user function, then call_errhandler */
    MPI_Errhandler mine;
    IO_CHECK(MPI_File_create_errhandler(on_error, &mine));
    IO_CHECK(MPI_File_set_errhandler(fh, mine));
    IO_CHECK(MPI_File_get_errhandler(fh, &eh));
    CHECK(eh == mine, "File_get_errhandler");
    IO_EXPECT(MPI_File_read_at(fh, -1, x, 1, MPI_INT, &st), MPI_ERR_ARG);
    IO_CHECK(MPI_File_call_errhandler(fh, MPI_ERR_IO));
    CHECK(user_calls[rank % 4096] == 2, "the user handler ran twice (%d calls)", user_calls[rank % 4096]);
    /* the calls with no file handle report through MPI_FILE_NULL's handler (MPI_COMM_WORLD's
     * is MPI_ERRORS_ARE_FATAL: an error sent there would end the job); set_view's through
     * the file's */
    IO_CHECK(MPI_File_set_errhandler(MPI_FILE_NULL, mine));
    IO_EXPECT(MPI_File_open(MPI_COMM_NULL, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &again), MPI_ERR_COMM);
    IO_EXPECT(MPI_File_open(MPI_COMM_WORLD, NULL, MPI_MODE_RDONLY, MPI_INFO_NULL, &again), MPI_ERR_ARG);
    IO_EXPECT(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, (MPI_Info)12345, &again), MPI_ERR_INFO);
    IO_EXPECT(MPI_File_delete(NULL, MPI_INFO_NULL), MPI_ERR_ARG);
    IO_EXPECT(MPI_File_delete(path, (MPI_Info)12345), MPI_ERR_INFO);
    IO_EXPECT(MPI_File_close(NULL), MPI_ERR_ARG);
    IO_EXPECT(MPI_Register_datarep("skein-x", NULL, NULL, NULL, NULL), MPI_ERR_ARG);
    CHECK(user_calls[rank % 4096] == 9, "MPI_FILE_NULL's user handler ran 7 times (%d calls in all)",
          user_calls[rank % 4096]);
    IO_EXPECT(MPI_File_set_view(fh, 0, MPI_DATATYPE_NULL, MPI_INT, "native", MPI_INFO_NULL), MPI_ERR_TYPE);
    IO_EXPECT(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, NULL, MPI_INFO_NULL), MPI_ERR_ARG);
    CHECK(user_calls[rank % 4096] == 11, "the file's user handler saw set_view's errors (%d calls in all)",
          user_calls[rank % 4096]);
    IO_CHECK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    MPI_Errhandler_free(&mine);
    IO_CHECK(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    IO_CHECK(MPI_File_close(&fh));
    /* read-only handle, write-only handle */
    IO_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    IO_EXPECT(MPI_File_write_at(fh, 0, x, 4, MPI_INT, &st), MPI_ERR_READ_ONLY);
    IO_EXPECT(MPI_File_set_size(fh, 10), MPI_ERR_READ_ONLY);
    IO_CHECK(MPI_File_close(&fh));
    IO_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL, &fh));
    IO_EXPECT(MPI_File_read_shared(fh, x, 4, MPI_INT, &st), MPI_ERR_ACCESS);
    IO_EXPECT(MPI_File_write_at(fh, 0, x, 4, MPI_INT, &st), MPI_ERR_UNSUPPORTED_OPERATION);
    IO_CHECK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    /* permissions (root reads and writes anything: then the check is skipped) */
    if (rank == 0) chmod(path, 0444);
    MPI_Barrier(MPI_COMM_WORLD);
    if (geteuid() != 0)
        IO_EXPECT(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh), MPI_ERR_ACCESS);
    else if (rank == 0)
        printf("io_errors: MPI_ERR_ACCESS on a 0444 file skipped: running as root\n");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) IO_CHECK(MPI_File_delete(path, MPI_INFO_NULL));
    /* a full device: /dev/full takes no byte */
    IO_CHECK(MPI_File_open(MPI_COMM_SELF, "/dev/full", MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    IO_EXPECT(MPI_File_write(fh, x, 4, MPI_INT, &st), MPI_ERR_NO_SPACE);
    MPI_Request rq;
    IO_CHECK(MPI_File_iwrite(fh, x, 4, MPI_INT, &rq));
    IO_EXPECT(MPI_Wait(&rq, &st), MPI_ERR_NO_SPACE);
    IO_CHECK(MPI_File_close(&fh));
    /* a full file system: a 64 KiB tmpfs, when we may mount one */
    int mounted = 0;
    char mnt[512];
    io_path(mnt, sizeof mnt, "tmpfs");
    if (rank == 0 && mkdir(mnt, 0700) == 0) {
        if (mount("skein-io-test", mnt, "tmpfs", 0, "size=64k") == 0) mounted = 1;
        else { printf("io_errors: full file system test skipped: cannot mount a tmpfs (%s)\n", strerror(errno)); rmdir(mnt); }
    }
    MPI_Bcast(&mounted, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (mounted) {
        char big[600];
        snprintf(big, sizeof big, "%s/full", mnt);
        IO_CHECK(MPI_File_open(MPI_COMM_WORLD, big, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
        size_t n = 1 << 20;
        char *data = malloc(n);
        memset(data, 1, n);
        IO_EXPECT(MPI_File_write_at_all(fh, (MPI_Offset)rank * n, data, (int)n, MPI_BYTE, &st), MPI_ERR_NO_SPACE);
        IO_EXPECT(MPI_File_write_at(fh, (MPI_Offset)rank * n, data, (int)n, MPI_BYTE, &st), MPI_ERR_NO_SPACE);
        IO_CHECK(MPI_File_close(&fh));
        free(data);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            umount(mnt);
            rmdir(mnt);
        }
    }
    /* MPI_ERR_QUOTA needs a file system with quotas, MPI_ERR_IO a failing device: not
     * made here */
    MPI_Finalize();
    if (rank == 0) printf("PASS %s\n", TEST_NAME);
    return 0;
}
