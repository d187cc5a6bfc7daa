/* MPI-IO file manipulation, views and pointers: explicit offsets and individual file
 * pointers with contiguous and derived memory and file types, seek/position/byte
 * offset, size, preallocate, info, group, amode, atomicity, DELETE_ON_CLOSE. */
#define TEST_NAME "io_basic"
#include "mpitest.h"
#include "io_util.h"

#define N 1000 /* ints per rank, explicit offsets */
#define B 7    /* ints per filetype block */
#define K 13   /* blocks per rank */

static int val(int r, int i) { return r * 1000003 + i * 7 + 1; }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char path[512];
    io_path(path, sizeof path, "f");
    MPI_File fh;
    IO_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh));
    int amode;
    IO_CHECK(MPI_File_get_amode(fh, &amode));
    CHECK(amode == (MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE), "amode (got %#x)", amode);
    MPI_Group g, wg;
    int cmp;
    IO_CHECK(MPI_File_get_group(fh, &g));
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_compare(g, wg, &cmp);
    CHECK(cmp == MPI_IDENT, "file group is the communicator's (got %d)", cmp);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);

    /* explicit offsets, contiguous */
    int *buf = malloc(N * sizeof(int)), *rd = malloc(N * sizeof(int));
    for (int i = 0; i < N; i++) buf[i] = val(rank, i);
    MPI_Status st;
    IO_CHECK(MPI_File_write_at(fh, (MPI_Offset)rank * N * 4, buf, N, MPI_INT, &st));
    int cnt;
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == N, "write_at count (expected %d got %d)", N, cnt);
    IO_CHECK(MPI_File_sync(fh)); /* the standard's sync-barrier-sync before reading others' data */
    MPI_Barrier(MPI_COMM_WORLD);
    IO_CHECK(MPI_File_sync(fh));
    int peer = (rank + 1) % size;
    IO_CHECK(MPI_File_read_at(fh, (MPI_Offset)peer * N * 4, rd, N, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == N, "read_at count (expected %d got %d)", N, cnt);
    for (int i = 0; i < N; i++) CHECK(rd[i] == val(peer, i), "read_at [%d] (expected %d got %d)", i, val(peer, i), rd[i]);
    MPI_Offset fsize;
    IO_CHECK(MPI_File_get_size(fh, &fsize));
    CHECK(fsize == (MPI_Offset)size * N * 4, "size (expected %lld got %lld)", (long long)size * N * 4, (long long)fsize);
    /* reading past the end returns what there is */
    IO_CHECK(MPI_File_read_at(fh, fsize - 8, rd, 10, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == 2, "read at end of file (expected 2 got %d)", cnt);
    IO_CHECK(MPI_File_read_at_all(fh, (MPI_Offset)peer * N * 4, rd, N, MPI_INT, &st));
    for (int i = 0; i < N; i++) CHECK(rd[i] == val(peer, i), "read_at_all [%d]", i);

    /* a view where each rank owns every size-th block of B ints */
    MPI_Datatype blk, ftype;
    int disp = rank * B;
    MPI_Type_create_indexed_block(1, B, &disp, MPI_INT, &blk);
    MPI_Type_create_resized(blk, 0, (MPI_Aint)size * B * 4, &ftype);
    MPI_Type_commit(&ftype);
    MPI_Type_free(&blk);
    IO_CHECK(MPI_File_set_size(fh, 0));
    IO_CHECK(MPI_File_set_view(fh, 16, MPI_INT, ftype, "native", MPI_INFO_NULL));
    MPI_Type_free(&ftype); /* the view keeps its own */
    for (int i = 0; i < K * B; i++) buf[i] = val(rank, i);
    IO_CHECK(MPI_File_write_all(fh, buf, K * B, MPI_INT, &st));
    MPI_Offset pos, boff;
    IO_CHECK(MPI_File_get_position(fh, &pos));
    CHECK(pos == K * B, "position after write_all (expected %d got %lld)", K * B, (long long)pos);
    IO_CHECK(MPI_File_get_byte_offset(fh, pos, &boff));
    MPI_Offset want = 16 + (MPI_Offset)K * size * B * 4 + rank * B * 4;
    CHECK(boff == want, "byte offset (expected %lld got %lld)", (long long)want, (long long)boff);
    IO_CHECK(MPI_File_get_byte_offset(fh, 3, &boff));
    CHECK(boff == 16 + rank * B * 4 + 12, "byte offset of etype 3 (got %lld)", (long long)boff);
    MPI_Offset dsp;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    IO_CHECK(MPI_File_get_view(fh, &dsp, &et, &ft, rep));
    CHECK(dsp == 16 && et == MPI_INT && !strcmp(rep, "native"), "get_view");
    MPI_Aint lb, ext;
    MPI_Type_get_extent(ft, &lb, &ext);
    CHECK(ext == (MPI_Aint)size * B * 4, "view filetype extent (got %ld)", (long)ext);
    MPI_Type_free(&ft);
    IO_CHECK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    /* everyone checks the whole file through a byte view */
    if (rank == 0) {
        MPI_File self;
        IO_CHECK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &self));
        int total = K * B * size;
        int *all = malloc(total * sizeof(int));
        IO_CHECK(MPI_File_read_at(self, 16, all, total, MPI_INT, &st));
        for (int j = 0; j < total; j++) {
            int r = (j / B) % size, idx = (j / (B * size)) * B + j % B;
            CHECK(all[j] == val(r, idx), "file int %d (expected %d got %d)", j, val(r, idx), all[j]);
        }
        free(all);
        IO_CHECK(MPI_File_close(&self));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* read back through the view into a strided memory type */
    MPI_Datatype mt;
    MPI_Type_vector(K * B, 1, 2, MPI_INT, &mt);
    MPI_Type_commit(&mt);
    int *strided = calloc(2 * K * B, sizeof(int));
    IO_CHECK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    IO_CHECK(MPI_File_read_all(fh, strided, 1, mt, &st));
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == K * B, "read_all count (got %d)", cnt);
    for (int i = 0; i < K * B; i++)
        CHECK(strided[2 * i] == val(rank, i) && strided[2 * i + 1] == 0, "strided read [%d]", i);
    /* individual pointer: independent reads in two halves, seek relative */
    IO_CHECK(MPI_File_seek(fh, 5, MPI_SEEK_SET));
    IO_CHECK(MPI_File_read(fh, rd, 3, MPI_INT, &st));
    IO_CHECK(MPI_File_seek(fh, -8, MPI_SEEK_CUR));
    IO_CHECK(MPI_File_get_position(fh, &pos));
    CHECK(pos == 0, "seek cur (got %lld)", (long long)pos);
    for (int i = 0; i < 3; i++) CHECK(rd[i] == val(rank, 5 + i), "read at 5+%d", i);
    IO_CHECK(MPI_File_seek(fh, 0, MPI_SEEK_END));
    IO_CHECK(MPI_File_get_position(fh, &pos));
    CHECK(pos == K * B, "seek end (expected %d got %lld)", K * B, (long long)pos);
    /* write with a strided memory type through the view, read back contiguous */
    for (int i = 0; i < K * B; i++) strided[2 * i] = -val(rank, i);
    IO_CHECK(MPI_File_write_at_all(fh, 0, strided, 1, mt, &st));
    IO_CHECK(MPI_File_read_at(fh, 0, rd, K * B, MPI_INT, &st));
    for (int i = 0; i < K * B; i++) CHECK(rd[i] == -val(rank, i), "strided write [%d]", i);
    MPI_Type_free(&mt);

    /* hints */
    MPI_Info info, used;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "1048576");
    MPI_Info_set(info, "striping_factor", "4");
    MPI_Info_set(info, "access_style", "write_once");
    IO_CHECK(MPI_File_set_info(fh, info));
    MPI_Info_free(&info);
    IO_CHECK(MPI_File_get_info(fh, &used));
    char v[MPI_MAX_INFO_VAL];
    int flag;
    MPI_Info_get(used, "cb_buffer_size", MPI_MAX_INFO_VAL - 1, v, &flag);
    CHECK(flag && !strcmp(v, "1048576"), "cb_buffer_size hint (got %s)", flag ? v : "none");
    MPI_Info_get(used, "striping_factor", MPI_MAX_INFO_VAL - 1, v, &flag);
    CHECK(flag && !strcmp(v, "4"), "striping_factor hint");
    MPI_Info_get(used, "romio_cb_write", MPI_MAX_INFO_VAL - 1, v, &flag);
    CHECK(flag && !strcmp(v, "automatic"), "romio_cb_write hint");
    MPI_Info_free(&used);

    /* atomicity, size, preallocation */
    IO_CHECK(MPI_File_get_atomicity(fh, &flag));
    CHECK(!flag, "atomicity starts off");
    IO_CHECK(MPI_File_set_atomicity(fh, 1));
    IO_CHECK(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag, "atomicity on");
    IO_CHECK(MPI_File_set_size(fh, 100));
    IO_CHECK(MPI_File_get_size(fh, &fsize));
    CHECK(fsize == 100, "set_size (got %lld)", (long long)fsize);
    MPI_Barrier(MPI_COMM_WORLD); /* every rank has seen the size before it changes again */
    IO_CHECK(MPI_File_preallocate(fh, 1 << 16));
    IO_CHECK(MPI_File_get_size(fh, &fsize));
    CHECK(fsize == 1 << 16, "preallocate (got %lld)", (long long)fsize);
    IO_CHECK(MPI_File_close(&fh));
    CHECK(fh == MPI_FILE_NULL, "close sets MPI_FILE_NULL");
    if (rank == 0) CHECK(access(path, F_OK) != 0, "DELETE_ON_CLOSE removed the file");

    /* MPI_MODE_EXCL creates once; APPEND starts at the end; File_delete */
    io_path(path, sizeof path, "g");
    IO_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY |
                           MPI_MODE_UNIQUE_OPEN, MPI_INFO_NULL, &fh));
    if (rank == 0) IO_CHECK(MPI_File_write(fh, buf, 4, MPI_INT, &st));
    IO_CHECK(MPI_File_close(&fh));
    IO_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_APPEND | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    IO_CHECK(MPI_File_get_position(fh, &pos));
    CHECK(pos == 16, "APPEND position (got %lld)", (long long)pos);
    IO_CHECK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) IO_CHECK(MPI_File_delete(path, MPI_INFO_NULL));
    free(buf);
    free(rd);
    free(strided);
    MPI_Finalize();
    if (rank == 0) printf("PASS %s\n", TEST_NAME);
    return 0;
}
