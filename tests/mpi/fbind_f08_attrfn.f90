! fbind_f08_attrfn.f90 - through `use mpi_f08`: the predefined copy callbacks of every object
! kind (MPI_COMM/TYPE_DUP_FN copy the attribute on dup, MPI_COMM/TYPE_NULL_COPY_FN do not;
! MPI_WIN_DUP_FN and MPI_WIN_NULL_COPY_FN, windows having no dup, are accepted and the value
! is kept), a Fortran delete callback that runs on delete_attr and on free, and window and
! file error handlers written in Fortran that run (a called handler and a failed open).
module f08_attrfn_cb
  use mpi_f08
  implicit none
  integer, save :: deleted = 0, win_errs = 0, file_errs = 0, last_code = 0
contains
  subroutine comm_del(comm, keyval, val, extra, ierror)
    type(MPI_Comm) :: comm
    integer :: keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: val, extra
    deleted = deleted + int(val + extra) + 0 * keyval + 0 * comm%MPI_VAL
    ierror = MPI_SUCCESS
  end subroutine
  subroutine type_del(datatype, keyval, val, extra, ierror)
    type(MPI_Datatype) :: datatype
    integer :: keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: val, extra
    deleted = deleted + int(val + extra) + 0 * keyval + 0 * datatype%MPI_VAL
    ierror = MPI_SUCCESS
  end subroutine
  subroutine win_del(win, keyval, val, extra, ierror)
    type(MPI_Win) :: win
    integer :: keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: val, extra
    deleted = deleted + int(val + extra) + 0 * keyval + 0 * win%MPI_VAL
    ierror = MPI_SUCCESS
  end subroutine
  subroutine win_eh(win, code)
    type(MPI_Win) :: win
    integer :: code
    if (win /= MPI_WIN_NULL) win_errs = win_errs + 1
    last_code = code
  end subroutine
  subroutine file_eh(fh, code)
    type(MPI_File) :: fh
    integer :: code
    if (fh == MPI_FILE_NULL) file_errs = file_errs + 1
    last_code = code
  end subroutine
end module

program fbind_f08_attrfn
  use mpi_f08
  use f08_attrfn_cb
  implicit none
  integer :: rank, nranks, kdup, knull, cls, buf(2)
  integer(kind=MPI_ADDRESS_KIND) :: val
  logical :: flag
  type(MPI_Comm) :: comm, dup
  type(MPI_Datatype) :: t, tdup
  type(MPI_Win) :: win
  type(MPI_File) :: fh
  type(MPI_Errhandler) :: eh

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)

  ! communicators: DUP_FN copies (the delete callback then runs for both), NULL_COPY_FN not
  call MPI_Comm_dup(MPI_COMM_WORLD, comm)
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, comm_del, kdup, 1_MPI_ADDRESS_KIND)
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, knull, 0_MPI_ADDRESS_KIND)
  call MPI_Comm_set_attr(comm, kdup, 10_MPI_ADDRESS_KIND)
  call MPI_Comm_set_attr(comm, knull, 20_MPI_ADDRESS_KIND)
  call MPI_Comm_dup(comm, dup)
  call MPI_Comm_get_attr(dup, kdup, val, flag)
  call check(flag .and. val == 10, 'MPI_COMM_DUP_FN copies')
  call MPI_Comm_get_attr(dup, knull, val, flag)
  call check(.not. flag, 'MPI_COMM_NULL_COPY_FN does not copy')
  call MPI_Comm_get_attr(comm, knull, val, flag)
  call check(flag .and. val == 20, 'the original keeps its attribute')
  call MPI_Comm_free(dup)
  call check(deleted == 11, 'comm delete callback on free')
  call MPI_Comm_delete_attr(comm, kdup)
  call check(deleted == 22, 'comm delete callback on delete_attr')
  call MPI_Comm_free(comm)
  call check(deleted == 22, 'no callback for a deleted attribute')
  call MPI_Comm_free_keyval(kdup)
  call MPI_Comm_free_keyval(knull)

  ! datatypes
  deleted = 0
  call MPI_Type_contiguous(2, MPI_INTEGER, t)
  call MPI_Type_create_keyval(MPI_TYPE_DUP_FN, type_del, kdup, 2_MPI_ADDRESS_KIND)
  call MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, knull, 0_MPI_ADDRESS_KIND)
  call MPI_Type_set_attr(t, kdup, 30_MPI_ADDRESS_KIND)
  call MPI_Type_set_attr(t, knull, 40_MPI_ADDRESS_KIND)
  call MPI_Type_dup(t, tdup)
  call MPI_Type_get_attr(tdup, kdup, val, flag)
  call check(flag .and. val == 30, 'MPI_TYPE_DUP_FN copies')
  call MPI_Type_get_attr(tdup, knull, val, flag)
  call check(.not. flag, 'MPI_TYPE_NULL_COPY_FN does not copy')
  call MPI_Type_free(tdup)
  call check(deleted == 32, 'type delete callback on free')
  call MPI_Type_free(t)
  call check(deleted == 64, 'type delete callback on the original')
  call MPI_Type_free_keyval(kdup)
  call MPI_Type_free_keyval(knull)

  ! windows: the copy callbacks are accepted (never called: no MPI_Win_dup)
  deleted = 0
  call MPI_Win_create(buf, 8_MPI_ADDRESS_KIND, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win)
  call MPI_Win_create_keyval(MPI_WIN_DUP_FN, win_del, kdup, 3_MPI_ADDRESS_KIND)
  call MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, knull, 0_MPI_ADDRESS_KIND)
  call MPI_Win_set_attr(win, kdup, 50_MPI_ADDRESS_KIND)
  call MPI_Win_set_attr(win, knull, 60_MPI_ADDRESS_KIND)
  call MPI_Win_get_attr(win, kdup, val, flag)
  call check(flag .and. val == 50, 'window attribute with MPI_WIN_DUP_FN')
  call MPI_Win_get_attr(win, knull, val, flag)
  call check(flag .and. val == 60, 'window attribute with MPI_WIN_NULL_COPY_FN')

  ! a window error handler written in Fortran
  call MPI_Win_create_errhandler(win_eh, eh)
  call MPI_Win_set_errhandler(win, eh)
  call MPI_Errhandler_free(eh)
  call MPI_Win_call_errhandler(win, MPI_ERR_OTHER)
  call check(win_errs == 1 .and. last_code == MPI_ERR_OTHER, 'window handler called')
  call MPI_Win_free(win)
  call check(deleted == 53, 'window delete callback on free')
  call MPI_Win_free_keyval(kdup)
  call MPI_Win_free_keyval(knull)

  ! a file error handler written in Fortran, on MPI_FILE_NULL (the handler of failed opens)
  call MPI_File_create_errhandler(file_eh, eh)
  call MPI_File_set_errhandler(MPI_FILE_NULL, eh)
  call MPI_Errhandler_free(eh)
  call MPI_File_open(MPI_COMM_SELF, '/nonexistent-skein-dir/none', MPI_MODE_RDONLY, MPI_INFO_NULL, fh)
  call MPI_Error_class(last_code, cls)
  call check(file_errs == 1 .and. cls == MPI_ERR_NO_SUCH_FILE, 'file handler runs on a failed open')
  call MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN)

  call MPI_Finalize()
  if (rank == 0) print '(A)', 'PASS fbind_f08_attrfn'
contains
  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (.not. cond) then
      print '(A,I0,A,A)', 'FAIL fbind_f08_attrfn: rank ', rank, ': ', what
      call MPI_Abort(MPI_COMM_WORLD, 1)
    end if
  end subroutine
end program
