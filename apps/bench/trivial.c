/* trivial.c - the smallest MPI program (Init, rank, size, Finalize), for the cost of
 * starting and ending ranks (apps/ranks.sh). Rank 0 prints the rank count. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) printf("ranks=%d\n", size);
    MPI_Finalize();
    return 0;
}
