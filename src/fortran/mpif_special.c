/* The Fortran procedures gen_fortran.py leaves to a hand: those whose
 * Fortran meaning differs from a plain conversion of their C arguments. */
#include <string.h>

#include "fortran/mpif_attrcell.h"
#include "fortran/mpif_util.h"

/* MPI_Init from Fortran has no argc/argv; once MPI is initialized (MPICH
 * refuses the call before) it tells the C library how this compiler spells
 * .TRUE. and .FALSE. (MPI_LOGICAL reductions), unless it knows already. */
static void tell_booleans(void)
{
    MPI_Fint t = lmpif_to_logical(1), f = lmpif_to_logical(0), known_t, known_f;
    int is_set = 0;
    if (MPI_Abi_get_fortran_booleans((int)sizeof(MPI_Fint), &known_t, &known_f, &is_set) == MPI_SUCCESS && !is_set)
        MPI_Abi_set_fortran_booleans((int)sizeof(MPI_Fint), &t, &f);
}

static void init_body(bool prof, MPI_Fint *ierror)
{
    *ierror = prof ? PMPI_Init(NULL, NULL) : MPI_Init(NULL, NULL);
    if (*ierror == MPI_SUCCESS)
        tell_booleans();
}
void mpi_init_(MPI_Fint *ierror) { init_body(false, ierror); }
void pmpi_init_(MPI_Fint *ierror) { init_body(true, ierror); }

static void init_thread_body(bool prof, MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierror)
{
    int p = 0;
    *ierror = prof ? PMPI_Init_thread(NULL, NULL, *required, &p) : MPI_Init_thread(NULL, NULL, *required, &p);
    *provided = p;
    if (*ierror == MPI_SUCCESS)
        tell_booleans();
}
void mpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierror)
{
    init_thread_body(false, required, provided, ierror);
}
void pmpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierror)
{
    init_thread_body(true, required, provided, ierror);
}

/* Attributes: Fortran stores integers (INTEGER(KIND=MPI_ADDRESS_KIND), or
 * INTEGER for the deprecated MPI_ATTR_PUT/GET) where C stores pointers.  A
 * value set from Fortran is stored as a cell holding it, so that C reads a
 * pointer to the integer, as the standard has it (mpif_attrcell.h); a
 * pointer set from C reads in Fortran as its address.  The predefined
 * attributes are pointers to their values in C and the values in Fortran. */
static MPI_Aint fortran_value(int keyval, void *v)
{
    switch (keyval) {
    case MPI_TAG_UB: case MPI_IO: case MPI_HOST: case MPI_WTIME_IS_GLOBAL: case MPI_APPNUM:
    case MPI_LASTUSEDCODE: case MPI_UNIVERSE_SIZE: case MPI_WIN_DISP_UNIT: case MPI_WIN_CREATE_FLAVOR:
    case MPI_WIN_MODEL:
        return *(int *)v;
    case MPI_WIN_SIZE:
        return *(MPI_Aint *)v;
    default: { /* MPI_WIN_BASE is the address itself, as a pointer set from C is */
        intptr_t set_in_fortran;
        return lmpif_cell_get(v, &set_in_fortran) ? (MPI_Aint)set_in_fortran : (MPI_Aint)v;
    }
    }
}

enum { ATTR_COMM, ATTR_TYPE, ATTR_WIN, ATTR_OLD };

