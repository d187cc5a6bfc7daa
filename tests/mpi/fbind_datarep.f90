! fbind_datarep.f90 - MPI_Register_datarep with conversion and extent functions written in
! Fortran, in all three styles (mpif.h, use mpi, use mpi_f08), each in a module of its own.
! Every rank writes its own file through its representation (file = -user - extra_state),
! and checks: the write and read conversions and the extent function ran with the extra
! state; the data read back through the representation is what was written; the file holds
! the converted values (read through "native"); MPI_File_get_view returns the name,
! MPI_File_get_type_extent the extent function's answer; a second
! registration of the name is MPI_ERR_DUP_DATAREP. `use mpi` also registers a representation
! with MPI_CONVERSION_FN_NULL (no conversion: the file holds the values themselves).
module drep_path
  implicit none
contains
  ! $TMPDIR (or /tmp)/skein-fbind_datarep-<pid of the first rank>-<style>-<world rank>
  function scratch(style, rank, pid) result(path)
    character(len=*), intent(in) :: style
    integer, intent(in) :: rank, pid
    character(len=512) :: path, dir
    integer :: n, st
    call get_environment_variable('TMPDIR', dir, n, st)
    if (st /= 0 .or. n == 0) dir = '/tmp'
    write (path, '(A,A,I0,A,A,A,I0)') trim(dir), '/skein-fbind_datarep-', pid, '-', style, '-', rank
  end function
end module

module drep_f77
  use drep_path
  implicit none
  private
  public :: run_f77
  include 'mpif.h'
  integer, parameter :: N = 50
  integer, save :: nwrite = 0, nread = 0, nextent = 0
contains
  subroutine wr(userbuf, datatype, count, filebuf, position, extra_state, ierror)
    integer :: userbuf(*), filebuf(*), datatype, count, ierror
    integer(kind=MPI_OFFSET_KIND) :: position
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    filebuf(1:count) = -userbuf(1:count) - int(extra_state)
    if (datatype == MPI_INTEGER) nwrite = nwrite + 1
    ierror = MPI_SUCCESS
  end subroutine
  subroutine rd(userbuf, datatype, count, filebuf, position, extra_state, ierror)
    integer :: userbuf(*), filebuf(*), datatype, count, ierror
    integer(kind=MPI_OFFSET_KIND) :: position
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    userbuf(1:count) = -filebuf(1:count) - int(extra_state)
    if (datatype == MPI_INTEGER) nread = nread + 1
    ierror = MPI_SUCCESS
  end subroutine
  subroutine ext(datatype, extent, extra_state, ierror)
    integer :: datatype, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extent, extra_state, lb
    call MPI_Type_get_extent(datatype, lb, extent, ierror)
    if (extra_state == 77) nextent = nextent + 1
  end subroutine

  subroutine run_f77(rank, pid, fail)
    integer, intent(in) :: rank, pid
    integer, intent(inout) :: fail
    integer :: fh, ierr, cls, etype, ftype, i
    integer :: v(N), back(N), st(MPI_STATUS_SIZE)
    integer(kind=MPI_OFFSET_KIND) :: disp
    integer(kind=MPI_ADDRESS_KIND) :: extent
    character(len=MPI_MAX_DATAREP_STRING) :: rep
    character(len=512) :: path
    path = scratch('f77', rank, pid)
    v = [(rank * 1000 + i, i = 1, N)]
    call MPI_Register_datarep('fneg77', rd, wr, ext, 77_MPI_ADDRESS_KIND, ierr)
    call check(ierr == MPI_SUCCESS, 'mpif.h: register')
    call MPI_Register_datarep('fneg77', rd, wr, ext, 77_MPI_ADDRESS_KIND, ierr)
    call MPI_Error_class(ierr, cls, i)
    call check(cls == MPI_ERR_DUP_DATAREP, 'mpif.h: second registration is MPI_ERR_DUP_DATAREP')
    call MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE + MPI_MODE_RDWR + MPI_MODE_DELETE_ON_CLOSE, &
                       MPI_INFO_NULL, fh, ierr)
    call check(ierr == MPI_SUCCESS, 'mpif.h: open')
    call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'fneg77', MPI_INFO_NULL, ierr)
    call check(ierr == MPI_SUCCESS, 'mpif.h: view through the representation')
    call MPI_File_get_type_extent(fh, MPI_INTEGER, extent, ierr)
    call check(ierr == MPI_SUCCESS .and. nextent == 1 .and. extent == 4, 'mpif.h: the extent function')
    call MPI_File_get_view(fh, disp, etype, ftype, rep, ierr)
    call check(rep == 'fneg77', 'mpif.h: get_view names the representation')
    call MPI_File_write_at(fh, 0_MPI_OFFSET_KIND, v, N, MPI_INTEGER, st, ierr)
    call check(ierr == MPI_SUCCESS .and. nwrite > 0, 'mpif.h: write conversion ran')
    back = 0
    call MPI_File_read_at(fh, 0_MPI_OFFSET_KIND, back, N, MPI_INTEGER, st, ierr)
    call check(ierr == MPI_SUCCESS .and. nread > 0, 'mpif.h: read conversion ran')
    call check(all(back == v), 'mpif.h: round trip through the representation')
    call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL, ierr)
    call MPI_File_read_at(fh, 0_MPI_OFFSET_KIND, back, N, MPI_INTEGER, st, ierr)
    call check(all(back == -v - 77), 'mpif.h: the file holds the converted values')
    call MPI_File_close(fh, ierr)
  contains
    subroutine check(cond, what)
      logical, intent(in) :: cond
      character(len=*), intent(in) :: what
      if (.not. cond) then
        print '(A,I0,A,A)', 'FAIL fbind_datarep: rank ', rank, ': ', what
        fail = fail + 1
      end if
    end subroutine
  end subroutine
