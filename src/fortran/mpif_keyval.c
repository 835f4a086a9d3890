/* Callbacks written in Fortran that the C interface calls with user data:
 * attribute copy/delete functions (MPI_COMM/TYPE/WIN_CREATE_KEYVAL and the
 * old MPI_KEYVAL_CREATE), generalized requests (MPI_GREQUEST_START) and
 * data representations (MPI_REGISTER_DATAREP).  Each registration keeps the
 * Fortran procedures and the Fortran extra_state in a record, and gives C
 * one trampoline per callback type with the record as C's extra_state — no
 * slots, no limit.  Keyval and datarep records live as long as the process
 * (a keyval's callbacks may run after MPI_COMM_FREE_KEYVAL; a data
 * representation cannot be unregistered); a generalized request's record
 * goes when its free function has run.  A generalized request's callbacks
 * get the caller's extra_state variable itself, as MPICH's do (programs
 * count calls in it); the others get a copy of its value.
 *
 * Attribute values: a value set from Fortran is a cell holding the integer
 * (mpif_attrcell.h, as mpif_special.c's MPI_COMM_SET_ATTR stores it).  The
 * trampolines give Fortran callbacks the integer (a pointer set from C: its
 * address), store what a copy function returns as a new cell, and free a
 * cell once its delete function has run.
 *
 * The predefined callbacks (MPI_COMM_DUP_FN, MPI_NULL_COPY_FN, ...) are
 * Fortran-callable here.  Given to a create procedure they run through the
 * trampolines too: C's MPI_COMM_DUP_FN would share one cell between two
 * objects. */
#include <string.h>

#include "fortran/mpif_attrcell.h"
#include "fortran/mpif_util.h"

typedef void (*fortran_fn)(void);

/* ---- the predefined callbacks, callable from Fortran ------------------------- */

#define COPY_ARGS MPI_Fint *h, MPI_Fint *keyval, MPI_Aint *extra, MPI_Aint *in, MPI_Aint *out, MPI_Fint *flag, \
                  MPI_Fint *ierror
#define DELETE_ARGS MPI_Fint *h, MPI_Fint *keyval, MPI_Aint *value, MPI_Aint *extra, MPI_Fint *ierror
#define OLD_COPY_ARGS MPI_Fint *h, MPI_Fint *keyval, MPI_Fint *extra, MPI_Fint *in, MPI_Fint *out, \
                      MPI_Fint *flag, MPI_Fint *ierror
#define OLD_DELETE_ARGS MPI_Fint *h, MPI_Fint *keyval, MPI_Fint *value, MPI_Fint *extra, MPI_Fint *ierror

#define PREDEFINED(kind)                                                                             \
    void mpi_##kind##_dup_fn_(COPY_ARGS)                                                             \
    {                                                                                                \
        (void)h, (void)keyval, (void)extra;                                                          \
        *out = *in;                                                                                  \
        *flag = lmpif_to_logical(1);                                                                 \
        *ierror = MPI_SUCCESS;                                                                       \
    }                                                                                                \
    void mpi_##kind##_null_copy_fn_(COPY_ARGS)                                                       \
    {                                                                                                \
        (void)h, (void)keyval, (void)extra, (void)in, (void)out;                                     \
        *flag = lmpif_to_logical(0);                                                                 \
        *ierror = MPI_SUCCESS;                                                                       \
    }                                                                                                \
    void mpi_##kind##_null_delete_fn_(DELETE_ARGS)                                                   \
    {                                                                                                \
        (void)h, (void)keyval, (void)value, (void)extra;                                             \
        *ierror = MPI_SUCCESS;                                                                       \
    }
PREDEFINED(comm)
PREDEFINED(type)
PREDEFINED(win)

void mpi_dup_fn_(OLD_COPY_ARGS)
{
    (void)h, (void)keyval, (void)extra;
    *out = *in;
    *flag = lmpif_to_logical(1);
    *ierror = MPI_SUCCESS;
}

void mpi_null_copy_fn_(OLD_COPY_ARGS)
{
    (void)h, (void)keyval, (void)extra, (void)in, (void)out;
    *flag = lmpif_to_logical(0);
    *ierror = MPI_SUCCESS;
}

void mpi_null_delete_fn_(OLD_DELETE_ARGS)
{
    (void)h, (void)keyval, (void)value, (void)extra;
    *ierror = MPI_SUCCESS;
}

