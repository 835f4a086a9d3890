! t_f08_sections: mpi_f08's array sections (MPI_SUBARRAYS_SUPPORTED) and
! large-count forms, 2 or more ranks.  Non-contiguous sections go to the
! library as they are: sent and received in blocking and nonblocking calls,
! collectives with per-process counts, reductions, RMA; the sections a
! datatype cannot describe in a nonblocking call fail with MPI_ERR_BUFFER
! and a message naming the procedure.  Data is checked by content.
program t_f08_sections
  use mpi_f08
  implicit none
  integer, parameter :: n = 12
  integer :: rank, np, fails, total, next, prev, i, j, ierr, cls, slen, cnt
  real(kind=8) :: a(n, 4), b(n, 4), g(2 * n)
  real(kind=8), allocatable :: gat(:), m2(:, :)
  integer :: ia(n), ib(n)
  real :: r(n), s(n)
  integer(kind=MPI_COUNT_KIND) :: big
  logical :: peer
  type(MPI_Request) :: reqs(2)
  type(MPI_Status) :: st
  type(MPI_Win) :: win
  character(len=MPI_MAX_ERROR_STRING) :: msg
  fails = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  next = mod(rank + 1, np)
  prev = mod(rank + np - 1, np)
  if (.not. MPI_SUBARRAYS_SUPPORTED .or. .not. MPI_ASYNC_PROTECTS_NONBLOCKING) call fail('constants')

  ! 1. a 2-D section, every other row of every column, blocking
  a = reshape([(real(1000 * rank + i, 8), i = 1, 4 * n)], [n, 4])
  b = -1
  call MPI_Sendrecv(a(1:n:2, :), 2 * n, MPI_DOUBLE_PRECISION, next, 1, &
                    b(2:n:2, :), 2 * n, MPI_DOUBLE_PRECISION, prev, 1, MPI_COMM_WORLD, st)
  do j = 1, 4
    do i = 1, n
      if (mod(i, 2) == 0) then
        if (b(i, j) /= 1000 * prev + (j - 1) * n + i - 1) call fail('sendrecv section')
      else if (b(i, j) /= -1) then
        call fail('sendrecv wrote between the elements')
      end if
    end do
  end do
  call MPI_Get_count(st, MPI_DOUBLE_PRECISION, cnt)
  if (cnt /= 2 * n) call fail('get_count of a section')

  ! 2. nonblocking, with a reversed section and a partial count
  ia = [(100 * rank + i, i = 1, n)]
  ib = 0
  call MPI_Irecv(ib(n:1:-2), n / 2 - 1, MPI_INTEGER, prev, 2, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(ia(1:n:3), n / 3, MPI_INTEGER, next, 2, MPI_COMM_WORLD, reqs(2))
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
  ! ia(1), ia(4), ia(7), ia(10) land in ib(12), ib(10), ib(8), ib(6)
  do i = 1, n / 3
    if (ib(n + 2 - 2 * i) /= 100 * prev + 3 * i - 2) call fail('isend/irecv sections')
  end do
  if (ib(4) /= 0 .or. ib(n - 1) /= 0) call fail('irecv wrote outside its count')

  ! 3. MPI_BYTE over a real section (4 bytes per element)
  r = [(real(rank * 10 + i), i = 1, n)]
  s = 0
  call MPI_Sendrecv(r(2:n:2), 4 * (n / 2), MPI_BYTE, next, 3, s(1:n:2), 4 * (n / 2), MPI_BYTE, prev, 3, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  if (s(3) /= real(prev * 10 + 4) .or. s(2) /= 0) call fail('bytes over a section')

  ! 4. collectives: bcast, gather (per-process counts, one stride), allgather
  !    into a 2-D section (copied inside the call), allreduce, and the
  !    nonblocking reduction of a section in place
  g = 0
  if (rank == 0) g = [(real(i, 8), i = 1, 2 * n)]
  call MPI_Bcast(g(1:2 * n:2), n, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD)
  if (g(5) /= 5 .or. (rank /= 0 .and. g(2) /= 0)) call fail('bcast section')
  allocate(gat(3 * np), m2(4, np))
  gat = -1
  call MPI_Gather(a(1, 1:2), 1, MPI_DOUBLE_PRECISION, gat(1:3 * np:3), 1, MPI_DOUBLE_PRECISION, 0, &
                  MPI_COMM_WORLD)
  if (rank == 0) then
    do i = 1, np
      if (gat(3 * i - 2) /= 1000 * (i - 1) + 1 .or. gat(3 * i - 1) /= -1) call fail('gather into a section')
    end do
  end if
  m2 = 0
  call MPI_Allgather(real(rank, 8), 1, MPI_DOUBLE_PRECISION, m2(1:4:3, :), 1, MPI_DOUBLE_PRECISION, &
                     MPI_COMM_WORLD)
  ! element order of m2(1:4:3, :): (1,1) (4,1) (1,2) (4,2) ...
  if (m2(1, 1) /= 0 .or. m2(2, 1) /= 0) call fail('allgather into a 2-D section')
  if (np > 1) then
    if (m2(4, 1) /= 1) call fail('allgather into a 2-D section (2nd)')
  end if
  b = a
  call MPI_Allreduce(MPI_IN_PLACE, b(1:n:2, 2:3), n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  if (b(3, 2) /= sum([(1000 * i + n + 3, i = 0, np - 1)]) .or. b(2, 2) /= a(2, 2)) call fail('allreduce section')
  ! (a predefined operation over a derived datatype: LeanMPI reduces it; the
  ! standard does not require it, and MPICH refuses it with MPI_ERR_OP, which
  ! the run over its library, T_F08_PEER set, accepts)
  b = a
  call get_environment_variable('T_F08_PEER', status=i)
  peer = i == 0
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
  call MPI_Iallreduce(MPI_IN_PLACE, b(2:n:2, 1), n / 2, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, &
                      reqs(1), ierr)
  call MPI_Error_class(ierr, cls)
  if (ierr == MPI_SUCCESS) then
    call MPI_Wait(reqs(1), MPI_STATUS_IGNORE)
    if (b(4, 1) /= 1000 * (np - 1) + 4 .or. b(3, 1) /= a(3, 1)) call fail('iallreduce section')
  else if (.not. (peer .and. cls == MPI_ERR_OP)) then
    call fail('iallreduce section: an error')
  end if
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL)

  ! 5. a nonblocking call a datatype cannot describe: a clear error
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
  call MPI_Iallgather(real(rank, 8), 1, MPI_DOUBLE_PRECISION, m2(1:4:3, :), 1, MPI_DOUBLE_PRECISION, &
                      MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Error_class(ierr, cls)
  call MPI_Error_string(ierr, msg, slen)
  if (cls /= MPI_ERR_BUFFER .or. index(msg, 'MPI_IALLGATHER: recvbuf') == 0) call fail('nonblocking error')
  ! 6. memory given to the library must be contiguous
  call MPI_Win_create(g(1:2 * n:2), 8_MPI_ADDRESS_KIND * n, 8, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call MPI_Error_class(ierr, cls)
  if (cls /= MPI_ERR_BUFFER) call fail('win_create of a section')
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL)

  ! 7. RMA: a section as the origin of a put
  g = 0
  call MPI_Win_create(g, 8_MPI_ADDRESS_KIND * 2 * n, 8, MPI_INFO_NULL, MPI_COMM_WORLD, win)
  call MPI_Win_fence(0, win)
  call MPI_Put(a(1:n:4, 2), 3, MPI_DOUBLE_PRECISION, next, 0_MPI_ADDRESS_KIND, 3, MPI_DOUBLE_PRECISION, win)
  call MPI_Win_fence(0, win)
  if (g(2) /= 1000 * prev + n + 5 .or. g(4) /= 0) call fail('put from a section')
  call MPI_Win_free(win)

  ! 8. the large-count forms: INTEGER(KIND=MPI_COUNT_KIND) counts
  big = n / 2
  ib = 0
  call MPI_Sendrecv(ia(2:n:2), big, MPI_INTEGER, next, 4, ib, big, MPI_INTEGER, prev, 4, MPI_COMM_WORLD, st)
  call MPI_Get_count(st, MPI_INTEGER, big)
  if (big /= n / 2 .or. ib(2) /= 100 * prev + 4) call fail('large-count forms')
  call MPI_Type_size(MPI_DOUBLE_PRECISION, big)
  if (big /= 8) call fail('MPI_Type_size_c')

  call MPI_Allreduce(fails, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0 .and. total == 0) print '(a)', 't_f08_sections: passed'
  call MPI_Finalize()
contains
  subroutine fail(what)
    character(len=*), intent(in) :: what
    print '(a,i0,2a)', 'rank ', rank, ': FAIL ', what
    fails = fails + 1
  end subroutine fail
end program t_f08_sections
