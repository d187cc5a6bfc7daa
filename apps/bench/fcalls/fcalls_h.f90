! fcalls_h.f90 - fcalls.c's loops through include 'mpif.h',
! ierror as a program passes it (fcalls.sh counts the instructions). usage: fcalls_h MODE N
program fcalls
  implicit none
  include 'mpif.h'
  integer :: ierr
  integer :: mode, n, i, rank
  double precision :: x, y
  character(len=16) :: arg
  call get_command_argument(1, arg)
  read(arg, *) mode
  call get_command_argument(2, arg)
  read(arg, *) n
  x = 1
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  do i = 1, n
    if (mode == 1 .and. rank == 0) then
      call MPI_Send(x, 1, MPI_DOUBLE_PRECISION, 1, 0, MPI_COMM_WORLD, ierr)
      call MPI_Recv(x, 1, MPI_DOUBLE_PRECISION, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    else if (mode == 1 .and. rank == 1) then
      call MPI_Recv(x, 1, MPI_DOUBLE_PRECISION, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      call MPI_Send(x, 1, MPI_DOUBLE_PRECISION, 0, 0, MPI_COMM_WORLD, ierr)
    else if (mode == 2) then
      call MPI_Allreduce(x, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    end if
  end do
  call MPI_Finalize(ierr)
end program
