! fbind_f77.f - the Fortran bindings through mpif.h, fixed form: point-to-point with
! status and MPI_STATUS_IGNORE, MPI_IN_PLACE, a derived type made from an array, a user
! reduction and an error handler written in Fortran, attribute callbacks in Fortran,
! CHARACTER arguments and MPI_WTIME.
      subroutine check(cond, what)
      implicit none
      include 'mpif.h'
      logical cond
      character*(*) what
      integer rank, ierr
      if (.not. cond) then
        call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
        print '(A,I0,A,A)', 'FAIL fbind_f77: rank ', rank, ': ', what
        call MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
      end if
      end

! user reduction: inoutvec = invec + 2 * inoutvec (not commutative in general)
      subroutine myop(invec, inoutvec, len, dtype)
      integer len, dtype, i
      integer invec(len), inoutvec(len)
      do i = 1, len
        inoutvec(i) = invec(i) + inoutvec(i)
      end do
      end

      subroutine myhandler(comm, code)
      integer comm, code
      integer calls, lastcode
      common /hstate/ calls, lastcode
      calls = calls + 1
      lastcode = code
      end

! attribute copy callback: the copy holds the value plus 100 and counts the calls
      subroutine mycopy(oldcomm, keyval, extra, valin, valout, flag,
     &                  ierr)
      implicit none
      include 'mpif.h'
      integer oldcomm, keyval, ierr
      integer(kind=MPI_ADDRESS_KIND) extra, valin, valout
      logical flag
      integer ncopy, ndel
      common /astate/ ncopy, ndel
      ncopy = ncopy + 1
      valout = valin + 100 + extra
      flag = .true.
      ierr = MPI_SUCCESS
      end

      subroutine mydel(comm, keyval, val, extra, ierr)
      implicit none
      include 'mpif.h'
      integer comm, keyval, ierr
      integer(kind=MPI_ADDRESS_KIND) val, extra
      integer ncopy, ndel
      common /astate/ ncopy, ndel
      ndel = ndel + 1
      ierr = MPI_SUCCESS
      end

      program fbind_f77
      implicit none
      include 'mpif.h'
      external myop, myhandler, mycopy, mydel
      integer rank, nranks, ierr, next, prev, i, val, got, op
      integer status(MPI_STATUS_SIZE), cnt, vec, eh, kv, dup, flg
      integer arr(20), col(4), sums(3), calls, lastcode
      integer ncopy, ndel, rlen
      integer(kind=MPI_ADDRESS_KIND) aval, extra
      logical flag
      character*(MPI_MAX_OBJECT_NAME) cname
      double precision t0, dpair(2), dres(2)
      real rpair(2), rres(2)
      integer ipair(2), ires(2)
      double complex zv, zs
      common /hstate/ calls, lastcode
      common /astate/ ncopy, ndel

      call MPI_INIT(ierr)
      call check(ierr .eq. MPI_SUCCESS, 'MPI_INIT')
      call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
      call MPI_COMM_SIZE(MPI_COMM_WORLD, nranks, ierr)
      t0 = MPI_WTIME()
      next = mod(rank + 1, nranks)
      prev = mod(rank + nranks - 1, nranks)

! ring with status
      call MPI_SENDRECV(rank, 1, MPI_INTEGER, next, 7, got, 1,
     &     MPI_INTEGER, prev, 7, MPI_COMM_WORLD, status, ierr)
      call check(got .eq. prev, 'sendrecv value')
      call check(status(MPI_SOURCE) .eq. prev, 'status source')
      call check(status(MPI_TAG) .eq. 7, 'status tag')
      call MPI_GET_COUNT(status, MPI_INTEGER, cnt, ierr)
      call check(cnt .eq. 1, 'get_count')
      call MPI_SENDRECV(rank, 1, MPI_INTEGER, next, 8, got, 1,
     &     MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
     &     MPI_STATUS_IGNORE, ierr)
      call check(got .eq. prev, 'status ignore')

! Fortran pair types with MAXLOC/MINLOC, DOUBLE COMPLEX sums
      dpair(1) = dble(rank + 1)
      dpair(2) = dble(rank)
      call MPI_ALLREDUCE(dpair, dres, 1, MPI_2DOUBLE_PRECISION,
     &     MPI_MAXLOC, MPI_COMM_WORLD, ierr)
      call check(dres(1) .eq. dble(nranks) .and.
     &     dres(2) .eq. dble(nranks - 1), '2DOUBLE_PRECISION MAXLOC')
      rpair(1) = real(rank + 1)
      rpair(2) = real(rank)
      call MPI_ALLREDUCE(rpair, rres, 1, MPI_2REAL, MPI_MINLOC,
     &     MPI_COMM_WORLD, ierr)
      call check(rres(1) .eq. 1.0 .and. rres(2) .eq. 0.0,
     &     '2REAL MINLOC')
      ipair(1) = 7
      ipair(2) = nranks - 1 - rank
      call MPI_ALLREDUCE(ipair, ires, 1, MPI_2INTEGER, MPI_MINLOC,
     &     MPI_COMM_WORLD, ierr)
      call check(ires(1) .eq. 7 .and. ires(2) .eq. 0,
     &     '2INTEGER MINLOC ties take the lowest index')
      zv = dcmplx(dble(rank), 1.0d0)
      call MPI_ALLREDUCE(zv, zs, 1, MPI_DOUBLE_COMPLEX, MPI_SUM,
     &     MPI_COMM_WORLD, ierr)
      call check(zs .eq. dcmplx(dble(nranks * (nranks - 1) / 2),
     &     dble(nranks)), 'DOUBLE COMPLEX sum')