static int get_attr(bool prof, int what, MPI_Fint handle, int keyval, MPI_Aint *value, MPI_Fint *flag)
{
    void *v = NULL;
    int f = 0, rc;
    switch (what) {
    case ATTR_TYPE:
        rc = prof ? PMPI_Type_get_attr(MPI_Type_fromint(handle), keyval, &v, &f)
                  : MPI_Type_get_attr(MPI_Type_fromint(handle), keyval, &v, &f);
        break;
    case ATTR_WIN:
        rc = prof ? PMPI_Win_get_attr(MPI_Win_fromint(handle), keyval, &v, &f)
                  : MPI_Win_get_attr(MPI_Win_fromint(handle), keyval, &v, &f);
        break;
    case ATTR_OLD:
        rc = prof ? PMPI_Attr_get(MPI_Comm_fromint(handle), keyval, &v, &f)
                  : MPI_Attr_get(MPI_Comm_fromint(handle), keyval, &v, &f);
        break;
    default:
        rc = prof ? PMPI_Comm_get_attr(MPI_Comm_fromint(handle), keyval, &v, &f)
                  : MPI_Comm_get_attr(MPI_Comm_fromint(handle), keyval, &v, &f);
    }
    if (rc == MPI_SUCCESS) {
        *flag = lmpif_to_logical(f);
        if (f)
            *value = fortran_value(keyval, v);
    }
    return rc;
}

static int set_cell(bool prof, int what, MPI_Fint handle, int keyval, void *v)
{
    switch (what) {
    case ATTR_TYPE:
        return prof ? PMPI_Type_set_attr(MPI_Type_fromint(handle), keyval, v)
                    : MPI_Type_set_attr(MPI_Type_fromint(handle), keyval, v);
    case ATTR_WIN:
        return prof ? PMPI_Win_set_attr(MPI_Win_fromint(handle), keyval, v)
                    : MPI_Win_set_attr(MPI_Win_fromint(handle), keyval, v);
    case ATTR_OLD:
        return prof ? PMPI_Attr_put(MPI_Comm_fromint(handle), keyval, v)
                    : MPI_Attr_put(MPI_Comm_fromint(handle), keyval, v);
    default:
        return prof ? PMPI_Comm_set_attr(MPI_Comm_fromint(handle), keyval, v)
                    : MPI_Comm_set_attr(MPI_Comm_fromint(handle), keyval, v);
    }
}

/* The cell goes when the keyval's delete function sees it (keyvals created
 * in Fortran: mpif_keyval.c); under a keyval created in C it stays, since
 * C's copy and delete functions may keep the pointer. */
static int set_attr(bool prof, int what, MPI_Fint handle, int keyval, MPI_Aint value)
{
    intptr_t *cell = lmpif_cell_new(value);
    if (!cell)
        return MPI_ERR_NO_MEM;
    int rc = set_cell(prof, what, handle, keyval, cell);
    if (rc != MPI_SUCCESS)
        lmpif_cell_release(cell);
    return rc;
}

#define ATTR_PROCS(lower, what)                                                                              \
    void mpi_##lower##_get_attr_(MPI_Fint *h, MPI_Fint *keyval, MPI_Aint *value, MPI_Fint *flag,          \
                                 MPI_Fint *ierror)                                                           \
    {                                                                                                        \
        *ierror = get_attr(false, what, *h, *keyval, value, flag);                                           \
    }                                                                                                        \
    void pmpi_##lower##_get_attr_(MPI_Fint *h, MPI_Fint *keyval, MPI_Aint *value, MPI_Fint *flag,         \
                                  MPI_Fint *ierror)                                                          \
    {                                                                                                        \
        *ierror = get_attr(true, what, *h, *keyval, value, flag);                                            \
    }                                                                                                        \
    void mpi_##lower##_set_attr_(MPI_Fint *h, MPI_Fint *keyval, MPI_Aint *value, MPI_Fint *ierror)         \
    {                                                                                                        \
        *ierror = set_attr(false, what, *h, *keyval, *value);                                                \
    }                                                                                                        \
    void pmpi_##lower##_set_attr_(MPI_Fint *h, MPI_Fint *keyval, MPI_Aint *value, MPI_Fint *ierror)        \
    {                                                                                                        \
        *ierror = set_attr(true, what, *h, *keyval, *value);                                                 \
    }

ATTR_PROCS(comm, ATTR_COMM)
ATTR_PROCS(type, ATTR_TYPE)
ATTR_PROCS(win, ATTR_WIN)

