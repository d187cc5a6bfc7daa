/* Collective I/O: a 2-D and a 3-D global array of doubles written with one block
 * decomposition (subarray filetype, local memory with a halo: a derived memory type)
 * and read back with another (other process grid, contiguous memory); the file's bytes
 * are checked against the formula by a plain POSIX read, so any MPI that writes the
 * same program's file byte for byte (MPICH included) passes the same check. */
#define TEST_NAME "io_coll"
#include "mpitest.h"
#include "io_util.h"

static double val(long long g) { return (double)g * 0.25 + 1.0; }

/* Writes the global array (dims gs) with grid `grid`, reads it back with grid `grid2`. */
static void run(int nd, const int *gs, const int *grid, const int *grid2, const char *path, MPI_Info info)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int coords[3], sub[3], start[3], r = rank;
    for (int d = nd - 1; d >= 0; d--) { coords[d] = r % grid[d]; r /= grid[d]; }
    long long nloc = 1;
    for (int d = 0; d < nd; d++) {
        int q = gs[d] / grid[d], rem = gs[d] % grid[d];
        sub[d] = q + (coords[d] < rem);
        start[d] = coords[d] * q + (coords[d] < rem ? coords[d] : rem);
        nloc *= sub[d];
    }
    MPI_Datatype ftype, mtype;
    MPI_Type_create_subarray(nd, gs, sub, start, MPI_ORDER_C, MPI_DOUBLE, &ftype);
    MPI_Type_commit(&ftype);
    /* local memory with a halo of one element on each side */
    int hs[3], hsub[3], hst[3];
    long long hn = 1;
    for (int d = 0; d < nd; d++) { hs[d] = sub[d] + 2; hsub[d] = sub[d]; hst[d] = 1; hn *= hs[d]; }
    MPI_Type_create_subarray(nd, hs, hsub, hst, MPI_ORDER_C, MPI_DOUBLE, &mtype);
    MPI_Type_commit(&mtype);
    double *mem = malloc(hn * sizeof(double));
    for (long long i = 0; i < hn; i++) mem[i] = -1;
    for (long long i = 0; i < nloc; i++) {
        long long rem = i, g = 0, h = 0, mul = 1, hmul = 1;
        int idx[3];
        for (int d = nd - 1; d >= 0; d--) { idx[d] = rem % sub[d]; rem /= sub[d]; }
        for (int d = nd - 1; d >= 0; d--) {
            g += (start[d] + idx[d]) * mul; mul *= gs[d];
            h += (idx[d] + 1) * hmul; hmul *= hs[d];
        }
        mem[h] = val(g);
    }
    MPI_File fh;
    IO_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh));
    IO_CHECK(MPI_File_set_size(fh, 0));
    IO_CHECK(MPI_File_set_view(fh, 0, MPI_DOUBLE, ftype, "native", MPI_INFO_NULL));
    MPI_Status st;
    IO_CHECK(MPI_File_write_all(fh, mem, 1, mtype, &st));
    int cnt;
    MPI_Get_count(&st, MPI_DOUBLE, &cnt);
    CHECK(cnt == nloc, "write_all count (expected %lld got %d)", nloc, cnt);
    IO_CHECK(MPI_File_close(&fh));
    MPI_Type_free(&ftype);
    MPI_Type_free(&mtype);
    free(mem);

    long long total = 1;
    for (int d = 0; d < nd; d++) total *= gs[d];
    if (rank == 0) { /* the file's bytes, independently of MPI */
        FILE *f = fopen(path, "rb");
        CHECK(f != NULL, "fopen %s", path);
        double *all = malloc(total * sizeof(double));
        size_t got = fread(all, sizeof(double), total + 1, f);
        fclose(f);
        CHECK((long long)got == total, "file holds %lld doubles (got %zu)", total, got);
        for (long long i = 0; i < total; i++)
            CHECK(all[i] == val(i), "file double %lld (expected %g got %g)", i, val(i), all[i]);
        free(all);
    }

    /* read with the second decomposition, contiguous memory, explicit offsets */
    r = rank;
    for (int d = nd - 1; d >= 0; d--) { coords[d] = r % grid2[d]; r /= grid2[d]; }
    nloc = 1;
    for (int d = 0; d < nd; d++) {
        int q = gs[d] / grid2[d], rem = gs[d] % grid2[d];
        sub[d] = q + (coords[d] < rem);
        start[d] = coords[d] * q + (coords[d] < rem ? coords[d] : rem);
        nloc *= sub[d];
    }
    MPI_Type_create_subarray(nd, gs, sub, start, MPI_ORDER_C, MPI_DOUBLE, &ftype);
    MPI_Type_commit(&ftype);
    mem = malloc((nloc + 1) * sizeof(double));
    IO_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE, info, &fh));
    IO_CHECK(MPI_File_set_view(fh, 0, MPI_DOUBLE, ftype, "native", MPI_INFO_NULL));
    IO_CHECK(MPI_File_read_at_all(fh, 0, mem, (int)nloc, MPI_DOUBLE, &st));
    MPI_Get_count(&st, MPI_DOUBLE, &cnt);
    CHECK(cnt == nloc, "read_at_all count (expected %lld got %d)", nloc, cnt);
    for (long long i = 0; i < nloc; i++) {
        long long rem = i, g = 0, mul = 1;
        int idx[3];
        for (int d = nd - 1; d >= 0; d--) { idx[d] = rem % sub[d]; rem /= sub[d]; }
        for (int d = nd - 1; d >= 0; d--) { g += (start[d] + idx[d]) * mul; mul *= gs[d]; }
        CHECK(mem[i] == val(g), "%dD read element %lld (global %lld): expected %g got %g", nd, i, g, val(g), mem[i]);
    }
    /* the same data read independently */
    double *mem2 = malloc((nloc + 1) * sizeof(double));
    IO_CHECK(MPI_File_read_at(fh, 0, mem2, (int)nloc, MPI_DOUBLE, &st));
    CHECK(!memcmp(mem, mem2, nloc * sizeof(double)), "independent read matches the collective one");
    IO_CHECK(MPI_File_close(&fh));
    MPI_Type_free(&ftype);
    free(mem);
    free(mem2);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char path[512];
    io_path(path, sizeof path, "a");
    int g2[2] = {0, 0}, t2[2];
    MPI_Dims_create(size, 2, g2);
    t2[0] = g2[1]; t2[1] = g2[0];
    if (t2[0] == g2[0]) { t2[0] = size; t2[1] = 1; } /* square grid: rows instead */
    int gs2[2] = {131, 97};
    run(2, gs2, g2, t2, path, MPI_INFO_NULL);
    int g3[3] = {0, 0, 0}, t3[3] = {1, 1, size};
    MPI_Dims_create(size, 3, g3);
    int gs3[3] = {13, 11, 70};
    run(3, gs3, g3, t3, path, MPI_INFO_NULL);
    /* several aggregators, small chunks (many per domain), unaligned domains */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_nodes", "3");
    MPI_Info_set(info, "cb_buffer_size", "8192");
    MPI_Info_set(info, "striping_unit", "24");
    run(2, gs2, g2, t2, path, info);
    run(3, gs3, g3, t3, path, info);
    MPI_Info_set(info, "romio_cb_write", "disable");
    MPI_Info_set(info, "romio_cb_read", "disable");
    run(2, gs2, t2, g2, path, info);
    MPI_Info_free(&info);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0) printf("PASS %s\n", TEST_NAME);
    return 0;
}
