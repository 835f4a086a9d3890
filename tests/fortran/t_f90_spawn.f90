! t_f90_spawn: MPI_COMM_SPAWN with a Fortran argv, and an error handler
! written in Fortran.  Run with 2 ranks; it spawns 2 copies of itself.
module handler_state
  integer :: calls = 0, seen_comm = -1, seen_class = -1
end module handler_state

subroutine count_errors(comm, code)
  use mpi
  use handler_state
  implicit none
  integer :: comm, code, ierr
  calls = calls + 1
  seen_comm = comm
  call MPI_Error_class(code, seen_class, ierr)
end subroutine count_errors

program t_f90_spawn
  use mpi
  use handler_state
  implicit none
  external :: count_errors
  integer :: ierr, rank, np, parent, inter, fails, total, eh, dup, x, i, n
  integer :: codes(2)
  character(len=16) :: args(3), word
  character(len=256) :: self
  fails = 0
  call MPI_Init(ierr)
  call MPI_Comm_get_parent(parent, ierr)
  if (parent /= MPI_COMM_NULL) then
    ! a child: its arguments came through, then a value goes back to rank 0
    n = command_argument_count()
    call get_command_argument(1, word)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    x = 0
    if (n == 2 .and. word == 'child') x = 10 + rank
    call get_command_argument(2, word)
    if (word /= 'two words') x = -1
    call MPI_Send(x, 1, MPI_INTEGER, 0, 3, parent, ierr)
    call MPI_Comm_disconnect(parent, ierr)
    call MPI_Finalize(ierr)
    stop
  end if
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  call get_command_argument(0, self)
  args(1) = 'child'
  args(2) = 'two words'
  args(3) = ' '
  call MPI_Comm_spawn(self, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, codes, ierr)
  if (ierr /= MPI_SUCCESS .or. codes(1) /= MPI_SUCCESS .or. codes(2) /= MPI_SUCCESS) fails = fails + 1
  if (rank == 0) then
    do i = 0, 1
      call MPI_Recv(x, 1, MPI_INTEGER, i, 3, inter, MPI_STATUS_IGNORE, ierr)
      if (x /= 10 + i) fails = fails + 1
    end do
  end if
  call MPI_Comm_disconnect(inter, ierr)
  ! an error handler in Fortran sees its communicator and the error
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call MPI_Comm_create_errhandler(count_errors, eh, ierr)
  call MPI_Comm_set_errhandler(dup, eh, ierr)
  call MPI_Send(x, 1, MPI_INTEGER, np + 7, 0, dup, ierr)
  if (calls /= 1 .or. seen_comm /= dup .or. seen_class /= MPI_ERR_RANK) fails = fails + 1
  call MPI_Errhandler_free(eh, ierr)
  call MPI_Comm_free(dup, ierr)
  call MPI_Allreduce(fails, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. total == 0) print '(a)', 't_f90_spawn: passed'
  if (rank == 0 .and. total /= 0) print *, 't_f90_spawn: FAILED', total
  call MPI_Finalize(ierr)
  if (total /= 0) stop 1
end program t_f90_spawn