void mpi_conversion_fn_null_(void *userbuf, MPI_Fint *datatype, MPI_Fint *count, void *filebuf,
                             MPI_Offset *position, MPI_Aint *extra, MPI_Fint *ierror)
{
    (void)userbuf, (void)datatype, (void)count, (void)filebuf, (void)position, (void)extra;
    *ierror = MPI_SUCCESS;
}

/* ---- attribute keyvals ---------------------------------------------------------- */

typedef struct fortran_keyval {
    fortran_fn copy, del;
    MPI_Aint extra; /* MPI_KEYVAL_CREATE: an INTEGER, kept the same way */
} fortran_keyval;

typedef void (*f_copy)(COPY_ARGS);
typedef void (*f_delete)(DELETE_ARGS);
typedef void (*f_old_copy)(OLD_COPY_ARGS);
typedef void (*f_old_delete)(OLD_DELETE_ARGS);

/* The integer Fortran sees for a stored attribute value. */
static MPI_Aint fortran_value(void *stored)
{
    intptr_t v;
    return lmpif_cell_get(stored, &v) ? (MPI_Aint)v : (MPI_Aint)stored;
}

/* A copy function's result, stored as a cell. */
static int store_copy(MPI_Fint flag, MPI_Fint ierr, MPI_Aint value, void *out, int *c_flag)
{
    *c_flag = ierr == MPI_SUCCESS && lmpif_from_logical(flag);
    if (!*c_flag)
        return ierr;
    intptr_t *cell = lmpif_cell_new(value);
    if (!cell) {
        *c_flag = 0;
        return MPI_ERR_NO_MEM;
    }
    *(void **)out = cell;
    return MPI_SUCCESS;
}

#define TRAMPOLINES(kind, T, conv)                                                                  \
    static int kind##_copy(T h, int keyval, void *extra, void *in, void *out, int *flag)             \
    {                                                                                               \
        fortran_keyval *k = extra;                                                                  \
        MPI_Fint fh = MPI_##conv##_toint(h), kv = keyval, f = lmpif_to_logical(0), ierr = MPI_SUCCESS; \
        MPI_Aint vin = fortran_value(in), vout = 0;                                                 \
        ((f_copy)k->copy)(&fh, &kv, &k->extra, &vin, &vout, &f, &ierr);                              \
        return store_copy(f, ierr, vout, out, flag);                                                \
    }                                                                                               \
    static int kind##_delete(T h, int keyval, void *value, void *extra)                            \
    {                                                                                               \
        fortran_keyval *k = extra;                                                                  \
        MPI_Fint fh = MPI_##conv##_toint(h), kv = keyval, ierr = MPI_SUCCESS;                        \
        MPI_Aint v = fortran_value(value);                                                          \
        ((f_delete)k->del)(&fh, &kv, &v, &k->extra, &ierr);                                          \
        if (ierr == MPI_SUCCESS)                                                                    \
            lmpif_cell_release(value);                                                              \
        return ierr;                                                                                \
    }
TRAMPOLINES(comm, MPI_Comm, Comm)
TRAMPOLINES(type, MPI_Datatype, Type)
TRAMPOLINES(win, MPI_Win, Win)

static int old_copy(MPI_Comm h, int keyval, void *extra, void *in, void *out, int *flag)
{
    fortran_keyval *k = extra;
    MPI_Fint fh = MPI_Comm_toint(h), kv = keyval, f = lmpif_to_logical(0), ierr = MPI_SUCCESS;
    MPI_Fint ex = (MPI_Fint)k->extra, vin = (MPI_Fint)fortran_value(in), vout = 0;
    ((f_old_copy)k->copy)(&fh, &kv, &ex, &vin, &vout, &f, &ierr);
    return store_copy(f, ierr, vout, out, flag);
}

static int old_delete(MPI_Comm h, int keyval, void *value, void *extra)
{
    fortran_keyval *k = extra;
    MPI_Fint fh = MPI_Comm_toint(h), kv = keyval, ierr = MPI_SUCCESS;
    MPI_Fint ex = (MPI_Fint)k->extra, v = (MPI_Fint)fortran_value(value);
    ((f_old_delete)k->del)(&fh, &kv, &v, &ex, &ierr);
    if (ierr == MPI_SUCCESS)
        lmpif_cell_release(value);
    return ierr;
}