end module

module drep_mod
  use mpi
  use drep_path
  implicit none
  private
  public :: run_mod
  integer, parameter :: N = 40
  integer, save :: nwrite = 0, nread = 0
contains
  subroutine wr(userbuf, datatype, count, filebuf, position, extra_state, ierror)
    integer :: userbuf(*), filebuf(*), datatype, count, ierror
    integer(kind=MPI_OFFSET_KIND) :: position
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    filebuf(1:count) = -userbuf(1:count) - int(extra_state)
    nwrite = nwrite + 1
    ierror = MPI_SUCCESS
  end subroutine
  subroutine rd(userbuf, datatype, count, filebuf, position, extra_state, ierror)
    integer :: userbuf(*), filebuf(*), datatype, count, ierror
    integer(kind=MPI_OFFSET_KIND) :: position
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    userbuf(1:count) = -filebuf(1:count) - int(extra_state)
    nread = nread + 1
    ierror = MPI_SUCCESS
  end subroutine
  subroutine ext(datatype, extent, extra_state, ierror)
    integer :: datatype, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extent, extra_state, lb
    call MPI_Type_get_extent(datatype, lb, extent, ierror)
  end subroutine

  subroutine run_mod(rank, pid, fail)
    integer, intent(in) :: rank, pid
    integer, intent(inout) :: fail
    integer :: fh, ierr, i
    integer :: v(N), back(N)
    character(len=512) :: path
    path = scratch('mod', rank, pid)
    v = [(rank * 1000 + i, i = 1, N)]
    call MPI_Register_datarep('fnegmod', rd, wr, ext, 5_MPI_ADDRESS_KIND, ierr)
    call check(ierr == MPI_SUCCESS, 'mpi: register')
    call MPI_Register_datarep('fnullmod', MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, ext, &
                              0_MPI_ADDRESS_KIND, ierr)
    call check(ierr == MPI_SUCCESS, 'mpi: register with MPI_CONVERSION_FN_NULL')
    call MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE + MPI_MODE_RDWR + MPI_MODE_DELETE_ON_CLOSE, &
                       MPI_INFO_NULL, fh, ierr)
    call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'fnegmod', MPI_INFO_NULL, ierr)
    call MPI_File_write_at(fh, 0_MPI_OFFSET_KIND, v, N, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS .and. nwrite > 0, 'mpi: write conversion ran')
    back = 0
    call MPI_File_read_at(fh, 0_MPI_OFFSET_KIND, back, N, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
    call check(nread > 0 .and. all(back == v), 'mpi: round trip through the representation')
    call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL, ierr)
    call MPI_File_read_at(fh, 0_MPI_OFFSET_KIND, back, N, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
    call check(all(back == -v - 5), 'mpi: the file holds the converted values')
    ! MPI_CONVERSION_FN_NULL: written and read as they are
    call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'fnullmod', MPI_INFO_NULL, ierr)
    call MPI_File_write_at(fh, 0_MPI_OFFSET_KIND, v, N, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS, 'mpi: write with MPI_CONVERSION_FN_NULL')
    call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL, ierr)
    call MPI_File_read_at(fh, 0_MPI_OFFSET_KIND, back, N, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
    call check(all(back == v), 'mpi: MPI_CONVERSION_FN_NULL leaves the values as they are')
    call MPI_File_close(fh, ierr)
  contains
    subroutine check(cond, what)
      logical, intent(in) :: cond
      character(len=*), intent(in) :: what
      if (.not. cond) then
        print '(A,I0,A,A)', 'FAIL fbind_datarep: rank ', rank, ': ', what
        fail = fail + 1
      end if
    end subroutine
  end subroutine
end module

module drep_f08
  use mpi_f08
  use iso_c_binding, only: c_ptr, c_f_pointer
  use drep_path
  implicit none
  private
  public :: run_f08
  integer, parameter :: N = 30
  integer, save :: nwrite = 0, nread = 0, nextent = 0
contains
  subroutine wr(userbuf, datatype, count, filebuf, position, extra_state, ierror)
    type(c_ptr), value :: userbuf, filebuf
    type(MPI_Datatype) :: datatype
    integer :: count, ierror
    integer(kind=MPI_OFFSET_KIND) :: position
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer, pointer :: u(:), f(:)
    call c_f_pointer(userbuf, u, [count])
    call c_f_pointer(filebuf, f, [count])
    f = -u - int(extra_state)
    if (datatype == MPI_INTEGER) nwrite = nwrite + 1
    ierror = MPI_SUCCESS
  end subroutine
  subroutine rd(userbuf, datatype, count, filebuf, position, extra_state, ierror)
    type(c_ptr), value :: userbuf, filebuf
    type(MPI_Datatype) :: datatype
    integer :: count, ierror
    integer(kind=MPI_OFFSET_KIND) :: position
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer, pointer :: u(:), f(:)
    call c_f_pointer(userbuf, u, [count])
    call c_f_pointer(filebuf, f, [count])
    u = -f - int(extra_state)
    if (datatype == MPI_INTEGER) nread = nread + 1
    ierror = MPI_SUCCESS
  end subroutine
  subroutine ext(datatype, extent, extra_state, ierror)
    type(MPI_Datatype) :: datatype
    integer(kind=MPI_ADDRESS_KIND) :: extent, extra_state, lb
    integer :: ierror
    call MPI_Type_get_extent(datatype, lb, extent, ierror)
    if (extra_state == 808) nextent = nextent + 1
  end subroutine

  subroutine run_f08(rank, pid, fail)
    integer, intent(in) :: rank, pid
    integer, intent(inout) :: fail
    type(MPI_File) :: fh
    type(MPI_Datatype) :: etype, ftype
    integer :: ierr, cls, i
    integer :: v(N), back(N)
    integer(kind=MPI_OFFSET_KIND) :: disp
    integer(kind=MPI_ADDRESS_KIND) :: extent
    character(len=MPI_MAX_DATAREP_STRING) :: rep
    character(len=512) :: path
    path = scratch('f08', rank, pid)
    v = [(rank * 1000 + i, i = 1, N)]
    call MPI_Register_datarep('fneg08', rd, wr, ext, 808_MPI_ADDRESS_KIND)
    call MPI_Register_datarep('fneg08', rd, wr, ext, 808_MPI_ADDRESS_KIND, ierr)
    call MPI_Error_class(ierr, cls)
    call check(cls == MPI_ERR_DUP_DATAREP, 'mpi_f08: second registration is MPI_ERR_DUP_DATAREP')
    call MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE + MPI_MODE_RDWR + MPI_MODE_DELETE_ON_CLOSE, &
                       MPI_INFO_NULL, fh)
    call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'fneg08', MPI_INFO_NULL, ierr)
    call check(ierr == MPI_SUCCESS, 'mpi_f08: view through the representation')
    call MPI_File_get_type_extent(fh, MPI_INTEGER, extent)
    call check(nextent == 1 .and. extent == 4, 'mpi_f08: the extent function')
    call MPI_File_get_view(fh, disp, etype, ftype, rep)
    call check(rep == 'fneg08', 'mpi_f08: get_view names the representation')
    call MPI_File_write_at(fh, 0_MPI_OFFSET_KIND, v, N, MPI_INTEGER, MPI_STATUS_IGNORE)
    call check(nwrite > 0, 'mpi_f08: write conversion ran')
    back = 0
    call MPI_File_read_at(fh, 0_MPI_OFFSET_KIND, back, N, MPI_INTEGER, MPI_STATUS_IGNORE)
    call check(nread > 0 .and. all(back == v), 'mpi_f08: round trip through the representation')
    call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL)
    call MPI_File_read_at(fh, 0_MPI_OFFSET_KIND, back, N, MPI_INTEGER, MPI_STATUS_IGNORE)
    call check(all(back == -v - 808), 'mpi_f08: the file holds the converted values')
    call MPI_File_close(fh)
  contains
    subroutine check(cond, what)
      logical, intent(in) :: cond
      character(len=*), intent(in) :: what
      if (.not. cond) then
        print '(A,I0,A,A)', 'FAIL fbind_datarep: rank ', rank, ': ', what
        fail = fail + 1
      end if
    end subroutine
  end subroutine
end module

program fbind_datarep
  use mpi_f08
  use drep_f77
  use drep_mod
  use drep_f08
  implicit none
  integer :: rank, pid, fail, total
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  pid = getpid()  ! GNU intrinsic
  call MPI_Bcast(pid, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
  fail = 0
  call run_f77(rank, pid, fail)
  call run_mod(rank, pid, fail)
  call run_f08(rank, pid, fail)
  call MPI_Allreduce(fail, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call MPI_Finalize()
  if (total /= 0) error stop 1
  if (rank == 0) print '(A)', 'PASS fbind_datarep'
end program
