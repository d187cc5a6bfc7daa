! fbind_f08_link.f90 - mpi_f08's link names (MPI-3.1 17.1.5, MPI_SUBARRAYS_SUPPORTED =
! .false.): MPI_Send reaches the C interposer MPI_Send_f08 of fbind_f08_link_c.c, which
! forwards to PMPI_Send_f08 (the message must arrive); PMPI_Send bypasses it; the specific
! name MPI_Send_f08 is callable; a CHARACTER argument reaches MPI_Comm_set_name_f08 as a
! descriptor; MPI_F_sync_reg exists; ierror is optional and set when present (an error through
! MPI_ERRORS_RETURN, with and without the interposer).
program fbind_f08_link
  use mpi_f08
  use iso_c_binding, only: c_int
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
  end interface
  integer :: rank, nranks, peer, got(3), ierr, before, n
  integer :: buf(3)
  type(MPI_Comm) :: dup
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

  call MPI_Finalize()
  if (rank == 0) print '(A)', 'PASS fbind_f08_link'
contains
  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (.not. cond) then
      print '(A,I0,A,A)', 'FAIL fbind_f08_link: rank ', rank, ': ', what
      call MPI_Abort(MPI_COMM_WORLD, 1)
    end if
  end subroutine
end program
