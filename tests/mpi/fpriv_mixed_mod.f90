! fpriv_mixed_mod.f90 - the module of fpriv_mixed, in a unit of its own: the main program
! reaches its variables from another unit. COMMON /fcshared/ is BIND(C): the C part of the
! program (fpriv_mixed_c.c) uses it as a struct.
module fmix_state
  use iso_c_binding
  implicit none
  integer :: mcount = 11
  real(c_double) :: fb
  integer(c_int) :: fa
  common /fcshared/ fb, fa
  bind(C, name="fcshared") :: /fcshared/
contains
  subroutine mset(r)
    integer, intent(in) :: r
    mcount = 20 + r
  end subroutine
end module