static fortran_keyval *keyval_record(fortran_fn copy, fortran_fn del, MPI_Aint extra)
{
    fortran_keyval *k = malloc(sizeof *k);
    if (k)
        *k = (fortran_keyval){copy, del, extra};
    return k;
}

#define CREATE_KEYVAL(kind, conv)                                                             \
    static void kind##_create_keyval_body(bool prof, fortran_fn copy, fortran_fn del, MPI_Fint *keyval, \
                                          MPI_Aint *extra, MPI_Fint *ierror)                        \
    {                                                                                               \
        fortran_keyval *k = keyval_record(copy, del, *extra);                                       \
        if (!k) {                                                                                   \
            *ierror = MPI_ERR_NO_MEM;                                                               \
            return;                                                                                 \
        }                                                                                           \
        int kv = MPI_KEYVAL_INVALID;                                                                \
        *ierror = prof ? PMPI_##conv##_create_keyval(kind##_copy, kind##_delete, &kv, k)               \
                       : MPI_##conv##_create_keyval(kind##_copy, kind##_delete, &kv, k);               \
        if (*ierror == MPI_SUCCESS)                                                                 \
            *keyval = kv;                                                                           \
        else                                                                                        \
            free(k);                                                                                \
    }                                                                                               \
    void mpi_##kind##_create_keyval_(fortran_fn copy, fortran_fn del, MPI_Fint *keyval, MPI_Aint *extra, \
                                     MPI_Fint *ierror)                                              \
    {                                                                                               \
        kind##_create_keyval_body(false, copy, del, keyval, extra, ierror);                         \
    }                                                                                               \
    void pmpi_##kind##_create_keyval_(fortran_fn copy, fortran_fn del, MPI_Fint *keyval, MPI_Aint *extra, \
                                      MPI_Fint *ierror)                                             \
    {                                                                                               \
        kind##_create_keyval_body(true, copy, del, keyval, extra, ierror);                          \
    }
CREATE_KEYVAL(comm, Comm)
CREATE_KEYVAL(type, Type)
CREATE_KEYVAL(win, Win)

static void keyval_create_body(bool prof, fortran_fn copy, fortran_fn del, MPI_Fint *keyval, MPI_Fint *extra,
                               MPI_Fint *ierror)
{
    fortran_keyval *k = keyval_record(copy, del, *extra);
    if (!k) {
        *ierror = MPI_ERR_NO_MEM;
        return;
    }
    int kv = MPI_KEYVAL_INVALID;
    /* MPI_Keyval_create is MPI_Comm_create_keyval with INTEGER values */
    *ierror = prof ? PMPI_Comm_create_keyval(old_copy, old_delete, &kv, k)
                   : MPI_Comm_create_keyval(old_copy, old_delete, &kv, k);
    if (*ierror == MPI_SUCCESS)
        *keyval = kv;
    else
        free(k);
}

void mpi_keyval_create_(fortran_fn copy, fortran_fn del, MPI_Fint *keyval, MPI_Fint *extra, MPI_Fint *ierror)
{
    keyval_create_body(false, copy, del, keyval, extra, ierror);
}

void pmpi_keyval_create_(fortran_fn copy, fortran_fn del, MPI_Fint *keyval, MPI_Fint *extra, MPI_Fint *ierror)
{
    keyval_create_body(true, copy, del, keyval, extra, ierror);
}

/* ---- generalized requests --------------------------------------------------------- */

/* extra_state is the caller's variable itself (its address), as in MPICH:
 * programs count calls in it and read it after MPI_WAIT. */
typedef struct fortran_greq {
    fortran_fn query, free, cancel;
    MPI_Aint *extra;
} fortran_greq;

static int greq_query(void *extra, MPI_Status *status)
{
    fortran_greq *g = extra;
    MPI_Fint ierr = MPI_SUCCESS;
    /* a Fortran status is the C status's 8 integers */
    ((void (*)(MPI_Aint *, MPI_Fint *, MPI_Fint *))g->query)(g->extra, (MPI_Fint *)(void *)status, &ierr);
    return ierr;
}

static int greq_free(void *extra)
{
    fortran_greq *g = extra;
    MPI_Fint ierr = MPI_SUCCESS;
    ((void (*)(MPI_Aint *, MPI_Fint *))g->free)(g->extra, &ierr);
    free(g);
    return ierr;
}

