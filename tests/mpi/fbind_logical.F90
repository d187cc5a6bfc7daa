! fbind_logical.F90 - LOGICAL arguments through `use mpi` (default) or mpif.h (-DUSE_MPIF):
! scalars out (flags), scalars in (commute, high, reorder, cancelled) and the LOGICAL arrays
! periods and remain_dims (INTEGER in the mpi module's interfaces until issue 15's review).
! The mpi_f08 counterpart is fbind_f08_logical.f90; the values are chosen the same way, so
! a conversion that drops, inverts or misplaces a value changes a result.
subroutine noop(invec, inoutvec, len, datatype)
  integer :: invec(*), inoutvec(*), len, datatype
  if (len < 0) inoutvec(1) = invec(1) + datatype
end subroutine

program fbind_logical
#ifndef USE_MPIF
  use mpi
#endif
  implicit none
#ifdef USE_MPIF
  include 'mpif.h'
#endif
  external noop
  integer :: rank, nranks, next, prev, got, got8, i, n, src, dst, coords(2), dims(2), indeg, outdeg, kv, ierr
  integer :: buf(4), srcs(1), dsts(1), wts(1), st(MPI_STATUS_SIZE)
  integer :: req, half, inter, merged, cart, sub, graph, op, win
  integer(kind=MPI_ADDRESS_KIND) :: val
  logical :: flag, periods(2), remain(2)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  next = mod(rank + 1, nranks)
  prev = mod(rank + nranks - 1, nranks)

  flag = .false.
  call MPI_Initialized(flag, ierr)
  call check(flag, 'initialized')
  flag = .true.
  call MPI_Finalized(flag, ierr)
  call check(.not. flag, 'finalized before MPI_Finalize')
  call MPI_Comm_test_inter(MPI_COMM_WORLD, flag, ierr)
  call check(.not. flag, 'test_inter of MPI_COMM_WORLD')

  call MPI_Irecv(got, 1, MPI_INTEGER, prev, 7, MPI_COMM_WORLD, req, ierr)
  call MPI_Test(req, flag, st, ierr)
  call check(.not. flag, 'test before the send')
  call MPI_Iprobe(prev, 8, MPI_COMM_WORLD, flag, st, ierr)
  call check(.not. flag, 'iprobe before the send')
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Send(rank, 1, MPI_INTEGER, next, 8, MPI_COMM_WORLD, ierr)
  call MPI_Send(rank, 1, MPI_INTEGER, next, 7, MPI_COMM_WORLD, ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Iprobe(prev, 8, MPI_COMM_WORLD, flag, st, ierr)
  end do
  call check(st(MPI_TAG) == 8 .and. st(MPI_SOURCE) == prev, 'iprobe status')
  ! not into got: the pending MPI_Irecv owns it until MPI_Test completes it
  call MPI_Recv(got8, 1, MPI_INTEGER, prev, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Test(req, flag, st, ierr)
  end do
  call check(got == prev .and. got8 == prev .and. req == MPI_REQUEST_NULL, 'test completes')

  call MPI_Status_set_cancelled(st, .true., ierr)
  call MPI_Test_cancelled(st, flag, ierr)
  call check(flag, 'set_cancelled .true.')
  call MPI_Status_set_cancelled(st, .false., ierr)
  call MPI_Test_cancelled(st, flag, ierr)
  call check(.not. flag, 'set_cancelled .false.')

  call MPI_Op_create(noop, .false., op, ierr)
  flag = .true.
  call MPI_Op_commutative(op, flag, ierr)
  call check(.not. flag, 'op created not commutative')
  call MPI_Op_free(op, ierr)
  call MPI_Op_create(noop, .true., op, ierr)
  call MPI_Op_commutative(op, flag, ierr)
  call check(flag, 'op created commutative')
  call MPI_Op_free(op, ierr)

  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, val, flag, ierr)
  call check(flag .and. val >= 32767, 'MPI_TAG_UB present')
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, kv, 0_MPI_ADDRESS_KIND, ierr)
  flag = .true.
  call MPI_Comm_get_attr(MPI_COMM_WORLD, kv, val, flag, ierr)
  call check(.not. flag, 'unset attribute absent')
  call MPI_Comm_set_attr(MPI_COMM_WORLD, kv, 42_MPI_ADDRESS_KIND, ierr)
  call MPI_Comm_get_attr(MPI_COMM_WORLD, kv, val, flag, ierr)
  call check(flag .and. val == 42, 'set attribute present')
  call MPI_Comm_delete_attr(MPI_COMM_WORLD, kv, ierr)
  call MPI_Comm_free_keyval(kv, ierr)
  call MPI_Win_create(buf, 16_MPI_ADDRESS_KIND, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call MPI_Win_get_attr(win, MPI_WIN_SIZE, val, flag, ierr)
  call check(flag .and. val == 16, 'MPI_WIN_SIZE present')
  call MPI_Win_free(win, ierr)

  dims = [nranks, 1]
  periods = [.true., .false.]
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .false., cart, ierr)
  periods = [.false., .true.]
  call MPI_Cart_get(cart, 2, dims, periods, coords, ierr)
  call check(periods(1) .and. .not. periods(2), 'cart_get periods')
  call check(coords(1) == rank .and. coords(2) == 0, 'cart_get coords (reorder .false.)')
  call MPI_Cart_shift(cart, 0, 1, src, dst, ierr)
  call check(src == prev .and. dst == next, 'shift along the periodic dimension')
  call MPI_Cart_shift(cart, 1, 1, src, dst, ierr)
  call check(src == MPI_PROC_NULL .and. dst == MPI_PROC_NULL, 'shift along the non-periodic one')
  remain = [.true., .false.]
  call MPI_Cart_sub(cart, remain, sub, ierr)
  call MPI_Comm_size(sub, n, ierr)
  call check(n == nranks, 'cart_sub keeps dimension 1')
  call MPI_Comm_free(sub, ierr)
  remain = [.false., .true.]
  call MPI_Cart_sub(cart, remain, sub, ierr)
  call MPI_Comm_size(sub, n, ierr)
  call check(n == 1, 'cart_sub keeps dimension 2')
  call MPI_Comm_free(sub, ierr)
  call MPI_Comm_free(cart, ierr)
  dims(1) = nranks
  periods(1) = .true.
  call MPI_Cart_map(MPI_COMM_WORLD, 1, dims, periods, n, ierr)
  call check(n == rank, 'cart_map')

  srcs(1) = prev
  dsts(1) = next
  wts(1) = 1
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, srcs, wts, 1, dsts, wts, MPI_INFO_NULL, .false., graph, ierr)
  call MPI_Dist_graph_neighbors_count(graph, indeg, outdeg, flag, ierr)
  call check(flag .and. indeg == 1 .and. outdeg == 1, 'weighted graph')
  call MPI_Comm_free(graph, ierr)
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, srcs, MPI_UNWEIGHTED, 1, dsts, MPI_UNWEIGHTED, &
                                      MPI_INFO_NULL, .false., graph, ierr)
  call MPI_Dist_graph_neighbors_count(graph, indeg, outdeg, flag, ierr)
  call check(.not. flag, 'unweighted graph')
  call MPI_Comm_free(graph, ierr)

  if (nranks > 1) then
    call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, half, ierr)
    call MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - mod(rank, 2), 9, inter, ierr)
    call MPI_Comm_test_inter(inter, flag, ierr)
    call check(flag, 'test_inter of an intercommunicator')
    do i = 0, 1
      call MPI_Intercomm_merge(inter, mod(rank, 2) /= i, merged, ierr)
      call MPI_Comm_rank(merged, n, ierr)
      if (mod(rank, 2) == i) then
        call check(n == rank / 2, 'intercomm_merge: the low group first')
      else
        call check(n == (nranks + mod(nranks, 2) * (1 - 2 * i)) / 2 + rank / 2, 'intercomm_merge: high group second')
      end if
      call MPI_Comm_free(merged, ierr)
    end do
    call MPI_Comm_free(inter, ierr)
    call MPI_Comm_free(half, ierr)
  end if

  call MPI_Finalize(ierr)
  call MPI_Finalized(flag, ierr)
  if (.not. flag) then
    print '(A,I0,A)', 'FAIL fbind_logical: rank ', rank, ': finalized after MPI_Finalize'
    error stop 1
  end if
  if (rank == 0) print '(A)', 'PASS fbind_logical'
contains
  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (.not. cond) then
      print '(A,I0,A,A)', 'FAIL fbind_logical: rank ', rank, ': ', what
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
  end subroutine
end program
