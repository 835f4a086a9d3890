! The `use mpi` module: the constants and sentinels of mpif.h and an
! explicit interface for every procedure (gen/mpi_interfaces.fh, generated
! from the MPI Forum's apis.json), choice buffers accepting any type, kind
! and rank (gfortran's NO_ARG_CHECK), and the generic MPI_SIZEOF.
module mpi
  implicit none
  include 'mpi_consts.fh'
  include 'mpi_interfaces.fh'

  interface MPI_SIZEOF
    module procedure lmpi_sizeof_i1, lmpi_sizeof_i2, lmpi_sizeof_i4, lmpi_sizeof_i8, lmpi_sizeof_r4, lmpi_sizeof_r8, lmpi_sizeof_c4, lmpi_sizeof_c8, lmpi_sizeof_l
  end interface
  private :: lmpi_sizeof_i1, lmpi_sizeof_i2, lmpi_sizeof_i4, lmpi_sizeof_i8, lmpi_sizeof_r4, lmpi_sizeof_r8, lmpi_sizeof_c4, lmpi_sizeof_c8, lmpi_sizeof_l

contains

! MPI_SIZEOF(X, SIZE, IERROR): the size in bytes of one element of X, a
! scalar or an array of any rank (assumed rank), for every intrinsic type
! and kind MPI has a datatype for.
#define LMPI_SIZEOF(name, decl) \
  subroutine name(x, size, ierror); decl, intent(in) :: x(..); integer, intent(out) :: size, ierror; \
    size = int(storage_size(x) / 8); ierror = MPI_SUCCESS; end subroutine name

  LMPI_SIZEOF(lmpi_sizeof_i1, integer(kind=1))
  LMPI_SIZEOF(lmpi_sizeof_i2, integer(kind=2))
  LMPI_SIZEOF(lmpi_sizeof_i4, integer(kind=4))
  LMPI_SIZEOF(lmpi_sizeof_i8, integer(kind=8))
  LMPI_SIZEOF(lmpi_sizeof_r4, real(kind=4))
  LMPI_SIZEOF(lmpi_sizeof_r8, real(kind=8))
  LMPI_SIZEOF(lmpi_sizeof_c4, complex(kind=4))
  LMPI_SIZEOF(lmpi_sizeof_c8, complex(kind=8))
  LMPI_SIZEOF(lmpi_sizeof_l, logical)
end module mpi
