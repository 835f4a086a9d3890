! Showcase, Fortran part (make demo): `use mpi_f08` with an array section.
! Rank 0 sends every other row of a 6x4 matrix, a(1:6:2, :), as it is: with
! MPI_SUBARRAYS_SUPPORTED the section reaches the library without a copy
! (LeanMPI's Fortran layer describes its strides with a datatype), even in a
! nonblocking call.  Rank 1 receives it into a contiguous 3x4 matrix and
! sends that back for rank 0 to print; then all ranks sum with a reduction
! operation written in Fortran.
program fortran_sections
  use mpi_f08
  implicit none
  real(kind=8) :: a(6, 4), b(3, 4), total
  integer :: rank, np, i, j
  type(MPI_Request) :: req
  type(MPI_Op) :: op
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  if (rank == 0) then
    print '(a)', '== 10. Fortran: use mpi_f08, an array section sent without a copy'
    print '(a,l1,a,l1)', '   MPI_SUBARRAYS_SUPPORTED = ', MPI_SUBARRAYS_SUPPORTED, &
          ', MPI_ASYNC_PROTECTS_NONBLOCKING = ', MPI_ASYNC_PROTECTS_NONBLOCKING
    a = reshape([((real(10 * i + j, 8), i = 1, 6), j = 1, 4)], [6, 4])
    call MPI_Isend(a(1:6:2, :), 12, MPI_DOUBLE_PRECISION, 1, 0, MPI_COMM_WORLD, req)
    call MPI_Wait(req, MPI_STATUS_IGNORE)
    call MPI_Recv(b, 12, MPI_DOUBLE_PRECISION, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    print '(a)', '   rank 0 sent a(1:6:2, :), rows 1, 3 and 5 of a(i, j) = 10 i + j, with MPI_Isend;'
    print '(a)', '   rank 1 received a contiguous 3x4 matrix and sent it back:'
    do i = 1, 3
      print '(a,4f6.0)', '     ', b(i, :)
    end do
  else if (rank == 1) then
    call MPI_Recv(b, 12, MPI_DOUBLE_PRECISION, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    call MPI_Send(b, 12, MPI_DOUBLE_PRECISION, 0, 1, MPI_COMM_WORLD)
  end if
  ! a reduction operation written in Fortran (the standard's abstract interface)
  call MPI_Op_create(add_doubles, .true., op)
  total = real(rank + 1, 8)
  call MPI_Allreduce(MPI_IN_PLACE, total, 1, MPI_DOUBLE_PRECISION, op, MPI_COMM_WORLD)
  if (rank == 0) print '(a,i0,a,f0.0)', '   a Fortran MPI_Op summed 1..', np, ' = ', total
  call MPI_Op_free(op)
  call MPI_Finalize()
contains
  subroutine add_doubles(invec, inoutvec, len, datatype)
    use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    real(kind=8), pointer :: x(:), y(:)
    if (datatype /= MPI_DOUBLE_PRECISION) return
    call c_f_pointer(invec, x, [len])
    call c_f_pointer(inoutvec, y, [len])
    y = x + y
  end subroutine add_doubles
end program fortran_sections
