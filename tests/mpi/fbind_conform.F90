! fbind_conform.F90 - the Fortran binding defects of issue 33, through `use mpi` (default)
! or mpif.h (-DUSE_MPIF); fbind_f08_conform.f90 is the mpi_f08 counterpart. Each check is
! shaped like the outside suite's case: file and window error handlers get the user code
! passed to MPI_FILE/WIN_CALL_ERRHANDLER; MPI_ALLOC_MEM fills BASEPTR; F90 types are
! distinct per (p, r), cached, MPI_COMBINER_F90_*; the predefined copy callbacks set the
! flag; info keys and values lose their blanks, MPI_INFO_GET_STRING's buflen counts no NUL;
! MPI_IN_PLACE in the nonblocking collectives; MPI_DISPLACEMENT_CURRENT's kind; MPI-1's
! INTEGER displacements; MPI_COMPLEX8/16; the names of MPI_LB and MPI_UB.
! Module counters: build with -fprivatize.
module conform_state
  integer :: last_code = -1, calls = 0
end module

subroutine file_eh(fh, code)
  use conform_state
  integer :: fh, code
  last_code = code
  calls = calls + 1
end subroutine

subroutine win_eh(win, code)
  use conform_state
  integer :: win, code
  last_code = code
  calls = calls + 1
end subroutine

program fbind_conform
  use conform_state
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
#ifndef USE_MPIF
  use mpi
#endif
  implicit none
#ifdef USE_MPIF
  include 'mpif.h'
