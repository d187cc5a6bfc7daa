! fbind_greq.f90 - generalized requests with callbacks written in Fortran (mpi_f08): the
! query callback fills the status (source from the extra state, tag, element count), the
! free callback runs once at completion, the cancel callback sees COMPLETE as a LOGICAL.
module greq_cb
  use mpi_f08
  implicit none
  integer, save :: queries = 0, frees = 0, cancels = 0
  logical, save :: was_complete = .true.
contains
  subroutine query(extra, status, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    type(MPI_Status) :: status
    integer :: ierror
    queries = queries + 1
    status%MPI_SOURCE = int(extra)
    status%MPI_TAG = 42
    call MPI_Status_set_elements(status, MPI_INTEGER, 3)
    call MPI_Status_set_cancelled(status, .false.)
    ierror = MPI_SUCCESS
  end subroutine
  subroutine gfree(extra, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    integer :: ierror
    frees = frees + 1
    ierror = MPI_SUCCESS
  end subroutine
  subroutine gcancel(extra, complete, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    logical :: complete
    integer :: ierror
    cancels = cancels + 1
    was_complete = complete
    ierror = MPI_SUCCESS
  end subroutine
end module

program fbind_greq
  use mpi_f08
  use greq_cb
  implicit none
  integer :: rank, n
  type(MPI_Request) :: req
  type(MPI_Status) :: st
  logical :: flag

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Grequest_start(query, gfree, gcancel, int(1000 + rank, MPI_ADDRESS_KIND), req)
  call MPI_Test(req, flag, MPI_STATUS_IGNORE)
  call check(.not. flag, 'not complete before MPI_Grequest_complete')
  call MPI_Cancel(req)
  call check(cancels == 1 .and. .not. was_complete, 'cancel callback, complete = .false.')
  call MPI_Grequest_complete(req)
  call MPI_Wait(req, st)
  call check(req == MPI_REQUEST_NULL, 'request freed')
  call check(queries == 1 .and. frees == 1, 'query and free callbacks once')
  call check(st%MPI_SOURCE == 1000 + rank .and. st%MPI_TAG == 42, 'status from the query callback')
  call MPI_Get_count(st, MPI_INTEGER, n)
  call check(n == 3, 'element count from the query callback')
  call MPI_Finalize()
  if (rank == 0) print '(A)', 'PASS fbind_greq'
contains
  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (.not. cond) then
      print '(A,I0,A,A)', 'FAIL fbind_greq: rank ', rank, ': ', what
      call MPI_Abort(MPI_COMM_WORLD, 1)
    end if
  end subroutine
end program
