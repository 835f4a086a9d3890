/* Calls before MPI_Init and after MPI_Finalize.
 *   t_state return   run with LMPI_INITIAL_ERRHANDLER=return: both return MPI_ERR_OTHER
 *   t_state before   default handler: the call before MPI_Init aborts with a message
 *   t_state after    default handler: the call after MPI_Finalize aborts with a message */
#include <string.h>

#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "return";
    int x = 0, flag = -1, cls = -1, rank = -1;
    MPI_Initialized(&flag);
    if (flag != 0)
        return 10;
    int rc;
    if (strcmp(mode, "after") != 0) {
        rc = MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD); /* aborts in mode "before" */
        if (!strcmp(mode, "before"))
            return 11;
        MPI_Error_class(rc, &cls);
        if (cls != MPI_ERR_OTHER) {
            fprintf(stderr, "before init: class %d, expected MPI_ERR_OTHER\n", cls);
            return 12;
        }
    }
    int provided = -1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Query_thread(&x);
    if (provided != MPI_THREAD_FUNNELED || x != provided)
        return 13;
    MPI_Is_thread_main(&flag);
    if (!flag)
        return 14;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int v, sv;
    MPI_Get_version(&v, &sv);
    if (v != 5 || sv != 0)
        return 15;
    if (!strcmp(mode, "return"))
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Finalize();
    MPI_Finalized(&flag);
    if (flag != 1)
        return 16;
    rc = MPI_Comm_rank(MPI_COMM_WORLD, &x); /* aborts in mode "after" */
    if (!strcmp(mode, "after"))
        return 17;
    MPI_Error_class(rc, &cls);
    if (cls != MPI_ERR_OTHER) {
        fprintf(stderr, "after finalize: class %d, expected MPI_ERR_OTHER\n", cls);
        return 18;
    }
    if (rank == 0)
        printf("t_state: passed\n");
    return 0;
}
