/*
 * env.c - environment inquiry.
 *
 * Before MPI_Init_thread: MPI_Initialized false, MPI_Finalized false,
 * MPI_Get_version and MPI_Get_library_version usable (MPI-3.1 allows both
 * before initialization).  MPI_Init_thread(MPI_THREAD_SERIALIZED) returns a
 * valid level that MPI_Query_thread repeats; MPI_Is_thread_main is true;
 * Comm_size/Comm_rank of MPI_COMM_WORLD and MPI_COMM_SELF; processor name
 * non-empty; MPI_Wtick in (0, 1]; MPI_Wtime never goes backwards and
 * advances; every rank reports the same version and size to rank 0; after
 * MPI_Finalize: MPI_Finalized true, MPI_Initialized still true, versions
 * still usable.
 */
#define TEST_NAME "env"
#include "mpitest.h"

int main(int argc, char **argv)
{
    int flag = -1, v = 0, sv = 0, len = -1;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING + 1];

    MPI_CHECK(MPI_Initialized(&flag));
    CHECK(flag == 0, "MPI_Initialized before MPI_Init (expected 0 got %d)", flag);
    MPI_CHECK(MPI_Finalized(&flag));
    CHECK(flag == 0, "MPI_Finalized before MPI_Init (expected 0 got %d)", flag);
    MPI_CHECK(MPI_Get_version(&v, &sv));
    CHECK(v > 3 || (v == 3 && sv >= 1), "MPI_Get_version before MPI_Init (expected >= 3.1 got "
          "%d.%d)", v, sv);
    lib[0] = '\0';
    MPI_CHECK(MPI_Get_library_version(lib, &len));
    CHECK(len > 0 && (int)strlen(lib) == len, "MPI_Get_library_version before MPI_Init empty "
          "or resultlen wrong (expected strlen %zu got %d)", strlen(lib), len);

    int provided = -1, q = -1, rank = -1, size = -1, srank = -1, ssize = -1;
    MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided));
    CHECK(provided == MPI_THREAD_SINGLE || provided == MPI_THREAD_FUNNELED ||
          provided == MPI_THREAD_SERIALIZED || provided == MPI_THREAD_MULTIPLE,
          "MPI_Init_thread returned an invalid level (got %d)", provided);
    CHECK(MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED && MPI_THREAD_FUNNELED < MPI_THREAD_SERIALIZED &&
          MPI_THREAD_SERIALIZED < MPI_THREAD_MULTIPLE, "thread level constants not monotonic");
    MPI_CHECK(MPI_Query_thread(&q));
    CHECK(q == provided, "MPI_Query_thread disagrees (expected %d got %d)", provided, q);
    MPI_CHECK(MPI_Is_thread_main(&flag));
    CHECK(flag, "MPI_Is_thread_main false on the main thread");
    MPI_CHECK(MPI_Initialized(&flag));
    CHECK(flag == 1, "MPI_Initialized after MPI_Init (expected 1 got %d)", flag);
    MPI_CHECK(MPI_Finalized(&flag));
    CHECK(flag == 0, "MPI_Finalized before MPI_Finalize (expected 0 got %d)", flag);

    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size >= 1 && rank >= 0 && rank < size, "rank/size wrong (got rank %d size %d)", rank, size);
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_SELF, &srank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_SELF, &ssize));
    CHECK(srank == 0 && ssize == 1, "MPI_COMM_SELF rank/size wrong (expected 0/1 got %d/%d)",
          srank, ssize);

    char name[MPI_MAX_PROCESSOR_NAME + 1];
    name[0] = '\0';
    len = -1;
    MPI_CHECK(MPI_Get_processor_name(name, &len));
    CHECK(len > 0 && len < MPI_MAX_PROCESSOR_NAME && (int)strlen(name) == len,
          "MPI_Get_processor_name empty or resultlen wrong (expected strlen %zu got %d)",
          strlen(name), len);

    double tick = MPI_Wtick();
    CHECK(tick > 0.0 && tick <= 1.0, "MPI_Wtick out of range (expected (0, 1] got %g)", tick);
    double t0 = MPI_Wtime(), prev = t0, now = t0;
    for (int i = 0; i < 100000 && now - t0 < 0.01; i++) {
        now = MPI_Wtime();
        CHECK(now >= prev, "MPI_Wtime went backwards (expected >= %.9f got %.9f)", prev, now);
        prev = now;
        if (i % 64 == 0) {
            MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MT_NEVER_TAG, MPI_COMM_WORLD, &flag,
                                 MPI_STATUS_IGNORE));
        }
    }
    mt_poll_delay(0.02);
    now = MPI_Wtime();
    CHECK(now - t0 >= 0.015 && now - t0 < 100.0, "MPI_Wtime did not advance as expected "
          "(expected >= 0.015 s got %.6f s)", now - t0);

    /* everybody agrees on size and version */
    int mine[3] = {size, v, sv};
    if (rank != 0) {
        MPI_CHECK(MPI_Send(mine, 3, MPI_INT, 0, 1, MPI_COMM_WORLD));
    } else {
        for (int s = 1; s < size; s++) {
            int other[3];
            MPI_Status st;
            MPI_CHECK(MPI_Recv(other, 3, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &st));
            CHECK(other[0] == size && other[1] == v && other[2] == sv, "rank %d reports size "
                  "%d version %d.%d (expected size %d version %d.%d)", st.MPI_SOURCE, other[0],
                  other[1], other[2], size, v, sv);
        }
    }

    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Finalize());
    MPI_CHECK(MPI_Finalized(&flag));
    CHECK(flag == 1, "MPI_Finalized after MPI_Finalize (expected 1 got %d)", flag);
    MPI_CHECK(MPI_Initialized(&flag));
    CHECK(flag == 1, "MPI_Initialized after MPI_Finalize (expected 1 got %d)", flag);
    int v2 = 0, sv2 = 0;
    MPI_CHECK(MPI_Get_version(&v2, &sv2));
    CHECK(v2 == v && sv2 == sv, "MPI_Get_version after MPI_Finalize (expected %d.%d got %d.%d)",
          v, sv, v2, sv2);
    if (rank == 0) {
        printf("PASS %s\n", TEST_NAME);
        fflush(stdout);
    }
    return 0;
}
