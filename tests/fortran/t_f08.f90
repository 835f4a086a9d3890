! t_f08: `use mpi_f08`, 2 or more ranks: handle types and their
! comparisons, TYPE(MPI_Status), optional ierror, strings, logicals,
! sections of arrays, and the status conversions.  Rank 0 prints the verdict.
program t_f08
  use mpi_f08
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer, c_associated, c_loc
  implicit none
  type(c_ptr) :: mem, bptr
  character(len=1), target :: bsbuf(4096)
  integer(kind=MPI_COUNT_KIND) :: qsize8
  type(MPI_File) :: fh
  real(kind=8), pointer :: pm(:)
  type(MPI_Win) :: swin
  type(MPI_Comm) :: node
  integer(kind=MPI_ADDRESS_KIND) :: qsize
  integer :: rank, np, fails, total, i, n, next, prev, ierr, fstat(MPI_STATUS_SIZE)
  type(MPI_Comm) :: dup, cart
  type(MPI_Request) :: reqs(2)
  type(MPI_Status) :: st, sts(2), back
  type(MPI_Datatype) :: vec
  type(MPI_Info) :: info
  real(kind=8) :: a(8), b(4)
  integer :: ibuf(6), iout(6), coords(1)
  character(len=MPI_MAX_OBJECT_NAME) :: name
  character(len=20) :: value
  logical :: flag, periods(1)
  type(MPI_Comm) :: sub
  type(MPI_Op) :: op
  integer :: v(3), w(3), sz
  fails = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  if (ierr /= MPI_SUCCESS) fails = fails + 1
  next = mod(rank + 1, np)
  prev = mod(rank + np - 1, np)
  ! a strided section goes through (as a contiguous copy the compiler makes)
  a = [(100 * rank + i, i = 1, 8)]
  call MPI_Sendrecv(a(1:8:2), 4, MPI_DOUBLE_PRECISION, next, 1, b, 4, MPI_DOUBLE_PRECISION, prev, 1, &
                    MPI_COMM_WORLD, st)
  if (b(3) /= 100 * prev + 5 .or. st%MPI_SOURCE /= prev .or. st%MPI_TAG /= 1) fails = fails + 1
  ! nonblocking with handle arrays and statuses
  ibuf = [(10 * rank + i, i = 1, 6)]
  call MPI_Irecv(iout, 6, MPI_INTEGER, prev, 2, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(ibuf, 6, MPI_INTEGER, next, 2, MPI_COMM_WORLD, reqs(2))
  call MPI_Waitall(2, reqs, sts)
  if (any(reqs /= MPI_REQUEST_NULL)) fails = fails + 1
  if (iout(6) /= 10 * prev + 6 .or. sts(1)%MPI_TAG /= 2) fails = fails + 1
  call MPI_Get_count(sts(1), MPI_INTEGER, n)
  if (n /= 6) fails = fails + 1
  ! a derived type, created and freed
  call MPI_Type_vector(3, 1, 2, MPI_INTEGER, vec)
  call MPI_Type_commit(vec)
  iout = 0
  call MPI_Sendrecv(ibuf, 1, vec, rank, 3, iout, 3, MPI_INTEGER, rank, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  if (iout(2) /= 10 * rank + 3) fails = fails + 1
  call MPI_Type_free(vec)
  if (vec /= MPI_DATATYPE_NULL) fails = fails + 1
  ! in place, and a handle compared
  n = rank
  call MPI_Allreduce(MPI_IN_PLACE, n, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (n /= np * (np - 1) / 2) fails = fails + 1
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  if (dup == MPI_COMM_WORLD .or. dup == MPI_COMM_NULL) fails = fails + 1
  call MPI_Comm_set_name(dup, 'f08 dup')
  call MPI_Comm_get_name(dup, name, n)
  if (name /= 'f08 dup' .or. n /= 7) fails = fails + 1
  call MPI_Comm_free(dup)
  if (dup /= MPI_COMM_NULL) fails = fails + 1
  ! info strings and a logical out
  call MPI_Info_create(info)
  call MPI_Info_set(info, 'key', 'value')
  call MPI_Info_get(info, 'key', 20, value, flag)
  if (.not. flag .or. value /= 'value') fails = fails + 1
  call MPI_Info_free(info)
  ! logical arrays in
  periods(1) = .true.
  call MPI_Cart_create(MPI_COMM_WORLD, 1, [np], periods, .false., cart)
  call MPI_Cart_coords(cart, rank, 1, coords)
  if (coords(1) /= rank) fails = fails + 1
  call MPI_Cart_sub(cart, [.true.], sub)
  call MPI_Comm_size(sub, n)
  if (n /= np) fails = fails + 1
  call MPI_Comm_free(sub)
  call MPI_Comm_free(cart)
  ! a user operation with the f08 interface (TYPE(C_PTR) vectors)
  call MPI_Op_create(bit_or, .true., op)
  v = [ishft(1, rank), 0, 7]
  call MPI_Allreduce(v, w, 3, MPI_INTEGER, op, MPI_COMM_WORLD)
  if (w(1) /= ishft(1, np) - 1 .or. w(3) /= 7) fails = fails + 1
  call MPI_Op_free(op)
  if (op /= MPI_OP_NULL) fails = fails + 1
  call MPI_Sizeof(a, sz)
  if (sz /= 8) fails = fails + 1
  ! status conversions both ways
  call MPI_Status_f082f(st, fstat)
  if (fstat(MPI_SOURCE) /= prev) fails = fails + 1
  call MPI_Status_f2f08(fstat, back)
  if (back%MPI_TAG /= st%MPI_TAG) fails = fails + 1
  ! an error comes back in the optional ierror
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
  call MPI_Send(ibuf, 1, MPI_INTEGER, np + 3, 0, MPI_COMM_WORLD, ierr)
  call MPI_Error_class(ierr, n)
  if (n /= MPI_ERR_RANK) fails = fails + 1
  call MPI_Error_string(ierr, name, sz)
  if (index(name(1:sz), 'MPI_Send') == 0) then
    print '(2a)', 'the error string does not name MPI_Send: ', name(1:sz)
    fails = fails + 1
  end if
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL)
  if (MPI_Wtime() <= 0d0) fails = fails + 1
  ! TYPE(C_PTR) memory: MPI_Alloc_mem, a shared window and its query
  call MPI_Alloc_mem(80_MPI_ADDRESS_KIND, MPI_INFO_NULL, mem)
  call c_f_pointer(mem, pm, [10])
  pm = [(real(i, 8), i = 1, 10)]
  if (sum(pm) /= 55) fails = fails + 1
  call MPI_Free_mem(pm)
  call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, node)
  call MPI_Comm_rank(node, n)
  call MPI_Win_allocate_shared(8_MPI_ADDRESS_KIND, 8, MPI_INFO_NULL, node, mem, swin)
  call c_f_pointer(mem, pm, [1])
  pm(1) = 100 + n
  call MPI_Win_fence(0, swin)
  call MPI_Win_shared_query(swin, 0, qsize, sz, mem)
  call c_f_pointer(mem, pm, [1])
  if (pm(1) /= 100 .or. qsize /= 8 .or. sz /= 8) fails = fails + 1
  call MPI_Win_fence(0, swin)
  call MPI_Win_free(swin)
  call MPI_Comm_free(node)
  ! MPI_Buffer_detach gives the buffer's address as a TYPE(C_PTR); its
  ! large-count form too
  call MPI_Buffer_attach(bsbuf, 4096)
  call MPI_Buffer_detach(bptr, n)
  if (n /= 4096 .or. .not. c_associated(bptr, c_loc(bsbuf))) fails = fails + 1
  call MPI_Buffer_attach(bsbuf, 2048)
  call MPI_Buffer_detach(bptr, qsize8)
  if (qsize8 /= 2048 .or. .not. c_associated(bptr, c_loc(bsbuf))) fails = fails + 1
  ! a large-count user operation (MPI_Op_create_c, LEN of MPI_COUNT_KIND)
  call MPI_Op_create_c(bit_or_c, .true., op)
  v = [ishft(1, rank), 4, 8]
  call MPI_Allreduce(v, w, 3, MPI_INTEGER, op, MPI_COMM_WORLD)
  if (w(1) /= ishft(1, np) - 1 .or. w(3) /= 8) fails = fails + 1
  call MPI_Op_free(op)
  ! a large-count data representation (MPI_Register_datarep_c) written in
  ! Fortran: INTEGERs stored negated (not over MPICH's library, T_F08_PEER)
  call get_environment_variable('T_F08_PEER', status=n)
  if (n /= 0) then
    call MPI_Register_datarep_c('negated_c', neg_read_c, neg_write_c, int_extent, 0_MPI_ADDRESS_KIND, ierr)
    if (ierr /= MPI_SUCCESS) fails = fails + 1
    write (name, '(a,i0,a,i0)') '/tmp/lmpi_t_f08_', rank, '_', int(mod(MPI_Wtime() * 1000d0, 1d9))
    call MPI_File_open(MPI_COMM_SELF, trim(name), MPI_MODE_CREATE + MPI_MODE_RDWR + MPI_MODE_DELETE_ON_CLOSE, &
                       MPI_INFO_NULL, fh)
    call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'negated_c', MPI_INFO_NULL)
    v = [rank + 1, 20, 30]
    call MPI_File_write_at(fh, 0_MPI_OFFSET_KIND, v, 3, MPI_INTEGER, MPI_STATUS_IGNORE)
    call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL)
    w = 0
    call MPI_File_read_at(fh, 0_MPI_OFFSET_KIND, w, 3, MPI_INTEGER, MPI_STATUS_IGNORE)
    if (any(w /= -v)) fails = fails + 1
    call MPI_File_close(fh)
  end if
  ! a keyval with the predefined copy function, through mpi_f08
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, n, 0_MPI_ADDRESS_KIND)
  call MPI_Comm_set_attr(MPI_COMM_WORLD, n, 12345_MPI_ADDRESS_KIND)
  call MPI_Comm_dup(MPI_COMM_WORLD, node)
  call MPI_Comm_get_attr(node, n, qsize, flag)
  if (.not. flag .or. qsize /= 12345) fails = fails + 1
  call MPI_Comm_free(node)
  call MPI_Comm_delete_attr(MPI_COMM_WORLD, n)
  call MPI_Comm_free_keyval(n)
  ! the booleans this compiler's LOGICAL uses, as MPI_Init told the library
  ! (over MPICH's library, T_F08_PEER set, they need not have been kept)
  block
    logical :: lt, lf, lset
    integer :: peer
    call get_environment_variable('T_F08_PEER', status=peer)
    call MPI_Abi_get_fortran_booleans(storage_size(lt) / 8, lt, lf, lset, ierr)
    if (ierr /= MPI_SUCCESS .or. (peer /= 0 .and. .not. lset)) fails = fails + 1
    if (lset .and. (.not. lt .or. lf)) fails = fails + 1
    ! a size not told yet (LOGICAL(1)'s); MPICH's library refuses any
    ! setting once MPI is initialized, so not there
    if (peer /= 0) then
      call MPI_Abi_set_fortran_booleans(1, .true., .false., ierr)
      if (ierr /= MPI_SUCCESS) fails = fails + 1
    end if
  end block
  call MPI_Allreduce(fails, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0 .and. total == 0) print '(a)', 't_f08: passed'
  if (rank == 0 .and. total /= 0) print *, 't_f08: FAILED', total
  call MPI_Finalize()
  if (total /= 0) stop 1
contains
  subroutine bit_or(invec, inoutvec, len, datatype)
    use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: x(:), y(:)
    call c_f_pointer(invec, x, [len])
    call c_f_pointer(inoutvec, y, [len])
    y = ior(x, y)
    if (datatype /= MPI_INTEGER) y = -1
  end subroutine bit_or
  subroutine neg_read_c(userbuf, datatype, count, filebuf, position, extra_state, ierror)
    use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
    type(c_ptr), value :: userbuf, filebuf
    type(MPI_Datatype) :: datatype
    integer(kind=MPI_COUNT_KIND) :: count
    integer(kind=MPI_OFFSET_KIND) :: position
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer :: ierror
    integer, pointer :: u(:), f(:)
    call c_f_pointer(userbuf, u, [position + count])
    call c_f_pointer(filebuf, f, [count])
    u(position + 1:position + count) = -f
    ierror = MPI_SUCCESS
    if (datatype /= MPI_INTEGER .or. extra_state /= 0) ierror = MPI_ERR_TYPE
  end subroutine neg_read_c
  subroutine neg_write_c(userbuf, datatype, count, filebuf, position, extra_state, ierror)
    use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
    type(c_ptr), value :: userbuf, filebuf
    type(MPI_Datatype) :: datatype
    integer(kind=MPI_COUNT_KIND) :: count
    integer(kind=MPI_OFFSET_KIND) :: position
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer :: ierror
    integer, pointer :: u(:), f(:)
    call c_f_pointer(userbuf, u, [position + count])
    call c_f_pointer(filebuf, f, [count])
    f = -u(position + 1:position + count)
    ierror = MPI_SUCCESS
    if (datatype /= MPI_INTEGER .or. extra_state /= 0) ierror = MPI_ERR_TYPE
  end subroutine neg_write_c
  subroutine int_extent(datatype, extent, extra_state, ierror)
    type(MPI_Datatype) :: datatype
    integer(kind=MPI_ADDRESS_KIND) :: extent, extra_state
    integer :: ierror
    extent = 4
    ierror = MPI_SUCCESS
    if (datatype /= MPI_INTEGER .or. extra_state /= 0) ierror = MPI_ERR_TYPE
  end subroutine int_extent
  subroutine bit_or_c(invec, inoutvec, len, datatype)
    use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
    type(c_ptr), value :: invec, inoutvec
    integer(kind=MPI_COUNT_KIND) :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: x(:), y(:)
    call c_f_pointer(invec, x, [len])
    call c_f_pointer(inoutvec, y, [len])
    y = ior(x, y)
    if (datatype /= MPI_INTEGER) y = -1
  end subroutine bit_or_c
end program t_f08
