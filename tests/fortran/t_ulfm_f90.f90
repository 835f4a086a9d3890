! t_ulfm_f90: User-Level Failure Mitigation from `use mpi` and Open MPI's
! `use mpi_ext` (INTEGER handles, ierror required), the same steps as
! t_ulfm_f08.f90, under mpiexec --with-ft ulfm with 3 or more ranks.
program t_ulfm_f90
  use mpi
  use mpi_ext
  implicit none
  integer :: comm, small, ishrunk, req, failed, st(MPI_STATUS_SIZE)
  integer :: rank, np, fails, ierr, cls, flag, v, n, acked, total, buf
  logical :: revoked
  double precision :: t0
  fails = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, comm, ierr)
  call MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN, ierr)
  call MPIX_Comm_is_revoked(comm, revoked, ierr)
  if (revoked .or. ierr /= MPI_SUCCESS) call fail('revoked at start')
  flag = 7
  if (rank == 1) flag = 6
  call MPIX_Comm_agree(comm, flag, ierr)
  if (ierr /= MPI_SUCCESS .or. flag /= 6) call fail('agree')
  v = rank + 1
  call MPIX_Comm_iagree(comm, v, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  if (v /= 0) call fail('iagree')
  call MPIX_Comm_ishrink(comm, ishrunk, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call MPI_Comm_size(ishrunk, n, ierr)
  if (n /= np) call fail('ishrink size')
  call MPI_Comm_free(ishrunk, ierr)
  call MPI_Barrier(comm, ierr)
  if (rank == np - 1) call kill(getpid(), 9)
  call MPI_Recv(buf, 1, MPI_INTEGER, np - 1, 5, comm, st, ierr)
  call MPI_Error_class(ierr, cls, ierr)
  if (cls /= MPIX_ERR_PROC_FAILED .and. cls /= MPIX_ERR_REVOKED) call fail('receive from the dead')
  t0 = MPI_Wtime()
  do  ! until this process knows of the failure (a revoke may come first)
    call MPIX_Comm_get_failed(comm, failed, ierr)
    call MPI_Group_size(failed, n, ierr)
    call MPI_Group_free(failed, ierr)
    if (n == 1 .or. MPI_Wtime() - t0 > 20) exit
  end do
  call MPIX_Comm_ack_failed(comm, np, acked, ierr)
  if (acked /= 1) call fail('ack_failed')
  call MPIX_Comm_revoke(comm, ierr)
  call MPIX_Comm_is_revoked(comm, revoked, ierr)
  if (.not. revoked) call fail('not revoked')
  call MPIX_Comm_shrink(comm, small, ierr)
  call MPI_Comm_size(small, n, ierr)
  call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, small, ierr)
  if (n /= np - 1 .or. total /= (np - 1) * (np - 2) / 2) call fail('shrink')
  flag = 1
  call MPIX_Comm_agree(small, flag, ierr)
  if (ierr /= MPI_SUCCESS .or. flag /= 1) call fail('agree after the shrink')
  call MPI_Allreduce(fails, total, 1, MPI_INTEGER, MPI_SUM, small, ierr)
  if (rank == 0 .and. total == 0) print '(a)', 't_ulfm_f90: ok'
  call MPI_Comm_free(small, ierr)
  call MPI_Finalize(ierr)
contains
  subroutine fail(what)
    character(len=*), intent(in) :: what
    print '(a,i0,2a)', 't_ulfm_f90: rank ', rank, ': failure(s): ', what
    fails = fails + 1
  end subroutine fail
end program t_ulfm_f90
