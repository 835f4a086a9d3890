! bench/fortran through `use mpi_f08`: the loops of pp_c.c, then a strided
! array section a(1:2m:2) of 1 MiB sent as it is (MPI_SUBARRAYS_SUPPORTED:
! no copy where the implementation supports it) against the same data sent
! as one derived datatype (MPI_Type_vector) of the whole array; the other
! rank receives into a contiguous array and sends it back.
! usage: pp_f08 [quick]
program pp_f08
  use mpi_f08
  implicit none
  integer, parameter :: m = 131072  ! 1 MiB of REAL(8)
  integer :: rank, iters, windows, nbytes, i, w, k, form, reps
  type(MPI_Request) :: reqs(64)
  type(MPI_Datatype) :: vec
  character(len=8) :: buf, win(64)
  character(len=16) :: arg
  real(kind=8), allocatable :: a(:), b(:)
  double precision :: t0, t, tc, tf, d(41)
  double precision, external :: pair_c_loop, pair_median
  integer :: blk, n
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call get_command_argument(1, arg)
  iters = merge(2000, 20000, arg == 'quick')
  windows = merge(200, 2000, arg == 'quick')
  do nbytes = 0, 8, 8
    t0 = 0
    do i = -iters / 10, iters - 1
      if (i == 0) then
        call MPI_Barrier(MPI_COMM_WORLD)
        t0 = MPI_Wtime()
      end if
      if (rank == 0) then
        call MPI_Send(buf, nbytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD)
        call MPI_Recv(buf, nbytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
      else if (rank == 1) then
        call MPI_Recv(buf, nbytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
        call MPI_Send(buf, nbytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD)
      end if
    end do
    t = MPI_Wtime() - t0
    if (rank == 0) print '(a,f0.4,a,i0,a)', 'RESULT latency value=', t / iters / 2 * 1d6, ' bytes=', nbytes, &
                         ' interface=f08'
  end do
  do w = -windows / 10, windows - 1
    if (w == 0) then
      call MPI_Barrier(MPI_COMM_WORLD)
      t0 = MPI_Wtime()
    end if
    do k = 1, 64
      if (rank == 0) then
        call MPI_Isend(win(k), 8, MPI_BYTE, 1, 2, MPI_COMM_WORLD, reqs(k))
      else
        call MPI_Irecv(win(k), 8, MPI_BYTE, 0, 2, MPI_COMM_WORLD, reqs(k))
      end if
    end do
    call MPI_Waitall(64, reqs, MPI_STATUSES_IGNORE)
    if (rank == 0) then
      call MPI_Recv(buf, 0, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    else
      call MPI_Send(buf, 0, MPI_BYTE, 0, 3, MPI_COMM_WORLD)
    end if
  end do
  t = MPI_Wtime() - t0
  if (rank == 0) print '(a,f0.1,a)', 'RESULT message_rate value=', 64d0 * windows / t, &
                       ' bytes=8 window=64 interface=f08'
  ! the cost of one call: a 0-byte send to MPI_PROC_NULL
  iters = iters * 100
  t0 = MPI_Wtime()
  do i = 1, iters
    call MPI_Send(buf, 0, MPI_BYTE, MPI_PROC_NULL, 1, MPI_COMM_WORLD)
  end do
  t = MPI_Wtime() - t0
  if (rank == 0) print '(a,f0.2,a)', 'RESULT call_time value=', t / iters * 1d9, ' interface=f08'
  ! what this interface adds to that call: blocks of it against blocks of
  ! the same call from C in this process, alternating (bench/fortran/pair_c.c)
  n = iters / 40
  do blk = 1, size(d)
    if (mod(blk, 2) == 1) tc = pair_c_loop(n)
    t0 = MPI_Wtime()
    do i = 1, n
      call MPI_Send(buf, 0, MPI_BYTE, MPI_PROC_NULL, 1, MPI_COMM_WORLD)
    end do
    tf = MPI_Wtime() - t0
    if (mod(blk, 2) == 0) tc = pair_c_loop(n)
    d(blk) = (tf - tc) / n * 1d9
  end do
  t = pair_median(d, size(d))
  if (rank == 0) print '(a,f0.2,a)', 'RESULT fortran_overhead value=', t, ' interface=f08'
  ! the strided section against the derived datatype
  allocate(a(2 * m), b(m))
  a = [(real(i, 8), i = 1, 2 * m)]
  call MPI_Type_vector(m, 1, 2, MPI_DOUBLE_PRECISION, vec)
  call MPI_Type_commit(vec)
  reps = merge(20, 200, arg == 'quick')
  do form = 1, 2
    do i = -reps / 10, reps - 1
      if (i == 0) then
        call MPI_Barrier(MPI_COMM_WORLD)
        t0 = MPI_Wtime()
      end if
      if (rank == 0) then
        if (form == 1) then
          call MPI_Send(a(1:2 * m:2), m, MPI_DOUBLE_PRECISION, 1, 4, MPI_COMM_WORLD)
          call MPI_Recv(a(1:2 * m:2), m, MPI_DOUBLE_PRECISION, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
        else
          call MPI_Send(a, 1, vec, 1, 4, MPI_COMM_WORLD)
          call MPI_Recv(a, 1, vec, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
        end if
      else if (rank == 1) then
        call MPI_Recv(b, m, MPI_DOUBLE_PRECISION, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
        call MPI_Send(b, m, MPI_DOUBLE_PRECISION, 0, 4, MPI_COMM_WORLD)
      end if
    end do
    t = MPI_Wtime() - t0
    if (rank == 0) print '(a,f0.3,a,a)', 'RESULT strided_latency value=', t / reps / 2 * 1d6, &
                         ' bytes=1048576 interface=f08 form=', trim(merge('section', 'vector ', form == 1))
  end do
  if (rank == 1 .and. b(m) /= 2 * m - 1) print '(a)', 'pp_f08: the strided data arrived wrong'
  call MPI_Type_free(vec)
  call MPI_Finalize()
end program pp_f08
