! The `use mpi` module: the constants and sentinels of mpif.h and an
! explicit interface for every procedure (gen/mpi_interfaces.fh, generated
! from the MPI Forum's apis.json), choice buffers accepting any type, kind
! and rank (gfortran's NO_ARG_CHECK), the generic MPI_SIZEOF, and
! TYPE(MPI_Status) for MPI_STATUS_F2F08/F082F.
module mpi
  use, intrinsic :: iso_c_binding, only: c_int
  implicit none
  include 'mpi_consts.fh'

  ! mpi_f08's status type, for MPI_STATUS_F2F08/F082F: the C status's 8
  ! integers in the standard ABI
  type, bind(C) :: MPI_Status
    integer(c_int) :: MPI_SOURCE, MPI_TAG, MPI_ERROR
    integer(c_int), private :: internal(5)
  end type MPI_Status
  include 'mpi_interfaces.fh'

#include "mpi_sizeof_interface.h"

contains

#include "mpi_sizeof.h"
end module mpi
