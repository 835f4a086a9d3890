! t_f90_callbacks: callbacks written in Fortran that MPI calls with user data
! (`use mpi`), 2 or more ranks: attribute copy/delete functions of
! communicators, datatypes and windows, the predefined MPI_COMM_DUP_FN and
! friends, the old MPI_KEYVAL_CREATE, a generalized request and a data
! representation (MPI_REGISTER_DATAREP, through a file).  Each
! callback counts its calls in a common block; values are checked.  And
! attribute values across languages, through C's own functions: a value set
! in Fortran reads in C as a pointer to it; a pointer set in C reads in
! Fortran as its address (MPI 5.0 §19.3.7).
program t_f90_callbacks
  use mpi
  use, intrinsic :: iso_c_binding, only: c_int, c_ptr, c_f_pointer, c_associated
  implicit none
  external :: my_copy, my_delete, old_copy, greq_query, greq_free, greq_cancel, neg_read, neg_write, int_extent
  integer :: ncopy, ndelete, nquery, nfree, lastdel
  common /calls/ ncopy, ndelete, nquery, nfree, lastdel
  integer :: rank, np, ierr, fails, total, kv, kv2, kv3, kvt, kvw, kvold, dup, t2, win, req, ival
  integer :: st(MPI_STATUS_SIZE)
  integer(kind=MPI_ADDRESS_KIND) :: extra, got
  logical :: flag
  integer :: fh, ivals(4), iread(4), i
  character(len=64) :: fname
  integer(kind=MPI_ADDRESS_KIND), pointer :: seen
  integer(c_int), pointer :: seen_int
  type(c_ptr) :: cval
  integer(c_int) :: cflag
  interface
    integer(c_int) function getpid_c() bind(C, name='getpid')
      import :: c_int
    end function getpid_c
    ! C's own functions of the standard ABI (MPI_Comm is a pointer there)
    type(c_ptr) function c_comm_fromint(f) bind(C, name='MPI_Comm_fromint')
      import :: c_int, c_ptr
      integer(c_int), value :: f
    end function c_comm_fromint
    integer(c_int) function c_comm_get_attr(comm, keyval, val, flag) bind(C, name='MPI_Comm_get_attr')
      import :: c_int, c_ptr
      type(c_ptr), value :: comm
      integer(c_int), value :: keyval
      type(c_ptr) :: val
      integer(c_int) :: flag
    end function c_comm_get_attr
    integer(c_int) function c_comm_set_attr(comm, keyval, val) bind(C, name='MPI_Comm_set_attr')
      import :: c_int, c_ptr
      type(c_ptr), value :: comm, val
      integer(c_int), value :: keyval
    end function c_comm_set_attr
  end interface
  fails = 0
  ncopy = 0
  ndelete = 0
  nquery = 0
  nfree = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)

  ! a communicator keyval with Fortran copy and delete functions: the copy
  ! adds extra_state (5) to the value
  extra = 5
  call MPI_Comm_create_keyval(my_copy, my_delete, kv, extra, ierr)
  call MPI_Comm_set_attr(MPI_COMM_WORLD, kv, 42_MPI_ADDRESS_KIND, ierr)
  ! the predefined functions: copied as is, or not at all
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, kv2, extra, ierr)
  call MPI_Comm_set_attr(MPI_COMM_WORLD, kv2, 7_MPI_ADDRESS_KIND, ierr)
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, kv3, extra, ierr)
  call MPI_Comm_set_attr(MPI_COMM_WORLD, kv3, 8_MPI_ADDRESS_KIND, ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call MPI_Comm_get_attr(dup, kv, got, flag, ierr)
  if (.not. flag .or. got /= 47 .or. ncopy /= 1) call fail('comm copy function')
  call MPI_Comm_get_attr(dup, kv2, got, flag, ierr)
  if (.not. flag .or. got /= 7) call fail('MPI_COMM_DUP_FN')
  call MPI_Comm_get_attr(dup, kv3, got, flag, ierr)
  if (flag) call fail('MPI_COMM_NULL_COPY_FN')
  call MPI_Comm_free(dup, ierr)
  if (ndelete /= 1 .or. lastdel /= 47) call fail('comm delete function')
  call MPI_Comm_delete_attr(MPI_COMM_WORLD, kv, ierr)
  if (ndelete /= 2 .or. lastdel /= 42) call fail('comm delete_attr')
  call MPI_Comm_free_keyval(kv, ierr)
  call MPI_Comm_free_keyval(kv2, ierr)
  call MPI_Comm_free_keyval(kv3, ierr)

  ! datatypes: MPI_TYPE_DUP_FN, and a Fortran copy function on MPI_Type_dup
  call MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, kvt, extra, ierr)
  call MPI_Type_set_attr(MPI_INTEGER, kvt, 11_MPI_ADDRESS_KIND, ierr)
  call MPI_Type_dup(MPI_INTEGER, t2, ierr)
  call MPI_Type_get_attr(t2, kvt, got, flag, ierr)
  if (.not. flag .or. got /= 11) call fail('MPI_TYPE_DUP_FN')
  call MPI_Type_free(t2, ierr)
  call MPI_Type_delete_attr(MPI_INTEGER, kvt, ierr)
  call MPI_Type_free_keyval(kvt, ierr)

  ! windows: a Fortran delete function runs at MPI_Win_free
  call MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, my_delete, kvw, extra, ierr)
  call MPI_Win_create(MPI_BOTTOM, 0_MPI_ADDRESS_KIND, 1, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call MPI_Win_set_attr(win, kvw, 99_MPI_ADDRESS_KIND, ierr)
  call MPI_Win_free(win, ierr)
  if (ndelete /= 3 .or. lastdel /= 99) call fail('win delete function')
  call MPI_Win_free_keyval(kvw, ierr)

  ! MPI-1's MPI_KEYVAL_CREATE with INTEGER values, and MPI_DUP_FN
  call MPI_Keyval_create(old_copy, MPI_NULL_DELETE_FN, kvold, 3, ierr)
  call MPI_Attr_put(MPI_COMM_WORLD, kvold, 20, ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call MPI_Attr_get(dup, kvold, ival, flag, ierr)
  if (.not. flag .or. ival /= 23) call fail('MPI_KEYVAL_CREATE copy function')
  call MPI_Comm_free(dup, ierr)
  call MPI_Attr_delete(MPI_COMM_WORLD, kvold, ierr)
  call MPI_Keyval_free(kvold, ierr)
  call MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, kvold, 0, ierr)
  call MPI_Attr_put(MPI_COMM_WORLD, kvold, 31, ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call MPI_Attr_get(dup, kvold, ival, flag, ierr)
  if (.not. flag .or. ival /= 31) call fail('MPI_DUP_FN')
  call MPI_Comm_free(dup, ierr)
  call MPI_Attr_delete(MPI_COMM_WORLD, kvold, ierr)
  call MPI_Keyval_free(kvold, ierr)

  ! across languages: C reads a pointer to the value Fortran set (the
  ! copy's result too, and MPI_ATTR_PUT's INTEGER); Fortran reads the
  ! address C set
  extra = 5
  call MPI_Comm_create_keyval(my_copy, my_delete, kv, extra, ierr)
  call MPI_Comm_set_attr(MPI_COMM_WORLD, kv, 1234567_MPI_ADDRESS_KIND, ierr)
  ierr = c_comm_get_attr(c_comm_fromint(MPI_COMM_WORLD), kv, cval, cflag)
  call c_f_pointer(cval, seen)
  if (ierr /= 0 .or. cflag == 0 .or. seen /= 1234567) call fail('Fortran value read in C')
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  ierr = c_comm_get_attr(c_comm_fromint(dup), kv, cval, cflag)
  call c_f_pointer(cval, seen)
  if (ierr /= 0 .or. cflag == 0 .or. seen /= 1234572) call fail('copied Fortran value read in C')
  ! C may store any pointer value, even one that points nowhere: MPI never
  ! reads through it
  ierr = c_comm_set_attr(c_comm_fromint(dup), kv, transfer(123456_MPI_ADDRESS_KIND, cval))
  call MPI_Comm_get_attr(dup, kv, got, flag, ierr)
  if (.not. flag .or. got /= 123456) call fail('C pointer read in Fortran')
  call MPI_Comm_free(dup, ierr)
  if (lastdel /= 123456) call fail('delete function given the C pointer')
  call MPI_Comm_delete_attr(MPI_COMM_WORLD, kv, ierr)
  if (lastdel /= 1234567) call fail('delete function given the Fortran value')
  call MPI_Comm_free_keyval(kv, ierr)
  call MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, kvold, 0, ierr)
  call MPI_Attr_put(MPI_COMM_WORLD, kvold, 4321, ierr)
  ierr = c_comm_get_attr(c_comm_fromint(MPI_COMM_WORLD), kvold, cval, cflag)
  if (.not. c_associated(cval)) then
    call fail('MPI_ATTR_PUT value read in C: null')
  else
    call c_f_pointer(cval, seen_int)
    if (cflag == 0 .or. seen_int /= 4321) call fail('MPI_ATTR_PUT value read in C')
  end if
  call MPI_Attr_delete(MPI_COMM_WORLD, kvold, ierr)
  call MPI_Keyval_free(kvold, ierr)

  ! a generalized request: its query function fills the status
  extra = 77
  call MPI_Grequest_start(greq_query, greq_free, greq_cancel, extra, req, ierr)
  call MPI_Test(req, flag, st, ierr)
  if (flag) call fail('grequest done before MPI_Grequest_complete')
  call MPI_Grequest_complete(req, ierr)
  call MPI_Wait(req, st, ierr)
  if (st(MPI_TAG) /= 77 .or. st(MPI_SOURCE) /= rank .or. nquery /= 1 .or. nfree /= 1) &
    call fail('generalized request')
  if (req /= MPI_REQUEST_NULL) call fail('grequest not freed')

  ! a data representation written in Fortran: integers are stored negated
  ! (not over MPICH's library, T_F08_PEER set: its ROMIO does not apply
  ! user representations this way; that is MPICH's, not this layer's)
  call get_environment_variable('T_F08_PEER', status=i)
  if (i /= 0) call datarep_check()

  call MPI_Allreduce(fails, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. total == 0) print '(a)', 't_f90_callbacks: passed'
  call MPI_Finalize(ierr)
contains
  subroutine datarep_check()
  call MPI_Register_datarep('negated', neg_read, neg_write, int_extent, 0_MPI_ADDRESS_KIND, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Register_datarep')
  write (fname, '(a,i0,a,i0)') '/tmp/lmpi_t_f90_callbacks_', rank, '_', getpid_c()
  call MPI_File_open(MPI_COMM_SELF, fname, MPI_MODE_CREATE + MPI_MODE_RDWR + MPI_MODE_DELETE_ON_CLOSE, &
                     MPI_INFO_NULL, fh, ierr)
  call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'negated', MPI_INFO_NULL, ierr)
  ivals = [(10 * rank + i, i = 1, 4)]
  call MPI_File_write_at(fh, 0_MPI_OFFSET_KIND, ivals, 4, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL, ierr)
  iread = 0
  call MPI_File_read_at(fh, 0_MPI_OFFSET_KIND, iread, 4, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  if (any(iread /= -ivals)) call fail('datarep write conversion')
  call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'negated', MPI_INFO_NULL, ierr)
  iread = 0
  call MPI_File_read_at(fh, 0_MPI_OFFSET_KIND, iread, 4, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  if (any(iread /= ivals)) call fail('datarep read conversion')
  call MPI_File_close(fh, ierr)
  end subroutine datarep_check

  subroutine fail(what)
    character(len=*), intent(in) :: what
    print '(a,i0,2a)', 'rank ', rank, ': FAIL ', what
    fails = fails + 1
  end subroutine fail
end program t_f90_callbacks

subroutine my_copy(oldcomm, keyval, extra_state, attribute_val_in, attribute_val_out, flag, ierror)
  use mpi
  implicit none
  integer :: oldcomm, keyval, ierror
  integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
  logical :: flag
  integer :: ncopy, ndelete, nquery, nfree, lastdel
  common /calls/ ncopy, ndelete, nquery, nfree, lastdel
  ncopy = ncopy + 1
  attribute_val_out = attribute_val_in + extra_state
  flag = .true.
  ierror = MPI_SUCCESS
end subroutine my_copy

subroutine my_delete(comm, keyval, attribute_val, extra_state, ierror)
  use mpi
  implicit none
  integer :: comm, keyval, ierror
  integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state
  integer :: ncopy, ndelete, nquery, nfree, lastdel
  common /calls/ ncopy, ndelete, nquery, nfree, lastdel
  ndelete = ndelete + 1
  lastdel = int(attribute_val)
  ierror = MPI_SUCCESS
end subroutine my_delete

subroutine old_copy(oldcomm, keyval, extra_state, attribute_val_in, attribute_val_out, flag, ierror)
  implicit none
  integer :: oldcomm, keyval, extra_state, attribute_val_in, attribute_val_out, ierror
  logical :: flag
  attribute_val_out = attribute_val_in + extra_state
  flag = .true.
  ierror = 0
end subroutine old_copy

subroutine greq_query(extra_state, status, ierror)
  use mpi
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra_state
  integer :: status(MPI_STATUS_SIZE), ierror, rank
  integer :: ncopy, ndelete, nquery, nfree, lastdel
  common /calls/ ncopy, ndelete, nquery, nfree, lastdel
  nquery = nquery + 1
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierror)
  status(MPI_SOURCE) = rank
  status(MPI_TAG) = int(extra_state)
  call MPI_Status_set_elements(status, MPI_BYTE, 0, ierror)
  call MPI_Status_set_cancelled(status, .false., ierror)
  ierror = MPI_SUCCESS
end subroutine greq_query

subroutine greq_free(extra_state, ierror)
  use mpi
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra_state
  integer :: ierror
  integer :: ncopy, ndelete, nquery, nfree, lastdel
  common /calls/ ncopy, ndelete, nquery, nfree, lastdel
  nfree = nfree + 1
  ierror = MPI_SUCCESS
end subroutine greq_free

subroutine greq_cancel(extra_state, complete, ierror)
  use mpi
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra_state
  logical :: complete
  integer :: ierror
  ierror = MPI_SUCCESS
end subroutine greq_cancel

! the 'negated' data representation: file integers are the user's negated
subroutine neg_read(userbuf, datatype, count, filebuf, position, extra_state, ierror)
  use mpi
  implicit none
  integer :: userbuf(*), filebuf(*), datatype, count, ierror, i
  integer(kind=MPI_OFFSET_KIND) :: position
  integer(kind=MPI_ADDRESS_KIND) :: extra_state
  do i = 1, count
    userbuf(position + i) = -filebuf(i)
  end do
  ierror = MPI_SUCCESS
end subroutine neg_read

subroutine neg_write(userbuf, datatype, count, filebuf, position, extra_state, ierror)
  use mpi
  implicit none
  integer :: userbuf(*), filebuf(*), datatype, count, ierror, i
  integer(kind=MPI_OFFSET_KIND) :: position
  integer(kind=MPI_ADDRESS_KIND) :: extra_state
  do i = 1, count
    filebuf(i) = -userbuf(position + i)
  end do
  ierror = MPI_SUCCESS
end subroutine neg_write

subroutine int_extent(datatype, extent, extra_state, ierror)
  use mpi
  implicit none
  integer :: datatype, ierror
  integer(kind=MPI_ADDRESS_KIND) :: extent, extra_state
  extent = 4
  ierror = MPI_SUCCESS
end subroutine int_extent
