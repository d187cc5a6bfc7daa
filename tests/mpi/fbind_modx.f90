! fbind_modx.f90 - `use mpi` with explicit interfaces: choice buffers of several types and
! ranks through one routine, MPI_SIZEOF, MPI_Type_create_f90_integer/real/complex (their own
! types, MPI_COMBINER_F90_*) and
! MPI_Type_match_size, MPI_Pcontrol, window attributes (predefined and a keyval with
! Fortran callbacks), an error class through ierror, and the arguments the description's
! kinds convert: STRING out of a max= length, MPI_Buffer_detach's address, WEIGHTS arrays
! that may be MPI_UNWEIGHTED. fbind_argcheck.sh proves the interfaces reject wrong calls.
module modx_cb
  implicit none
  integer, save :: deletes = 0
contains
  subroutine win_del(win, keyval, val, extra, ierr)
    integer :: win, keyval, ierr
    integer(kind=8) :: val, extra
    if (val == 42 .and. extra == 7) deletes = deletes + 1
    ierr = 0
  end subroutine
end module

program fbind_modx
  use mpi
  use modx_cb
  implicit none
  integer :: rank, nranks, ierr, sz, t, tsize, key, win, disp, cls
  real(8) :: grid(3, 4)
  complex :: z
  character(len=5) :: word
  logical :: flag, lv
  integer(kind=8) :: big
  integer(kind=MPI_ADDRESS_KIND) :: val, wbytes
  integer :: wbuf(10), info, g, indeg, outdeg, srcs(1), dsts(1), sw(1), dw(1), bbuf(300)
  logical :: weighted
  character(len=MPI_MAX_ERROR_STRING) :: msg
  character(len=20) :: sval
  integer(kind=MPI_ADDRESS_KIND) :: baddr

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call MPI_Pcontrol(1)

  ! one routine, buffers of five types and three ranks
  grid = rank
  if (rank == 0) grid = reshape([(dble(t), t = 1, 12)], [3, 4])
  call MPI_Bcast(grid, 12, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
  call check(grid(3, 4) == 12d0 .and. grid(1, 2) == 4d0, 'bcast real(8) 2-d')
  z = cmplx(rank, -rank)
  call MPI_Allreduce(MPI_IN_PLACE, z, 1, MPI_COMPLEX, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(z == cmplx(nranks * (nranks - 1) / 2, -nranks * (nranks - 1) / 2), 'allreduce complex')
  word = 'none'
  if (rank == 0) word = 'skein'
  call MPI_Bcast(word, 5, MPI_CHARACTER, 0, MPI_COMM_WORLD, ierr)
  call check(word == 'skein', 'bcast character')
  lv = rank == nranks - 1
  call MPI_Allreduce(MPI_IN_PLACE, lv, 1, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD, ierr)
  call check(lv, 'allreduce logical')

  ! MPI_SIZEOF and the parameterized types
  call MPI_Sizeof(grid, sz, ierr)
  call check(sz == 8 .and. ierr == MPI_SUCCESS, 'sizeof real(8) array')
  call MPI_Sizeof(z, sz, ierr)
  call check(sz == 8, 'sizeof complex')
  call MPI_Sizeof(big, sz, ierr)
  call check(sz == 8, 'sizeof integer(8)')
  call MPI_Type_create_f90_integer(range(big), t, ierr)
  call MPI_Type_size(t, tsize, ierr)
  call check(f90(t, MPI_COMBINER_F90_INTEGER) .and. tsize == 8, 'f90_integer(18)')
  call MPI_Type_create_f90_integer(4, t, ierr)
  call MPI_Type_size(t, tsize, ierr)
  call check(f90(t, MPI_COMBINER_F90_INTEGER) .and. tsize == 2, 'f90_integer(4)')
  call MPI_Type_create_f90_real(precision(grid), MPI_UNDEFINED, t, ierr)
  call MPI_Type_size(t, tsize, ierr)
  call check(f90(t, MPI_COMBINER_F90_REAL) .and. tsize == 8, 'f90_real(15)')
  big = rank + 1
  call MPI_Type_create_f90_integer(12, t, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, big, 1, t, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(big == nranks * (nranks + 1) / 2, 'allreduce f90_integer')
  call MPI_Type_create_f90_complex(6, 30, t, ierr)
  call MPI_Type_size(t, tsize, ierr)
  call check(f90(t, MPI_COMBINER_F90_COMPLEX) .and. tsize == 8, 'f90_complex(6,30)')
  call MPI_Sizeof(z, sz, ierr)
  call MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, sz, t, ierr)
  call check(t == MPI_COMPLEX, 'match_size complex 8')
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN, ierr)  ! errors of no object (MPI-4.0)
  call MPI_Type_create_f90_integer(40, t, ierr)
  call MPI_Error_class(ierr, cls, ierr)
  call check(cls == MPI_ERR_ARG, 'f90_integer(40) is an error')

  ! a window (of one rank: windows span one process, see the user guide): predefined
  ! attributes as values, a keyval with a Fortran delete callback
  wbytes = 40
  call MPI_Win_create(wbuf, wbytes, 4, MPI_INFO_NULL, MPI_COMM_SELF, win, ierr)
  call check(ierr == MPI_SUCCESS, "win_create")
  call MPI_Win_get_attr(win, MPI_WIN_SIZE, val, flag, ierr)
  call check(flag .and. val == 40, 'MPI_WIN_SIZE')
  call MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, val, flag, ierr)
  disp = int(val)
  call check(flag .and. disp == 4, 'MPI_WIN_DISP_UNIT')
  call MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, win_del, key, 7_MPI_ADDRESS_KIND, ierr)
  call MPI_Win_set_attr(win, key, 42_MPI_ADDRESS_KIND, ierr)
  call MPI_Win_get_attr(win, key, val, flag, ierr)
  call check(flag .and. val == 42, 'win attribute')
  call MPI_Win_free(win, ierr)
  call check(deletes == 1, 'win delete callback')
  call MPI_Win_free_keyval(key, ierr)

  ! strings of the description's max= lengths
  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, 'color', 'ultramarine', ierr)
  call MPI_Info_get(info, 'color', 5, sval, flag, ierr)
  call check(flag .and. sval == 'ultra', 'info_get valuelen')
  call MPI_Info_free(info, ierr)
  call MPI_Error_string(MPI_ERR_RANK, msg, sz, ierr)
  call check(sz > 0 .and. len_trim(msg) == sz, 'error_string')
  ! MPI_Buffer_detach returns the size (its address has nowhere to go in Fortran)
  call MPI_Buffer_attach(bbuf, 1200, ierr)
  call MPI_Buffer_detach(baddr, sz, ierr)
  call check(ierr == MPI_SUCCESS .and. sz == 1200, 'buffer_detach')
  ! weights: MPI_UNWEIGHTED in and out, then real weights
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, [rank], MPI_UNWEIGHTED, 1, [rank], MPI_UNWEIGHTED, &
                                      MPI_INFO_NULL, .false., g, ierr)
  call MPI_Dist_graph_neighbors_count(g, indeg, outdeg, weighted, ierr)
  call check(indeg == 1 .and. outdeg == 1 .and. .not. weighted, 'unweighted graph')
  call MPI_Dist_graph_neighbors(g, 1, srcs, MPI_UNWEIGHTED, 1, dsts, MPI_UNWEIGHTED, ierr)
  call check(ierr == MPI_SUCCESS .and. srcs(1) == rank .and. dsts(1) == rank, 'unweighted neighbors')
  call MPI_Comm_free(g, ierr)
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, [rank], [5], 1, [rank], [7], &
                                      MPI_INFO_NULL, .false., g, ierr)
  call MPI_Dist_graph_neighbors_count(g, indeg, outdeg, weighted, ierr)
  call check(weighted, 'weighted graph')
  call MPI_Dist_graph_neighbors(g, 1, srcs, sw, 1, dsts, dw, ierr)
  call check(sw(1) == 5 .and. dw(1) == 7, 'weights')
  call MPI_Comm_free(g, ierr)

  call MPI_Finalize(ierr)
  if (rank == 0) print '(A)', 'PASS fbind_modx'
contains
  ! an MPI_Type_create_f90_* type: its own, of that combiner (MPI-3.1 17.1.9, issue 33)
  logical function f90(t, combiner)
    integer, intent(in) :: t, combiner
    integer :: ni, na, nd, comb
    call MPI_Type_get_envelope(t, ni, na, nd, comb, ierr)
    f90 = comb == combiner .and. na == 0 .and. nd == 0
  end function
  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    integer :: ierr2
    if (.not. cond) then
      print '(A,I0,A,A)', 'FAIL fbind_modx: rank ', rank, ': ', what
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr2)
    end if
  end subroutine
end program
