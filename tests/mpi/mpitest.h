/* Tiny helpers for MPI program tests: CHECK prints both values and the rank,
 * and the test exits non-zero; tests run under mpiexec with a timeout. */
#ifndef MPITEST_H
#define MPITEST_H
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Index of LeanMPI's MPI_T performance variable NAME, -1 if absent
 * (MPI_T must be initialized). */
static inline int mpitest_pvar_index(const char *name)
{
    int n, idx = -1;
    MPI_T_pvar_get_num(&n);
    for (int i = 0; i < n && idx < 0; i++) {
        char nm[128], desc[256];
        int nl = sizeof(nm), dl = sizeof(desc), verb, cls, bind, ro, cont, atomic;
        MPI_Datatype dt;
        MPI_T_enum en;
        MPI_T_pvar_get_info(i, nm, &nl, &verb, &cls, &dt, &en, desc, &dl, &bind, &ro, &cont, &atomic);
        if (!strcmp(nm, name))
            idx = i;
    }
    return idx;
}

/* The value of LeanMPI's performance variable NAME now, -1 if absent
 * (MPI_T must be initialized). */
static inline long long mpitest_pvar_read(const char *name)
{
    int idx = mpitest_pvar_index(name);
    if (idx < 0)
        return -1;
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    int count;
    unsigned long long v = 0;
    MPI_T_pvar_session_create(&s);
    MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &count);
    MPI_T_pvar_read(s, h, &v);
    MPI_T_pvar_handle_free(s, &h);
    MPI_T_pvar_session_free(&s);
    return (long long)v;
}

/* A program of named cases: ONLY (argv[1], or NULL for all) picks one;
 * each case ends in a barrier.  A name that matches none is a failure. */
typedef struct {
    const char *name;
    void (*run)(void);
} mpitest_case;

static inline void mpitest_run_cases(const char *prog, const mpitest_case *cases, size_t n, const char *only)
{
    int ran = 0;
    for (size_t i = 0; i < n; i++) {
        if (only && strcmp(only, cases[i].name))
            continue;
        cases[i].run();
        MPI_Barrier(MPI_COMM_WORLD);
        ran++;
    }
    if (!ran) {
        fprintf(stderr, "%s: no case named %s\n", prog, only);
        mpitest_failures++;
    }
}

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
