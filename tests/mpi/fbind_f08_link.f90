! fbind_f08_link.f90 - mpi_f08's link names (MPI-3.1 17.1.5, MPI_SUBARRAYS_SUPPORTED =
! .false.): MPI_Send reaches the C interposer MPI_Send_f08 of fbind_f08_link_c.c, which
! forwards to PMPI_Send_f08 (the message must arrive); PMPI_Send bypasses it; the specific
! name MPI_Send_f08 is callable; a CHARACTER argument reaches MPI_Comm_set_name_f08 as a
! descriptor; MPI_F_sync_reg exists; ierror is optional and set when present (an error through
! MPI_ERRORS_RETURN, with and without the interposer). MPI_Op_create and MPI_Comm_create_keyval,
! which take Fortran procedures, reach their interposers MPI_Op_create_f08 and
! MPI_Comm_create_keyval_f08 too (PMPI_Op_create does not), and the procedures still work:
! the op reduces, the copy callback runs on MPI_Comm_dup.
program fbind_f08_link
  use mpi_f08
  use iso_c_binding, only: c_int, c_ptr, c_f_pointer, c_intptr_t
  implicit none
  interface
    integer(c_int) function flink_sends() bind(C, name="flink_sends")
      import :: c_int
    end function
    integer(c_int) function flink_names() bind(C, name="flink_names")
      import :: c_int
    end function
    integer(c_int) function flink_last_count() bind(C, name="flink_last_count")
      import :: c_int
    end function
    integer(c_int) function flink_ops() bind(C, name="flink_ops")
      import :: c_int
    end function
    integer(c_int) function flink_keyvals() bind(C, name="flink_keyvals")
      import :: c_int
    end function
    integer(c_intptr_t) function flink_last_extra() bind(C, name="flink_last_extra")
      import :: c_intptr_t
    end function
  end interface
  integer :: rank, nranks, peer, got(3), ierr, before, n
  integer :: buf(3)
  type(MPI_Comm) :: dup, dup2
  type(MPI_Op) :: op, pop
  integer :: keyval, x, y
  integer(kind=MPI_ADDRESS_KIND) :: val
  logical :: flag
  character(len=MPI_MAX_OBJECT_NAME) :: name
  type(MPI_Status) :: st

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  peer = ieor(rank, 1)
  if (peer >= nranks) peer = MPI_PROC_NULL

  ! MPI_Send -> MPI_Send_f08 (interposed) -> PMPI_Send_f08; PMPI_Send -> PMPI_Send_f08
  before = flink_sends()
  buf = [rank, 7, 3 * rank]
  got = -1
  if (mod(rank, 2) == 0) then
    call MPI_Send(buf, 3, MPI_INTEGER, peer, 5, MPI_COMM_WORLD)
    call PMPI_Send(buf, 2, MPI_INTEGER, peer, 6, MPI_COMM_WORLD)
    call MPI_Send_f08(buf, 1, MPI_INTEGER, peer, 7, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS, 'ierror of MPI_Send_f08')
  else
    call MPI_Recv(got, 3, MPI_INTEGER, peer, 5, MPI_COMM_WORLD, st)
    call check(all(got == [peer, 7, 3 * peer]), 'message through the interposer')
    call MPI_Get_count(st, MPI_INTEGER, n)
    call check(n == 3, 'count through the interposer')
    call MPI_Recv(got, 2, MPI_INTEGER, peer, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    call MPI_Recv(got, 1, MPI_INTEGER, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    call MPI_F_sync_reg(got)
    call check(got(1) == peer, 'MPI_F_sync_reg keeps the value')
    call MPI_Send(buf, 2, MPI_INTEGER, MPI_PROC_NULL, 0, MPI_COMM_WORLD)
  end if
  if (mod(rank, 2) == 0) then
    call check(flink_sends() == before + 2, 'MPI_Send_f08 interposed for MPI_Send, not PMPI_Send')
    call check(flink_last_count() == 1, 'count by value')
  else
    call check(flink_sends() == before + 1, 'MPI_Send_f08 interposed (to MPI_PROC_NULL)')
    call check(flink_last_count() == 2, 'count by value')
  end if

  ! CHARACTER(*) through the descriptor, in and out
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call MPI_Comm_set_name(dup, 'link-test')
  call check(flink_names() == 1, 'MPI_Comm_set_name_f08 interposed')
  call MPI_Comm_get_name(dup, name, n)
  call check(n == 9 .and. name == 'link-test', 'name set through the interposer')

  ! optional ierror: set on error (MPI_ERRORS_RETURN), absent is fine too
  call MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN)
  ierr = MPI_SUCCESS
  call MPI_Send(buf, -1, MPI_INTEGER, 0, 0, dup, ierr)
  call check(ierr /= MPI_SUCCESS, 'error returned in ierror')
  call MPI_Error_class(ierr, n)
  call check(n == MPI_ERR_COUNT, 'negative count is MPI_ERR_COUNT')
  call MPI_Send(buf, -1, MPI_INTEGER, 0, 0, dup)
  call MPI_Comm_free(dup)

  ! procedure arguments: MPI_Op_create -> MPI_Op_create_f08 (interposed) -> PMPI_Op_create_f08
  before = flink_ops()
  call MPI_Op_create(fmax, .true., op)
  call check(flink_ops() == before + 1, 'MPI_Op_create_f08 interposed for MPI_Op_create')
  call PMPI_Op_create(fmax, .false., pop, ierr)
  call check(ierr == MPI_SUCCESS .and. flink_ops() == before + 1, 'PMPI_Op_create not interposed')
  x = rank
  call MPI_Allreduce(x, y, 1, MPI_INTEGER, op, MPI_COMM_WORLD)
  call check(y == nranks - 1, 'the Fortran op through the interposer reduces')
  call MPI_Allreduce(x, y, 1, MPI_INTEGER, pop, MPI_COMM_WORLD)
  call check(y == nranks - 1, 'the Fortran op of PMPI_Op_create reduces')
  call MPI_Op_free(op)
  call MPI_Op_free(pop)

  ! MPI_Comm_create_keyval -> MPI_Comm_create_keyval_f08: callbacks and extra state by value
  before = flink_keyvals()
  call MPI_Comm_create_keyval(copy_plus1, MPI_COMM_NULL_DELETE_FN, keyval, 4242_MPI_ADDRESS_KIND)
  call check(flink_keyvals() == before + 1, 'MPI_Comm_create_keyval_f08 interposed')
  call check(flink_last_extra() == 4242, 'extra state by value')
  call MPI_Comm_set_attr(MPI_COMM_WORLD, keyval, int(rank, MPI_ADDRESS_KIND))
  call MPI_Comm_dup(MPI_COMM_WORLD, dup2)
  call MPI_Comm_get_attr(dup2, keyval, val, flag)
  call check(flag .and. val == rank + 1, 'the Fortran copy callback ran')
  call MPI_Comm_free(dup2)
  call MPI_Comm_delete_attr(MPI_COMM_WORLD, keyval)
  call MPI_Comm_free_keyval(keyval)

  call MPI_Finalize()
  if (rank == 0) print '(A)', 'PASS fbind_f08_link'
contains
  ! a maximum written in Fortran (the result nranks - 1 needs it to run, from 2 ranks on)
  subroutine fmax(invec, inoutvec, len, datatype)
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: a(:), b(:)
    integer :: i
    call c_f_pointer(invec, a, [len])
    call c_f_pointer(inoutvec, b, [len])
    do i = 1, len
      b(i) = max(a(i), b(i))
    end do
  end subroutine

  subroutine copy_plus1(oldcomm, comm_keyval, extra_state, attribute_val_in, attribute_val_out, flag, ierror)
    type(MPI_Comm) :: oldcomm
    integer :: comm_keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
    logical :: flag
    flag = extra_state == 4242
    attribute_val_out = attribute_val_in + 1
    ierror = MPI_SUCCESS
  end subroutine

  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (.not. cond) then
      print '(A,I0,A,A)', 'FAIL fbind_f08_link: rank ', rank, ': ', what
      call MPI_Abort(MPI_COMM_WORLD, 1)
    end if
  end subroutine
end program