/* MPI_ATTR_GET / MPI_ATTR_PUT (deprecated): INTEGER values. */
static void attr_get_body(bool prof, MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *value, MPI_Fint *flag,
                          MPI_Fint *ierror)
{
    MPI_Aint v = 0;
    *ierror = get_attr(prof, ATTR_OLD, *comm, *keyval, &v, flag);
    if (*ierror == MPI_SUCCESS && *flag)
        *value = (MPI_Fint)v;
}
void mpi_attr_get_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *value, MPI_Fint *flag, MPI_Fint *ierror)
{
    attr_get_body(false, comm, keyval, value, flag, ierror);
}
void pmpi_attr_get_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *value, MPI_Fint *flag, MPI_Fint *ierror)
{
    attr_get_body(true, comm, keyval, value, flag, ierror);
}
void mpi_attr_put_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *value, MPI_Fint *ierror)
{
    *ierror = set_attr(false, ATTR_OLD, *comm, *keyval, *value);
}
void pmpi_attr_put_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *value, MPI_Fint *ierror)
{
    *ierror = set_attr(true, ATTR_OLD, *comm, *keyval, *value);
}

/* MPI_STATUS_F2F08 / MPI_STATUS_F082F in mpif.h and `use mpi`: an INTEGER
 * status and TYPE(MPI_Status) are the same 8 integers in the ABI.  A copy
 * here, not C's MPI_Status_f2f08: other implementations of the ABI need not
 * have it (the ABI leaves Fortran types out). */
static int status_copy(const MPI_Fint *in, MPI_Fint *out)
{
    if ((void *)in == (void *)lmpif_status_ignore_ || (void *)in == (void *)lmpif_statuses_ignore_ ||
        (void *)out == (void *)lmpif_status_ignore_ || (void *)out == (void *)lmpif_statuses_ignore_)
        return MPI_ERR_ARG; /* the standard: erroneous */
    memcpy(out, in, MPI_F_STATUS_SIZE * sizeof(MPI_Fint));
    return MPI_SUCCESS;
}
void mpi_status_f2f08_(MPI_Fint *f_status, MPI_Fint *f08_status, MPI_Fint *ierror)
{
    *ierror = status_copy(f_status, f08_status);
}
void pmpi_status_f2f08_(MPI_Fint *f_status, MPI_Fint *f08_status, MPI_Fint *ierror)
{
    *ierror = status_copy(f_status, f08_status);
}
void mpi_status_f082f_(MPI_Fint *f08_status, MPI_Fint *f_status, MPI_Fint *ierror)
{
    *ierror = status_copy(f08_status, f_status);
}
void pmpi_status_f082f_(MPI_Fint *f08_status, MPI_Fint *f_status, MPI_Fint *ierror)
{
    *ierror = status_copy(f08_status, f_status);
}

/* MPI_PCONTROL(LEVEL): no variable arguments in Fortran. */
void mpi_pcontrol_(MPI_Fint *level) { MPI_Pcontrol(*level); }
void pmpi_pcontrol_(MPI_Fint *level) { PMPI_Pcontrol(*level); }

/* MPI_BUFFER_DETACH(BUFFER_ADDR, SIZE, IERROR): Fortran learns the size;
 * the address it attached is its own variable. */
void mpi_buffer_detach_(void *buffer_addr, MPI_Fint *size, MPI_Fint *ierror)
{
    (void)buffer_addr;
    void *addr = NULL;
    int n = 0;
    *ierror = MPI_Buffer_detach(&addr, &n);
    *size = n;
}
void pmpi_buffer_detach_(void *buffer_addr, MPI_Fint *size, MPI_Fint *ierror)
{
    (void)buffer_addr;
    void *addr = NULL;
    int n = 0;
    *ierror = PMPI_Buffer_detach(&addr, &n);
    *size = n;
}

/* mpi_f08's MPI_Buffer_detach: BUFFER_ADDR is TYPE(C_PTR) and gets the
 * address (the f77 form has nothing to put it in). */
