! report mode: what -fprivatize would make per rank, with file:line
module rmod
  integer :: counter = 5
  real :: field(10)
end module
block data rinit
  common /rnamed/ ra
  integer ra
  data ra /1/
end block data
subroutine rsub
  use rmod
  integer, save :: calls
  common // rblank(4)
  integer rblank
  calls = calls + counter + rblank(1)
end subroutine
program rmain
  integer :: big(300000)
  save big
  big(1) = 1
  call rsub
end program
! expect: report.f90:19:.*main-program variable big \(zero-initialized, 1200000 bytes\)
! expect: report.f90:13:.*SAVE variable calls of rsub \(zero-initialized, 4 bytes\)
! expect: report.f90:14:.*blank COMMON \(zero-initialized, 16 bytes\)
! expect: report.f90:7:.*COMMON /rnamed/ \(initialized, 4 bytes\)
! expect: report.f90:3:.*module variable rmod::counter \(initialized, 4 bytes\)
! expect: report.f90:4:.*module variable rmod::field \(zero-initialized, 40 bytes\)
! expect-lines: 6
