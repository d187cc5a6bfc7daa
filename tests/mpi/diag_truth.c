/* Diagnostics that tell the truth (issue 31). argv[1] selects the case:
 *   alias      (pass) collectives whose send and receive buffers are the same or overlap,
 *              not MPI_IN_PLACE, return MPI_ERR_BUFFER (as MPICH does for the same
 *              pointer); MPI_IN_PLACE and disjoint buffers still work and give the right
 *              sums; nothing moved for a refused call
 *   truncate   rank 1 receives 32 bytes into a 16-byte buffer (fatal): the report must
 *              give the sent size, "a message of 32 bytes ... for a buffer of 16 bytes"
 *   truncate_i the same through MPI_Irecv + MPI_Wait
 *   uncommitted  MPI_Send with a type never committed (fatal): "is not committed"
 *   commnull   MPI_Send on MPI_COMM_NULL (fatal): "comm=MPI_COMM_NULL"
 * The fatal cases are matched by the testlist's patterns. Under MPICH, which refuses only the
 * identical pointer, the overlapping (not identical) calls of `alias` end in its assert. */
#define TEST_NAME "diag_truth"
#include "mpitest.h"

static int cls_of(int rc) {
    int c = -1;
    if (rc == MPI_SUCCESS) return MPI_SUCCESS;
    MPI_Error_class(rc, &c);
    return c;
}

#define EXPECT_BUFFER(call)                                                                       \
    do {                                                                                          \
        int c_ = cls_of(call);                                                                    \
        CHECK(c_ == MPI_ERR_BUFFER, "%s: class (expected MPI_ERR_BUFFER=%d got %d)", #call,      \
              MPI_ERR_BUFFER, c_);                                                                \
    } while (0)

static void alias(int rank, int size) {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int n = 4 * size;
    int *a = malloc(sizeof(int) * (size_t)n * 2), *b = malloc(sizeof(int) * (size_t)n * 2);
    CHECK(a && b, "malloc");
    for (int i = 0; i < 2 * n; i++) a[i] = b[i] = rank + 1;
    /* same pointer */
    EXPECT_BUFFER(MPI_Allreduce(a, a, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    /* (not MPI_Reduce: only its root would refuse, leaving the others in the collective) */
    EXPECT_BUFFER(MPI_Scan(a, a, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    EXPECT_BUFFER(MPI_Allgather(a, 4, MPI_INT, a, 4, MPI_INT, MPI_COMM_WORLD));
    EXPECT_BUFFER(MPI_Alltoall(a, 4, MPI_INT, a, 4, MPI_INT, MPI_COMM_WORLD));
    MPI_Request req;
    EXPECT_BUFFER(MPI_Iallreduce(a, a, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req));
    /* overlapping, not the same pointer: receive half a block into the send data */
    EXPECT_BUFFER(MPI_Allreduce(a, a + 2, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    EXPECT_BUFFER(MPI_Allreduce(a + 2, a, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < 2 * n; i++) CHECK(a[i] == rank + 1, "a refused call changed a[%d] to %d", i, a[i]);
    /* adjacent but disjoint, in place and separate buffers: accepted and right */
    MPI_CHECK(MPI_Allreduce(a, a + 4, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    int sum = size * (size + 1) / 2;
    for (int i = 4; i < 8; i++) CHECK(a[i] == sum, "Allreduce into the adjacent block: [%d] (expected %d got %d)", i, sum, a[i]);
    for (int i = 0; i < 4; i++) b[i] = rank + 1;
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, b, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < 4; i++) CHECK(b[i] == sum, "Allreduce in place: [%d] (expected %d got %d)", i, sum, b[i]);
    int zero = 0;
    MPI_CHECK(MPI_Allreduce(&zero, &zero, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD)); /* nothing moves */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    free(a);
    free(b);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "alias";
    int x[8] = {0};
    if (!strcmp(mode, "alias")) {
        alias(rank, size);
    } else if (!strcmp(mode, "truncate") || !strcmp(mode, "truncate_i")) {
        if (rank == 0) MPI_Send(x, 8, MPI_INT, size - 1, 5, MPI_COMM_WORLD);
        if (rank == size - 1 && size > 1) {
            if (!strcmp(mode, "truncate")) {
                MPI_Recv(x, 4, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Request r;
                MPI_Irecv(x, 4, MPI_INT, 0, 5, MPI_COMM_WORLD, &r);
                MPI_Wait(&r, MPI_STATUS_IGNORE);
            }
            FAIL("a truncated receive was not fatal");
        }
    } else if (!strcmp(mode, "uncommitted")) {
        MPI_Datatype t;
        MPI_Type_contiguous(2, MPI_INT, &t);
        if (rank == 0) MPI_Send(x, 1, t, 0, 0, MPI_COMM_WORLD);
    } else if (!strcmp(mode, "commnull")) {
        if (rank == 0) MPI_Send(x, 1, MPI_INT, 0, 0, MPI_COMM_NULL);
    }
    MPI_Finalize();
    if (rank == 0) printf("PASS %s\n", TEST_NAME);
    return 0;
}