static void buffer_detach_f08_body(bool prof, void **buffer_addr, MPI_Fint *size, MPI_Fint *ierror)
{
    int n = 0;
    *ierror = prof ? PMPI_Buffer_detach(buffer_addr, &n) : MPI_Buffer_detach(buffer_addr, &n);
    if (*ierror == MPI_SUCCESS)
        *size = n;
}
void mpi_buffer_detach_f08_(void **buffer_addr, MPI_Fint *size, MPI_Fint *ierror)
{
    buffer_detach_f08_body(false, buffer_addr, size, ierror);
}
void pmpi_buffer_detach_f08_(void **buffer_addr, MPI_Fint *size, MPI_Fint *ierror)
{
    buffer_detach_f08_body(true, buffer_addr, size, ierror);
}

/* MPI_F_SYNC_REG(BUF): a call the compiler cannot see through, so that it
 * keeps BUF in memory across it; nothing to do here. */
void mpi_f_sync_reg_(void *buf) { (void)buf; }
void pmpi_f_sync_reg_(void *buf) { (void)buf; }

/* MPI_INFO_CREATE_ENV(INFO, IERROR): Fortran has no argc/argv to give. */
void mpi_info_create_env_(MPI_Fint *info, MPI_Fint *ierror)
{
    MPI_Info i = MPI_INFO_NULL;
    *ierror = MPI_Info_create_env(0, NULL, &i);
    if (*ierror == MPI_SUCCESS)
        *info = MPI_Info_toint(i);
}
void pmpi_info_create_env_(MPI_Fint *info, MPI_Fint *ierror)
{
    MPI_Info i = MPI_INFO_NULL;
    *ierror = PMPI_Info_create_env(0, NULL, &i);
    if (*ierror == MPI_SUCCESS)
        *info = MPI_Info_toint(i);
}

/* User operations written in Fortran: SUBROUTINE F(INVEC, INOUTVEC, LEN,
 * DATATYPE) with an INTEGER datatype.  The C library calls a C function
 * with no user data, so each operation made from Fortran takes one of
 * FORTRAN_OPS trampolines, each calling the function in its own slot with
 * the datatype converted; MPI_OP_FREE gives the slot back. */
#include <pthread.h>

#define FORTRAN_OPS 64
typedef void (*fortran_op_fn)(void *in, void *inout, MPI_Fint *len, MPI_Fint *datatype);
/* mpi_f08's MPI_Op_create_c: LEN is INTEGER(KIND=MPI_COUNT_KIND) */
typedef void (*fortran_op_c_fn)(void *in, void *inout, MPI_Count *len, MPI_Fint *datatype);
static struct {
    fortran_op_fn fn; /* NULL: free (an fortran_op_c_fn when the slot serves MPI_Op_create_c) */
    MPI_Fint op;
} fops[FORTRAN_OPS];
static pthread_mutex_t fops_lock = PTHREAD_MUTEX_INITIALIZER;

#define TRAMPOLINE(i, j)                                                                             \
    static void op_trampoline_##i##_##j(void *in, void *inout, int *len, MPI_Datatype *dt)          \
    {                                                                                                \
        MPI_Fint n = *len, d = MPI_Type_toint(*dt);                                                  \
        fops[8 * i + j].fn(in, inout, &n, &d);                                                       \
    }
#define TRAMPOLINE_C(i, j)                                                                           \
    static void op_trampoline_c_##i##_##j(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)  \
    {                                                                                                \
        MPI_Count n = *len;                                                                          \
        MPI_Fint d = MPI_Type_toint(*dt);                                                            \
        ((fortran_op_c_fn)fops[8 * i + j].fn)(in, inout, &n, &d);                                    \
    }
#define TRAMPOLINES8(i)                                                                              \
    TRAMPOLINE(i, 0) TRAMPOLINE(i, 1) TRAMPOLINE(i, 2) TRAMPOLINE(i, 3) TRAMPOLINE(i, 4)            \
    TRAMPOLINE(i, 5) TRAMPOLINE(i, 6) TRAMPOLINE(i, 7)                                              \
    TRAMPOLINE_C(i, 0) TRAMPOLINE_C(i, 1) TRAMPOLINE_C(i, 2) TRAMPOLINE_C(i, 3) TRAMPOLINE_C(i, 4)  \
    TRAMPOLINE_C(i, 5) TRAMPOLINE_C(i, 6) TRAMPOLINE_C(i, 7)
