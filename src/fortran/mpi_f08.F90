! The `use mpi_f08` module: handle types (TYPE(MPI_Comm) and the others,
! one INTEGER each, comparable with == and /=), TYPE(MPI_Status), optional
! ierror, and a generic MPI_X over MPI_X_f08 for every procedure
! (gen/mpi_f08_*.fh, generated from the MPI Forum's apis.json).  The
! procedures call the C procedures of `use mpi` (mpi_x_, pmpi_x_), so the
! library below is the same, except for procedures with choice buffers:
! those are TYPE(*), DIMENSION(..) and reach C procedures of their own
! (mpi_x_f08_, gen/mpif08_procs.c) as descriptors, so an array section
! arrives without a copy (MPI_SUBARRAYS_SUPPORTED = .TRUE., mpif_subarray.h).
! The large-count forms (INTEGER(KIND=MPI_COUNT_KIND)) are MPI_X_f08c under
! the same generic, calling mpi_x_c_f08_.
module mpi_f08
  use, intrinsic :: iso_c_binding, only: C_INT, C_CHAR, C_SIZE_T, C_DOUBLE, C_PTR, C_INTPTR_T, C_INT64_T, &
                                         C_FUNPTR, C_FUNLOC
  implicit none
  private :: C_INT, C_CHAR, C_SIZE_T, C_DOUBLE, C_INTPTR_T, C_INT64_T, C_FUNPTR, C_FUNLOC

#define HANDLE_TYPE(T) type, bind(C) :: T; integer(C_INT) :: MPI_VAL; end type T
  HANDLE_TYPE(MPI_Comm)
  HANDLE_TYPE(MPI_Datatype)
  HANDLE_TYPE(MPI_Errhandler)
  HANDLE_TYPE(MPI_File)
  HANDLE_TYPE(MPI_Group)
  HANDLE_TYPE(MPI_Info)
  HANDLE_TYPE(MPI_Message)
  HANDLE_TYPE(MPI_Op)
  HANDLE_TYPE(MPI_Request)
  HANDLE_TYPE(MPI_Session)
  HANDLE_TYPE(MPI_Win)

  ! the C status's layout in the standard ABI: 8 integers
  type, bind(C) :: MPI_Status
    integer(C_INT) :: MPI_SOURCE, MPI_TAG, MPI_ERROR
    integer(C_INT), private :: internal(5)
  end type MPI_Status

  include 'mpi_f08_consts.fh'

  interface operator(==)
    module procedure lmpi_eq_comm, lmpi_eq_datatype, lmpi_eq_errhandler, lmpi_eq_file, lmpi_eq_group, &
                     lmpi_eq_info, lmpi_eq_message, lmpi_eq_op, lmpi_eq_request, lmpi_eq_session, lmpi_eq_win
  end interface
  interface operator(/=)
    module procedure lmpi_ne_comm, lmpi_ne_datatype, lmpi_ne_errhandler, lmpi_ne_file, lmpi_ne_group, &
                     lmpi_ne_info, lmpi_ne_message, lmpi_ne_op, lmpi_ne_request, lmpi_ne_session, lmpi_ne_win
  end interface

  ! the C procedures, as BIND(C) interfaces (private)
  interface
    include 'mpi_f08_cprocs.fh'
  end interface

  include 'mpi_f08_generics.fh'

#include "mpi_sizeof_interface.h"

  ! the length of MPI_Cart_sub's remain_dims (mpif_util.c)
  interface
    function lmpif_cartdim_f(comm) bind(C, name="lmpif_cartdim_f") result(n)
      import :: MPI_Comm, C_INT
      type(MPI_Comm) :: comm
      integer(C_INT) :: n
    end function lmpif_cartdim_f
  end interface
  private :: lmpif_cartdim_f, lmpi_op_create_c_body, lmpi_register_datarep_c_body

  interface MPI_Status_f2f08
    module procedure MPI_Status_f2f08_f08
  end interface

  ! MPI_Op_create_c: a name of its own (a generic cannot tell two procedure
  ! arguments apart by their interfaces), over mpif_special.c's trampolines
  abstract interface
    subroutine MPI_User_function_c(invec, inoutvec, len, datatype)
      import :: C_PTR, MPI_Datatype, MPI_COUNT_KIND
      type(C_PTR), value :: invec, inoutvec
      integer(kind=MPI_COUNT_KIND) :: len
      type(MPI_Datatype) :: datatype
    end subroutine MPI_User_function_c
  end interface
  abstract interface
    subroutine MPI_Datarep_conversion_function_c(userbuf, datatype, count, filebuf, position, extra_state, ierror)
      import :: C_PTR, MPI_Datatype, MPI_COUNT_KIND, MPI_OFFSET_KIND, MPI_ADDRESS_KIND
      type(C_PTR), value :: userbuf, filebuf
      type(MPI_Datatype) :: datatype
      integer(kind=MPI_COUNT_KIND) :: count
      integer(kind=MPI_OFFSET_KIND) :: position
      integer(kind=MPI_ADDRESS_KIND) :: extra_state
      integer :: ierror
    end subroutine MPI_Datarep_conversion_function_c
  end interface
  procedure(MPI_Datarep_conversion_function_c) :: MPI_CONVERSION_FN_NULL_C
  interface
    subroutine lmpif_register_datarep_c(datarep, rd, wr, ext, extra_state, ierror, datarep_len) &
        bind(C, name="mpi_register_datarep_c_f08_")
      import :: C_FUNPTR, C_INT, C_CHAR, C_SIZE_T, C_INTPTR_T
      character(kind=C_CHAR) :: datarep(*)
      type(C_FUNPTR), value :: rd, wr, ext
      integer(C_INTPTR_T) :: extra_state
      integer(C_INT) :: ierror
      integer(C_SIZE_T), value :: datarep_len
    end subroutine lmpif_register_datarep_c
    subroutine lmpif_p_register_datarep_c(datarep, rd, wr, ext, extra_state, ierror, datarep_len) &
        bind(C, name="pmpi_register_datarep_c_f08_")
      import :: C_FUNPTR, C_INT, C_CHAR, C_SIZE_T, C_INTPTR_T
      character(kind=C_CHAR) :: datarep(*)
      type(C_FUNPTR), value :: rd, wr, ext
      integer(C_INTPTR_T) :: extra_state
      integer(C_INT) :: ierror
      integer(C_SIZE_T), value :: datarep_len
    end subroutine lmpif_p_register_datarep_c
  end interface
  interface
    subroutine lmpif_op_create_c(user_fn, commute, op, ierror) bind(C, name="mpi_op_create_c_f08_")
      import :: C_FUNPTR, C_INT, MPI_Op
      type(C_FUNPTR), value :: user_fn
      integer(C_INT) :: commute, ierror
      type(MPI_Op) :: op
    end subroutine lmpif_op_create_c
    subroutine lmpif_p_op_create_c(user_fn, commute, op, ierror) bind(C, name="pmpi_op_create_c_f08_")
      import :: C_FUNPTR, C_INT, MPI_Op
      type(C_FUNPTR), value :: user_fn
      integer(C_INT) :: commute, ierror
      type(MPI_Op) :: op
    end subroutine lmpif_p_op_create_c
  end interface
  interface MPI_Status_f082f
    module procedure MPI_Status_f082f_f08
  end interface

contains

#define HANDLE_OPS(T, eq, ne) \
  elemental logical function eq(a, b); type(T), intent(in) :: a, b; eq = a%MPI_VAL == b%MPI_VAL; end function eq; \
  elemental logical function ne(a, b); type(T), intent(in) :: a, b; ne = a%MPI_VAL /= b%MPI_VAL; end function ne
  HANDLE_OPS(MPI_Comm, lmpi_eq_comm, lmpi_ne_comm)
  HANDLE_OPS(MPI_Datatype, lmpi_eq_datatype, lmpi_ne_datatype)
  HANDLE_OPS(MPI_Errhandler, lmpi_eq_errhandler, lmpi_ne_errhandler)
  HANDLE_OPS(MPI_File, lmpi_eq_file, lmpi_ne_file)
  HANDLE_OPS(MPI_Group, lmpi_eq_group, lmpi_ne_group)
  HANDLE_OPS(MPI_Info, lmpi_eq_info, lmpi_ne_info)
  HANDLE_OPS(MPI_Message, lmpi_eq_message, lmpi_ne_message)
  HANDLE_OPS(MPI_Op, lmpi_eq_op, lmpi_ne_op)
  HANDLE_OPS(MPI_Request, lmpi_eq_request, lmpi_ne_request)
  HANDLE_OPS(MPI_Session, lmpi_eq_session, lmpi_ne_session)
  HANDLE_OPS(MPI_Win, lmpi_eq_win, lmpi_ne_win)

  ! MPI_Status_f2f08 / f082f: the same 8 integers in both forms
  subroutine MPI_Status_f2f08_f08(f_status, f08_status, ierror)
    integer, intent(in) :: f_status(MPI_STATUS_SIZE)
    type(MPI_Status), intent(out) :: f08_status
    integer, optional, intent(out) :: ierror
    f08_status = transfer(f_status, f08_status)
    if (present(ierror)) ierror = MPI_SUCCESS
  end subroutine MPI_Status_f2f08_f08

  subroutine MPI_Status_f082f_f08(f08_status, f_status, ierror)
    type(MPI_Status), intent(in) :: f08_status
    integer, intent(out) :: f_status(MPI_STATUS_SIZE)
    integer, optional, intent(out) :: ierror
    f_status = transfer(f08_status, f_status)
    if (present(ierror)) ierror = MPI_SUCCESS
  end subroutine MPI_Status_f082f_f08

#include "mpi_sizeof.h"

  ! MPI_Op_create_c and MPI_Register_datarep_c and their PMPI_ twins: one
  ! body each, prof picking the C entry point
  subroutine MPI_Op_create_c(user_fn, commute, op, ierror)
    procedure(MPI_User_function_c) :: user_fn
    logical, intent(in) :: commute
    type(MPI_Op), intent(out) :: op
    integer, optional, intent(out) :: ierror
    call lmpi_op_create_c_body(.false., user_fn, commute, op, ierror)
  end subroutine MPI_Op_create_c

  subroutine PMPI_Op_create_c(user_fn, commute, op, ierror)
    procedure(MPI_User_function_c) :: user_fn
    logical, intent(in) :: commute
    type(MPI_Op), intent(out) :: op
    integer, optional, intent(out) :: ierror
    call lmpi_op_create_c_body(.true., user_fn, commute, op, ierror)
  end subroutine PMPI_Op_create_c

  subroutine lmpi_op_create_c_body(prof, user_fn, commute, op, ierror)
    logical, intent(in) :: prof, commute
    procedure(MPI_User_function_c) :: user_fn
    type(MPI_Op), intent(out) :: op
    integer, optional, intent(out) :: ierror
    integer :: ierr
    if (prof) then
      call lmpif_p_op_create_c(C_FUNLOC(user_fn), merge(1, 0, commute), op, ierr)
    else
      call lmpif_op_create_c(C_FUNLOC(user_fn), merge(1, 0, commute), op, ierr)
    end if
    if (present(ierror)) ierror = ierr
  end subroutine lmpi_op_create_c_body

  subroutine MPI_Register_datarep_c(datarep, read_conversion_fn, write_conversion_fn, dtype_file_extent_fn, &
                                    extra_state, ierror)
    character(len=*), intent(in) :: datarep
    procedure(MPI_Datarep_conversion_function_c) :: read_conversion_fn, write_conversion_fn
    procedure(MPI_Datarep_extent_function) :: dtype_file_extent_fn
    integer(kind=MPI_ADDRESS_KIND), intent(in) :: extra_state
    integer, optional, intent(out) :: ierror
    call lmpi_register_datarep_c_body(.false., datarep, read_conversion_fn, write_conversion_fn, &
                                      dtype_file_extent_fn, extra_state, ierror)
  end subroutine MPI_Register_datarep_c

  subroutine PMPI_Register_datarep_c(datarep, read_conversion_fn, write_conversion_fn, dtype_file_extent_fn, &
                                     extra_state, ierror)
    character(len=*), intent(in) :: datarep
    procedure(MPI_Datarep_conversion_function_c) :: read_conversion_fn, write_conversion_fn
    procedure(MPI_Datarep_extent_function) :: dtype_file_extent_fn
    integer(kind=MPI_ADDRESS_KIND), intent(in) :: extra_state
    integer, optional, intent(out) :: ierror
    call lmpi_register_datarep_c_body(.true., datarep, read_conversion_fn, write_conversion_fn, &
                                      dtype_file_extent_fn, extra_state, ierror)
  end subroutine PMPI_Register_datarep_c

  subroutine lmpi_register_datarep_c_body(prof, datarep, rd, wr, ext, extra_state, ierror)
    logical, intent(in) :: prof
    character(len=*), intent(in) :: datarep
    procedure(MPI_Datarep_conversion_function_c) :: rd, wr
    procedure(MPI_Datarep_extent_function) :: ext
    integer(kind=MPI_ADDRESS_KIND), intent(in) :: extra_state
    integer, optional, intent(out) :: ierror
    integer :: ierr
    integer(kind=MPI_ADDRESS_KIND) :: extra
    extra = extra_state
    if (prof) then
      call lmpif_p_register_datarep_c(datarep, C_FUNLOC(rd), C_FUNLOC(wr), C_FUNLOC(ext), extra, ierr, &
                                      len(datarep, kind=C_SIZE_T))
    else
      call lmpif_register_datarep_c(datarep, C_FUNLOC(rd), C_FUNLOC(wr), C_FUNLOC(ext), extra, ierr, &
                                    len(datarep, kind=C_SIZE_T))
    end if
    if (present(ierror)) ierror = ierr
  end subroutine lmpi_register_datarep_c_body

  include 'mpi_f08_procs.fh'
end module mpi_f08