! MPI_IN_PLACE
      val = rank + 1
      call MPI_ALLREDUCE(MPI_IN_PLACE, val, 1, MPI_INTEGER, MPI_SUM,
     &     MPI_COMM_WORLD, ierr)
      call check(val .eq. nranks * (nranks + 1) / 2, 'in place sum')

! a column of a 4x5 array as a vector type, sent to self
      do i = 1, 20
        arr(i) = i + 1000 * rank
      end do
      call MPI_TYPE_VECTOR(4, 1, 5, MPI_INTEGER, vec, ierr)
      call MPI_TYPE_COMMIT(vec, ierr)
      call MPI_SENDRECV(arr(2), 1, vec, rank, 1, col, 4, MPI_INTEGER,
     &     rank, 1, MPI_COMM_WORLD, status, ierr)
      call check(col(3) .eq. arr(12), 'vector type')
      call MPI_TYPE_FREE(vec, ierr)

! user reduction in Fortran
      call MPI_OP_CREATE(myop, .true., op, ierr)
      sums(1) = rank
      sums(2) = 1
      sums(3) = 2 * rank
      call MPI_ALLREDUCE(MPI_IN_PLACE, sums, 3, MPI_INTEGER, op,
     &     MPI_COMM_WORLD, ierr)
      call check(sums(2) .eq. nranks, 'user op')
      call check(sums(3) .eq. nranks * (nranks - 1), 'user op 3')
      call MPI_OP_FREE(op, ierr)

! error handler in Fortran
      calls = 0
      call MPI_COMM_DUP(MPI_COMM_WORLD, dup, ierr)
      call MPI_COMM_CREATE_ERRHANDLER(myhandler, eh, ierr)
      call MPI_COMM_SET_ERRHANDLER(dup, eh, ierr)
      call MPI_SEND(rank, 1, MPI_INTEGER, nranks + 5, 0, dup, ierr)
      call check(ierr .ne. MPI_SUCCESS, 'bad rank returns an error')
      call check(calls .eq. 1, 'handler called')
      call MPI_ERROR_CLASS(lastcode, i, ierr)
      call check(i .eq. MPI_ERR_RANK, 'handler code')
      call MPI_ERRHANDLER_FREE(eh, ierr)
! the same through MPI-1's MPI_ERRHANDLER_CREATE (removed in MPI-3.0)
      call MPI_ERRHANDLER_CREATE(myhandler, eh, ierr)
      call check(ierr .eq. MPI_SUCCESS, 'MPI_ERRHANDLER_CREATE')
      call MPI_COMM_SET_ERRHANDLER(dup, eh, ierr)
      call MPI_SEND(rank, 1, MPI_INTEGER, nranks + 5, 0, dup, ierr)
      call check(calls .eq. 2, 'MPI-1 handler called')
      call MPI_ERRHANDLER_FREE(eh, ierr)

! attribute callbacks in Fortran
      ncopy = 0
      ndel = 0
      extra = 5
      call MPI_COMM_CREATE_KEYVAL(mycopy, mydel, kv, extra, ierr)
      aval = 40 + rank
      call MPI_COMM_SET_ATTR(dup, kv, aval, ierr)
      call MPI_COMM_DUP(dup, flg, ierr)
      call check(ncopy .eq. 1, 'copy callback')
      aval = 0
      call MPI_COMM_GET_ATTR(flg, kv, aval, flag, ierr)
      call check(flag, 'copied attribute present')
      call check(aval .eq. 145 + rank, 'copied attribute value')
      call MPI_COMM_FREE(flg, ierr)
      call check(ndel .eq. 1, 'delete callback')
      call MPI_COMM_GET_ATTR(MPI_COMM_WORLD, MPI_TAG_UB, aval, flag,
     &     ierr)
      call check(flag .and. aval .ge. 32767, 'MPI_TAG_UB')

! CHARACTER arguments
      call MPI_COMM_SET_NAME(dup, 'fortran dup   ', ierr)
      cname = 'x'
      call MPI_COMM_GET_NAME(dup, cname, rlen, ierr)
      call check(cname .eq. 'fortran dup', 'comm name')
      call check(rlen .eq. 11, 'comm name length')
      call MPI_COMM_FREE(dup, ierr)
      call MPI_COMM_FREE_KEYVAL(kv, ierr)

      call check(MPI_WTIME() .ge. t0, 'wtime')
      call MPI_BARRIER(MPI_COMM_WORLD, ierr)
      call MPI_FINALIZE(ierr)
      if (rank .eq. 0) print '(A)', 'PASS fbind_f77'
      end