TRAMPOLINES8(0) TRAMPOLINES8(1) TRAMPOLINES8(2) TRAMPOLINES8(3)
TRAMPOLINES8(4) TRAMPOLINES8(5) TRAMPOLINES8(6) TRAMPOLINES8(7)
#define T8(i)                                                                                        \
    op_trampoline_##i##_0, op_trampoline_##i##_1, op_trampoline_##i##_2, op_trampoline_##i##_3,     \
    op_trampoline_##i##_4, op_trampoline_##i##_5, op_trampoline_##i##_6, op_trampoline_##i##_7
static MPI_User_function *const trampolines[FORTRAN_OPS] = {T8(0), T8(1), T8(2), T8(3),
                                                            T8(4), T8(5), T8(6), T8(7)};
#define T8C(i)                                                                                       \
    op_trampoline_c_##i##_0, op_trampoline_c_##i##_1, op_trampoline_c_##i##_2, op_trampoline_c_##i##_3, \
    op_trampoline_c_##i##_4, op_trampoline_c_##i##_5, op_trampoline_c_##i##_6, op_trampoline_c_##i##_7
static MPI_User_function_c *const trampolines_c[FORTRAN_OPS] = {T8C(0), T8C(1), T8C(2), T8C(3),
                                                                T8C(4), T8C(5), T8C(6), T8C(7)};

static void op_create_body(bool prof, bool large, fortran_op_fn fn, MPI_Fint *commute, MPI_Fint *op,
                           MPI_Fint *ierror)
{
    pthread_mutex_lock(&fops_lock);
    int slot = 0;
    while (slot < FORTRAN_OPS && fops[slot].fn)
        slot++;
    if (slot == FORTRAN_OPS) {
        pthread_mutex_unlock(&fops_lock);
        /* the class through the handler of MPI_COMM_WORLD, as C's errors go */
        *ierror = MPI_ERR_INTERN;
        MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_INTERN);
        return;
    }
    fops[slot].fn = fn;
    pthread_mutex_unlock(&fops_lock);
    MPI_Op c = MPI_OP_NULL;
    int commutes = lmpif_from_logical(*commute);
    if (large)
        *ierror = prof ? PMPI_Op_create_c(trampolines_c[slot], commutes, &c)
                       : MPI_Op_create_c(trampolines_c[slot], commutes, &c);
    else
        *ierror = prof ? PMPI_Op_create(trampolines[slot], commutes, &c)
                       : MPI_Op_create(trampolines[slot], commutes, &c);
    if (*ierror != MPI_SUCCESS) {
        fops[slot].fn = NULL;
        return;
    }
    *op = fops[slot].op = MPI_Op_toint(c);
}
void mpi_op_create_(fortran_op_fn fn, MPI_Fint *commute, MPI_Fint *op, MPI_Fint *ierror)
{
    op_create_body(false, false, fn, commute, op, ierror);
}
void pmpi_op_create_(fortran_op_fn fn, MPI_Fint *commute, MPI_Fint *op, MPI_Fint *ierror)
{
    op_create_body(true, false, fn, commute, op, ierror);
}
/* mpi_f08's MPI_Op_create_c (its own name: a generic cannot tell two
 * procedure arguments apart by their interfaces) */
void mpi_op_create_c_f08_(fortran_op_c_fn fn, MPI_Fint *commute, MPI_Fint *op, MPI_Fint *ierror)
{
    op_create_body(false, true, (fortran_op_fn)fn, commute, op, ierror);
}
void pmpi_op_create_c_f08_(fortran_op_c_fn fn, MPI_Fint *commute, MPI_Fint *op, MPI_Fint *ierror)
{
    op_create_body(true, true, (fortran_op_fn)fn, commute, op, ierror);
}

