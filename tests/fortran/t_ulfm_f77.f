C     t_ulfm_f77: User-Level Failure Mitigation from mpif.h (and Open
C     MPI's mpif-ext.h), fixed form, under mpiexec --with-ft ulfm with 3
C     or more ranks: the last rank dies, the others revoke, shrink,
C     agree and sum their ranks over the shrunken communicator.
      PROGRAM TULFM
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INCLUDE 'mpif-ext.h'
      INTEGER COMM, SMALL, RANK, NP, IERR, CLS, FLAG, N, TOTAL, BUF
      INTEGER ST(MPI_STATUS_SIZE), FAILS
      INTEGER GETPID
      FAILS = 0
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NP, IERR)
      CALL MPI_COMM_DUP(MPI_COMM_WORLD, COMM, IERR)
      CALL MPI_COMM_SET_ERRHANDLER(COMM, MPI_ERRORS_RETURN, IERR)
      FLAG = 3
      IF (RANK .EQ. 0) FLAG = 1
      CALL MPIX_COMM_AGREE(COMM, FLAG, IERR)
      IF (IERR .NE. MPI_SUCCESS .OR. FLAG .NE. 1) FAILS = FAILS + 1
      CALL MPI_BARRIER(COMM, IERR)
      IF (RANK .EQ. NP - 1) CALL KILL(GETPID(), 9)
      CALL MPI_RECV(BUF, 1, MPI_INTEGER, NP - 1, 5, COMM, ST, IERR)
      CALL MPI_ERROR_CLASS(IERR, CLS, IERR)
      IF (CLS .NE. MPIX_ERR_PROC_FAILED .AND.
     &    CLS .NE. MPIX_ERR_REVOKED) FAILS = FAILS + 1
      CALL MPIX_COMM_REVOKE(COMM, IERR)
      CALL MPIX_COMM_SHRINK(COMM, SMALL, IERR)
      CALL MPI_COMM_SIZE(SMALL, N, IERR)
      CALL MPI_ALLREDUCE(RANK, TOTAL, 1, MPI_INTEGER, MPI_SUM, SMALL,
     &                   IERR)
      IF (N .NE. NP - 1 .OR. TOTAL .NE. (NP - 1) * (NP - 2) / 2)
     &    FAILS = FAILS + 1
      IF (FAILS .GT. 0) PRINT *, 't_ulfm_f77: rank', RANK,
     &    ': failure(s):', FAILS
      CALL MPI_ALLREDUCE(FAILS, TOTAL, 1, MPI_INTEGER, MPI_SUM, SMALL,
     &                   IERR)
      IF (RANK .EQ. 0 .AND. TOTAL .EQ. 0) PRINT '(A)', 't_ulfm_f77: ok'
      CALL MPI_COMM_FREE(SMALL, IERR)
      CALL MPI_FINALIZE(IERR)
      END
