/* A rank waiting for an atomic-mode byte-range lock must not hold its worker: rank 0's
 * write waits 300 ms for a lock another open file description (a thread of rank 0, as
 * another process would) holds; the holding thread meanwhile sends every other rank a
 * message, which makes the ranks of rank 0's worker ready to run. Run with a deadlock
 * time far below 300 ms: a rank waiting for the lock inside the kernel would be reported
 * as holding its worker. The write must still wait for the lock: it lands after the
 * holder's bytes. */
#define _GNU_SOURCE
#define TEST_NAME "io_lockwait"
#include "mpitest.h"
#include "io_util.h"
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

typedef struct holder {
    const char *path;
    pthread_barrier_t locked;
} holder;

static void *hold_lock(void *p)
{
    holder *h = p;
    int fd = open(h->path, O_RDWR);
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 64};
    int ok = fd >= 0 && fcntl(fd, F_OFD_SETLKW, &fl) == 0;
    pthread_barrier_wait(&h->locked);
    if (!ok) return NULL;
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int r = 1; r < size; r++) MPI_CHECK(MPI_Send(&r, 1, MPI_INT, r, 5, MPI_COMM_WORLD));
    usleep(300000); /* a thread of the rank, not a rank: a real sleep, with the lock */
    CHECK(pwrite(fd, "holder", 6, 0) == 6, "holder's write failed");
    fl.l_type = F_UNLCK;
    fcntl(fd, F_OFD_SETLK, &fl);
    close(fd);
    return h;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    CHECK(provided == MPI_THREAD_MULTIPLE, "no MPI_THREAD_MULTIPLE");
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char path[512];
    io_path(path, sizeof path, "t");
    MPI_File fh;
    IO_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    IO_CHECK(MPI_File_set_atomicity(fh, 1));
    MPI_Status st;
    if (rank == 0) {
        holder h = {.path = path};
        pthread_barrier_init(&h.locked, NULL, 2);
        pthread_t t;
        CHECK(pthread_create(&t, NULL, hold_lock, &h) == 0, "pthread_create failed");
        pthread_barrier_wait(&h.locked);
        double t0 = MPI_Wtime();
        IO_CHECK(MPI_File_write_at(fh, 2, "RANK0", 5, MPI_BYTE, &st)); /* overlaps the holder's bytes */
        double waited = MPI_Wtime() - t0;
        pthread_join(t, NULL);
        pthread_barrier_destroy(&h.locked);
        CHECK(waited >= 0.25, "the write did not wait for the lock (%.3f s)", waited);
        char got[8] = {0};
        IO_CHECK(MPI_File_read_at(fh, 0, got, 7, MPI_BYTE, &st));
        CHECK(!memcmp(got, "hoRANK0", 7), "the write did not land after the holder's ('%.7s')", got);
    } else {
        int got = 0;
        MPI_CHECK(MPI_Recv(&got, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, &st));
        CHECK(got == rank, "wrong message (%d)", got);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    IO_CHECK(MPI_File_close(&fh));
    if (rank == 0) {
        MPI_File_delete(path, MPI_INFO_NULL);
        printf("PASS %s\n", TEST_NAME);
    }
    MPI_Finalize();
    return 0;
}