static void op_free_body(bool prof, MPI_Fint *op, MPI_Fint *ierror)
{
    MPI_Fint was = *op;
    MPI_Op c = MPI_Op_fromint(was);
    *ierror = prof ? PMPI_Op_free(&c) : MPI_Op_free(&c);
    if (*ierror != MPI_SUCCESS)
        return;
    *op = MPI_Op_toint(c);
    pthread_mutex_lock(&fops_lock);
    for (int i = 0; i < FORTRAN_OPS; i++)
        if (fops[i].fn && fops[i].op == was)
            fops[i].fn = NULL;
    pthread_mutex_unlock(&fops_lock);
}
void mpi_op_free_(MPI_Fint *op, MPI_Fint *ierror) { op_free_body(false, op, ierror); }
void pmpi_op_free_(MPI_Fint *op, MPI_Fint *ierror) { op_free_body(true, op, ierror); }

/* MPI_COMM_SPAWN(COMMAND, ARGV, MAXPROCS, INFO, ROOT, COMM, INTERCOMM,
 * ARRAY_OF_ERRCODES, IERROR): ARGV is CHARACTER*(*) ARGV(*), ended by a
 * blank element, or MPI_ARGV_NULL.  as_argv makes C's NULL-ended array of
 * trimmed copies from n-byte elements at f (stride between them).  The
 * peers' own tests disagree on leading blanks: MPICH's mpif.h and `use mpi`
 * drop them, its mpi_f08 keeps them (keep: the f08 entry points below). */
static char **as_argv(const char *f, size_t n, size_t stride, bool keep)
{
    if (f == lmpif_argv_null_ || f == lmpif_argvs_null_)
        return MPI_ARGV_NULL;
    size_t count = 0;
    while (lmpif_str_blank(f + count * stride, n) == false)
        count++;
    char **argv = calloc(count + 1, sizeof(char *));
    for (size_t i = 0; argv && i < count; i++)
        if (!(argv[i] = keep ? lmpif_arg_in(f + i * stride, n) : lmpif_str_in(f + i * stride, n))) {
            lmpif_argv_free(argv);
            return NULL;
        }
    return argv;
}

void lmpif_argv_free(char **argv)
{
    for (size_t i = 0; argv && argv[i]; i++)
        free(argv[i]);
    free(argv);
}

static void spawn_body(bool prof, bool keep, const char *command, const char *argv, MPI_Fint *maxprocs,
                       MPI_Fint *info, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *intercomm, MPI_Fint *errcodes,
                       MPI_Fint *ierror, size_t command_len, size_t argv_len)
{
    char *cmd = lmpif_str_in(command, command_len);
    char **args = as_argv(argv, argv_len, argv_len, keep);
    if (!cmd || (!args && argv != lmpif_argv_null_)) {
        free(cmd);
        *ierror = MPI_ERR_NO_MEM;
        return;
    }
    MPI_Comm inter = MPI_COMM_NULL;
    *ierror = (prof ? PMPI_Comm_spawn : MPI_Comm_spawn)(cmd, args, *maxprocs, MPI_Info_fromint(*info), *root,
                                                       MPI_Comm_fromint(*comm), &inter, LMPIF_ERRCODES(errcodes));
    if (*ierror == MPI_SUCCESS)
        *intercomm = MPI_Comm_toint(inter);
    free(cmd);
    lmpif_argv_free(args);
}
void mpi_comm_spawn_(const char *command, const char *argv, MPI_Fint *maxprocs, MPI_Fint *info, MPI_Fint *root,
                     MPI_Fint *comm, MPI_Fint *intercomm, MPI_Fint *errcodes, MPI_Fint *ierror, size_t command_len,
                     size_t argv_len)
{
    spawn_body(false, false, command, argv, maxprocs, info, root, comm, intercomm, errcodes, ierror, command_len,
               argv_len);
}
void pmpi_comm_spawn_(const char *command, const char *argv, MPI_Fint *maxprocs, MPI_Fint *info, MPI_Fint *root,
                     MPI_Fint *comm, MPI_Fint *intercomm, MPI_Fint *errcodes, MPI_Fint *ierror, size_t command_len,
                     size_t argv_len)
{
    spawn_body(true, false, command, argv, maxprocs, info, root, comm, intercomm, errcodes, ierror, command_len,
               argv_len);
}
void mpi_comm_spawn_f08_(const char *command, const char *argv, MPI_Fint *maxprocs, MPI_Fint *info, MPI_Fint *root,
                     MPI_Fint *comm, MPI_Fint *intercomm, MPI_Fint *errcodes, MPI_Fint *ierror, size_t command_len,
                     size_t argv_len)
{
    spawn_body(false, true, command, argv, maxprocs, info, root, comm, intercomm, errcodes, ierror, command_len,
               argv_len);
}
void pmpi_comm_spawn_f08_(const char *command, const char *argv, MPI_Fint *maxprocs, MPI_Fint *info, MPI_Fint *root,
                     MPI_Fint *comm, MPI_Fint *intercomm, MPI_Fint *errcodes, MPI_Fint *ierror, size_t command_len,
                     size_t argv_len)
{
    spawn_body(true, true, command, argv, maxprocs, info, root, comm, intercomm, errcodes, ierror, command_len,
               argv_len);
}

