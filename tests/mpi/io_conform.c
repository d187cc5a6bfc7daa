/* MPI-IO cases an outside conformance suite found (issue 33):
 *  - every rank writes its rank with MPI_File_write_ordered, a barrier, MPI_File_seek(0),
 *    then every rank reads the whole file with MPI_File_read_all: all members read the
 *    same bytes, so the aggregator's ranges overlap completely (and, with a second, shifted
 *    pass, partly); each rank must see 0..size-1;
 *  - a failing MPI_File_open (a missing file, MPI_MODE_EXCL on an existing one) calls the
 *    user error handler set on MPI_FILE_NULL, with MPI_FILE_NULL and the error's code, and
 *    returns the code the handler leaves: a handler that sets MPI_SUCCESS (freed right
 *    after it was set, as MPICH's fileerrret does) makes MPI_File_open return MPI_SUCCESS,
 *    as under MPICH. */
#define TEST_NAME "io_conform"
#include "mpitest.h"
#include "io_util.h"

SKEIN_SHARED static int calls[4096]; /* indexed by rank: ranks may be threads of one process */
SKEIN_SHARED static int last_class[4096];
SKEIN_SHARED static int last_fh_null[4096];

static void on_error(MPI_File *fh, int *code, ...)
{
    int r, cls = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Error_class(*code, &cls);
    calls[r % 4096]++;
    last_class[r % 4096] = cls;
    last_fh_null[r % 4096] = *fh == MPI_FILE_NULL;
}

static void to_success(MPI_File *fh, int *code, ...)
{
    (void)fh;
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    calls[r % 4096]++;
    *code = MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char path[512];
    io_path(path, sizeof path, "ord");

    /* ---- write_ordered, barrier, seek(0), read_all */
    MPI_File fh;
    IO_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    int mine = rank;
    MPI_Status st;
    IO_CHECK(MPI_File_write_ordered(fh, &mine, 1, MPI_INT, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    IO_CHECK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    int *all = malloc(sizeof(int) * (size_t)size * 2);
    CHECK(all != NULL, "malloc");
    for (int i = 0; i < size; i++) all[i] = -1;
    IO_CHECK(MPI_File_read_all(fh, all, size, MPI_INT, &st));
    int got = -1;
    MPI_Get_count(&st, MPI_INT, &got);
    CHECK(got == size, "read_all count (expected %d got %d)", size, got);
    for (int i = 0; i < size; i++)
        CHECK(all[i] == i, "read_all of the whole file: element %d (expected %d got %d)", i, i, all[i]);

    /* partly overlapping: rank r reads from element r/2 to the end (explicit offsets),
     * through a derived (non-contiguous) memory type on odd ranks */
    int from = rank / 2, n = size - from;
    for (int i = 0; i < 2 * size; i++) all[i] = -1;
    if (rank % 2) {
        MPI_Datatype every_other;
        MPI_CHECK(MPI_Type_vector(n, 1, 2, MPI_INT, &every_other));
        MPI_CHECK(MPI_Type_commit(&every_other));
        IO_CHECK(MPI_File_read_at_all(fh, (MPI_Offset)from * (MPI_Offset)sizeof(int), all, 1, every_other, &st));
        MPI_Type_free(&every_other);
        for (int i = 0; i < n; i++)
            CHECK(all[2 * i] == from + i, "read_at_all (vector) element %d (expected %d got %d)", i, from + i,
                  all[2 * i]);
    } else {
        IO_CHECK(MPI_File_read_at_all(fh, (MPI_Offset)from * (MPI_Offset)sizeof(int), all, n, MPI_INT, &st));
        for (int i = 0; i < n; i++)
            CHECK(all[i] == from + i, "read_at_all element %d (expected %d got %d)", i, from + i, all[i]);
    }
    /* reading past the end: the overlapping reads all get the file's data (ROMIO's status
     * then counts what was asked for, so the count is not checked) */
    for (int i = 0; i < 2 * size; i++) all[i] = -1;
    IO_CHECK(MPI_File_read_at_all(fh, 0, all, 2 * size, MPI_INT, &st));
    for (int i = 0; i < size; i++)
        CHECK(all[i] == i, "read_at_all past the end: element %d (expected %d got %d)", i, i, all[i]);
    free(all);
    IO_CHECK(MPI_File_close(&fh));

    /* ---- a failing open calls MPI_FILE_NULL's handler */
    MPI_Errhandler eh;
    IO_CHECK(MPI_File_create_errhandler(on_error, &eh));
    IO_CHECK(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
    MPI_File again = MPI_FILE_NULL;
    char missing[600];
    snprintf(missing, sizeof missing, "%s.missing", path);
    int rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &again);
    CHECK(rc != MPI_SUCCESS, "opening a missing file succeeded");
    CHECK(calls[rank % 4096] == 1, "MPI_FILE_NULL's handler after a failed open of a missing file "
          "(expected 1 call got %d)", calls[rank % 4096]);
    CHECK(last_class[rank % 4096] == MPI_ERR_NO_SUCH_FILE, "class passed to the handler (expected %d got %d)",
          MPI_ERR_NO_SUCH_FILE, last_class[rank % 4096]);
    CHECK(last_fh_null[rank % 4096], "the handler's file is MPI_FILE_NULL");
    CHECK(again == MPI_FILE_NULL, "a failed open leaves MPI_FILE_NULL");
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY, MPI_INFO_NULL, &again);
    CHECK(rc != MPI_SUCCESS, "MPI_MODE_EXCL on an existing file succeeded");
    CHECK(calls[rank % 4096] == 2, "MPI_FILE_NULL's handler after MPI_MODE_EXCL on an existing file "
          "(expected 2 calls got %d)", calls[rank % 4096]);
    MPI_Errhandler_free(&eh);
    /* the handler's code is what the call returns */
    IO_CHECK(MPI_File_create_errhandler(to_success, &eh));
    IO_CHECK(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
    IO_CHECK(MPI_Errhandler_free(&eh));
    rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDWR, MPI_INFO_NULL, &again);
    CHECK(calls[rank % 4096] == 3, "MPI_FILE_NULL's (freed) handler after a failed open (expected 3 calls got %d)",
          calls[rank % 4096]);
    CHECK(rc == MPI_SUCCESS, "MPI_File_open returns the code its handler left (expected MPI_SUCCESS got %d)", rc);
    IO_CHECK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDWR, MPI_INFO_NULL, &again);
    CHECK(rc != MPI_SUCCESS, "with MPI_ERRORS_RETURN again, the failed open returns its error");

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) IO_CHECK(MPI_File_delete(path, MPI_INFO_NULL));
    MPI_Finalize();
    if (rank == 0) printf("PASS %s\n", TEST_NAME);
    return 0;
}
