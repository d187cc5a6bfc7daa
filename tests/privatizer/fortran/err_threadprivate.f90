! THREADPRIVATE storage is per kernel thread, shared by the ranks of a worker
subroutine tp
  integer, save :: counter = 0
  !$omp threadprivate(counter)
  counter = counter + 1
end subroutine
! expect: cannot privatize SAVE variable counter of tp: it is THREADPRIVATE