/* MPI_COMM_SPAWN_MULTIPLE(COUNT, ARRAY_OF_COMMANDS, ARRAY_OF_ARGV, ...):
 * ARRAY_OF_ARGV(COUNT, *): command i's arguments are row i (column-major
 * storage: a stride of COUNT elements), each ended by a blank element. */
static void spawn_multiple_body(bool prof, bool keep, MPI_Fint *count, const char *commands, const char *argvs,
                                MPI_Fint *maxprocs, MPI_Fint *infos, MPI_Fint *root, MPI_Fint *comm,
                                MPI_Fint *intercomm, MPI_Fint *errcodes, MPI_Fint *ierror, size_t commands_len,
                                size_t argvs_len)
{
    int n = *count;
    char **cmds = calloc((size_t)(n > 0 ? n : 1), sizeof(char *));
    char ***args = argvs == lmpif_argvs_null_ ? MPI_ARGVS_NULL : calloc((size_t)(n > 0 ? n : 1), sizeof(char **));
    MPI_Info *info = calloc((size_t)(n > 0 ? n : 1), sizeof(MPI_Info));
    bool ok = cmds && info && (args || argvs == lmpif_argvs_null_);
    for (int i = 0; ok && i < n; i++) {
        ok = (cmds[i] = lmpif_str_in(commands + (size_t)i * commands_len, commands_len)) != NULL;
        if (ok && args)
            ok = (args[i] = as_argv(argvs + (size_t)i * argvs_len, argvs_len, (size_t)n * argvs_len, keep)) != NULL;
        info[i] = MPI_Info_fromint(infos[i]);
    }
    MPI_Comm inter = MPI_COMM_NULL;
    *ierror = !ok ? MPI_ERR_NO_MEM
                  : (prof ? PMPI_Comm_spawn_multiple : MPI_Comm_spawn_multiple)(
                        n, cmds, args, maxprocs, info, *root, MPI_Comm_fromint(*comm), &inter, LMPIF_ERRCODES(errcodes));
    if (*ierror == MPI_SUCCESS)
        *intercomm = MPI_Comm_toint(inter);
    for (int i = 0; i < n; i++) {
        if (cmds)
            free(cmds[i]);
        if (args)
            lmpif_argv_free(args[i]);
    }
    free(cmds);
    free(args);
    free(info);
}
void mpi_comm_spawn_multiple_(MPI_Fint *count, const char *commands, const char *argvs, MPI_Fint *maxprocs,
                              MPI_Fint *infos, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *intercomm,
                              MPI_Fint *errcodes, MPI_Fint *ierror, size_t commands_len, size_t argvs_len)
{
    spawn_multiple_body(false, false, count, commands, argvs, maxprocs, infos, root, comm, intercomm, errcodes, ierror,
                        commands_len, argvs_len);
}
void pmpi_comm_spawn_multiple_(MPI_Fint *count, const char *commands, const char *argvs, MPI_Fint *maxprocs,
                              MPI_Fint *infos, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *intercomm,
                              MPI_Fint *errcodes, MPI_Fint *ierror, size_t commands_len, size_t argvs_len)
{
    spawn_multiple_body(true, false, count, commands, argvs, maxprocs, infos, root, comm, intercomm, errcodes, ierror,
                        commands_len, argvs_len);
}
void mpi_comm_spawn_multiple_f08_(MPI_Fint *count, const char *commands, const char *argvs, MPI_Fint *maxprocs,
                              MPI_Fint *infos, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *intercomm,
                              MPI_Fint *errcodes, MPI_Fint *ierror, size_t commands_len, size_t argvs_len)
{
    spawn_multiple_body(false, true, count, commands, argvs, maxprocs, infos, root, comm, intercomm, errcodes, ierror,
                        commands_len, argvs_len);
}
void pmpi_comm_spawn_multiple_f08_(MPI_Fint *count, const char *commands, const char *argvs, MPI_Fint *maxprocs,
                              MPI_Fint *infos, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *intercomm,
                              MPI_Fint *errcodes, MPI_Fint *ierror, size_t commands_len, size_t argvs_len)
{
    spawn_multiple_body(true, true, count, commands, argvs, maxprocs, infos, root, comm, intercomm, errcodes, ierror,
                        commands_len, argvs_len);
}

