! Cost of privatized Fortran globals (mpifort -fprivatize, the GCC plugin): the kernels of
! bench_globals.c written the legacy Fortran way. A 5-point stencil over grids in COMMON
! with coefficients in a module, a loop dominated by module scalars, and a tiny subroutine
! that bumps a COMMON counter called in a loop (the worst case: the accessor on every
! call). Plain MPI (mpif.h): builds with mpif90.mpich too. Built with -fno-inline so that
! tick stays a call, as noinline does in the C version. bench_globals_f.sh prints the table.
module bg_params
  double precision :: cx = 0.1d0, cy = 0.1d0
  ! module variables, visible to other units like C globals (SAVEd locals that are never
  ! written would be folded into constants by gcc when not privatized)
  double precision :: acc = 0, decay = 0.999999d0, x0 = 1.0d0
  integer(8) :: hist(0:63) = 0
  logical :: flag = .true.
end module

subroutine stencil()
  use bg_params
  implicit none
  integer, parameter :: nx = 512, ny = 512
  double precision u, unew
  integer(8) updates, steps
  common /grids/ u(nx, ny), unew(nx, ny)
  common /counts/ updates, steps
  integer i, j
  do j = 2, ny - 1
    do i = 2, nx - 1
      unew(i, j) = u(i, j) + cx * (u(i - 1, j) - 2 * u(i, j) + u(i + 1, j)) &
                 + cy * (u(i, j - 1) - 2 * u(i, j) + u(i, j + 1))
    end do
  end do
  do j = 2, ny - 1
    do i = 2, nx - 1
      u(i, j) = unew(i, j)
    end do
  end do
  updates = updates + (nx - 2) * (ny - 2)
end subroutine

subroutine scalar(n, acc_out, hist3)
  use bg_params
  implicit none
  integer(8) n, k, hist3
  double precision acc_out
  integer(8) updates, steps
  common /counts/ updates, steps
  do k = 1, n
    acc = acc * decay + x0
    steps = steps + 1
    if (flag .and. iand(steps, 1023_8) == 0) hist(iand(ishft(steps, -10), 63_8)) = hist(iand(ishft(steps, -10), 63_8)) + 1
  end do
  acc_out = acc
  hist3 = hist(3)
end subroutine

subroutine tick()
  integer(8) updates, steps
  common /counts/ updates, steps
  steps = steps + 1
end subroutine

subroutine calls(n)
  integer(8) n, k
  do k = 1, n
    call tick()
  end do
end subroutine

program bench_globals_f
  implicit none
  include 'mpif.h'
  integer, parameter :: nx = 512, ny = 512
  double precision u, unew
  integer(8) updates, steps
  common /grids/ u(nx, ny), unew(nx, ny)
  common /counts/ updates, steps
  integer ierr, rank, reps, r
  integer(8) n, hist3
  double precision ts(64), tl(64), tc(64), t0, t1, t2, t3, acc
  character(len=32) arg
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  reps = 15
  n = 20000000
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read(arg, *) reps
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read(arg, *) n
  end if
  reps = min(reps, 64)
  u(:, 1) = 1.0d0
  u(:, ny) = 1.0d0
  do r = 1, reps
    t0 = MPI_WTIME()
    call stencil()
    t1 = MPI_WTIME()
    call scalar(n / reps, acc, hist3)
    t2 = MPI_WTIME()
    call calls(n / reps)
    t3 = MPI_WTIME()
    ts(r) = t1 - t0
    tl(r) = t2 - t1
    tc(r) = t3 - t2
  end do
  call sort(ts, reps)
  call sort(tl, reps)
  call sort(tc, reps)
  if (rank == 0) print '(A,F8.3,A,F7.3,A,F7.3,A,I0,1X,I0,1X,F10.3,1X,F9.6,1X,I0,A)', &
      'stencil ', ts(reps / 2 + 1) * 1d3, ' ms  scalar ', tl(reps / 2 + 1) * 1d9 / (n / reps), &
      ' ns/iter  calls ', tc(reps / 2 + 1) * 1d9 / (n / reps), ' ns/call  (checks: ', updates, steps, acc, &
      u(2, 6), hist3, ')'
  call MPI_FINALIZE(ierr)
contains
  subroutine sort(a, m)
    integer m, i, j
    double precision a(m), x
    do i = 2, m
      x = a(i)
      j = i - 1
      do while (j >= 1)
        if (a(j) <= x) exit
        a(j + 1) = a(j)
        j = j - 1
      end do
      a(j + 1) = x
    end do
  end subroutine
end program
