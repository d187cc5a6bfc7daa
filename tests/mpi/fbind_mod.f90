! fbind_mod.f90 - the Fortran bindings through `use mpi`: nonblocking point-to-point with
! MPI_STATUSES_IGNORE and a status array, collectives with MPI_IN_PLACE at the root,
! MPI_BOTTOM with absolute addresses (MPI_GET_ADDRESS + an hindexed-free struct type).
program fbind_mod
  use mpi
  implicit none
  integer :: rank, nranks, ierr, i, next, prev
  integer :: reqs(2), stats(MPI_STATUS_SIZE, 2), sbuf(3), rbuf(3)
  integer, allocatable :: all(:)
  integer :: root_val, bl(2), types(2), stype, a, b
  integer(kind=MPI_ADDRESS_KIND) :: disp(2)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  next = mod(rank + 1, nranks)
  prev = mod(rank + nranks - 1, nranks)

  sbuf = [rank, rank * 2, rank * 3]
  call MPI_Irecv(rbuf, 3, MPI_INTEGER, prev, 3, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Isend(sbuf, 3, MPI_INTEGER, next, 3, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Waitall(2, reqs, stats, ierr)
  call check(rbuf(3) == 3 * prev, 'isend/irecv')
  call check(stats(MPI_SOURCE, 1) == prev, 'waitall status')
  call MPI_Irecv(rbuf, 3, MPI_INTEGER, prev, 4, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Isend(sbuf, 3, MPI_INTEGER, next, 4, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
  call check(reqs(1) == MPI_REQUEST_NULL, 'statuses ignore')

  allocate(all(nranks))
  all = -1
  all(rank + 1) = rank * 10
  if (rank == 0) then
    call MPI_Gather(MPI_IN_PLACE, 1, MPI_INTEGER, all, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    do i = 1, nranks
      call check(all(i) == (i - 1) * 10, 'gather in place')
    end do
  else
    call MPI_Gather(all(rank + 1), 1, MPI_INTEGER, all, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  end if
  root_val = 0
  if (rank == 0) root_val = 99
  call MPI_Bcast(root_val, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call check(root_val == 99, 'bcast')
  deallocate(all)

  ! two separate variables sent as one message relative to MPI_BOTTOM
  a = rank + 1
  b = rank + 2
  call MPI_Get_address(a, disp(1), ierr)
  call MPI_Get_address(b, disp(2), ierr)
  bl = 1
  types = MPI_INTEGER
  call MPI_Type_create_struct(2, bl, disp, types, stype, ierr)
  call MPI_Type_commit(stype, ierr)
  call MPI_Sendrecv(MPI_BOTTOM, 1, stype, next, 5, rbuf, 2, MPI_INTEGER, prev, 5, MPI_COMM_WORLD, &
                    MPI_STATUS_IGNORE, ierr)
  call check(rbuf(1) == prev + 1 .and. rbuf(2) == prev + 2, 'MPI_BOTTOM struct')
  call MPI_Type_free(stype, ierr)
  call MPI_F_sync_reg(rbuf)
  call check(rbuf(1) == prev + 1, 'MPI_F_sync_reg keeps the value')

  call MPI_Finalize(ierr)
  if (rank == 0) print '(A)', 'PASS fbind_mod'
contains
  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    integer :: ierr2
    if (.not. cond) then
      print '(A,I0,A,A)', 'FAIL fbind_mod: rank ', rank, ': ', what
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr2)
    end if
  end subroutine
end program