/* MPI_INFO_GET_STRING: in Fortran buflen counts characters, no terminator
 * (C's counts the '\0'): on return the value's length; value gets at most
 * buflen characters, blank-padded, and is left alone when buflen is 0 or
 * the key is not there. */
static void info_get_string_body(bool prof, MPI_Fint *info, const char *key, MPI_Fint *buflen, char *value,
                                 MPI_Fint *flag, MPI_Fint *ierror, size_t key_len, size_t value_len)
{
    char *c_key = lmpif_str_in(key, key_len);
    if (!c_key) {
        *ierror = MPI_ERR_NO_MEM;
        return;
    }
    MPI_Info i = lmpif_Info_fromint(*info);
    int need = 0, found = 0;
    int rc = prof ? PMPI_Info_get_string(i, c_key, &need, NULL, &found)
                  : MPI_Info_get_string(i, c_key, &need, NULL, &found);
    if (rc == MPI_SUCCESS && found && *buflen > 0) {
        char *c = malloc((size_t)need);
        int got = need;
        rc = !c ? MPI_ERR_NO_MEM
                : prof ? PMPI_Info_get_string(i, c_key, &got, c, &found)
                       : MPI_Info_get_string(i, c_key, &got, c, &found);
        if (rc == MPI_SUCCESS) {
            size_t n = strlen(c);
            if (n > (size_t)*buflen)
                n = (size_t)*buflen;
            if (n > value_len)
                n = value_len;
            memcpy(value, c, n);
            memset(value + n, ' ', value_len - n);
        }
        free(c);
    }
    free(c_key);
    if (rc == MPI_SUCCESS) {
        *flag = lmpif_to_logical(found);
        if (found)
            *buflen = need - 1;
    }
    *ierror = rc;
}

void mpi_info_get_string_(MPI_Fint *info, const char *key, MPI_Fint *buflen, char *value, MPI_Fint *flag,
                          MPI_Fint *ierror, size_t key_len, size_t value_len)
{
    info_get_string_body(false, info, key, buflen, value, flag, ierror, key_len, value_len);
}

void pmpi_info_get_string_(MPI_Fint *info, const char *key, MPI_Fint *buflen, char *value, MPI_Fint *flag,
                           MPI_Fint *ierror, size_t key_len, size_t value_len)
{
    info_get_string_body(true, info, key, buflen, value, flag, ierror, key_len, value_len);
}
