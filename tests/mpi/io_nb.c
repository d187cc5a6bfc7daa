/* Nonblocking and split-collective I/O: iwrite_at/iread_at, iwrite/iread (individual
 * pointer moves at once), iwrite_all/iread_all, iwrite_at_all/iread_at_all,
 * iwrite_shared/iread_shared, *_all_begin/_end; and progress: a large iwrite_at must
 * reach the file while the rank computes without calling MPI. */
#define _POSIX_C_SOURCE 200809L
#define TEST_NAME "io_nb"
#include "mpitest.h"
#include "io_util.h"
#include <sys/stat.h>
#include <time.h>

#define N 4096

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char path[512];
    io_path(path, sizeof path, "n");
    MPI_File fh;
    IO_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh));
    int *a = malloc(N * sizeof(int)), *b = malloc(N * sizeof(int));
    for (int i = 0; i < N; i++) a[i] = rank * N + i;
    MPI_Offset mine = (MPI_Offset)rank * N * 4;
    MPI_Request rq[2];
    MPI_Status st;
    int cnt;
    IO_CHECK(MPI_File_iwrite_at(fh, mine, a, N / 2, MPI_INT, &rq[0]));
    IO_CHECK(MPI_File_iwrite_at(fh, mine + N / 2 * 4, a + N / 2, N / 2, MPI_INT, &rq[1]));
    IO_CHECK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    IO_CHECK(MPI_File_iread_at(fh, mine, b, N, MPI_INT, &rq[0]));
    IO_CHECK(MPI_Wait(&rq[0], &st));
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == N && rq[0] == MPI_REQUEST_NULL, "iread_at count (got %d)", cnt);
    for (int i = 0; i < N; i++) CHECK(b[i] == a[i], "iread_at [%d]", i);

    /* individual pointer: moved at initiation */
    IO_CHECK(MPI_File_seek(fh, (MPI_Offset)rank * N * 4, MPI_SEEK_SET));
    for (int i = 0; i < N; i++) a[i] = -(rank * N + i);
    IO_CHECK(MPI_File_iwrite(fh, a, N, MPI_INT, &rq[0]));
    MPI_Offset pos;
    IO_CHECK(MPI_File_get_position(fh, &pos));
    CHECK(pos == (MPI_Offset)(rank + 1) * N * 4, "iwrite moved the pointer (got %lld)", (long long)pos);
    IO_CHECK(MPI_Wait(&rq[0], &st));
    IO_CHECK(MPI_File_seek(fh, -N * 4, MPI_SEEK_CUR));
    int flag = 0;
    IO_CHECK(MPI_File_iread(fh, b, N, MPI_INT, &rq[0]));
    while (!flag) IO_CHECK(MPI_Test(&rq[0], &flag, &st));
    for (int i = 0; i < N; i++) CHECK(b[i] == a[i], "iread [%d]", i);

    /* nonblocking collectives with a derived memory type */
    MPI_Datatype vec;
    MPI_Type_vector(N / 2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    for (int i = 0; i < N; i++) a[i] = 7 * i + rank;
    IO_CHECK(MPI_File_iwrite_at_all(fh, mine, a, 1, vec, &rq[0]));
    MPI_Type_free(&vec); /* the request keeps it */
    IO_CHECK(MPI_Wait(&rq[0], &st));
    MPI_Barrier(MPI_COMM_WORLD);
    IO_CHECK(MPI_File_iread_at_all(fh, mine, b, N / 2, MPI_INT, &rq[0]));
    IO_CHECK(MPI_Wait(&rq[0], &st));
    for (int i = 0; i < N / 2; i++) CHECK(b[i] == a[2 * i], "iread_at_all [%d] (expected %d got %d)", i, a[2 * i], b[i]);
    IO_CHECK(MPI_File_seek(fh, mine, MPI_SEEK_SET));
    IO_CHECK(MPI_File_iwrite_all(fh, a, N, MPI_INT, &rq[0]));
    IO_CHECK(MPI_Wait(&rq[0], &st));
    IO_CHECK(MPI_File_seek(fh, mine, MPI_SEEK_SET));
    IO_CHECK(MPI_File_iread_all(fh, b, N, MPI_INT, &rq[0]));
    IO_CHECK(MPI_Wait(&rq[0], &st));
    for (int i = 0; i < N; i++) CHECK(b[i] == a[i], "iread_all [%d]", i);

    /* split collectives */
    for (int i = 0; i < N; i++) a[i] = 3 * i - rank;
    IO_CHECK(MPI_File_write_at_all_begin(fh, mine, a, N, MPI_INT));
    IO_CHECK(MPI_File_write_at_all_end(fh, a, &st));
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == N, "write_at_all_end count (got %d)", cnt);
    IO_CHECK(MPI_File_read_at_all_begin(fh, mine, b, N, MPI_INT));
    IO_CHECK(MPI_File_read_at_all_end(fh, b, &st));
    for (int i = 0; i < N; i++) CHECK(b[i] == a[i], "split read_at_all [%d]", i);
    IO_CHECK(MPI_File_seek(fh, mine, MPI_SEEK_SET));
    IO_CHECK(MPI_File_write_all_begin(fh, b, N, MPI_INT));
    IO_CHECK(MPI_File_write_all_end(fh, b, &st));
    IO_CHECK(MPI_File_seek(fh, mine, MPI_SEEK_SET));
    IO_CHECK(MPI_File_read_all_begin(fh, a, N, MPI_INT));
    IO_CHECK(MPI_File_read_all_end(fh, a, &st));
    for (int i = 0; i < N; i++) CHECK(b[i] == a[i], "split read_all [%d]", i);

    /* shared pointer, nonblocking */
    MPI_Barrier(MPI_COMM_WORLD);
    IO_CHECK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    int rec[2] = {rank, rank * rank};
    IO_CHECK(MPI_File_iwrite_shared(fh, rec, 2, MPI_INT, &rq[0]));
    IO_CHECK(MPI_Wait(&rq[0], &st));
    MPI_Barrier(MPI_COMM_WORLD);
    IO_CHECK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == 8 * size, "shared pointer after iwrite_shared (got %lld)", (long long)pos);
    MPI_Barrier(MPI_COMM_WORLD);
    IO_CHECK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    IO_CHECK(MPI_File_iread_shared(fh, rec, 2, MPI_INT, &rq[0]));
    IO_CHECK(MPI_Wait(&rq[0], &st));
    CHECK(rec[1] == rec[0] * rec[0] && rec[0] >= 0 && rec[0] < size, "iread_shared record (%d, %d)", rec[0], rec[1]);
    IO_CHECK(MPI_File_close(&fh));

    /* progress while computing: 32 MiB from one rank, no MPI call until it is in the file */
    io_path(path, sizeof path, "p");
    if (rank == 0) {
        size_t big = 32u << 20;
        char *data = malloc(big);
        memset(data, 0x5a, big);
        IO_CHECK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE,
                               MPI_INFO_NULL, &fh));
        IO_CHECK(MPI_File_iwrite_at(fh, 0, data, (int)big, MPI_BYTE, &rq[0]));
        double t0 = now(), x = 1.0;
        struct stat sb;
        long long polls = 0;
        for (;;) {
            for (int i = 0; i < 100000; i++) x = x * 1.0000001 + 1e-9; /* compute */
            polls++;
            if (stat(path, &sb) == 0 && sb.st_size == (off_t)big) break;
            CHECK(now() - t0 < 20, "the nonblocking write made no progress while the rank computed (file size %lld)",
                  (long long)sb.st_size);
        }
        IO_CHECK(MPI_Wait(&rq[0], &st));
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        CHECK(cnt == (int)big, "32 MiB iwrite count");
        IO_CHECK(MPI_File_close(&fh));
        printf("io_nb: 32 MiB reached the file after %lld compute rounds (x=%g)\n", polls, x);
        free(data);
    }
    free(a);
    free(b);
    MPI_Finalize();
    if (rank == 0) printf("PASS %s\n", TEST_NAME);
    return 0;
}
