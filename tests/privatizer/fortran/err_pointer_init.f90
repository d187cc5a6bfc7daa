! a pointer initialized with the address of a per-rank variable would point at the
! process copy in every rank
module pinit
  integer, target :: tgt = 1
  integer, pointer :: ptr => tgt
end module
! expect: cannot privatize module variable pinit::tgt: its address is in the static initializer of module variable pinit::ptr