static int greq_cancel(void *extra, int complete)
{
    fortran_greq *g = extra;
    MPI_Fint ierr = MPI_SUCCESS, done = lmpif_to_logical(complete);
    ((void (*)(MPI_Aint *, MPI_Fint *, MPI_Fint *))g->cancel)(g->extra, &done, &ierr);
    return ierr;
}

static void grequest_start_body(bool prof, fortran_fn query, fortran_fn freefn, fortran_fn cancel,
                                MPI_Aint *extra, MPI_Fint *request, MPI_Fint *ierror)
{
    fortran_greq *g = malloc(sizeof *g);
    if (!g) {
        *ierror = MPI_ERR_NO_MEM;
        return;
    }
    *g = (fortran_greq){query, freefn, cancel, extra};
    MPI_Request r = MPI_REQUEST_NULL;
    *ierror = prof ? PMPI_Grequest_start(greq_query, greq_free, greq_cancel, g, &r)
                   : MPI_Grequest_start(greq_query, greq_free, greq_cancel, g, &r);
    if (*ierror == MPI_SUCCESS)
        *request = MPI_Request_toint(r);
    else
        free(g);
}

void mpi_grequest_start_(fortran_fn query, fortran_fn freefn, fortran_fn cancel, MPI_Aint *extra,
                         MPI_Fint *request, MPI_Fint *ierror)
{
    grequest_start_body(false, query, freefn, cancel, extra, request, ierror);
}

void pmpi_grequest_start_(fortran_fn query, fortran_fn freefn, fortran_fn cancel, MPI_Aint *extra,
                          MPI_Fint *request, MPI_Fint *ierror)
{
    grequest_start_body(true, query, freefn, cancel, extra, request, ierror);
}

/* ---- data representations ------------------------------------------------------- */

/* mpi_f08's MPI_Register_datarep_c: COUNT is INTEGER(KIND=MPI_COUNT_KIND) */
void mpi_conversion_fn_null_c_(void *userbuf, MPI_Fint *datatype, MPI_Count *count, void *filebuf,
                               MPI_Offset *position, MPI_Aint *extra, MPI_Fint *ierror)
{
    (void)userbuf, (void)datatype, (void)count, (void)filebuf, (void)position, (void)extra;
    *ierror = MPI_SUCCESS;
}

typedef struct fortran_datarep {
    fortran_fn read, write, extent;
    MPI_Aint extra;
} fortran_datarep;

typedef void (*f_conversion)(void *userbuf, MPI_Fint *datatype, MPI_Fint *count, void *filebuf,
                             MPI_Offset *position, MPI_Aint *extra, MPI_Fint *ierror);

static int convert(fortran_fn fn, void *userbuf, MPI_Datatype datatype, int count, void *filebuf,
                   MPI_Offset position, fortran_datarep *r)
{
    MPI_Fint t = MPI_Type_toint(datatype), n = count, ierr = MPI_SUCCESS;
    ((f_conversion)fn)(userbuf, &t, &n, filebuf, &position, &r->extra, &ierr);
    return ierr;
}

static int datarep_read(void *userbuf, MPI_Datatype datatype, int count, void *filebuf, MPI_Offset position,
                        void *extra)
{
    fortran_datarep *r = extra;
    return convert(r->read, userbuf, datatype, count, filebuf, position, r);
}

static int datarep_write(void *userbuf, MPI_Datatype datatype, int count, void *filebuf, MPI_Offset position,
                         void *extra)
{
    fortran_datarep *r = extra;
    return convert(r->write, userbuf, datatype, count, filebuf, position, r);
}

typedef void (*f_conversion_c)(void *userbuf, MPI_Fint *datatype, MPI_Count *count, void *filebuf,
                               MPI_Offset *position, MPI_Aint *extra, MPI_Fint *ierror);

static int convert_c(fortran_fn fn, void *userbuf, MPI_Datatype datatype, MPI_Count count, void *filebuf,
                     MPI_Offset position, fortran_datarep *r)
{
    MPI_Fint t = MPI_Type_toint(datatype), ierr = MPI_SUCCESS;
    ((f_conversion_c)fn)(userbuf, &t, &count, filebuf, &position, &r->extra, &ierr);
    return ierr;
}

