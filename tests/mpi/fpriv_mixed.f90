! fpriv_mixed.f90 - a mixed C/Fortran program whose both parts keep globals: a module of
! another unit (fpriv_mixed_mod.f90), a COMMON block shared with the C part and the C part's
! own globals (fpriv_mixed_c.c), all per rank with -fprivatize on both compilers.
program fpriv_mixed
  use iso_c_binding
  use fmix_state
  implicit none
  include 'ftest.inc'
  interface
    integer(c_int) function cmix_touch(r) bind(C)
      import :: c_int
      integer(c_int), value :: r
    end function
    integer(c_int) function cmix_calls() bind(C)
      import :: c_int
    end function
  end interface
  character(len=*), parameter :: t = 'fpriv_mixed'//c_null_char
  integer(c_int) :: rank, nranks, ok, got
  integer :: i

  call ftest_init(rank, nranks)
  ok = 1
  got = 0
  call ftest_check(t, 'module initializer'//c_null_char, 11_c_long, int(mcount, c_long), ok)
  call ftest_barrier()
  call mset(rank)
  fa = 40 + rank
  do i = 1, rank + 1
    got = cmix_touch(rank)
  end do
  call ftest_barrier()
  call ftest_check(t, 'module variable of another unit'//c_null_char, int(20 + rank, c_long), int(mcount, c_long), ok)
  call ftest_check(t, 'COMMON read by C'//c_null_char, int(40 + rank, c_long), int(got, c_long), ok)
  call ftest_check(t, 'COMMON written by C'//c_null_char, int(rank, c_long), int(2 * fb, c_long), ok)
  call ftest_check(t, 'C globals'//c_null_char, int((rank + 1) * 1000 + 100 + rank, c_long), &
                   int(cmix_calls(), c_long), ok)
  call ftest_finish(t, ok)
end program
