! fbind_attr_c.F90 - attributes across languages (MPI-3.1 17.2.7, issue 33), through `use
! mpi` (default) or mpif.h (-DUSE_MPIF): a value set from Fortran is read in C through a
! pointer to storage holding it (fbind_attr_c_c.c dereferences it; Skein handed C the
! value itself, which C then dereferenced); Fortran reads its own value back, and a C
! pointer as an address; MPI_COMM_DUP with MPI_COMM_DUP_FN keeps both behaviours.
program fbind_attr_c
  use, intrinsic :: iso_c_binding, only: c_int, c_long_long
#ifndef USE_MPIF
  use mpi
#endif
  implicit none
#ifdef USE_MPIF
  include 'mpif.h'
#endif
  interface
    integer(c_int) function attr_c_read(comm, keyval, expected) bind(C, name="attr_c_read")
      import :: c_int, c_long_long
      integer(c_int), value :: comm, keyval
      integer(c_long_long), value :: expected
    end function
    integer(c_long_long) function attr_c_set(comm, keyval) bind(C, name="attr_c_set")
      import :: c_int, c_long_long
      integer(c_int), value :: comm, keyval
    end function
  end interface
  integer :: rank, ierr, kv, kv2, dup, tkv
  integer(kind=MPI_ADDRESS_KIND) :: val, addr
  logical :: flag

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, kv, 0_MPI_ADDRESS_KIND, ierr)
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, kv2, 0_MPI_ADDRESS_KIND, ierr)

  val = 55555 + rank
  call MPI_Comm_set_attr(MPI_COMM_WORLD, kv, val, ierr)
  call check(attr_c_read(MPI_COMM_WORLD, kv, 55555_8 + rank) == 1, 'C reads the Fortran value through a pointer')
  val = 0
  call MPI_Comm_get_attr(MPI_COMM_WORLD, kv, val, flag, ierr)
  call check(flag .and. val == 55555 + rank, 'Fortran reads its own value')

  addr = attr_c_set(MPI_COMM_WORLD, kv2)
  call MPI_Comm_get_attr(MPI_COMM_WORLD, kv2, val, flag, ierr)
  call check(flag .and. val == addr, 'Fortran reads a C pointer as an address')

  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call check(attr_c_read(dup, kv, 55555_8 + rank) == 1, 'C reads the copied Fortran value through a pointer')
  call MPI_Comm_get_attr(dup, kv, val, flag, ierr)
  call check(flag .and. val == 55555 + rank, 'Fortran reads the copied value')
  call MPI_Comm_get_attr(dup, kv2, val, flag, ierr)
  call check(flag .and. val == addr, 'the copied C pointer')
  call MPI_Comm_free(dup, ierr)

  ! datatypes too
  call MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, tkv, 0_MPI_ADDRESS_KIND, ierr)
  val = -7
  call MPI_Type_set_attr(MPI_INTEGER, tkv, val, ierr)
  call check(attr_c_read(MPI_INTEGER, tkv, -7_8) == 1, 'C reads a datatype attribute through a pointer')
  call MPI_Type_get_attr(MPI_INTEGER, tkv, val, flag, ierr)
  call check(flag .and. val == -7, 'Fortran reads its datatype attribute')
  call MPI_Type_delete_attr(MPI_INTEGER, tkv, ierr)
  call MPI_Type_free_keyval(tkv, ierr)

  call MPI_Comm_delete_attr(MPI_COMM_WORLD, kv, ierr)
  call MPI_Comm_delete_attr(MPI_COMM_WORLD, kv2, ierr)
  call MPI_Comm_free_keyval(kv, ierr)
  call MPI_Comm_free_keyval(kv2, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(A)', 'PASS fbind_attr_c'
  call MPI_Finalize(ierr)
contains
  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (.not. cond) then
      print '(A,I0,A,A)', 'FAIL fbind_attr_c: rank ', rank, ': ', what
      flush(6)
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
  end subroutine
end program
