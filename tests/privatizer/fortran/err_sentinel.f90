! EQUIVALENCE that would put a user variable into one of Skein's shared COMMON blocks
subroutine eq
  common /skn_fsentinel/ skn_x
  integer skn_x, mine
  equivalence (skn_x, mine)
  mine = 3
end subroutine
! expect: cannot privatize .mine.: it shares storage \(EQUIVALENCE\) with Skein's COMMON /skn_fsentinel/
