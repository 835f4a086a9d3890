! t_ulfm_f08: User-Level Failure Mitigation from `use mpi_f08` and Open
! MPI's `use mpi_f08_ext`, run under mpiexec --with-ft ulfm with 3 or more
! ranks (tests/mpi/ulfm.sh).  Without a failure: agreements (blocking and
! not), an ishrink whose handle is used after MPI_Wait.  Then the last rank
! kills itself: the others' receive from it fails with
! MPIX_ERR_PROC_FAILED, they acknowledge, revoke, shrink, agree and sum
! their ranks over the shrunken communicator.  Rank 0 prints the verdict.
program t_ulfm_f08
  use mpi_f08
  use mpi_f08_ext
  implicit none
  type(MPI_Comm) :: comm, small, ishrunk
  type(MPI_Request) :: req
  type(MPI_Group) :: failed
  type(MPI_Status) :: st
  integer :: rank, np, fails, ierr, cls, flag, v, n, acked, total, buf
  logical :: revoked
  double precision :: t0
  fails = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  call MPI_Comm_dup(MPI_COMM_WORLD, comm)
  call MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN)
  call MPIX_Comm_is_revoked(comm, revoked)
  if (revoked) call fail('revoked at start')
  ! agreements: the AND of everyone's flags
  flag = 7
  if (rank == 1) flag = 6
  call MPIX_Comm_agree(comm, flag, ierr)
  if (ierr /= MPI_SUCCESS .or. flag /= 6) call fail('agree')
  v = rank + 1
  call MPIX_Comm_iagree(comm, v, req)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  if (v /= 0) call fail('iagree')
  ! a nonblocking shrink's communicator, used once the request completes
  call MPIX_Comm_ishrink(comm, ishrunk, req, ierr)
  if (ierr /= MPI_SUCCESS) call fail('ishrink')
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  call MPI_Comm_size(ishrunk, n)
  call MPI_Allreduce(1, total, 1, MPI_INTEGER, MPI_SUM, ishrunk)
  if (n /= np .or. total /= np) call fail('ishrink size')
  call MPI_Comm_free(ishrunk)
  call MPIX_Comm_get_failed(comm, failed)
  call MPI_Group_size(failed, n)
  if (n /= 0) call fail('failed before any failure')
  call MPI_Group_free(failed)
  ! the last rank dies
  call MPI_Barrier(comm)
  if (rank == np - 1) call kill(getpid(), 9)
  call MPI_Recv(buf, 1, MPI_INTEGER, np - 1, 5, comm, st, ierr)
  call MPI_Error_class(ierr, cls)
  ! (revoked already when another survivor saw the failure first)
  if (cls /= MPIX_ERR_PROC_FAILED .and. cls /= MPIX_ERR_REVOKED) call fail('receive from the dead')
  t0 = MPI_Wtime()
  do  ! until this process knows of the failure (a revoke may come first)
    call MPIX_Comm_get_failed(comm, failed)
    call MPI_Group_size(failed, n)
    call MPI_Group_free(failed)
    if (n == 1 .or. MPI_Wtime() - t0 > 20) exit
  end do
  call MPIX_Comm_ack_failed(comm, np, acked)
  if (acked /= 1) call fail('ack_failed')
  call MPIX_Comm_failure_ack(comm)
  call MPIX_Comm_failure_get_acked(comm, failed)
  call MPI_Group_size(failed, n)
  if (n /= 1) call fail('failure_get_acked')
  call MPI_Group_free(failed)
  call MPIX_Comm_revoke(comm)
  call PMPIX_Comm_is_revoked(comm, revoked)
  if (.not. revoked) call fail('not revoked')
  call MPI_Barrier(comm, ierr)
  call MPI_Error_class(ierr, cls)
  if (cls /= MPIX_ERR_REVOKED) call fail('barrier on a revoked communicator')
  call MPIX_Comm_shrink(comm, small)
  call MPI_Comm_size(small, n)
  call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, small)
  if (n /= np - 1 .or. total /= (np - 1) * (np - 2) / 2) call fail('shrink')
  flag = 1
  call MPIX_Comm_agree(small, flag, ierr)
  if (ierr /= MPI_SUCCESS .or. flag /= 1) call fail('agree after the shrink')
  call MPI_Allreduce(fails, total, 1, MPI_INTEGER, MPI_SUM, small)
  if (rank == 0 .and. total == 0) print '(a)', 't_ulfm_f08: ok'
  call MPI_Comm_free(small)
  call MPI_Finalize()
contains
  subroutine fail(what)
    character(len=*), intent(in) :: what
    print '(a,i0,2a)', 't_ulfm_f08: rank ', rank, ': failure(s): ', what
    fails = fails + 1
  end subroutine fail
end program t_ulfm_f08
