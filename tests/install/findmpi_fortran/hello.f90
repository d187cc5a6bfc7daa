! Sums the ranks with MPI_ALLREDUCE and prints "<n> ranks" on rank 0.
program hello
  use mpi
  implicit none
  integer :: rank, nranks, total, ierr
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. total == nranks * (nranks - 1) / 2) print '(I0,A)', nranks, ' ranks'
  call MPI_Finalize(ierr)
end program
