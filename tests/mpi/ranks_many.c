/* ranks_many.c - thousands of ranks start, meet once and end (issue 17: 4096 ranks of a
 * trivial program printed their answer and then never ended, because each rank's end
 * refreshed the heap statistics of every arena). Each rank allocates from its own heap, so
 * ending it has an arena to account for. Timing is apps/ranks.sh's job; this run checks
 * that the job ends (ctest's limit) with the right answer. */
#define TEST_NAME "ranks_many"
#include "mpitest.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    long *mine = mt_malloc(64 * sizeof *mine);
    for (int i = 0; i < 64; i++) mine[i] = rank;
    long sum = 0, want = (long)size * (size - 1) / 2;
    MPI_CHECK(MPI_Allreduce(&mine[63], &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == want, "sum of ranks (expected %ld got %ld)", want, sum);
    free(mine);
    return mt_finish();
}
