C     bench/fortran through mpif.h (fixed form): the loops of pp_c.c.
C     usage: pp_f77 [quick]
      PROGRAM PPF77
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, ITERS, WINDOWS, NBYTES, I, W, K
      INTEGER REQS(64)
      CHARACTER*8 BUF, WIN(64)
      CHARACTER*16 ARG
      DOUBLE PRECISION T0, T, TC, TF, D(41)
      DOUBLE PRECISION PAIR_C_LOOP, PAIR_MEDIAN
      EXTERNAL PAIR_C_LOOP, PAIR_MEDIAN
      INTEGER BLK, N
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL GET_COMMAND_ARGUMENT(1, ARG)
      ITERS = 20000
      WINDOWS = 2000
      IF (ARG .EQ. 'quick') THEN
         ITERS = 2000
         WINDOWS = 200
      END IF
      DO NBYTES = 0, 8, 8
         T0 = 0
         DO I = -ITERS / 10, ITERS - 1
            IF (I .EQ. 0) THEN
               CALL MPI_BARRIER(MPI_COMM_WORLD, IERR)
               T0 = MPI_WTIME()
            END IF
            IF (RANK .EQ. 0) THEN
               CALL MPI_SEND(BUF, NBYTES, MPI_BYTE, 1, 1,
     &              MPI_COMM_WORLD, IERR)
               CALL MPI_RECV(BUF, NBYTES, MPI_BYTE, 1, 1,
     &              MPI_COMM_WORLD, MPI_STATUS_IGNORE, IERR)
            ELSE IF (RANK .EQ. 1) THEN
               CALL MPI_RECV(BUF, NBYTES, MPI_BYTE, 0, 1,
     &              MPI_COMM_WORLD, MPI_STATUS_IGNORE, IERR)
               CALL MPI_SEND(BUF, NBYTES, MPI_BYTE, 0, 1,
     &              MPI_COMM_WORLD, IERR)
            END IF
         END DO
         T = MPI_WTIME() - T0
         IF (RANK .EQ. 0) PRINT '(A,F0.4,A,I0,A)',
     &        'RESULT latency value=', T / ITERS / 2 * 1D6,
     &        ' bytes=', NBYTES, ' interface=f77'
      END DO
      DO W = -WINDOWS / 10, WINDOWS - 1
         IF (W .EQ. 0) THEN
            CALL MPI_BARRIER(MPI_COMM_WORLD, IERR)
            T0 = MPI_WTIME()
         END IF
         DO K = 1, 64
            IF (RANK .EQ. 0) THEN
               CALL MPI_ISEND(WIN(K), 8, MPI_BYTE, 1, 2,
     &              MPI_COMM_WORLD, REQS(K), IERR)
            ELSE
               CALL MPI_IRECV(WIN(K), 8, MPI_BYTE, 0, 2,
     &              MPI_COMM_WORLD, REQS(K), IERR)
            END IF
         END DO
         CALL MPI_WAITALL(64, REQS, MPI_STATUSES_IGNORE, IERR)
         IF (RANK .EQ. 0) THEN
            CALL MPI_RECV(BUF, 0, MPI_BYTE, 1, 3, MPI_COMM_WORLD,
     &           MPI_STATUS_IGNORE, IERR)
         ELSE
            CALL MPI_SEND(BUF, 0, MPI_BYTE, 0, 3, MPI_COMM_WORLD, IERR)
         END IF
      END DO
      T = MPI_WTIME() - T0
      IF (RANK .EQ. 0) PRINT '(A,F0.1,A)', 'RESULT message_rate value=',
     &     64D0 * WINDOWS / T, ' bytes=8 window=64 interface=f77'
C     the cost of one call: a 0-byte send to MPI_PROC_NULL
      ITERS = ITERS * 100
      T0 = MPI_WTIME()
      DO I = 1, ITERS
         CALL MPI_SEND(BUF, 0, MPI_BYTE, MPI_PROC_NULL, 1,
     &        MPI_COMM_WORLD, IERR)
      END DO
      T = MPI_WTIME() - T0
      IF (RANK .EQ. 0) PRINT '(A,F0.2,A)', 'RESULT call_time value=',
     &     T / ITERS * 1D9, ' interface=f77'
C     what this interface adds to that call: blocks of it against blocks
C     of the same call from C in this process, alternating (pair_c.c)
      N = ITERS / 40
      DO BLK = 1, 41
         IF (MOD(BLK, 2) .EQ. 1) TC = PAIR_C_LOOP(N)
         T0 = MPI_WTIME()
         DO I = 1, N
            CALL MPI_SEND(BUF, 0, MPI_BYTE, MPI_PROC_NULL, 1,
     &           MPI_COMM_WORLD, IERR)
         END DO
         TF = MPI_WTIME() - T0
         IF (MOD(BLK, 2) .EQ. 0) TC = PAIR_C_LOOP(N)
         D(BLK) = (TF - TC) / N * 1D9
      END DO
      T = PAIR_MEDIAN(D, 41)
      IF (RANK .EQ. 0) PRINT '(A,F0.2,A)',
     &     'RESULT fortran_overhead value=', T, ' interface=f77'
      CALL MPI_FINALIZE(IERR)
      END
