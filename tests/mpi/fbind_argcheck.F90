! fbind_argcheck.F90 - compiled, never run, by fbind_argcheck.sh: a call of MPI_Send that is
! right, one without ierror and one with a REAL count. With `use mpi` (explicit
! interfaces) the wrong ones must not compile; with mpif.h (implicit interfaces) they do.
program fbind_argcheck
#ifdef USE_MPIF
  implicit none
  include 'mpif.h'
#else
  use mpi
  implicit none
#endif
  integer :: ierr, x
  real :: r
  x = 1
  r = 1.0
#if defined(BAD_COUNT)
  call MPI_Send(x, 1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD)
#elif defined(BAD_TYPE)
  call MPI_Send(x, r, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, ierr)
#else
  call MPI_Send(x, 1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, ierr)
#endif
end program
