/* Shared file pointer: write_shared (every record exactly once), write_ordered and
 * read_ordered (rank order), read_shared, seek_shared, get_position_shared, and the
 * split-collective ordered variants. */
#define TEST_NAME "io_shared"
#include "mpitest.h"
#include "io_util.h"

#define R 5 /* ints per record */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char path[512];
    io_path(path, sizeof path, "s");
    MPI_File fh;
    IO_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh));
    MPI_Datatype rec;
    MPI_Type_contiguous(R, MPI_INT, &rec);
    MPI_Type_commit(&rec);
    IO_CHECK(MPI_File_set_view(fh, 0, rec, rec, "native", MPI_INFO_NULL));
    int mine[2 * R];
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < R; i++) mine[k * R + i] = (rank * 2 + k) * 100 + i;
    /* two records each, in any order */
    MPI_Status st;
    IO_CHECK(MPI_File_write_shared(fh, mine, 1, rec, &st));
    IO_CHECK(MPI_File_write_shared(fh, mine + R, R, MPI_INT, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Offset pos;
    IO_CHECK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == 2 * size, "shared position (expected %d got %lld)", 2 * size, (long long)pos);
    MPI_Barrier(MPI_COMM_WORLD);
    int n = 2 * size, *all = malloc(n * R * sizeof(int)), *seen = calloc(n, sizeof(int));
    IO_CHECK(MPI_File_read_at(fh, 0, all, n, rec, &st));
    for (int j = 0; j < n; j++) {
        int id = all[j * R] / 100;
        CHECK(id >= 0 && id < n && !seen[id], "record %d holds id %d once", j, id);
        seen[id] = 1;
        for (int i = 0; i < R; i++) CHECK(all[j * R + i] == id * 100 + i, "record %d int %d", j, i);
    }
    /* read_shared: the records again, each read by exactly one rank */
    IO_CHECK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    int got[2 * R], cnt;
    IO_CHECK(MPI_File_read_shared(fh, got, 2, rec, &st));
    MPI_Get_count(&st, rec, &cnt);
    CHECK(cnt == 2, "read_shared count (got %d)", cnt);
    int ids[2] = {got[0] / 100, got[R] / 100}, allids[2 * 1024];
    MPI_Allgather(ids, 2, MPI_INT, allids, 2, MPI_INT, MPI_COMM_WORLD);
    memset(seen, 0, n * sizeof(int));
    for (int j = 0; j < n; j++) {
        CHECK(allids[j] >= 0 && allids[j] < n && !seen[allids[j]], "read_shared: record %d read once", allids[j]);
        seen[allids[j]] = 1;
    }
    /* ordered: rank order after what is there (the shared pointer is at the end) */
    IO_CHECK(MPI_File_seek_shared(fh, 0, MPI_SEEK_END));
    IO_CHECK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == n, "seek_shared end (expected %d got %lld)", n, (long long)pos);
    int cnt_r = rank % 3; /* ranks write 0, 1 or 2 records */
    for (int i = 0; i < 2 * R; i++) mine[i] = -(rank * 1000 + i);
    IO_CHECK(MPI_File_write_ordered(fh, mine, cnt_r, rec, &st));
    MPI_Get_count(&st, rec, &cnt);
    CHECK(cnt == cnt_r, "write_ordered count");
    IO_CHECK(MPI_File_seek_shared(fh, n, MPI_SEEK_SET));
    int back[2 * R];
    IO_CHECK(MPI_File_read_ordered(fh, back, cnt_r, rec, &st));
    for (int i = 0; i < cnt_r * R; i++) CHECK(back[i] == mine[i], "read_ordered int %d (expected %d got %d)", i, mine[i], back[i]);
    int before = 0;
    for (int r = 0; r < rank; r++) before += r % 3;
    IO_CHECK(MPI_File_read_at(fh, n + before, back, cnt_r, rec, &st));
    for (int i = 0; i < cnt_r * R; i++) CHECK(back[i] == mine[i], "ordered placement int %d", i);
    /* split ordered */
    IO_CHECK(MPI_File_write_ordered_begin(fh, mine, cnt_r, rec));
    IO_CHECK(MPI_File_write_ordered_end(fh, mine, &st));
    MPI_Get_count(&st, rec, &cnt);
    CHECK(cnt == cnt_r, "write_ordered_end count (got %d)", cnt);
    int total = 0;
    for (int r = 0; r < size; r++) total += r % 3;
    IO_CHECK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == n + 2 * total, "shared position after ordered (expected %d got %lld)", n + 2 * total, (long long)pos);
    IO_CHECK(MPI_File_seek_shared(fh, n + total, MPI_SEEK_SET));
    memset(back, 0, sizeof back);
    IO_CHECK(MPI_File_read_ordered_begin(fh, back, cnt_r, rec));
    IO_CHECK(MPI_File_read_ordered_end(fh, back, &st));
    for (int i = 0; i < cnt_r * R; i++) CHECK(back[i] == mine[i], "split read_ordered int %d", i);
    IO_CHECK(MPI_File_close(&fh));
    MPI_Type_free(&rec);

    /* MPI_MODE_SEQUENTIAL: shared pointer only */
    io_path(path, sizeof path, "q");
    IO_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL |
                           MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    IO_CHECK(MPI_File_write_ordered(fh, &rank, 1, MPI_INT, &st));
    IO_CHECK(MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    IO_CHECK(MPI_File_write_ordered(fh, &rank, 1, MPI_INT, &st));
    MPI_Offset fsize;
    IO_CHECK(MPI_File_get_size(fh, &fsize));
    CHECK(fsize == 8 * size, "sequential file size (expected %d got %lld)", 8 * size, (long long)fsize);
    IO_CHECK(MPI_File_close(&fh));
    free(all);
    free(seen);
    MPI_Finalize();
    if (rank == 0) printf("PASS %s\n", TEST_NAME);
    return 0;
}