static int datarep_read_c(void *userbuf, MPI_Datatype datatype, MPI_Count count, void *filebuf,
                          MPI_Offset position, void *extra)
{
    fortran_datarep *r = extra;
    return convert_c(r->read, userbuf, datatype, count, filebuf, position, r);
}

static int datarep_write_c(void *userbuf, MPI_Datatype datatype, MPI_Count count, void *filebuf,
                           MPI_Offset position, void *extra)
{
    fortran_datarep *r = extra;
    return convert_c(r->write, userbuf, datatype, count, filebuf, position, r);
}

static int datarep_extent(MPI_Datatype datatype, MPI_Aint *file_extent, void *extra)
{
    fortran_datarep *r = extra;
    MPI_Fint t = MPI_Type_toint(datatype), ierr = MPI_SUCCESS;
    ((void (*)(MPI_Fint *, MPI_Aint *, MPI_Aint *, MPI_Fint *))r->extent)(&t, file_extent, &r->extra, &ierr);
    return ierr;
}

static void register_datarep_body(bool prof, bool large, const char *datarep, fortran_fn rd, fortran_fn wr,
                                  fortran_fn ext, MPI_Aint *extra, MPI_Fint *ierror, size_t datarep_len)
{
    fortran_datarep *r = malloc(sizeof *r);
    char *name = lmpif_str_in(datarep, datarep_len);
    if (!r || !name) {
        free(r), free(name);
        *ierror = MPI_ERR_NO_MEM;
        return;
    }
    *r = (fortran_datarep){rd, wr, ext, *extra};
    if (large) {
        MPI_Datarep_conversion_function_c *cr =
            (fortran_fn)rd == (fortran_fn)mpi_conversion_fn_null_c_ ? MPI_CONVERSION_FN_NULL_C : datarep_read_c;
        MPI_Datarep_conversion_function_c *cw =
            (fortran_fn)wr == (fortran_fn)mpi_conversion_fn_null_c_ ? MPI_CONVERSION_FN_NULL_C : datarep_write_c;
        *ierror = prof ? PMPI_Register_datarep_c(name, cr, cw, datarep_extent, r)
                       : MPI_Register_datarep_c(name, cr, cw, datarep_extent, r);
        if (*ierror != MPI_SUCCESS)
            free(r);
        free(name);
        return;
    }
    MPI_Datarep_conversion_function *cr =
        (fortran_fn)rd == (fortran_fn)mpi_conversion_fn_null_ ? MPI_CONVERSION_FN_NULL : datarep_read;
    MPI_Datarep_conversion_function *cw =
        (fortran_fn)wr == (fortran_fn)mpi_conversion_fn_null_ ? MPI_CONVERSION_FN_NULL : datarep_write;
    *ierror = prof ? PMPI_Register_datarep(name, cr, cw, datarep_extent, r)
                   : MPI_Register_datarep(name, cr, cw, datarep_extent, r);
    if (*ierror != MPI_SUCCESS)
        free(r);
    free(name);
}

void mpi_register_datarep_(const char *datarep, fortran_fn rd, fortran_fn wr, fortran_fn ext, MPI_Aint *extra,
                           MPI_Fint *ierror, size_t datarep_len)
{
    register_datarep_body(false, false, datarep, rd, wr, ext, extra, ierror, datarep_len);
}

void pmpi_register_datarep_(const char *datarep, fortran_fn rd, fortran_fn wr, fortran_fn ext, MPI_Aint *extra,
                            MPI_Fint *ierror, size_t datarep_len)
{
    register_datarep_body(true, false, datarep, rd, wr, ext, extra, ierror, datarep_len);
}

/* mpi_f08's MPI_Register_datarep_c (a name of its own, as MPI_Op_create_c) */
void mpi_register_datarep_c_f08_(const char *datarep, fortran_fn rd, fortran_fn wr, fortran_fn ext,
                                 MPI_Aint *extra, MPI_Fint *ierror, size_t datarep_len)
{
    register_datarep_body(false, true, datarep, rd, wr, ext, extra, ierror, datarep_len);
}

void pmpi_register_datarep_c_f08_(const char *datarep, fortran_fn rd, fortran_fn wr, fortran_fn ext,
                                  MPI_Aint *extra, MPI_Fint *ierror, size_t datarep_len)
{
    register_datarep_body(true, true, datarep, rd, wr, ext, extra, ierror, datarep_len);
}
