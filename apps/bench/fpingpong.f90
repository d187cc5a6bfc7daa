! Fortran ping-pong (8 B and 1 MiB, half round trip) and 8-byte allreduce through the mpi
! module: the same source builds with mpif90.mpich and mpif90.openmpi. fcompare.sh runs it
! side by side and counts the Fortran layer's instructions per call with callgrind.
! usage: fpingpong [iterations]
program fpingpong
  use mpi
  implicit none
  integer :: rank, nranks, ierr, i, iters, n, k
  integer, parameter :: big = 131072   ! 1 MiB of double precision
  double precision, allocatable :: buf(:)
  double precision :: t0, t, x, y
  character(len=16) :: arg
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  iters = 20000
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read(arg, *) iters
  end if
  allocate(buf(big))
  buf = 1
  do k = 1, 2
    n = 1
    if (k == 2) n = big
    if (nranks >= 2 .and. rank < 2) then
      do i = 0, iters / (1 + 49 * (k - 1))
        if (i == 1) t0 = MPI_Wtime()
        if (rank == 0) then
          call MPI_Send(buf, n, MPI_DOUBLE_PRECISION, 1, 0, MPI_COMM_WORLD, ierr)
          call MPI_Recv(buf, n, MPI_DOUBLE_PRECISION, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
        else
          call MPI_Recv(buf, n, MPI_DOUBLE_PRECISION, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
          call MPI_Send(buf, n, MPI_DOUBLE_PRECISION, 0, 0, MPI_COMM_WORLD, ierr)
        end if
      end do
      t = (MPI_Wtime() - t0) / (iters / (1 + 49 * (k - 1))) / 2
      if (rank == 0 .and. k == 1) print '(A,F9.3,A)', 'pingpong 8 B     ', t * 1d6, ' us'
      if (rank == 0 .and. k == 2) print '(A,F9.3,A)', 'pingpong 1 MiB   ', 8d0 * n / t / 1d9, ' GB/s'
    end if
  end do
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  x = rank
  do i = 0, iters / 10
    if (i == 1) t0 = MPI_Wtime()
    call MPI_Allreduce(x, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do
  t = (MPI_Wtime() - t0) / (iters / 10)
  if (rank == 0) print '(A,I0,A,F9.3,A)', 'allreduce 8 B x', nranks, ' ', t * 1d6, ' us'
  if (y /= nranks * (nranks - 1) / 2) print '(A)', 'FAIL allreduce value'
  call MPI_Finalize(ierr)
end program
