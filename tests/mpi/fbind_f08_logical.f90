! fbind_f08_logical.f90 - every kind of LOGICAL argument through `use mpi_f08`, whose
! BIND(C) specifics take INTEGER(C_INT)s and C pointers instead (so the module works under
! -std=f2008 and -std=f2018; the testlist builds this program both ways): scalars out
! (flags), scalars in (commute, high, reorder, cancelled) and arrays in and out (periods,
! remain_dims). Each value is chosen so that a conversion that drops it, inverts it or
! reads the wrong element gives a different result.
module f08_logical_ops
  use mpi_f08
  use iso_c_binding, only: c_ptr
  implicit none
contains
  subroutine noop(invec, inoutvec, len, datatype)
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
  end subroutine
end module

program fbind_f08_logical
  use mpi_f08
  use f08_logical_ops
  implicit none
  integer :: rank, nranks, next, prev, got, got8, i, n, src, dst, coords(2), dims(2), indeg, outdeg, kv
  integer :: buf(4)
  integer(kind=MPI_ADDRESS_KIND) :: val
  logical :: flag, periods(2)
  type(MPI_Status) :: st
  type(MPI_Request) :: req
  type(MPI_Comm) :: half, inter, merged, cart, sub, graph
  type(MPI_Op) :: op
  type(MPI_Win) :: win

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  next = mod(rank + 1, nranks)
  prev = mod(rank + nranks - 1, nranks)

  ! scalars out
  flag = .false.
  call MPI_Initialized(flag)
  call check(flag, 'initialized')
  flag = .true.
  call MPI_Finalized(flag)
  call check(.not. flag, 'finalized before MPI_Finalize')
  call MPI_Is_thread_main(flag)
  call check(flag, 'is_thread_main')
  call MPI_Comm_test_inter(MPI_COMM_WORLD, flag)
  call check(.not. flag, 'test_inter of MPI_COMM_WORLD')

  ! MPI_Test and MPI_Iprobe: false until the peer sends (it sends after the barrier)
  call MPI_Irecv(got, 1, MPI_INTEGER, prev, 7, MPI_COMM_WORLD, req)
  call MPI_Test(req, flag, st)
  call check(.not. flag, 'test before the send')
  call MPI_Iprobe(prev, 8, MPI_COMM_WORLD, flag, st)
  call check(.not. flag, 'iprobe before the send')
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_Send(rank, 1, MPI_INTEGER, next, 8, MPI_COMM_WORLD)
  call MPI_Send(rank, 1, MPI_INTEGER, next, 7, MPI_COMM_WORLD)
  flag = .false.
  do while (.not. flag)
    call MPI_Iprobe(prev, 8, MPI_COMM_WORLD, flag, st)
  end do
  call check(st%MPI_TAG == 8 .and. st%MPI_SOURCE == prev, 'iprobe status')
  ! not into got: the pending MPI_Irecv owns it until MPI_Test completes it
  call MPI_Recv(got8, 1, MPI_INTEGER, prev, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  flag = .false.
  do while (.not. flag)
    call MPI_Test(req, flag, st)
  end do
  call check(got == prev .and. got8 == prev .and. req == MPI_REQUEST_NULL, 'test completes')

  ! scalar in, then out: the cancelled bit of a status
  call MPI_Status_set_cancelled(st, .true.)
  call MPI_Test_cancelled(st, flag)
  call check(flag, 'set_cancelled .true.')
  call MPI_Status_set_cancelled(st, .false.)
  call MPI_Test_cancelled(st, flag)
  call check(.not. flag, 'set_cancelled .false.')

  ! commute in, out
  call MPI_Op_create(noop, .false., op)
  flag = .true.
  call MPI_Op_commutative(op, flag)
  call check(.not. flag, 'op created not commutative')
  call MPI_Op_free(op)
  call MPI_Op_create(noop, .true., op)
  call MPI_Op_commutative(op, flag)
  call check(flag, 'op created commutative')
  call MPI_Op_free(op)

  ! attribute flags
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, val, flag)
  call check(flag .and. val >= 32767, 'MPI_TAG_UB present')
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, kv, 0_MPI_ADDRESS_KIND)
  flag = .true.
  call MPI_Comm_get_attr(MPI_COMM_WORLD, kv, val, flag)
  call check(.not. flag, 'unset attribute absent')
  call MPI_Comm_set_attr(MPI_COMM_WORLD, kv, 42_MPI_ADDRESS_KIND)
  call MPI_Comm_get_attr(MPI_COMM_WORLD, kv, val, flag)
  call check(flag .and. val == 42, 'set attribute present')
  call MPI_Comm_delete_attr(MPI_COMM_WORLD, kv)
  call MPI_Comm_free_keyval(kv)
  call MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, kv, 0_MPI_ADDRESS_KIND)
  flag = .true.
  call MPI_Type_get_attr(MPI_INTEGER, kv, val, flag)
  call check(.not. flag, 'type attribute absent')
  call MPI_Type_free_keyval(kv)
  call MPI_Win_create(buf, 16_MPI_ADDRESS_KIND, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win)
  call MPI_Win_get_attr(win, MPI_WIN_SIZE, val, flag)
  call check(flag .and. val == 16, 'MPI_WIN_SIZE present')
  call MPI_Win_free(win)

  ! arrays in and out: a periodic dimension of all ranks and a non-periodic one of 1
  dims = [nranks, 1]
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, [.true., .false.], .false., cart)
  periods = [.false., .true.]
  call MPI_Cart_get(cart, 2, dims, periods, coords)
  call check(periods(1) .and. .not. periods(2), 'cart_get periods')
  call check(coords(1) == rank .and. coords(2) == 0, 'cart_get coords (reorder .false.)')
  call MPI_Cart_shift(cart, 0, 1, src, dst)
  call check(src == prev .and. dst == next, 'shift along the periodic dimension')
  call MPI_Cart_shift(cart, 1, 1, src, dst)
  call check(src == MPI_PROC_NULL .and. dst == MPI_PROC_NULL, 'shift along the non-periodic one')
  call MPI_Cart_sub(cart, [.true., .false.], sub)
  call MPI_Comm_size(sub, n)
  call check(n == nranks, 'cart_sub keeps dimension 1')
  call MPI_Comm_free(sub)
  call MPI_Cart_sub(cart, [.false., .true.], sub)
  call MPI_Comm_size(sub, n)
  call check(n == 1, 'cart_sub keeps dimension 2')
  call MPI_Comm_free(sub)
  call MPI_Comm_free(cart)
  call MPI_Cart_map(MPI_COMM_WORLD, 1, [nranks], [.true.], n)
  call check(n == rank, 'cart_map')

  ! reorder in, weighted out
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, [prev], [1], 1, [next], [1], MPI_INFO_NULL, .false., graph)
  call MPI_Dist_graph_neighbors_count(graph, indeg, outdeg, flag)
  call check(flag .and. indeg == 1 .and. outdeg == 1, 'weighted graph')
  call MPI_Comm_free(graph)
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, [prev], MPI_UNWEIGHTED, 1, [next], MPI_UNWEIGHTED, &
                                      MPI_INFO_NULL, .false., graph)
  call MPI_Dist_graph_neighbors_count(graph, indeg, outdeg, flag)
  call check(.not. flag, 'unweighted graph')
  call MPI_Comm_free(graph)

  ! high in: the group whose high is .false. comes first in the merged communicator, both ways
  if (nranks > 1) then
    call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, half)
    call MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - mod(rank, 2), 9, inter)
    call MPI_Comm_test_inter(inter, flag)
    call check(flag, 'test_inter of an intercommunicator')
    do i = 0, 1
      call MPI_Intercomm_merge(inter, mod(rank, 2) /= i, merged)
      call MPI_Comm_rank(merged, n)
      if (mod(rank, 2) == i) then
        call check(n == rank / 2, 'intercomm_merge: the low group first')
      else
        call check(n == (nranks + mod(nranks, 2) * (1 - 2 * i)) / 2 + rank / 2, 'intercomm_merge: high group second')
      end if
      call MPI_Comm_free(merged)
    end do
    call MPI_Comm_free(inter)
    call MPI_Comm_free(half)
  end if

  call MPI_Finalize()
  call MPI_Finalized(flag)
  if (.not. flag) then
    print '(A,I0,A)', 'FAIL fbind_f08_logical: rank ', rank, ': finalized after MPI_Finalize'
    error stop 1
  end if
  if (rank == 0) print '(A)', 'PASS fbind_f08_logical'
contains
  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (.not. cond) then
      print '(A,I0,A,A)', 'FAIL fbind_f08_logical: rank ', rank, ': ', what
      call MPI_Abort(MPI_COMM_WORLD, 1)
    end if
  end subroutine
end program
