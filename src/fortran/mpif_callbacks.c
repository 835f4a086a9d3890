/* Error handlers written in Fortran: SUBROUTINE F(HANDLE, ERROR_CODE) with
 * INTEGERs, where C calls f(MPI_x *handle, int *code, ...).  The C library
 * passes no user data, so each handler made from Fortran takes one of
 * HANDLERS trampolines of its kind (communicator, window, file, session)
 * that converts the handle and calls the subroutine in its slot.  A handler
 * stays callable for as long as anything may still use it, so slots are
 * never given back: the (HANDLERS+1)th handler of a kind fails with
 * MPI_ERR_INTERN. */
#include <pthread.h>

#include "fortran/mpif_util.h"

#define HANDLERS 32
typedef void (*fortran_handler_fn)(MPI_Fint *handle, MPI_Fint *code);

static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;

/* The slot taken for fn, or -1. */
static int take_slot(fortran_handler_fn *slots, int *used, fortran_handler_fn fn)
{
    pthread_mutex_lock(&slots_lock);
    int s = *used < HANDLERS ? (*used)++ : -1;
    if (s >= 0)
        slots[s] = fn;
    pthread_mutex_unlock(&slots_lock);
    return s;
}

#define TRAMPOLINE(kind, T, conv, j)                                                                \
    static void kind##_trampoline_##j(T *h, int *code, ...)                                         \
    {                                                                                               \
        MPI_Fint fh = MPI_##conv##_toint(*h), fc = *code;                                           \
        kind##_slots[j](&fh, &fc);                                                                  \
        *h = MPI_##conv##_fromint(fh);                                                              \
    }
#define TRAMPOLINES(kind, T, conv)                                                                  \
    static fortran_handler_fn kind##_slots[HANDLERS];                                               \
    static int kind##_used;                                                                         \
    TRAMPOLINE(kind, T, conv, 0) TRAMPOLINE(kind, T, conv, 1) TRAMPOLINE(kind, T, conv, 2)          \
    TRAMPOLINE(kind, T, conv, 3) TRAMPOLINE(kind, T, conv, 4) TRAMPOLINE(kind, T, conv, 5)          \
    TRAMPOLINE(kind, T, conv, 6) TRAMPOLINE(kind, T, conv, 7) TRAMPOLINE(kind, T, conv, 8)          \
    TRAMPOLINE(kind, T, conv, 9) TRAMPOLINE(kind, T, conv, 10) TRAMPOLINE(kind, T, conv, 11)        \
    TRAMPOLINE(kind, T, conv, 12) TRAMPOLINE(kind, T, conv, 13) TRAMPOLINE(kind, T, conv, 14)       \
    TRAMPOLINE(kind, T, conv, 15) TRAMPOLINE(kind, T, conv, 16) TRAMPOLINE(kind, T, conv, 17)       \
    TRAMPOLINE(kind, T, conv, 18) TRAMPOLINE(kind, T, conv, 19) TRAMPOLINE(kind, T, conv, 20)       \
    TRAMPOLINE(kind, T, conv, 21) TRAMPOLINE(kind, T, conv, 22) TRAMPOLINE(kind, T, conv, 23)       \
    TRAMPOLINE(kind, T, conv, 24) TRAMPOLINE(kind, T, conv, 25) TRAMPOLINE(kind, T, conv, 26)       \
    TRAMPOLINE(kind, T, conv, 27) TRAMPOLINE(kind, T, conv, 28) TRAMPOLINE(kind, T, conv, 29)       \
    TRAMPOLINE(kind, T, conv, 30) TRAMPOLINE(kind, T, conv, 31)                                     \
    static MPI_##conv##_errhandler_function *const kind##_trampolines[HANDLERS] = {                 \
        kind##_trampoline_0,  kind##_trampoline_1,  kind##_trampoline_2,  kind##_trampoline_3,      \
        kind##_trampoline_4,  kind##_trampoline_5,  kind##_trampoline_6,  kind##_trampoline_7,      \
        kind##_trampoline_8,  kind##_trampoline_9,  kind##_trampoline_10, kind##_trampoline_11,     \
        kind##_trampoline_12, kind##_trampoline_13, kind##_trampoline_14, kind##_trampoline_15,     \
        kind##_trampoline_16, kind##_trampoline_17, kind##_trampoline_18, kind##_trampoline_19,     \
        kind##_trampoline_20, kind##_trampoline_21, kind##_trampoline_22, kind##_trampoline_23,     \
        kind##_trampoline_24, kind##_trampoline_25, kind##_trampoline_26, kind##_trampoline_27,     \
        kind##_trampoline_28, kind##_trampoline_29, kind##_trampoline_30, kind##_trampoline_31};   \
    static void kind##_create_body(bool prof, fortran_handler_fn fn, MPI_Fint *errhandler, MPI_Fint *ierror) \
    {                                                                                               \
        int s = take_slot(kind##_slots, &kind##_used, fn);                                          \
        if (s < 0) {                                                                                \
            *ierror = MPI_ERR_INTERN;                                                               \
            return;                                                                                 \
        }                                                                                           \
        MPI_Errhandler e = MPI_ERRHANDLER_NULL;                                                     \
        *ierror = prof ? PMPI_##conv##_create_errhandler(kind##_trampolines[s], &e)                 \
                       : MPI_##conv##_create_errhandler(kind##_trampolines[s], &e);                 \
        if (*ierror == MPI_SUCCESS)                                                                 \
            *errhandler = MPI_Errhandler_toint(e);                                                  \
    }                                                                                               \
    void mpi_##kind##_create_errhandler_(fortran_handler_fn fn, MPI_Fint *errhandler, MPI_Fint *ierror) \
    {                                                                                               \
        kind##_create_body(false, fn, errhandler, ierror);                                          \
    }                                                                                               \
    void pmpi_##kind##_create_errhandler_(fortran_handler_fn fn, MPI_Fint *errhandler, MPI_Fint *ierror) \
    {                                                                                               \
        kind##_create_body(true, fn, errhandler, ierror);                                           \
    }

TRAMPOLINES(comm, MPI_Comm, Comm)
TRAMPOLINES(win, MPI_Win, Win)
TRAMPOLINES(file, MPI_File, File)
TRAMPOLINES(session, MPI_Session, Session)
