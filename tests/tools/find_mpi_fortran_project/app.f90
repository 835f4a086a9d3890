program app
  use mpi_f08
  integer :: rank, s
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Allreduce(rank, s, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) print '(a,i0)', 'cmake fortran app: sum of ranks ', s
  call MPI_Finalize()
end program app
