/* What the generated Fortran procedures (gen/mpif_procs.c) share: handle,
 * string and logical conversions, and the sentinels' storage.
 *
 * Everything here reaches the MPI library only through the standard ABI
 * (mpi.h: MPI_x, MPI_x_fromint, MPI_x_toint), never LeanMPI's internals: the
 * Fortran library runs over any implementation of that ABI. */
#ifndef LMPI_FORTRAN_MPIF_UTIL_H
#define LMPI_FORTRAN_MPIF_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <mpi.h>

/* The sentinels are variables in common blocks of their own (mpif.h); the
 * C procedures know them by address.  Defined here, sized as mpif.h
 * declares them. */
extern int lmpif_bottom_, lmpif_in_place_, lmpif_buffer_automatic_;
extern int lmpif_status_ignore_[MPI_F_STATUS_SIZE], lmpif_statuses_ignore_[MPI_F_STATUS_SIZE];
extern int lmpif_errcodes_ignore_[1], lmpif_unweighted_[1], lmpif_weights_empty_[1];
extern char lmpif_argv_null_[1], lmpif_argvs_null_[1];

#define LMPIF_BUF(p)                                                                                              \
    ((void *)(p) == (void *)&lmpif_bottom_             ? MPI_BOTTOM                                            \
     : (void *)(p) == (void *)&lmpif_in_place_         ? MPI_IN_PLACE                                          \
     : (void *)(p) == (void *)&lmpif_buffer_automatic_ ? MPI_BUFFER_AUTOMATIC                                  \
                                                       : (void *)(p))
/* A Fortran status is MPI_F_STATUS_SIZE integers, the C status's layout in
 * the standard ABI: passed through as it is. */
#define LMPIF_STATUS(p)                                                                                           \
    ((void *)(p) == (void *)lmpif_status_ignore_ || (void *)(p) == (void *)lmpif_statuses_ignore_               \
         ? MPI_STATUS_IGNORE                                                                                      \
         : (MPI_Status *)(void *)(p))
#define LMPIF_ERRCODES(p) ((void *)(p) == (void *)lmpif_errcodes_ignore_ ? MPI_ERRCODES_IGNORE : (int *)(p))
#define LMPIF_WEIGHTS(p)                                                                                          \
    ((void *)(p) == (void *)lmpif_unweighted_      ? MPI_UNWEIGHTED                                            \
     : (void *)(p) == (void *)lmpif_weights_empty_ ? MPI_WEIGHTS_EMPTY                                         \
                                                   : (int *)(p))

/* Handle conversions on the hot path: the standard ABI's predefined handles
 * are small constants (below 1024) whose Fortran values are the same
 * numbers, so they convert without a call (LeanMPI's and MPICH's
 * MPI_x_fromint agree: tools.fortran runs over both); others ask the
 * library. */
#define LMPIF_PREDEFINED_LIMIT 1024u
#define LMPIF_CONVERSIONS(T, conv)                                                                   \
    static inline T lmpif_##conv##_fromint(MPI_Fint f)                                                \
    {                                                                                                 \
        return (unsigned)f < LMPIF_PREDEFINED_LIMIT ? (T)(uintptr_t)(unsigned)f : MPI_##conv##_fromint(f); \
    }                                                                                                 \
    static inline MPI_Fint lmpif_##conv##_toint(T h)                                                  \
    {                                                                                                 \
        return (uintptr_t)h < LMPIF_PREDEFINED_LIMIT ? (MPI_Fint)(uintptr_t)h : MPI_##conv##_toint(h); \
    }
/* The generated procedures test all their input handles at once (their
 * bitwise or is below the limit only if each is) and then take a body whose
 * conversions are casts: with no call before the C procedure's, the
 * compiler saves few registers (mpi_send_: 27 instructions, against 46
 * with a possible MPI_x_fromint call at each conversion).  The general body
 * is a cold function of its own. */
#define LMPIF_ALL_PREDEFINED(ors) __builtin_expect((unsigned)(ors) < LMPIF_PREDEFINED_LIMIT, 1)
#define LMPIF_FROMINT(fast, T, conv, f) ((fast) ? (T)(uintptr_t)(unsigned)(f) : lmpif_##conv##_fromint(f))
LMPIF_CONVERSIONS(MPI_Comm, Comm)
LMPIF_CONVERSIONS(MPI_Datatype, Type)
LMPIF_CONVERSIONS(MPI_Group, Group)
LMPIF_CONVERSIONS(MPI_Request, Request)
LMPIF_CONVERSIONS(MPI_Info, Info)
LMPIF_CONVERSIONS(MPI_Errhandler, Errhandler)
LMPIF_CONVERSIONS(MPI_File, File)
LMPIF_CONVERSIONS(MPI_Message, Message)
LMPIF_CONVERSIONS(MPI_Op, Op)
LMPIF_CONVERSIONS(MPI_Session, Session)
LMPIF_CONVERSIONS(MPI_Win, Win)

/* Handle classes, for arrays of handles. */
enum {
    LMPIF_COMM, LMPIF_TYPE, LMPIF_GROUP, LMPIF_REQUEST, LMPIF_INFO, LMPIF_ERRHANDLER,
    LMPIF_FILE, LMPIF_MESSAGE, LMPIF_OP, LMPIF_SESSION, LMPIF_WIN
};

/* n Fortran handles as C handles (convert: read them; else leave them for
 * the call to write); NULL when out of memory.  Free with lmpif_handles_free. */
void *lmpif_handles_in(int cls, const MPI_Fint *f, MPI_Fint n, bool convert);
void lmpif_handles_out(int cls, const void *c, MPI_Fint *f, MPI_Fint n);
void lmpif_handles_free(void *c);

/* Fortran strings: blank-padded, no terminator. */
char *lmpif_str_in(const char *f, size_t len); /* trimmed copy; free() it */
char *lmpif_arg_in(const char *f, size_t len); /* trailing blanks trimmed: an argv element (" Ss" stays) */
char *lmpif_str_buf(size_t len);               /* room for any MPI string and len */
void lmpif_str_out(char *c, char *f, size_t len, bool copy); /* copy back, blank-padded; frees c */
bool lmpif_str_blank(const char *f, size_t len);             /* all blanks: the end of an argv */
void lmpif_argv_free(char **argv);

/* LOGICAL: the values of .TRUE. and .FALSE. of the compiler that built
 * this library (gfortran: 1 and 0; told to the C library at MPI_Init through
 * MPI_Abi_set_fortran_booleans). */
static inline int lmpif_from_logical(MPI_Fint v) { return v != 0; }
static inline MPI_Fint lmpif_to_logical(int v) { return v ? 1 : 0; }
int *lmpif_logicals_in(const MPI_Fint *f, MPI_Fint n);
void lmpif_logicals_out(const int *c, MPI_Fint *f, MPI_Fint n);

/* Lengths of the arrays the communicator decides (gen_fortran.py's
 * implicit_length): processes (remote ones of an intercommunicator),
 * neighbours of a topology, dimensions of a cartesian one. */
MPI_Fint lmpif_peers(MPI_Comm comm);
MPI_Fint lmpif_neighbours(MPI_Comm comm, bool incoming);
MPI_Fint lmpif_cartdim(MPI_Comm comm);
MPI_Fint lmpif_cartdim_f(const MPI_Fint *comm);

#endif
