/* One-sided cases an outside conformance suite found (issue 33):
 *  - a dynamic window with one buffer attached in two adjacent pieces: a Put, a Get and an
 *    Accumulate spanning the seam succeed and move the right data (MPICH accepts them);
 *  - a zero-count MPI_Accumulate (and Get_accumulate) whose origin and target basic types
 *    differ succeeds (nothing moves) and leaves the target alone.
 * Across processes (procs=) an access spanning two pieces at a member of another process is
 * refused with MPI_ERR_RMA_RANGE (each piece is its own registration): the seam part is
 * then checked only for targets in this process (MPI_Comm_split_type SHARED). */
#define TEST_NAME "rma_conform"
#include "mpitest.h"

#define N 16 /* ints per rank, attached as two pieces of N/2 */

static int error_class(int rc) {
    int c = -1;
    if (rc == MPI_SUCCESS) return MPI_SUCCESS;
    MPI_Error_class(rc, &c);
    return c;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* is `right` in this process? (a shared-memory communicator holds exactly those) */
    MPI_Comm node;
    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_Group wg, ng;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Comm_group(node, &ng);
    int rn = MPI_UNDEFINED;
    MPI_Group_translate_ranks(wg, 1, &right, ng, &rn);
    int near = rn != MPI_UNDEFINED;

    MPI_Win win;
    MPI_CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    int *mem = mt_malloc(N * sizeof(int));
    for (int i = 0; i < N; i++) mem[i] = -1;
    MPI_CHECK(MPI_Win_attach(win, mem, N / 2 * sizeof(int)));
    MPI_CHECK(MPI_Win_attach(win, mem + N / 2, N / 2 * sizeof(int)));
    MPI_Aint mine, theirs;
    MPI_Get_address(mem, &mine);
    /* rank r accesses its right neighbour's memory; learns its address from it */
    MPI_CHECK(MPI_Sendrecv(&mine, 1, MPI_AINT, left, 0, &theirs, 1, MPI_AINT, right, 0, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));

    /* ---- spanning the seam: elements N/2-2 .. N/2+1 */
    int put[4], got[4] = {0, 0, 0, 0}, one[4] = {1, 1, 1, 1};
    for (int i = 0; i < 4; i++) put[i] = 1000 * rank + i;
    MPI_Aint seam = MPI_Aint_add(theirs, (N / 2 - 2) * (MPI_Aint)sizeof(int));
    MPI_CHECK(MPI_Win_fence(0, win));
    int rc = MPI_Put(put, 4, MPI_INT, right, seam, 4, MPI_INT, win);
    if (near)
        CHECK(rc == MPI_SUCCESS, "Put across two adjacent attached pieces: class %d (expected success)",
              error_class(rc));
    else
        CHECK(error_class(rc) == MPI_ERR_RMA_RANGE || rc == MPI_SUCCESS,
              "Put across two pieces at another process: class %d", error_class(rc));
    /* what happened at the left neighbour's target (this rank's memory) */
    int put_ok = rc == MPI_SUCCESS, left_ok = 0;
    MPI_CHECK(MPI_Sendrecv(&put_ok, 1, MPI_INT, right, 1, &left_ok, 1, MPI_INT, left, 1, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Win_fence(0, win));
    if (put_ok) MPI_CHECK(MPI_Accumulate(one, 4, MPI_INT, right, seam, 4, MPI_INT, MPI_SUM, win));
    MPI_CHECK(MPI_Win_fence(0, win));
    if (put_ok) MPI_CHECK(MPI_Get(got, 4, MPI_INT, right, seam, 4, MPI_INT, win));
    MPI_CHECK(MPI_Win_fence(0, win));
    if (put_ok)
        for (int i = 0; i < 4; i++)
            CHECK(got[i] == 1000 * rank + i + 1, "Get across the seam: element %d (expected %d got %d)", i,
                  1000 * rank + i + 1, got[i]);
    if (left_ok)
        for (int i = 0; i < 4; i++)
            CHECK(mem[N / 2 - 2 + i] == 1000 * left + i + 1, "local element %d (expected %d got %d)", N / 2 - 2 + i,
                  1000 * left + i + 1, mem[N / 2 - 2 + i]);
    for (int i = 0; i < N; i++) mem[i] = -1;
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- zero-count accumulates with different basic types */
    MPI_Aint first = theirs;
    double d = 1.5, r = 0;
    MPI_CHECK(MPI_Win_fence(0, win));
    rc = MPI_Accumulate(&d, 0, MPI_DOUBLE, right, first, 0, MPI_INT, MPI_SUM, win);
    CHECK(rc == MPI_SUCCESS, "zero-count Accumulate MPI_DOUBLE onto MPI_INT: class %d (expected success)",
          error_class(rc));
    rc = MPI_Accumulate(&d, 0, MPI_DOUBLE, right, first, 0, MPI_INT, MPI_REPLACE, win);
    CHECK(rc == MPI_SUCCESS, "zero-count Accumulate (MPI_REPLACE): class %d (expected success)", error_class(rc));
    rc = MPI_Get_accumulate(&d, 0, MPI_DOUBLE, &r, 0, MPI_FLOAT, right, first, 0, MPI_INT, MPI_SUM, win);
    CHECK(rc == MPI_SUCCESS, "zero-count Get_accumulate: class %d (expected success)", error_class(rc));
    MPI_CHECK(MPI_Win_fence(0, win));
    CHECK(mem[0] == -1, "a zero-count accumulate changed the target (expected -1 got %d)", mem[0]);
    MPI_CHECK(MPI_Win_detach(win, mem));
    MPI_CHECK(MPI_Win_detach(win, mem + N / 2));
    MPI_CHECK(MPI_Win_free(&win));
    free(mem);
    MPI_Group_free(&wg);
    MPI_Group_free(&ng);
    MPI_Comm_free(&node);
    MPI_Finalize();
    if (rank == 0) printf("PASS %s\n", TEST_NAME);
    return 0;
}
