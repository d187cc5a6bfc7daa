! fbind_f08_index.f90 - request indices are Fortran's, 1-based, through mpi_f08 (issue 32;
! fbind_index.F90 is the mpi/mpif.h counterpart): MPI_Waitany, MPI_Testany, MPI_Waitsome,
! MPI_Testsome; MPI_UNDEFINED stays as it is.
program fbind_f08_index
  use mpi_f08
  implicit none
  integer :: rank, nranks, next, prev, idx, n, i, inbuf(3), indices(3)
  type(MPI_Request) :: reqs(3)
  type(MPI_Status) :: st, sts(3)
  logical :: flag

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  next = mod(rank + 1, nranks)
  prev = mod(rank + nranks - 1, nranks)

  do i = 1, 3
    call MPI_Irecv(inbuf(i), 1, MPI_INTEGER, prev, i, MPI_COMM_WORLD, reqs(i))
  end do
  call MPI_Send(rank, 1, MPI_INTEGER, next, 3, MPI_COMM_WORLD)
  call MPI_Waitany(3, reqs, idx, st)
  call check(idx == 3 .and. st%MPI_TAG == 3, 'waitany index of the third request')
  call check(reqs(idx) == MPI_REQUEST_NULL, 'waitany freed reqs(idx)')

  call MPI_Barrier(MPI_COMM_WORLD) ! no rank sends tag 2 before every WAITANY returned
  call MPI_Send(rank, 1, MPI_INTEGER, next, 2, MPI_COMM_WORLD)
  flag = .false.
  do while (.not. flag)
    call MPI_Testany(3, reqs, idx, flag, st)
  end do
  call check(idx == 2 .and. st%MPI_TAG == 2, 'testany index of the second')

  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_Send(rank, 1, MPI_INTEGER, next, 1, MPI_COMM_WORLD)
  n = 0
  do while (n == 0)
    call MPI_Testsome(3, reqs, n, indices, sts)
  end do
  call check(n == 1 .and. indices(1) == 1, 'testsome index of the first')
  call check(inbuf(indices(1)) == prev, 'testsome data at inbuf(indices(1))')

  call MPI_Waitany(3, reqs, idx, st)
  call check(idx == MPI_UNDEFINED, 'waitany over null requests')
  call MPI_Testany(3, reqs, idx, flag, st)
  call check(flag .and. idx == MPI_UNDEFINED, 'testany over null requests')
  call MPI_Waitsome(3, reqs, n, indices, sts)
  call check(n == MPI_UNDEFINED, 'waitsome over null requests')

  call MPI_Irecv(inbuf(2), 1, MPI_INTEGER, rank, 12, MPI_COMM_WORLD, reqs(2))
  call MPI_Send(rank + 100, 1, MPI_INTEGER, rank, 12, MPI_COMM_WORLD)
  call MPI_Waitsome(3, reqs, n, indices, sts)
  call check(n == 1 .and. indices(1) == 2 .and. inbuf(2) == rank + 100, 'waitsome index of the second')

  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) print '(A)', 'PASS fbind_f08_index'
  call MPI_Finalize()
contains
  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (.not. cond) then
      print '(A,I0,A,A)', 'FAIL fbind_f08_index: rank ', rank, ': ', what
      flush(6)
      call MPI_Abort(MPI_COMM_WORLD, 1)
    end if
  end subroutine
end program
