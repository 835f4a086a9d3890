/* bench/fortran's C half of the paired call-time measurement.
 *
 * Timing the C program and a Fortran program one after the other puts the
 * machine's drift between them: on this shared node that is +-5-10 ns per
 * call, more than the 5 ns the Fortran layer may add.  So each Fortran
 * program times blocks of its own MPI_Send loop and blocks of this C loop
 * (the same call pp_c.c times) alternately in one process, and reports the
 * median of the per-block differences.  Built with the implementation's own
 * mpicc and linked into the program by its mpifort; called with gfortran's
 * names (lower case, trailing underscore), which all three forms reach. */
#include <mpi.h>
#include <stdlib.h>

/* the C loop: *n 0-byte sends to MPI_PROC_NULL; returns its time in s */
double pair_c_loop_(const int *n)
{
    char buf = 0;
    double t0 = MPI_Wtime();
    for (int i = 0; i < *n; i++)
        MPI_Send(&buf, 0, MPI_BYTE, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
    return MPI_Wtime() - t0;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* the median of the *nblocks per-call differences in d (sorted in place) */
double pair_median_(double *d, const int *nblocks)
{
    qsort(d, (size_t)*nblocks, sizeof *d, by_value);
    return d[*nblocks / 2];
}
