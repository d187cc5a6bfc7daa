/* Atomic mode with overlapping writers: every rank writes the same noncontiguous
 * region (256 blocks, so 256 system calls without locks) with its own byte, again and
 * again, and reads it back; in atomic mode each read must see one writer's data only. */
#define TEST_NAME "io_atomic"
#include "mpitest.h"
#include "io_util.h"

#define BL 64
#define NB 256

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char path[512];
    io_path(path, sizeof path, "t");
    MPI_File fh;
    IO_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh));
    IO_CHECK(MPI_File_set_atomicity(fh, 1));
    MPI_Datatype ft;
    MPI_Type_vector(NB, BL, 2 * BL, MPI_BYTE, &ft);
    MPI_Type_commit(&ft);
    IO_CHECK(MPI_File_set_view(fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL));
    unsigned char *w = malloc(BL * NB), *r = malloc(BL * NB);
    memset(w, rank + 1, BL * NB);
    MPI_Status st;
    int mixed = 0;
    for (int it = 0; it < 40; it++) {
        IO_CHECK(MPI_File_write_at(fh, 0, w, BL * NB, MPI_BYTE, &st));
        IO_CHECK(MPI_File_read_at(fh, 0, r, BL * NB, MPI_BYTE, &st));
        for (int i = 1; i < BL * NB; i++)
            if (r[i] != r[0]) { mixed++; break; }
        CHECK(r[0] >= 1 && r[0] <= size, "byte written by some rank (got %d)", r[0]);
    }
    CHECK(mixed == 0, "%d of 40 reads saw data of several writers in atomic mode", mixed);
    int flag;
    IO_CHECK(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 1, "atomicity");
    /* collective access in atomic mode too */
    IO_CHECK(MPI_File_write_at_all(fh, 0, w, BL * NB, MPI_BYTE, &st));
    IO_CHECK(MPI_File_read_at_all(fh, 0, r, BL * NB, MPI_BYTE, &st));
    for (int i = 1; i < BL * NB; i++) CHECK(r[i] == r[0], "collective read in atomic mode is one writer's [%d]", i);
    MPI_Type_free(&ft);
    IO_CHECK(MPI_File_close(&fh));
    free(w);
    free(r);
    MPI_Finalize();
    if (rank == 0) printf("PASS %s\n", TEST_NAME);
    return 0;
}
