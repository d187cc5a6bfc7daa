! fcalls_f08.f90 - fcalls.c's loops through use mpi_f08,
! ierror as a program passes it (fcalls.sh counts the instructions). usage: fcalls_f08 MODE N
program fcalls
  use mpi_f08
  implicit none
  integer :: mode, n, i, rank
  double precision :: x, y
  character(len=16) :: arg
  call get_command_argument(1, arg)
  read(arg, *) mode
  call get_command_argument(2, arg)
  read(arg, *) n
  x = 1
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  do i = 1, n
    if (mode == 1 .and. rank == 0) then
      call MPI_Send(x, 1, MPI_DOUBLE_PRECISION, 1, 0, MPI_COMM_WORLD)
      call MPI_Recv(x, 1, MPI_DOUBLE_PRECISION, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    else if (mode == 1 .and. rank == 1) then
      call MPI_Recv(x, 1, MPI_DOUBLE_PRECISION, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
      call MPI_Send(x, 1, MPI_DOUBLE_PRECISION, 0, 0, MPI_COMM_WORLD)
    else if (mode == 2) then
      call MPI_Allreduce(x, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
    end if
  end do
  call MPI_Finalize()
end program
