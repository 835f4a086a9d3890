/* MPMD launch (mpiexec -n 2 t_mpmd 0 : -n 3 -env LMPI_T_COLOR red t_mpmd 1
 * : t_mpmd 2): one MPI_COMM_WORLD of 6 ranks, the applications' ranks in
 * turn, each rank's MPI_APPNUM its application's index (given as argv[1]),
 * an application's -env only in its own ranks, and the applications talk:
 * a split by application number and an allreduce over the world. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, flag, *appnum, fails = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int want_app = argc > 1 ? atoi(argv[1]) : -1;
    /* ranks 0-1: application 0, 2-4: application 1, 5: application 2 */
    int app_of_rank = rank < 2 ? 0 : rank < 5 ? 1 : 2, app_size = app_of_rank == 1 ? 3 : app_of_rank == 0 ? 2 : 1;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
    if (size != 6 || !flag || *appnum != want_app || want_app != app_of_rank) {
        fprintf(stderr, "rank %d: size %d, appnum %d (set %d), argv says %d, expected application %d\n", rank, size,
                flag ? *appnum : -1, flag, want_app, app_of_rank);
        fails++;
    }
    const char *color = getenv("LMPI_T_COLOR");
    if ((app_of_rank == 1) != (color && !strcmp(color, "red"))) {
        fprintf(stderr, "rank %d: LMPI_T_COLOR %s in application %d\n", rank, color ? color : "(unset)", app_of_rank);
        fails++;
    }
    MPI_Comm app;
    MPI_Comm_split(MPI_COMM_WORLD, flag ? *appnum : 99, rank, &app);
    int asize, sum = rank, total = 0;
    MPI_Comm_size(app, &asize);
    if (asize != app_size) {
        fprintf(stderr, "rank %d: application %d has %d ranks, expected %d\n", rank, app_of_rank, asize, app_size);
        fails++;
    }
    MPI_Allreduce(&sum, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (total != 15) {
        fprintf(stderr, "rank %d: sum of ranks %d, expected 15\n", rank, total);
        fails++;
    }
    MPI_Allreduce(MPI_IN_PLACE, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Comm_free(&app);
    if (rank == 0)
        printf(fails ? "t_mpmd: FAILED\n" : "t_mpmd: ok\n");
    MPI_Finalize();
    return fails != 0;
}
