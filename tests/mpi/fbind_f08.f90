! fbind_f08.f90 - the Fortran bindings through `use mpi_f08`: handle types and their
! comparison, TYPE(MPI_Status), optional ierror, MPI_IN_PLACE, MPI_STATUS(ES)_IGNORE,
! nonblocking calls on request arrays, a communicator split, a user reduction with the
! Fortran 2008 callback shape (TYPE(C_PTR) buffers), and an error returned through ierror.
module f08_ops
  use mpi_f08
  use iso_c_binding
  implicit none
contains
  subroutine maxabs(invec, inoutvec, len, datatype)
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: a(:), b(:)
    integer :: i
    call c_f_pointer(invec, a, [len])
    call c_f_pointer(inoutvec, b, [len])
    do i = 1, len
      b(i) = max(abs(a(i)), abs(b(i)))
    end do
  end subroutine
end module

program fbind_f08
  use mpi_f08
  use f08_ops
  implicit none
  integer :: rank, nranks, next, prev, got, val, ierr, cnt, v(2)
  type(MPI_Status) :: st
  type(MPI_Request) :: reqs(2)
  type(MPI_Comm) :: half
  type(MPI_Op) :: op

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  next = mod(rank + 1, nranks)
  prev = mod(rank + nranks - 1, nranks)

  call MPI_Sendrecv(rank, 1, MPI_INTEGER, next, 3, got, 1, MPI_INTEGER, prev, 3, MPI_COMM_WORLD, st)
  call check(got == prev .and. st%MPI_SOURCE == prev .and. st%MPI_TAG == 3, 'sendrecv status')
  call MPI_Get_count(st, MPI_INTEGER, cnt)
  call check(cnt == 1, 'get_count')

  call MPI_Irecv(got, 1, MPI_INTEGER, prev, 4, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(rank, 1, MPI_INTEGER, next, 4, MPI_COMM_WORLD, reqs(2))
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
  call check(got == prev .and. reqs(1) == MPI_REQUEST_NULL, 'waitall')
  call MPI_Sendrecv(rank, 1, MPI_INTEGER, next, 5, got, 1, MPI_INTEGER, prev, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  call check(got == prev, 'status ignore')

  val = rank + 1
  call MPI_Allreduce(MPI_IN_PLACE, val, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_SUCCESS .and. val == nranks * (nranks + 1) / 2, 'in place')

  call MPI_Op_create(maxabs, .true., op)
  v = [-rank, 1]
  call MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INTEGER, op, MPI_COMM_WORLD)
  call check(v(1) == nranks - 1 .and. v(2) == 1, 'user op')
  call MPI_Op_free(op)
  call check(op == MPI_OP_NULL, 'op freed')

  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, half)
  call MPI_Comm_size(half, cnt)
  call check(cnt == (nranks + 1 - mod(rank, 2)) / 2 .and. half /= MPI_COMM_WORLD, 'split')
  call MPI_Comm_free(half)

  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
  call MPI_Send(rank, 1, MPI_INTEGER, nranks + 3, 0, MPI_COMM_WORLD, ierr)
  call MPI_Error_class(ierr, cnt)
  call check(cnt == MPI_ERR_RANK, 'error through ierror')

  call MPI_Finalize()
  if (rank == 0) print '(A)', 'PASS fbind_f08'
contains
  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (.not. cond) then
      print '(A,I0,A,A)', 'FAIL fbind_f08: rank ', rank, ': ', what
      call MPI_Abort(MPI_COMM_WORLD, 1)
    end if
  end subroutine
end program
