! include 'mpif.h' from a free-form program.
program t_f90_include
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, np, total
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, np, ierr)
  call MPI_ALLREDUCE(1, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. total == np) print '(a)', 't_f90_include: passed'
  call MPI_FINALIZE(ierr)
  if (total /= np) stop 1
end program t_f90_include
