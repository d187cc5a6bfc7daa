! fbind_f08_conform.f90 - issue 33's Fortran binding defects through mpi_f08 (fbind_conform.F90
! is the mpi/mpif.h counterpart): window error handlers get the user code; MPI_Alloc_mem
! fills a TYPE(C_PTR) baseptr; F90 types are MPI_COMBINER_F90_*, distinct and cached; info
! blanks and MPI_Info_get_string's buflen; MPI_IN_PLACE in the nonblocking collectives;
! MPI_DISPLACEMENT_CURRENT's kind; MPI_COMPLEX8/16. Module counters: build with -fprivatize.
module f08_conform_state
  integer :: last_code = -1, calls = 0
contains
  subroutine win_eh(win, code)
    use mpi_f08, only: MPI_Win
    type(MPI_Win) :: win
    integer :: code
    last_code = code
    calls = calls + 1
  end subroutine
end module

program fbind_f08_conform
  use mpi_f08
  use f08_conform_state
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer, c_associated
  implicit none
  integer :: rank, nranks, i, cls, code, ni, na, nd, comb, len, sz, winbuf(4), a(64)
  type(MPI_Win) :: win
  type(MPI_Errhandler) :: eh
  type(MPI_Datatype) :: t1, t2, t3
  type(MPI_Request) :: req
  type(MPI_Info) :: info
  type(c_ptr) :: base
  integer, pointer :: mem(:)
  logical :: flag
  character(len=32) :: val

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)

  call MPI_Add_error_class(cls)
  call MPI_Add_error_code(cls, code)
  call MPI_Win_create(winbuf, 16_MPI_ADDRESS_KIND, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win)
  call MPI_Win_create_errhandler(win_eh, eh)
  call MPI_Win_set_errhandler(win, eh)
  call MPI_Win_call_errhandler(win, code)
  call check(calls == 1 .and. last_code == code, 'window handler received the user code')
  call MPI_Win_free(win)
  call MPI_Errhandler_free(eh)

  call MPI_Alloc_mem(int(64 * 4, MPI_ADDRESS_KIND), MPI_INFO_NULL, base)
  call check(c_associated(base), 'alloc_mem returned an address')
  call c_f_pointer(base, mem, (/ 64 /))
  mem = rank + 1
  call check(sum(mem) == 64 * (rank + 1), 'alloc_mem memory usable')
  call MPI_Free_mem(mem)

  call MPI_Type_create_f90_integer(8, t1)
  call MPI_Type_create_f90_integer(9, t2)
  call MPI_Type_create_f90_integer(8, t3)
  call check(t1 /= t2 .and. t1 == t3, 'f90_integer: r=8, r=9 distinct, r=8 cached')
  call MPI_Type_get_envelope(t2, ni, na, nd, comb)
  call check(comb == MPI_COMBINER_F90_INTEGER .and. ni == 1 .and. nd == 0, 'f90_integer envelope')
  call MPI_Type_create_f90_real(15, 300, t3)
  call MPI_Type_get_envelope(t3, ni, na, nd, comb)
  call MPI_Type_size(t3, sz)
  call check(comb == MPI_COMBINER_F90_REAL .and. ni == 2 .and. sz == 8, 'f90_real(15, 300)')

  call MPI_Info_create(info)
  call MPI_Info_set(info, ' k ', '  v v  ')
  call MPI_Info_get(info, 'k', 32, val, flag)
  call check(flag .and. val == 'v v', 'info blanks')
  len = 2
  call MPI_Info_get_string(info, 'k  ', len, val, flag)
  call check(flag .and. len == 3 .and. val == 'v', 'info_get_string, buflen 2')
  call MPI_Info_free(info)

  do i = 1, nranks
    a(i) = 100 * rank + i
  end do
  call MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, 1, MPI_INTEGER, MPI_COMM_WORLD, req)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  do i = 1, nranks
    call check(a(i) == 100 * (i - 1) + rank + 1, 'ialltoall in place')
  end do
  a(1) = rank
  call MPI_Iexscan(MPI_IN_PLACE, a, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  if (rank > 0) call check(a(1) == rank * (rank - 1) / 2, 'iexscan in place')
  a(rank + 1) = -rank
  call MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, 1, MPI_INTEGER, MPI_COMM_WORLD, req)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  call check(all(a(1:nranks) == (/ (-i, i = 0, nranks - 1) /)), 'iallgather in place')

  call check(kind(MPI_DISPLACEMENT_CURRENT) == MPI_OFFSET_KIND, 'MPI_DISPLACEMENT_CURRENT kind')
  call MPI_Type_size(MPI_COMPLEX8, sz)
  call check(sz == 8, 'MPI_COMPLEX8')
  call MPI_Type_size(MPI_COMPLEX16, sz)
  call check(sz == 16, 'MPI_COMPLEX16')

  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) print '(A)', 'PASS fbind_f08_conform'
  call MPI_Finalize()
contains
  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (.not. cond) then
      print '(A,I0,A,A)', 'FAIL fbind_f08_conform: rank ', rank, ': ', what
      flush(6)
      call MPI_Abort(MPI_COMM_WORLD, 1)
    end if
  end subroutine
end program
