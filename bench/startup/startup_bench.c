/* Start-up: what a job does before it computes (MPI_Init, a barrier, an
 * allreduce) and its end.  bench/run startup times the whole launch from
 * outside (launcher start to its exit); the program itself prints nothing
 * but a check, so output does not count. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, one = 1, sum = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("startup: %d ranks %s\n", size, sum == size ? "ok" : "WRONG");
    MPI_Finalize();
    return sum == size ? 0 : 1;
}
