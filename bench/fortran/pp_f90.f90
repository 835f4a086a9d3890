! bench/fortran through `use mpi`: the loops of pp_c.c.  usage: pp_f90 [quick]
program pp_f90
  use mpi
  implicit none
  integer :: ierr, rank, iters, windows, nbytes, i, w, k, reqs(64)
  character(len=8) :: buf, win(64)
  character(len=16) :: arg
  double precision :: t0, t, tc, tf, d(41)
  double precision, external :: pair_c_loop, pair_median
  integer :: blk, n
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call get_command_argument(1, arg)
  iters = merge(2000, 20000, arg == 'quick')
  windows = merge(200, 2000, arg == 'quick')
  do nbytes = 0, 8, 8
    t0 = 0
    do i = -iters / 10, iters - 1
      if (i == 0) then
        call MPI_Barrier(MPI_COMM_WORLD, ierr)
        t0 = MPI_Wtime()
      end if
      if (rank == 0) then
        call MPI_Send(buf, nbytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD, ierr)
        call MPI_Recv(buf, nbytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      else if (rank == 1) then
        call MPI_Recv(buf, nbytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
        call MPI_Send(buf, nbytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, ierr)
      end if
    end do
    t = MPI_Wtime() - t0
    if (rank == 0) print '(a,f0.4,a,i0,a)', 'RESULT latency value=', t / iters / 2 * 1d6, ' bytes=', nbytes, &
                         ' interface=f90'
  end do
  do w = -windows / 10, windows - 1
    if (w == 0) then
      call MPI_Barrier(MPI_COMM_WORLD, ierr)
      t0 = MPI_Wtime()
    end if
    do k = 1, 64
      if (rank == 0) then
        call MPI_Isend(win(k), 8, MPI_BYTE, 1, 2, MPI_COMM_WORLD, reqs(k), ierr)
      else
        call MPI_Irecv(win(k), 8, MPI_BYTE, 0, 2, MPI_COMM_WORLD, reqs(k), ierr)
      end if
    end do
    call MPI_Waitall(64, reqs, MPI_STATUSES_IGNORE, ierr)
    if (rank == 0) then
      call MPI_Recv(buf, 0, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    else
      call MPI_Send(buf, 0, MPI_BYTE, 0, 3, MPI_COMM_WORLD, ierr)
    end if
  end do
  t = MPI_Wtime() - t0
  if (rank == 0) print '(a,f0.1,a)', 'RESULT message_rate value=', 64d0 * windows / t, &
                       ' bytes=8 window=64 interface=f90'
  ! the cost of one call: a 0-byte send to MPI_PROC_NULL
  iters = iters * 100
  t0 = MPI_Wtime()
  do i = 1, iters
    call MPI_Send(buf, 0, MPI_BYTE, MPI_PROC_NULL, 1, MPI_COMM_WORLD, ierr)
  end do
  t = MPI_Wtime() - t0
  if (rank == 0) print '(a,f0.2,a)', 'RESULT call_time value=', t / iters * 1d9, ' interface=f90'
  ! what this interface adds to that call: blocks of it against blocks of
  ! the same call from C in this process, alternating (bench/fortran/pair_c.c)
  n = iters / 40
  do blk = 1, size(d)
    if (mod(blk, 2) == 1) tc = pair_c_loop(n)
    t0 = MPI_Wtime()
    do i = 1, n
      call MPI_Send(buf, 0, MPI_BYTE, MPI_PROC_NULL, 1, MPI_COMM_WORLD, ierr)
    end do
    tf = MPI_Wtime() - t0
    if (mod(blk, 2) == 0) tc = pair_c_loop(n)
    d(blk) = (tf - tc) / n * 1d9
  end do
  t = pair_median(d, size(d))
  if (rank == 0) print '(a,f0.2,a)', 'RESULT fortran_overhead value=', t, ' interface=f90'
  call MPI_Finalize(ierr)
end program pp_f90
