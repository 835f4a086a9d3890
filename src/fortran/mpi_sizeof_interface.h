! The generic MPI_SIZEOF of the mpi and mpi_f08 modules (mpi_sizeof.h).
  interface MPI_SIZEOF
    module procedure lmpi_sizeof_i1, lmpi_sizeof_i2, lmpi_sizeof_i4, lmpi_sizeof_i8, lmpi_sizeof_r4, lmpi_sizeof_r8, lmpi_sizeof_c4, lmpi_sizeof_c8, lmpi_sizeof_r16, lmpi_sizeof_c16, lmpi_sizeof_l, lmpi_sizeof_ch
  end interface
  private :: lmpi_sizeof_i1, lmpi_sizeof_i2, lmpi_sizeof_i4, lmpi_sizeof_i8, lmpi_sizeof_r4, lmpi_sizeof_r8, lmpi_sizeof_c4, lmpi_sizeof_c8, lmpi_sizeof_r16, lmpi_sizeof_c16, lmpi_sizeof_l, lmpi_sizeof_ch

