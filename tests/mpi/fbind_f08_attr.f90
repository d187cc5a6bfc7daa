! fbind_f08_attr.f90 - mpi_f08's attribute calls: communicator, datatype and window keyvals
! with copy/delete callbacks of the Fortran 2008 shapes, the predefined MPI_COMM_DUP_FN and
! MPI_COMM_NULL_COPY_FN, set/get/delete_attr; MPI_SIZEOF; and the profiling layers: an
! MPI_Send interposer written in C (fbind_f08_prof.c) must see mpi_f08's MPI_Send and not
! its PMPI_Send.
module f08_attr_cb
  use mpi_f08
  implicit none
  integer, save :: copies = 0, deletes = 0
contains
  subroutine copy_plus1(oldcomm, keyval, extra, val_in, val_out, flag, ierror)
    type(MPI_Comm) :: oldcomm
    integer :: keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extra, val_in, val_out
    logical :: flag
    val_out = val_in + extra
    flag = .true.
    copies = copies + 1
    ierror = MPI_SUCCESS
  end subroutine
  subroutine del_count(comm, keyval, val, extra, ierror)
    type(MPI_Comm) :: comm
    integer :: keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: val, extra
    deletes = deletes + 1
    ierror = MPI_SUCCESS
  end subroutine
  subroutine type_del(datatype, keyval, val, extra, ierror)
    type(MPI_Datatype) :: datatype
    integer :: keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: val, extra
    if (val == 9) deletes = deletes + 100
    ierror = MPI_SUCCESS
  end subroutine
end module

program fbind_f08_attr
  use mpi_f08
  use f08_attr_cb
  use iso_c_binding, only: c_int
  implicit none
  interface
    integer(c_int) function prof_sends() bind(C, name="fbind_prof_sends")
      import :: c_int
    end function
  end interface
  integer :: rank, nranks, key, key2, tkey, sz, got, ierr, before
  integer(kind=MPI_ADDRESS_KIND) :: val
  logical :: flag
  type(MPI_Comm) :: dup, dup2
  type(MPI_Datatype) :: t
  real(8) :: r(2, 2)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)

  call MPI_Comm_create_keyval(copy_plus1, del_count, key, 10_MPI_ADDRESS_KIND)
  call MPI_Comm_set_attr(MPI_COMM_WORLD, key, int(rank, MPI_ADDRESS_KIND))
  call MPI_Comm_get_attr(MPI_COMM_WORLD, key, val, flag)
  call check(flag .and. val == rank, 'get_attr')
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call MPI_Comm_get_attr(dup, key, val, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. flag .and. val == rank + 10 .and. copies == 1, 'copy callback')
  call MPI_Comm_delete_attr(dup, key)
  call check(deletes == 1, 'delete callback on delete_attr')
  call MPI_Comm_get_attr(dup, key, val, flag)
  call check(.not. flag, 'deleted')
  call MPI_Comm_free(dup)

  ! the predefined callbacks
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, key2, 0_MPI_ADDRESS_KIND)
  call MPI_Comm_set_attr(MPI_COMM_WORLD, key2, 77_MPI_ADDRESS_KIND)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call MPI_Comm_get_attr(dup, key2, val, flag)
  call check(flag .and. val == 77, 'MPI_COMM_DUP_FN')
  call MPI_Comm_free_keyval(key2)
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, key2, 0_MPI_ADDRESS_KIND)
  call MPI_Comm_set_attr(dup, key2, 5_MPI_ADDRESS_KIND)
  call MPI_Comm_dup(dup, dup2)
  call MPI_Comm_get_attr(dup2, key2, val, flag)
  call check(.not. flag, 'MPI_COMM_NULL_COPY_FN')
  call MPI_Comm_free(dup2)
  call MPI_Comm_free(dup)
  call check(deletes == 3 .and. copies == 3, 'callbacks on dup/free')
  call MPI_Comm_delete_attr(MPI_COMM_WORLD, key)
  call MPI_Comm_free_keyval(key)
  call MPI_Comm_free_keyval(key2)

  ! a datatype keyval (callbacks of the Type shapes)
  call MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, type_del, tkey, 0_MPI_ADDRESS_KIND)
  call MPI_Type_contiguous(2, MPI_INTEGER, t)
  call MPI_Type_set_attr(t, tkey, 9_MPI_ADDRESS_KIND)
  call MPI_Type_get_attr(t, tkey, val, flag)
  call check(flag .and. val == 9, 'type attribute')
  call MPI_Type_free(t)
  call check(deletes == 104, 'type delete callback')
  call MPI_Type_free_keyval(tkey)

  call MPI_Sizeof(r, sz)
  call check(sz == 8, 'sizeof')

  ! profiling: MPI_Send goes through the C MPI_Send (wrapped), PMPI_Send does not
  before = prof_sends()
  if (rank == 0 .and. nranks > 1) then
    call MPI_Send(rank, 1, MPI_INTEGER, 1, 1, MPI_COMM_WORLD)
    call PMPI_Send(rank, 1, MPI_INTEGER, 1, 2, MPI_COMM_WORLD)
    call check(prof_sends() == before + 1, 'interposer saw MPI_Send only')
  else if (rank == 1) then
    call MPI_Recv(got, 1, MPI_INTEGER, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    call PMPI_Recv(got, 1, MPI_INTEGER, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  else if (nranks == 1) then
    call MPI_Send(rank, 1, MPI_INTEGER, MPI_PROC_NULL, 1, MPI_COMM_WORLD)
    call PMPI_Send(rank, 1, MPI_INTEGER, MPI_PROC_NULL, 1, MPI_COMM_WORLD)
    call check(prof_sends() == before + 1, 'interposer saw MPI_Send only')
  end if

  call MPI_Finalize()
  if (rank == 0) print '(A)', 'PASS fbind_f08_attr'
contains
  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (.not. cond) then
      print '(A,I0,A,A)', 'FAIL fbind_f08_attr: rank ', rank, ': ', what
      call MPI_Abort(MPI_COMM_WORLD, 1)
    end if
  end subroutine
end program
