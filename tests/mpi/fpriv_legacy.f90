! fpriv_legacy.f90 - a legacy Fortran code's globals under mpifort -fprivatize: blank and
! named COMMON (initialized by BLOCK DATA), EQUIVALENCE inside one COMMON, module variables
! with initializers, SAVEd locals, DATA-initialized locals and a 4 MiB main-program array.
! Every rank checks the initial values, writes its own values, waits for the others to do
! the same, and checks that it still sees its own. Built without -fprivatize the ranks share
! one copy and the check fails (testlist: fail:WRONG).
module fpriv_state
  implicit none
  integer :: modcount = 7
  real(8) :: modarr(100)
  integer, allocatable :: modalloc(:)
end module

block data fpriv_init
  common /named/ na, nb(10)
  integer na, nb
  data na /42/, nb /10*3/
end block data

! a SAVEd counter and a DATA-initialized local: how many times this rank called it
integer function bump()
  integer, save :: calls = 0
  integer seen
  data seen /100/
  calls = calls + 1
  seen = seen + 1
  bump = calls * 1000 + seen
end function

! COMMON seen from another procedure, EQUIVALENCE inside it
subroutine setcommon(r)
  integer r
  common // blank(64)
  integer blank
  common /ceq/ eqa(4)
  integer eqa, eqb(2)
  equivalence (eqa(3), eqb(1))
  blank = r + 5
  eqa = r
  eqb(2) = -r          ! the same storage as eqa(4)
end subroutine

program fpriv_legacy
  use iso_c_binding
  use fpriv_state
  implicit none
  include 'ftest.inc'
  character(len=*), parameter :: t = 'fpriv_legacy'//c_null_char
  integer(c_int) :: rank, nranks, ok
  integer :: i, got, bump
  common // blank(64)
  integer blank
  common /named/ na, nb(10)
  integer na, nb
  common /ceq/ eqa(4)
  integer eqa
  integer :: big(1048576)      ! 4 MiB: static storage of the main program
  save big

  call ftest_init(rank, nranks)
  ok = 1
  ! initial values, from the image every rank's copy is made of
  call ftest_check(t, 'BLOCK DATA na'//c_null_char, 42_c_long, int(na, c_long), ok)
  call ftest_check(t, 'BLOCK DATA nb(10)'//c_null_char, 3_c_long, int(nb(10), c_long), ok)
  call ftest_check(t, 'module initializer'//c_null_char, 7_c_long, int(modcount, c_long), ok)
  call ftest_check(t, 'main array zero'//c_null_char, 0_c_long, int(big(777), c_long), ok)
  call ftest_barrier()

  na = 1000 + rank
  nb = rank
  modcount = 3 * rank
  modarr = rank
  ! the allocatable in turns: without -fprivatize the ranks share its descriptor, and two
  ! ranks freeing it at once would be a double free, not the WRONG that build must report
  do i = 0, nranks - 1
    if (i == rank) then
      if (allocated(modalloc)) deallocate(modalloc)   ! shared when not privatized
      allocate(modalloc(rank + 1))
      modalloc = rank
    end if
    call ftest_barrier()
  end do
  big = rank
  big(size(big)) = rank + 1
  call setcommon(rank)
  do i = 1, rank + 1
    got = bump()
  end do
  call ftest_barrier()      ! every rank has written its values

  call ftest_check(t, 'named COMMON'//c_null_char, int(1000 + rank, c_long), int(na, c_long), ok)
  call ftest_check(t, 'named COMMON array'//c_null_char, int(rank, c_long), int(nb(7), c_long), ok)
  call ftest_check(t, 'blank COMMON'//c_null_char, int(rank + 5, c_long), int(blank(64), c_long), ok)
  call ftest_check(t, 'COMMON member'//c_null_char, int(rank, c_long), int(eqa(1), c_long), ok)
  call ftest_check(t, 'EQUIVALENCE in COMMON'//c_null_char, int(-rank, c_long), int(eqa(4), c_long), ok)
  call ftest_check(t, 'module variable'//c_null_char, int(3 * rank, c_long), int(modcount, c_long), ok)
  call ftest_check(t, 'module array'//c_null_char, int(rank, c_long), int(modarr(50), c_long), ok)
  call ftest_check(t, 'module allocatable size'//c_null_char, int(rank + 1, c_long), int(size(modalloc), c_long), ok)
  call ftest_check(t, 'main array'//c_null_char, int(rank, c_long), int(big(12345), c_long), ok)
  call ftest_check(t, 'main array end'//c_null_char, int(rank + 1, c_long), int(big(size(big)), c_long), ok)
  got = bump()
  call ftest_check(t, 'SAVE and DATA locals'//c_null_char, int((rank + 2) * 1000 + 100 + rank + 2, c_long), &
                   int(got, c_long), ok)
  do i = 0, nranks - 1      ! freed in turns, as allocated
    if (i == rank .and. allocated(modalloc)) deallocate(modalloc)
    call ftest_barrier()
  end do
  call ftest_finish(t, ok)
end program
