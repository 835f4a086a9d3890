! The `use mpi` module: the constants and sentinels of mpif.h and an
! explicit interface for every procedure (gen/mpi_interfaces.fh, generated
! from the MPI Forum's apis.json), choice buffers accepting any type, kind
! and rank (gfortran's NO_ARG_CHECK), and the generic MPI_SIZEOF.
module mpi
  implicit none
  include 'mpi_consts.fh'
  include 'mpi_interfaces.fh'

#include "mpi_sizeof_interface.h"

contains

#include "mpi_sizeof.h"
end module mpi
