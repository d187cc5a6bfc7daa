! fbind_mixed.f90 - handles crossing between Fortran and C (fbind_mixed_c.c): a
! communicator made in C is used in Fortran, a request started in Fortran is completed in C;
! a Fortran status goes through MPI_Status_f2c and back through MPI_Status_c2f, and Fortran's
! MPI_STATUS_IGNORE is C's MPI_F_STATUS_IGNORE.
program fbind_mixed
  use mpi
  use iso_c_binding
  implicit none
  interface
    integer(c_int) function cmix_split(fcomm, fsize) bind(C)
      import :: c_int
      integer(c_int) :: fcomm, fsize
    end function
    integer(c_int) function cmix_wait(freq, ftype) bind(C)
      import :: c_int
      integer(c_int) :: freq, ftype
    end function
    integer(c_int) function cmix_status(fstatus, fout, fignore) bind(C)
      import :: c_int
      integer(c_int) :: fstatus(*), fout(*), fignore(*)
    end function
  end interface
  integer :: rank, nranks, ierr, half, hsize, csize, req, n, buf(4), rbuf(4)
  integer :: st(MPI_STATUS_SIZE), st2(MPI_STATUS_SIZE)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  half = cmix_split(MPI_COMM_WORLD, csize)
  if (csize /= nranks) call fail('size seen by C')
  call MPI_Comm_size(half, hsize, ierr)
  if (hsize /= (nranks + 1 - mod(rank, 2)) / 2) call fail('C communicator in Fortran')
  buf = rank
  call MPI_Irecv(rbuf, 4, MPI_INTEGER, 0, 1, MPI_COMM_SELF, req, ierr)
  call MPI_Send(buf, 3, MPI_INTEGER, 0, 1, MPI_COMM_SELF, ierr)
  n = cmix_wait(req, MPI_INTEGER)
  if (n /= 3 .or. req /= MPI_REQUEST_NULL) call fail('request completed in C')
  call MPI_Send(buf, 2, MPI_INTEGER, 0, 7, MPI_COMM_SELF, ierr)
  call MPI_Recv(rbuf, 4, MPI_INTEGER, 0, 7, MPI_COMM_SELF, st, ierr)
  st2 = -1
  n = cmix_status(st, st2, MPI_STATUS_IGNORE)
  if (n /= 2000) call fail('status through MPI_Status_f2c (or MPI_F_STATUS_IGNORE)')
  if (st2(MPI_TAG) /= 107 .or. st2(MPI_SOURCE) /= 0) call fail('status back through MPI_Status_c2f')
  call MPI_Get_count(st2, MPI_INTEGER, n, ierr)
  if (n /= 2) call fail('count of the status from C')
  call MPI_Comm_free(half, ierr)
  call MPI_Finalize(ierr)
  if (rank == 0) print '(A)', 'PASS fbind_mixed'
contains
  subroutine fail(what)
    character(len=*), intent(in) :: what
    print '(A,I0,A,A)', 'FAIL fbind_mixed: rank ', rank, ': ', what
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end subroutine
end program
