! MPI_SIZEOF(X, SIZE, IERROR): the size in bytes of one element of X, a
! scalar or an array of any rank (assumed rank), for every intrinsic type
! and kind MPI has a datatype for, and CHARACTER (its length, as MPICH
! answers); ierror is optional as mpi_f08 has it.
#define LMPI_SIZEOF(name, decl) \
  subroutine name(x, size, ierror); decl, intent(in) :: x(..); integer, intent(out) :: size; \
    integer, optional, intent(out) :: ierror; \
    size = int(storage_size(x) / 8); if (present(ierror)) ierror = MPI_SUCCESS; end subroutine name

  LMPI_SIZEOF(lmpi_sizeof_i1, integer(kind=1))
  LMPI_SIZEOF(lmpi_sizeof_i2, integer(kind=2))
  LMPI_SIZEOF(lmpi_sizeof_i4, integer(kind=4))
  LMPI_SIZEOF(lmpi_sizeof_i8, integer(kind=8))
  LMPI_SIZEOF(lmpi_sizeof_r4, real(kind=4))
  LMPI_SIZEOF(lmpi_sizeof_r8, real(kind=8))
  LMPI_SIZEOF(lmpi_sizeof_c4, complex(kind=4))
  LMPI_SIZEOF(lmpi_sizeof_c8, complex(kind=8))
  LMPI_SIZEOF(lmpi_sizeof_r16, real(kind=16))
  LMPI_SIZEOF(lmpi_sizeof_c16, complex(kind=16))
  LMPI_SIZEOF(lmpi_sizeof_l, logical)
  LMPI_SIZEOF(lmpi_sizeof_ch, character(len=*))