#endif
  external file_eh, win_eh
  integer :: rank, nranks, ierr, i, cls, code, eh, fh, win, t1, t2, t3, n, ni, na, nd, comb, len
  integer :: ints(4), addrs_dummy(1), types_dummy(1), req, bl(3), disp(3), types(3), ext, lb, ub, sz
  integer(kind=MPI_ADDRESS_KIND) :: base, wsize, aval_in, aval_out, addrs(1)
  integer :: winbuf(4), a(64), b(64)
  integer, pointer :: mem(:)
  type(c_ptr) :: cp
  logical :: flag
  character(len=32) :: val, fname
  character(len=MPI_MAX_OBJECT_NAME) :: tname
  complex(kind=8) :: z
  integer :: info

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)

  ! ---- file and window error handlers get the user-added code itself
  call MPI_Add_error_class(cls, ierr)
  call MPI_Add_error_code(cls, code, ierr)
  write (fname, '(A,I0,A)') '/tmp/skein_fconform_', rank, '.dat'
  call MPI_File_open(MPI_COMM_SELF, fname, MPI_MODE_CREATE + MPI_MODE_RDWR + MPI_MODE_DELETE_ON_CLOSE, &
                     MPI_INFO_NULL, fh, ierr)
  call check(ierr == MPI_SUCCESS, 'file open')
  call MPI_File_create_errhandler(file_eh, eh, ierr)
  call MPI_File_set_errhandler(fh, eh, ierr)
  call MPI_File_call_errhandler(fh, code, ierr)
  call check(calls == 1 .and. last_code == code, 'file handler received the user code')
  call MPI_File_call_errhandler(fh, cls, ierr)
  call check(calls == 2 .and. last_code == cls, 'file handler received the user class')
  call MPI_File_close(fh, ierr)
  call MPI_Errhandler_free(eh, ierr)
  wsize = 16
  call MPI_Win_create(winbuf, wsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call MPI_Win_create_errhandler(win_eh, eh, ierr)
  call MPI_Win_set_errhandler(win, eh, ierr)
  call MPI_Win_call_errhandler(win, code, ierr)
  call check(calls == 3 .and. last_code == code, 'window handler received the user code')

  ! ---- the predefined copy callbacks, called as the suite calls them
  aval_in = 12345
  aval_out = 0
  flag = .false.
  call MPI_WIN_DUP_FN(win, 1, aval_in, aval_in, aval_out, flag, ierr)
  call check(flag .and. aval_out == 12345 .and. ierr == MPI_SUCCESS, 'MPI_WIN_DUP_FN copies, flag true')
  flag = .true.
  call MPI_WIN_NULL_COPY_FN(win, 1, aval_in, aval_in, aval_out, flag, ierr)
  call check(.not. flag .and. ierr == MPI_SUCCESS, 'MPI_WIN_NULL_COPY_FN: flag false')
  aval_out = 0
  call MPI_COMM_DUP_FN(MPI_COMM_WORLD, 1, aval_in, aval_in, aval_out, flag, ierr)
  call check(flag .and. aval_out == 12345, 'MPI_COMM_DUP_FN copies, flag true')
  flag = .true.
  call MPI_TYPE_NULL_COPY_FN(MPI_INTEGER, 1, aval_in, aval_in, aval_out, flag, ierr)
  call check(.not. flag, 'MPI_TYPE_NULL_COPY_FN: flag false')
  call MPI_Win_free(win, ierr)
  call MPI_Errhandler_free(eh, ierr)

  ! ---- MPI_ALLOC_MEM fills BASEPTR, and the memory is usable
  base = 0
  call MPI_Alloc_mem(int(64 * 4, MPI_ADDRESS_KIND), MPI_INFO_NULL, base, ierr)
  call check(ierr == MPI_SUCCESS .and. base /= 0, 'alloc_mem returned an address')
  cp = transfer(base, cp)
  call c_f_pointer(cp, mem, (/ 64 /))
  mem = rank
  call check(sum(mem) == 64 * rank, 'alloc_mem memory usable')
  call MPI_Free_mem(mem, ierr)
  call check(ierr == MPI_SUCCESS, 'free_mem')

  ! ---- F90 types: distinct per (p, r), cached, MPI_COMBINER_F90_*
  call MPI_Type_create_f90_real(MPI_UNDEFINED, 8, t1, ierr)
  call MPI_Type_create_f90_real(MPI_UNDEFINED, 9, t2, ierr)
  call MPI_Type_create_f90_real(MPI_UNDEFINED, 8, t3, ierr)
  call check(t1 /= t2 .and. t1 == t3 .and. t1 /= MPI_REAL4, 'f90_real: r=8, r=9 distinct, r=8 cached')
  call MPI_Type_get_envelope(t2, ni, na, nd, comb, ierr)
  call check(comb == MPI_COMBINER_F90_REAL .and. ni == 2 .and. na == 0 .and. nd == 0, 'f90_real envelope')
  call MPI_Type_get_contents(t2, 2, 0, 0, ints, addrs, types_dummy, ierr)
  call check(ints(1) == MPI_UNDEFINED .and. ints(2) == 9, 'f90_real contents (p, r)')
  call MPI_Type_size(t2, sz, ierr)
  call check(sz == 4, 'f90_real(-, 9) is REAL(4)')
  call MPI_Type_create_f90_integer(9, t1, ierr)
  call MPI_Type_get_envelope(t1, ni, na, nd, comb, ierr)
  call check(comb == MPI_COMBINER_F90_INTEGER .and. ni == 1, 'f90_integer envelope')
  call MPI_Type_create_f90_complex(15, MPI_UNDEFINED, t3, ierr)
  call MPI_Type_get_envelope(t3, ni, na, nd, comb, ierr)
  call MPI_Type_size(t3, sz, ierr)
  call check(comb == MPI_COMBINER_F90_COMPLEX .and. sz == 16, 'f90_complex envelope and size')
  i = rank + 1
  call MPI_Allreduce(MPI_IN_PLACE, i, 1, t1, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_SUCCESS .and. i == nranks * (nranks + 1) / 2, 'allreduce over an f90_integer type')

  ! ---- info: blanks are not significant; GET_STRING's buflen
  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, '  skein_key  ', '  a value  ', ierr)
  call MPI_Info_get(info, 'skein_key', 32, val, flag, ierr)
  call check(flag .and. val == 'a value', 'info_get of a key set with blanks')
  call MPI_Info_get_nthkey(info, 0, val, ierr)
  call check(val == 'skein_key', 'info key stored without blanks')
  call MPI_Info_get_valuelen(info, ' skein_key', len, flag, ierr)
  call check(flag .and. len == 7, 'info_get_valuelen')
  val = 'unchanged'
  len = 0
  call MPI_Info_get_string(info, 'skein_key', len, val, flag, ierr)
  call check(flag .and. len == 7 .and. val == 'unchanged', 'info_get_string, buflen 0')
  len = 3
  call MPI_Info_get_string(info, 'skein_key', len, val, flag, ierr)
  call check(flag .and. len == 7 .and. val == 'a v', 'info_get_string, buflen 3')
  len = 32
  call MPI_Info_get_string(info, 'skein_key', len, val, flag, ierr)
  call check(flag .and. len == 7 .and. val == 'a value', 'info_get_string, buflen 32')
  val = 'unchanged'
  call MPI_Info_get(info, 'no_such_key', 32, val, flag, ierr)
  call check(.not. flag .and. val == 'unchanged', 'info_get of a missing key leaves the value')
  call MPI_Info_free(info, ierr)

  ! ---- MPI_IN_PLACE in the nonblocking collectives
  do i = 1, nranks
    a(i) = 100 * rank + i
  end do
  call MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, 1, MPI_INTEGER, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  do i = 1, nranks
    call check(a(i) == 100 * (i - 1) + rank + 1, 'ialltoall in place')
  end do
  a(1) = rank
  call MPI_Iallreduce(MPI_IN_PLACE, a, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call check(a(1) == nranks * (nranks - 1) / 2, 'iallreduce in place')
  a(rank + 1) = rank * 3
  call MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, 1, MPI_INTEGER, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call check(all(a(1:nranks) == (/ (3 * i, i = 0, nranks - 1) /)), 'iallgather in place')
  a(1) = rank + 1
  call MPI_Iscan(MPI_IN_PLACE, a, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call check(a(1) == (rank + 1) * (rank + 2) / 2, 'iscan in place')
  a(1:nranks) = 1
  call MPI_Ireduce_scatter_block(MPI_IN_PLACE, a, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call check(a(1) == nranks, 'ireduce_scatter_block in place')
  b(1) = rank + 1
  if (rank == 0) then
    call MPI_Ireduce(MPI_IN_PLACE, b, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, req, ierr)
  else
    call MPI_Ireduce(b, a, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, req, ierr)
  end if
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  if (rank == 0) call check(b(1) == nranks * (nranks + 1) / 2, 'ireduce in place at the root')
  do i = 1, nranks
    b(i) = 7 * i
  end do
  if (rank == 0) then
    call MPI_Iscatter(b, 1, MPI_INTEGER, MPI_IN_PLACE, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, req, ierr)
  else
    call MPI_Iscatter(b, 1, MPI_INTEGER, a, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, req, ierr)
  end if
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  if (rank /= 0) call check(a(1) == 7 * (rank + 1), 'iscatter with the root in place')
  if (rank == 0) call check(b(1) == 7, 'iscatter: the root keeps its piece')

  ! ---- MPI_DISPLACEMENT_CURRENT is an offset
  call check(kind(MPI_DISPLACEMENT_CURRENT) == MPI_OFFSET_KIND, 'MPI_DISPLACEMENT_CURRENT kind')

  ! ---- MPI-1's calls with default INTEGER displacements
  bl = (/ 1, 2, 1 /)
  disp = (/ 0, 8, 24 /)
  call MPI_Type_hindexed(3, bl, disp, MPI_INTEGER, t1, ierr)
  call MPI_Type_extent(t1, ext, ierr)
  call MPI_Type_lb(t1, lb, ierr)
  call MPI_Type_ub(t1, ub, ierr)
  call check(ierr == MPI_SUCCESS .and. ext == 28 .and. lb == 0 .and. ub == 28, 'type_hindexed, extent/lb/ub')
  call MPI_Type_hvector(2, 1, 12, MPI_INTEGER, t2, ierr)
  call MPI_Type_extent(t2, ext, ierr)
  call check(ext == 16, 'type_hvector extent')
  types = (/ MPI_LB, MPI_INTEGER, MPI_UB /)
  bl = (/ 1, 1, 1 /)
  disp = (/ -4, 0, 40 /)
  call MPI_Type_struct(3, bl, disp, types, t3, ierr)
  call MPI_Type_extent(t3, ext, ierr)
  call MPI_Type_lb(t3, lb, ierr)
  call check(ext == 44 .and. lb == -4, 'type_struct with MPI_LB/MPI_UB')
  call MPI_Type_commit(t1, ierr)
  a(1:8) = (/ (i, i = 1, 8) /)
  b(1:8) = 0
  call MPI_Sendrecv(a, 1, t1, rank, 5, b, 1, t1, rank, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check(b(1) == 1 .and. b(3) == 3 .and. b(4) == 4 .and. b(7) == 7 .and. b(2) == 0, 'hindexed data')
  call MPI_Type_free(t1, ierr)
  call MPI_Type_free(t2, ierr)
  call MPI_Type_free(t3, ierr)

  ! ---- optional sized types, names of MPI_LB and MPI_UB
  call MPI_Type_size(MPI_COMPLEX8, sz, ierr)
  call check(ierr == MPI_SUCCESS .and. sz == 8, 'MPI_COMPLEX8 size')
  call MPI_Type_size(MPI_COMPLEX16, sz, ierr)
  call check(ierr == MPI_SUCCESS .and. sz == 16, 'MPI_COMPLEX16 size')
  z = cmplx(rank, 1, kind=8)
  call MPI_Allreduce(MPI_IN_PLACE, z, 1, MPI_COMPLEX16, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_SUCCESS .and. int(real(z)) == nranks * (nranks - 1) / 2 .and. int(aimag(z)) == nranks, &
             'allreduce over MPI_COMPLEX16')
  call MPI_Type_get_name(MPI_COMPLEX8, tname, len, ierr)
  call check(tname == 'MPI_COMPLEX8', 'name of MPI_COMPLEX8')
  call MPI_Type_get_name(MPI_LB, tname, len, ierr)
  call check(ierr == MPI_SUCCESS .and. tname == 'MPI_LB' .and. len == 6, 'name of MPI_LB')
  call MPI_Type_get_name(MPI_UB, tname, len, ierr)
  call check(ierr == MPI_SUCCESS .and. tname == 'MPI_UB', 'name of MPI_UB')

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(A)', 'PASS fbind_conform'
  call MPI_Finalize(ierr)
contains
  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (.not. cond) then
      print '(A,I0,A,A)', 'FAIL fbind_conform: rank ', rank, ': ', what
      flush(6)
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
  end subroutine
end program
