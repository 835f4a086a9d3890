/* Failures the launcher must contain.  usage: t_fail MODE [rank]
 *   abort  the victim calls MPI_Abort(MPI_COMM_WORLD, 3) while others block
 *   kill9  the victim sends itself SIGKILL
 *   segv   the victim dereferences NULL
 *   exit   the victim exits with status 7 without MPI_Finalize
 *   fatal  the victim sends to an invalid rank under MPI_ERRORS_ARE_FATAL
 *   hang   every rank blocks forever (for --timeout)
 * Everyone else waits in MPI_Recv for a message that never comes. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const char *mode = argc > 1 ? argv[1] : "abort";
    int victim = argc > 2 ? atoi(argv[2]) : 1;
    int rank, size, x = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("rank %d pid %d ready\n", rank, (int)getpid());
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == victim && strcmp(mode, "hang") != 0) {
        usleep(200000); /* let the others block first */
        if (!strcmp(mode, "abort"))
            MPI_Abort(MPI_COMM_WORLD, 3);
        if (!strcmp(mode, "kill9"))
            raise(SIGKILL);
        if (!strcmp(mode, "segv")) {
            volatile int *p = NULL;
            *p = 1;
        }
        if (!strcmp(mode, "exit"))
            exit(7);
        if (!strcmp(mode, "fatal"))
            MPI_Send(&x, 1, MPI_INT, size + 10, 0, MPI_COMM_WORLD);
    }
    MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
