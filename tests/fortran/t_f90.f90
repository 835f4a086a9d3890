! t_f90: `use mpi` in free form, 2 or more ranks: explicit interfaces with
! choice buffers of any type, kind and rank (scalars, arrays, sections),
! MPI_SIZEOF, handles and strings.  Rank 0 prints the verdict.
program t_f90
  use mpi
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  implicit none
  type(c_ptr) :: mem
  integer :: wreq
  integer, pointer :: pm(:)
  integer :: ierr, rank, np, fails, total, i, j, sz, req, next, prev
  integer :: st(MPI_STATUS_SIZE), st2(MPI_STATUS_SIZE)
  type(MPI_Status) :: st08
  real(kind=8) :: a(6, 4), b(3, 4)
  integer(kind=8) :: big(3)
  integer(kind=2) :: small
  complex(kind=8) :: z
  character(len=MPI_MAX_PROCESSOR_NAME) :: host
  character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: version
  integer :: dup, grp, len, myop, k
  integer :: v(5), w(5), cart, sub
  integer, allocatable :: counts(:), displs(:), types(:), sendv(:), recvv(:)
  fails = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  next = mod(rank + 1, np)
  prev = mod(rank + np - 1, np)
  ! a non-contiguous section a(1:6:2, :) goes to the neighbour (the
  ! compiler passes a contiguous copy to the assumed-size buffer)
  do j = 1, 4
    do i = 1, 6
      a(i, j) = 1000 * rank + 10 * i + j
    end do
  end do
  call MPI_Sendrecv(a(1:6:2, :), 12, MPI_DOUBLE_PRECISION, next, 1, b, 12, MPI_DOUBLE_PRECISION, &
                    prev, 1, MPI_COMM_WORLD, st, ierr)
  if (b(2, 3) /= 1000 * prev + 10 * 3 + 3) fails = fails + 1
  if (b(3, 4) /= 1000 * prev + 10 * 5 + 4) fails = fails + 1
  ! scalars of other kinds through the same interface
  big = [int(rank, 8) * 10_8**12, 2_8, 3_8]
  call MPI_Bcast(big, 3, MPI_INTEGER8, np - 1, MPI_COMM_WORLD, ierr)
  if (big(1) /= int(np - 1, 8) * 10_8**12) fails = fails + 1
  z = cmplx(rank, -rank, kind=8)
  call MPI_Allreduce(MPI_IN_PLACE, z, 1, MPI_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (real(z) /= np * (np - 1) / 2 .or. aimag(z) /= -np * (np - 1) / 2) fails = fails + 1
  small = int(rank, 2)
  call MPI_Allreduce(MPI_IN_PLACE, small, 1, MPI_INTEGER2, MPI_MAX, MPI_COMM_WORLD, ierr)
  if (small /= np - 1) fails = fails + 1
  ! MPI_SIZEOF
  call MPI_Sizeof(a, sz, ierr)
  if (sz /= 8) fails = fails + 1
  call MPI_Sizeof(small, sz, ierr)
  if (sz /= 2) fails = fails + 1
  call MPI_Sizeof(z, sz, ierr)
  if (sz /= 16) fails = fails + 1
  ! nonblocking with a request handle
  call MPI_Irecv(b, 12, MPI_DOUBLE_PRECISION, prev, 2, MPI_COMM_WORLD, req, ierr)
  call MPI_Send(a, 12, MPI_DOUBLE_PRECISION, next, 2, MPI_COMM_WORLD, ierr)
  call MPI_Wait(req, st, ierr)
  if (req /= MPI_REQUEST_NULL .or. st(MPI_SOURCE) /= prev) fails = fails + 1
  if (b(1, 1) /= 1000 * prev + 11) fails = fails + 1
  ! the status as mpi_f08's TYPE(MPI_Status) and back (MPI_STATUS_F2F08)
  call MPI_Status_f2f08(st, st08, ierr)
  if (ierr /= MPI_SUCCESS .or. st08%MPI_SOURCE /= prev .or. st08%MPI_TAG /= 2) fails = fails + 1
  st2 = -1
  call MPI_Status_f082f(st08, st2, ierr)
  if (ierr /= MPI_SUCCESS .or. any(st2 /= st)) fails = fails + 1
  call MPI_Status_f2f08(MPI_STATUS_IGNORE, st08, ierr)
  if (ierr == MPI_SUCCESS) fails = fails + 1
  ! handles made and freed
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call MPI_Comm_group(dup, grp, ierr)
  call MPI_Group_size(grp, sz, ierr)
  if (sz /= np) fails = fails + 1
  call MPI_Group_free(grp, ierr)
  call MPI_Comm_free(dup, ierr)
  if (dup /= MPI_COMM_NULL .or. grp /= MPI_GROUP_NULL) fails = fails + 1
  ! strings out
  call MPI_Get_processor_name(host, len, ierr)
  if (len <= 0 .or. len_trim(host) /= len) fails = fails + 1
  call MPI_Get_library_version(version, len, ierr)
  if (index(version, 'LeanMPI') == 0 .and. index(version, 'MPICH') == 0) fails = fails + 1
  ! alltoallw: one datatype per process, the array's length the
  ! communicator's size
  allocate(counts(np), displs(np), types(np), sendv(np), recvv(np))
  do k = 1, np
    counts(k) = 1
    displs(k) = 4 * (k - 1)
    types(k) = MPI_INTEGER
    sendv(k) = 100 * rank + k - 1
  end do
  call MPI_Alltoallw(sendv, counts, displs, types, recvv, counts, displs, types, MPI_COMM_WORLD, ierr)
  do k = 1, np
    if (recvv(k) /= 100 * (k - 1) + rank) fails = fails + 1
  end do
  ! the nonblocking and persistent forms, the same arrays
  recvv = -1
  call MPI_Ialltoallw(sendv, counts, displs, types, recvv, counts, displs, types, MPI_COMM_WORLD, wreq, ierr)
  call MPI_Wait(wreq, MPI_STATUS_IGNORE, ierr)
  if (recvv(np) /= 100 * (np - 1) + rank) fails = fails + 1
  recvv = -1
  call MPI_Alltoallw_init(sendv, counts, displs, types, recvv, counts, displs, types, MPI_COMM_WORLD, &
                          MPI_INFO_NULL, wreq, ierr)
  do k = 1, 2
    call MPI_Start(wreq, ierr)
    call MPI_Wait(wreq, MPI_STATUS_IGNORE, ierr)
  end do
  call MPI_Request_free(wreq, ierr)
  if (recvv(1) /= rank) fails = fails + 1
  ! MPI_Cart_sub: one logical per dimension of the topology
  call MPI_Cart_create(MPI_COMM_WORLD, 1, [np], [.false.], .false., cart, ierr)
  call MPI_Cart_sub(cart, [.true.], sub, ierr)
  call MPI_Comm_size(sub, sz, ierr)
  if (sz /= np) fails = fails + 1
  call MPI_Comm_free(sub, ierr)
  call MPI_Comm_free(cart, ierr)
  ! a user operation written in Fortran (a bitwise or), with the datatype
  ! it is called with
  call MPI_Op_create(bit_or, .true., myop, ierr)
  do k = 1, 5
    v(k) = ishft(1, rank) + ishft(1, 10 + k)
  end do
  call MPI_Allreduce(v, w, 5, MPI_INTEGER, myop, MPI_COMM_WORLD, ierr)
  if (w(5) /= ishft(1, np) - 1 + ishft(1, 15)) fails = fails + 1
  call MPI_Op_free(myop, ierr)
  if (myop /= MPI_OP_NULL) fails = fails + 1
  ! MPI_ALLOC_MEM's TYPE(C_PTR) overload (MPI_ALLOC_MEM_CPTR)
  call MPI_Alloc_mem(40_MPI_ADDRESS_KIND, MPI_INFO_NULL, mem, ierr)
  call c_f_pointer(mem, pm, [10])
  pm = 7
  if (ierr /= MPI_SUCCESS .or. sum(pm) /= 70) fails = fails + 1
  call MPI_Free_mem(pm, ierr)
  call MPI_Allreduce(fails, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. total == 0) print '(a)', 't_f90: passed'
  if (rank == 0 .and. total /= 0) print *, 't_f90: FAILED', total
  call MPI_Finalize(ierr)
  if (total /= 0) stop 1
contains
  subroutine bit_or(invec, inoutvec, n, datatype)
    integer :: n, datatype, invec(n), inoutvec(n), i
    do i = 1, n
      inoutvec(i) = ior(invec(i), inoutvec(i))
      if (datatype /= MPI_INTEGER) inoutvec(i) = -1
    end do
  end subroutine bit_or
end program t_f90
