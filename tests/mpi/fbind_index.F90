! fbind_index.F90 - request indices are Fortran's, 1-based (issue 32): MPI_WAITANY,
! MPI_TESTANY, MPI_WAITSOME and MPI_TESTSOME through `use mpi` (default) or mpif.h
! (-DUSE_MPIF), shaped like miniGhost's use: requests(3), the third completes first, and
! the index is used to subscript the array. MPI_UNDEFINED stays as it is.
program fbind_index
#ifndef USE_MPIF
  use mpi
#endif
  implicit none
#ifdef USE_MPIF
  include 'mpif.h'
#endif
  integer :: rank, nranks, next, prev, idx, n, i, ierr, inbuf(3), outbuf(3)
  integer :: reqs(3), indices(3), st(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE, 3)
  logical :: flag

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  next = mod(rank + 1, nranks)
  prev = mod(rank + nranks - 1, nranks)

  ! WAITANY: only the third request can complete (tag 3 is sent, 1 and 2 later)
  do i = 1, 3
    call MPI_Irecv(inbuf(i), 1, MPI_INTEGER, prev, i, MPI_COMM_WORLD, reqs(i), ierr)
  end do
  call MPI_Send(rank, 1, MPI_INTEGER, next, 3, MPI_COMM_WORLD, ierr)
  call MPI_Waitany(3, reqs, idx, st, ierr)
  call check(ierr == MPI_SUCCESS .and. idx == 3, 'waitany index of the third request')
  call check(reqs(idx) == MPI_REQUEST_NULL .and. st(MPI_TAG) == 3, 'waitany freed reqs(idx)')

  ! TESTANY: the second
  call MPI_Barrier(MPI_COMM_WORLD, ierr) ! no rank sends tag 2 before every WAITANY returned
  call MPI_Send(rank, 1, MPI_INTEGER, next, 2, MPI_COMM_WORLD, ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Testany(3, reqs, idx, flag, st, ierr)
  end do
  call check(idx == 2 .and. reqs(2) == MPI_REQUEST_NULL .and. st(MPI_TAG) == 2, 'testany index of the second')

  ! WAITSOME: the first, the only one left
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Send(rank, 1, MPI_INTEGER, next, 1, MPI_COMM_WORLD, ierr)
  call MPI_Waitsome(3, reqs, n, indices, sts, ierr)
  call check(n == 1 .and. indices(1) == 1, 'waitsome index of the first')
  call check(inbuf(indices(1)) == prev, 'waitsome data at inbuf(indices(1))')

  ! all null: MPI_UNDEFINED, not MPI_UNDEFINED + 1
  call MPI_Waitany(3, reqs, idx, st, ierr)
  call check(idx == MPI_UNDEFINED, 'waitany over null requests')
  call MPI_Testany(3, reqs, idx, flag, st, ierr)
  call check(flag .and. idx == MPI_UNDEFINED, 'testany over null requests')
  call MPI_Waitsome(3, reqs, n, indices, sts, ierr)
  call check(n == MPI_UNDEFINED, 'waitsome over null requests')
  call MPI_Testsome(3, reqs, n, indices, sts, ierr)
  call check(n == MPI_UNDEFINED, 'testsome over null requests')

  ! TESTSOME: the second and third of three sends to self (the first stays pending)
  outbuf = (/ 10, 20, 30 /)
  call MPI_Irecv(inbuf(1), 1, MPI_INTEGER, rank, 11, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Irecv(inbuf(2), 1, MPI_INTEGER, rank, 12, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Irecv(inbuf(3), 1, MPI_INTEGER, rank, 13, MPI_COMM_WORLD, reqs(3), ierr)
  call MPI_Send(outbuf(2), 1, MPI_INTEGER, rank, 12, MPI_COMM_WORLD, ierr)
  call MPI_Send(outbuf(3), 1, MPI_INTEGER, rank, 13, MPI_COMM_WORLD, ierr)
  n = 0
  indices = -1
  do while (n < 2)
    call MPI_Testsome(3, reqs, i, indices(n + 1:), sts, ierr)
    if (i /= MPI_UNDEFINED) n = n + i
  end do
  call check(n == 2 .and. minval(indices(1:2)) == 2 .and. maxval(indices(1:2)) == 3, 'testsome indices 2 and 3')
  call check(inbuf(indices(1)) == outbuf(indices(1)) .and. inbuf(indices(2)) == outbuf(indices(2)), &
             'testsome data by index')
  call MPI_Send(outbuf(1), 1, MPI_INTEGER, rank, 11, MPI_COMM_WORLD, ierr)
  call MPI_Waitsome(3, reqs, n, indices, sts, ierr)
  call check(n == 1 .and. indices(1) == 1 .and. inbuf(1) == 10, 'waitsome index 1 after testsome')

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(A)', 'PASS fbind_index'
  call MPI_Finalize(ierr)
contains
  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (.not. cond) then
      print '(A,I0,A,A)', 'FAIL fbind_index: rank ', rank, ': ', what
      flush(6)
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
  end subroutine
end program
