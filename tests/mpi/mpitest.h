/* Tiny helpers for MPI program tests: CHECK prints both values and the rank,
 * and the test exits non-zero; tests run under mpiexec with a timeout. */
#ifndef MPITEST_H
#define MPITEST_H
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int mpitest_failures;

#define CHECK_EQ(a, b)                                                                              \
    do {                                                                                            \
        long long _a = (long long)(a), _b = (long long)(b);                                         \
        if (_a != _b) {                                                                             \
            int _r = -1;                                                                            \
            MPI_Comm_rank(MPI_COMM_WORLD, &_r);                                                     \
            fprintf(stderr, "%s:%d: rank %d: %s == %lld, expected %s == %lld\n", __FILE__, __LINE__, \
                    _r, #a, _a, #b, _b);                                                            \
            mpitest_failures++;                                                                     \
        }                                                                                           \
    } while (0)

#define CHECK(cond) CHECK_EQ(!!(cond), 1)

static inline int mpitest_finish(const char *name)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (mpitest_failures)
        fprintf(stderr, "%s: rank %d: %d failures\n", name, rank, mpitest_failures);
    else if (rank == 0)
        printf("%s: passed\n", name);
    MPI_Finalize();
    return mpitest_failures ? 1 : 0;
}
#endif
