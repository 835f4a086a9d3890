/* Error classes, codes, strings and handlers.
 *
 * Codes 0..MPI_ERR_ABI are the standard's classes.  Classes and codes added
 * with MPI_Add_error_class/code start above MPI_ERR_LASTCODE, so they can never
 * collide with a predefined one; each remembers its class and string. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binding/gen/impl.h"
#include "coll/calls.h"
#include "comm/comm.h"
#include "runtime/config.h"
#include "runtime/errhandler.h"

static const int status_class[LMPI_STATUS_COUNT] = {
#define LMPI_STATUS_CLASS(name, cls, text) [LMPI_##name] = cls,
    LMPI_STATUS_LIST(LMPI_STATUS_CLASS)
#undef LMPI_STATUS_CLASS
};

static const char *const class_text[] = {
#define LMPI_STATUS_TEXT(name, cls, text) [cls] = text,
    LMPI_STATUS_LIST(LMPI_STATUS_TEXT)
#undef LMPI_STATUS_TEXT
};

static const char *const class_name[] = {
#define LMPI_STATUS_NAME(name, cls, text) [cls] = "MPI_" #name,
    LMPI_STATUS_LIST(LMPI_STATUS_NAME)
#undef LMPI_STATUS_NAME
};

#define N_CLASSES ((int)(sizeof(class_text) / sizeof(class_text[0])))
#define USER_CODE_BASE (MPI_ERR_LASTCODE + 1)

int lmpi_status_class(lmpi_status st)
{
    return (unsigned)st < LMPI_STATUS_COUNT ? status_class[st] : MPI_ERR_INTERN;
}

static int code_class(int code);

lmpi_status lmpi_status_from_code(int code)
{
    int c = code_class(code);
    for (int st = 0; c > 0 && st < LMPI_STATUS_COUNT; st++)
        if (status_class[st] == c)
            return (lmpi_status)st;
    return LMPI_ERR_OTHER;
}

/* ---- user-defined classes and codes ------------------------------------- */
typedef struct {
    int error_class;
    char *string;
} user_code;

static user_code *user_codes;
static int n_user_codes;
static int cap_user_codes;

/* MPI_LASTUSEDCODE: the largest error code or class in use. */
int lmpi_error_last_code(void)
{
    return n_user_codes ? USER_CODE_BASE + n_user_codes - 1 : MPI_ERR_LASTCODE;
}

#define REMOVED_CODE (-2) /* error_class of a code or class the user removed */

static bool code_is_user(int code)
{
    return code >= USER_CODE_BASE && code < USER_CODE_BASE + n_user_codes &&
           user_codes[code - USER_CODE_BASE].error_class != REMOVED_CODE;
}

static int code_class(int code)
{
    if (code >= 0 && code < N_CLASSES && class_name[code])
        return code;
    if (code_is_user(code))
        return user_codes[code - USER_CODE_BASE].error_class;
    return -1;
}

static int n_removed_codes; /* slots below n_user_codes that a new code may take */

static lmpi_status add_code(int error_class, int *out)
{
    /* a removed code's number is given out again: a program that adds and
     * removes codes in a loop keeps a small table (and MPI_LASTUSEDCODE) */
    int slot = n_user_codes;
    for (int i = 0; n_removed_codes > 0 && i < n_user_codes; i++)
        if (user_codes[i].error_class == REMOVED_CODE) {
            slot = i;
            n_removed_codes--;
            break;
        }
    if (slot == n_user_codes && n_user_codes == cap_user_codes) {
        int cap = cap_user_codes ? 2 * cap_user_codes : 16;
        user_code *n = lmpi_realloc(user_codes, (size_t)cap * sizeof(*n), LMPI_MEM_OTHER);
        if (!n)
            return LMPI_ERR_NO_MEM;
        user_codes = n;
        cap_user_codes = cap;
    }
    int code = USER_CODE_BASE + slot;
    user_codes[slot].error_class = error_class < 0 ? code : error_class;
    user_codes[slot].string = NULL;
    if (slot == n_user_codes)
        n_user_codes++;
    *out = code;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Add_error_class(int *errorclass)
{
    return add_code(-1, errorclass);
}

lmpi_status lmpi_impl_Add_error_code(int errorclass, int *errorcode)
{
    if (code_class(errorclass) != errorclass) {
        lmpi_err_detail("errorclass %d is not an error class", errorclass);
        return LMPI_ERR_ARG;
    }
    return add_code(errorclass, errorcode);
}

lmpi_status lmpi_impl_Add_error_string(int errorcode, const char *string)
{
    if (!code_is_user(errorcode)) {
        lmpi_err_detail("errorcode %d is not a user-defined code", errorcode);
        return LMPI_ERR_ARG;
    }
    if (!string || strlen(string) >= MPI_MAX_ERROR_STRING) {
        lmpi_err_detail("string is NULL or longer than MPI_MAX_ERROR_STRING");
        return LMPI_ERR_ARG;
    }
    user_code *u = &user_codes[errorcode - USER_CODE_BASE];
    char *s = lmpi_strdup(string, LMPI_MEM_OTHER);
    if (!s)
        return LMPI_ERR_NO_MEM;
    lmpi_free(u->string);
    u->string = s;
    return LMPI_OK;
}

/* MPI 4.1's removals: a string, then codes, then their class. */
lmpi_status lmpi_impl_Remove_error_string(int errorcode)
{
    if (!code_is_user(errorcode) || !user_codes[errorcode - USER_CODE_BASE].string) {
        lmpi_err_detail("errorcode %d has no string added by MPI_Add_error_string", errorcode);
        return LMPI_ERR_ARG;
    }
    user_code *u = &user_codes[errorcode - USER_CODE_BASE];
    lmpi_free(u->string);
    u->string = NULL;
    return LMPI_OK;
}

static lmpi_status remove_code(int code, bool want_class)
{
    if (!code_is_user(code) || (code_class(code) == code) != want_class) {
        lmpi_err_detail("%d is not an error %s added by the user", code, want_class ? "class" : "code");
        return LMPI_ERR_ARG;
    }
    user_code *u = &user_codes[code - USER_CODE_BASE];
    if (u->string) {
        lmpi_err_detail("error %s %d still has a string (MPI_Remove_error_string first)", want_class ? "class" : "code",
                        code);
        return LMPI_ERR_ARG;
    }
    for (int i = 0; want_class && i < n_user_codes; i++)
        if (USER_CODE_BASE + i != code && user_codes[i].error_class == code) {
            lmpi_err_detail("error class %d still has error code %d (MPI_Remove_error_code first)", code,
                            USER_CODE_BASE + i);
            return LMPI_ERR_ARG;
        }
    u->error_class = REMOVED_CODE;
    n_removed_codes++;
    while (n_user_codes > 0 && user_codes[n_user_codes - 1].error_class == REMOVED_CODE) {
        n_user_codes--;
        n_removed_codes--;
    }
    return LMPI_OK;
}

lmpi_status lmpi_impl_Remove_error_code(int errorcode) { return remove_code(errorcode, false); }
lmpi_status lmpi_impl_Remove_error_class(int errorclass) { return remove_code(errorclass, true); }

lmpi_status lmpi_impl_Error_class(int errorcode, int *errorclass)
{
    int c = code_class(errorcode);
    if (c < 0) {
        lmpi_err_detail("errorcode %d is not an MPI error code", errorcode);
        return LMPI_ERR_ARG;
    }
    *errorclass = c;
    return LMPI_OK;
}

static void code_string(int code, char *buf, size_t len)
{
    if (code >= 0 && code < N_CLASSES && class_name[code])
        snprintf(buf, len, "%s: %s", class_name[code], class_text[code]);
    else if (code >= 0 && code < N_CLASSES)
        snprintf(buf, len, "unknown error code %d", code);
    else if (code_is_user(code) && user_codes[code - USER_CODE_BASE].string)
        snprintf(buf, len, "%s", user_codes[code - USER_CODE_BASE].string);
    else if (code_is_user(code))
        snprintf(buf, len, "%s", ""); /* no string added: the empty string (MPI 5.0 §9.5) */
    else
        snprintf(buf, len, "unknown error code %d", code);
}

/* The last error raised on this thread, in full (function, argument, value):
 * under MPI_ERRORS_RETURN the code is all the caller gets, and
 * MPI_Error_string of that code gives the detail back, as MPICH's codes do,
 * while codes stay equal to their classes (programs compare them). */
static _Thread_local char last_message[MPI_MAX_ERROR_STRING];
static _Thread_local int last_class = -1;

lmpi_status lmpi_impl_Error_string(int errorcode, char *string, int *resultlen)
{
    if (code_class(errorcode) < 0) {
        lmpi_err_detail("errorcode %d is not an MPI error code", errorcode);
        return LMPI_ERR_ARG;
    }
    if (!string) {
        lmpi_err_detail("string is NULL");
        return LMPI_ERR_ARG;
    }
    /* a user's code gives the user's string as it was added (MPICH's errors/comm/userdup) */
    if (errorcode == last_class && last_message[0] && !code_is_user(errorcode))
        snprintf(string, MPI_MAX_ERROR_STRING, "%s", last_message);
    else
        code_string(errorcode, string, MPI_MAX_ERROR_STRING);
    *resultlen = (int)strlen(string);
    return LMPI_OK;
}

void lmpi_errors_finalize(void)
{
    for (int i = 0; i < n_user_codes; i++)
        lmpi_free(user_codes[i].string);
    lmpi_free(user_codes);
    user_codes = NULL;
    n_user_codes = cap_user_codes = n_removed_codes = 0;
}

/* ---- error handlers ------------------------------------------------------- */
#define ERRH_BASE 0x140u
static lmpi_errhandler errh_builtin[4] = {
    {LMPI_MAGIC_ERRHANDLER, LMPI_ERRH_NULL, 1, MPI_ERRHANDLER_NULL, NULL, NULL, NULL, NULL},
    {LMPI_MAGIC_ERRHANDLER, LMPI_ERRH_FATAL, 1, MPI_ERRORS_ARE_FATAL, NULL, NULL, NULL, NULL},
    {LMPI_MAGIC_ERRHANDLER, LMPI_ERRH_ABORT, 1, MPI_ERRORS_ABORT, NULL, NULL, NULL, NULL},
    {LMPI_MAGIC_ERRHANDLER, LMPI_ERRH_RETURN, 1, MPI_ERRORS_RETURN, NULL, NULL, NULL, NULL},
};

lmpi_errhandler *lmpi_errhandler_from_handle(MPI_Errhandler h)
{
    uintptr_t v = (uintptr_t)h;
    if (v < LMPI_PREDEF_LIMIT)
        return (v - ERRH_BASE < 4) ? &errh_builtin[v - ERRH_BASE] : NULL;
    lmpi_errhandler *e = (lmpi_errhandler *)h;
    return e->magic == LMPI_MAGIC_ERRHANDLER ? e : NULL;
}

/* The handler in force before MPI_Init: LMPI_INITIAL_ERRHANDLER (the MPI-4
 * "mpi_initial_errhandler"), fatal by default. */
lmpi_errhandler *lmpi_errhandler_initial(void)
{
    lmpi_config_ensure_loaded();
    const char *v = lmpi_config.initial_errhandler;
    if (v && (!strcmp(v, "return") || !strcmp(v, "mpi_errors_return")))
        return &errh_builtin[3];
    if (v && (!strcmp(v, "abort") || !strcmp(v, "mpi_errors_abort")))
        return &errh_builtin[2];
    return &errh_builtin[1];
}

static bool user_kind(const lmpi_errhandler *e)
{
    return e->kind == LMPI_ERRH_USER_COMM || e->kind == LMPI_ERRH_USER_SESSION || e->kind == LMPI_ERRH_USER_WIN ||
           e->kind == LMPI_ERRH_USER_FILE;
}

bool lmpi_errhandler_fits(const lmpi_errhandler *e, lmpi_errh_kind want)
{
    return e && e->kind != LMPI_ERRH_NULL && (!user_kind(e) || e->kind == want);
}

const char *lmpi_errhandler_made_for(const lmpi_errhandler *e)
{
    switch (e->kind) {
    case LMPI_ERRH_USER_COMM:
        return "communicators";
    case LMPI_ERRH_USER_SESSION:
        return "sessions";
    case LMPI_ERRH_USER_WIN:
        return "windows";
    case LMPI_ERRH_USER_FILE:
        return "files";
    default:
        return "every object";
    }
}

void lmpi_errhandler_retain(lmpi_errhandler *e)
{
    if (user_kind(e))
        e->refcount++;
}

void lmpi_errhandler_release(lmpi_errhandler *e)
{
    if (user_kind(e) && --e->refcount == 0) {
        e->magic = 0;
        lmpi_free(e);
    }
}

lmpi_status lmpi_errhandler_new(lmpi_errh_kind kind, lmpi_mem_cat cat, lmpi_errhandler **out)
{
    lmpi_errhandler *e = lmpi_calloc(1, sizeof(*e), cat);
    if (!e)
        return LMPI_ERR_NO_MEM;
    e->magic = LMPI_MAGIC_ERRHANDLER;
    e->kind = kind;
    e->refcount = 1;
    e->handle = (MPI_Errhandler)e;
    *out = e;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Comm_create_errhandler(MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    lmpi_errhandler *e;
    if (!fn) {
        lmpi_err_detail("comm_errhandler_fn is NULL");
        return LMPI_ERR_ARG;
    }
    LMPI_TRY(lmpi_errhandler_new(LMPI_ERRH_USER_COMM, LMPI_MEM_COMM, &e));
    e->comm_fn = fn;
    *errhandler = e->handle;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Errhandler_free(MPI_Errhandler *errhandler)
{
    lmpi_errhandler *e = lmpi_errhandler_from_handle(*errhandler);
    if (!e || e->kind == LMPI_ERRH_NULL) {
        lmpi_err_detail("not an error handler");
        return LMPI_ERR_ERRHANDLER;
    }
    lmpi_errhandler_release(e);
    *errhandler = MPI_ERRHANDLER_NULL;
    return LMPI_OK;
}

/* Which of the two predefined communicators the user gave a handler. */
static bool self_handler_set, world_handler_set;

lmpi_status lmpi_impl_Comm_set_errhandler(lmpi_comm *comm, MPI_Errhandler errhandler)
{
    lmpi_errhandler *e = lmpi_errhandler_from_handle(errhandler);
    if (!e || e->kind == LMPI_ERRH_NULL) {
        lmpi_err_detail("errhandler is not a valid error handler");
        return LMPI_ERR_ERRHANDLER;
    }
    if (!lmpi_errhandler_fits(e, LMPI_ERRH_USER_COMM)) {
        lmpi_err_detail("errhandler was made for %s, not communicators", lmpi_errhandler_made_for(e));
        return LMPI_ERR_ARG;
    }
    lmpi_errhandler_retain(e);
    lmpi_errhandler_release(comm->errh);
    comm->errh = e;
    if (comm == lmpi_comm_self)
        self_handler_set = true;
    else if (comm == lmpi_comm_world)
        world_handler_set = true;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Comm_get_errhandler(lmpi_comm *comm, MPI_Errhandler *errhandler)
{
    lmpi_errhandler_retain(comm->errh);
    *errhandler = comm->errh->handle;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Session_create_errhandler(MPI_Session_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    lmpi_errhandler *e;
    if (!fn) {
        lmpi_err_detail("session_errhandler_fn is NULL");
        return LMPI_ERR_ARG;
    }
    LMPI_TRY(lmpi_errhandler_new(LMPI_ERRH_USER_SESSION, LMPI_MEM_COMM, &e));
    e->session_fn = fn;
    *errhandler = e->handle;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Comm_call_errhandler(lmpi_comm *comm, int errorcode)
{
    lmpi_errh_invoke(comm, errorcode, NULL);
    return LMPI_OK;
}

/* ---- raising ---------------------------------------------------------------- */
static _Thread_local char err_detail[512];

void lmpi_err_detail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err_detail, sizeof(err_detail), fmt, ap);
    va_end(ap);
}

void lmpi_err_detail_get(char *out, size_t len)
{
    snprintf(out, len, "%s", err_detail);
}

/* A call with no communicator, window or file raises its error on
 * MPI_COMM_SELF (MPI 4.0 and later).  Programs written before that set
 * their handler on MPI_COMM_WORLD alone, and both MPICH 5.0.2 and Open MPI
 * 5.0.11 still honour it there (Open MPI only there): so MPI_COMM_WORLD's
 * handler applies as long as MPI_COMM_SELF's was never set. */
lmpi_comm *lmpi_errh_for(lmpi_comm *comm, int fn_has_comm)
{
    if (comm && comm->magic == LMPI_MAGIC_COMM)
        return comm;
    if (fn_has_comm || (world_handler_set && !self_handler_set && lmpi_comm_world->magic == LMPI_MAGIC_COMM))
        return lmpi_comm_world;
    return lmpi_comm_self;
}

static lmpi_errhandler *handler_of(lmpi_comm *comm)
{
    if (lmpi_rt.state == LMPI_STATE_NONE || !comm || !comm->errh)
        return lmpi_errhandler_initial();
    return comm->errh;
}

int lmpi_errh_call(lmpi_errhandler *e, void *handle, int code, const char *msg)
{
    char text[MPI_MAX_ERROR_STRING];
    if (!msg) {
        code_string(code, text, sizeof(text));
        msg = text;
    }
    switch (e->kind) {
    case LMPI_ERRH_RETURN:
        return code;
    case LMPI_ERRH_USER_COMM:
    case LMPI_ERRH_USER_SESSION:
    case LMPI_ERRH_USER_WIN:
    case LMPI_ERRH_USER_FILE: {
        /* an error inside a user handler is returned, not raised again:
         * a handler that calls a failing function would recurse until the
         * stack overflows */
        static _Thread_local int in_user_handler;
        if (in_user_handler)
            return code;
        int c = code;
        in_user_handler = 1;
        if (e->kind == LMPI_ERRH_USER_COMM) {
            MPI_Comm h = (MPI_Comm)handle;
            e->comm_fn(&h, &c);
        } else if (e->kind == LMPI_ERRH_USER_WIN) {
            MPI_Win h = (MPI_Win)handle;
            e->win_fn(&h, &c);
        } else if (e->kind == LMPI_ERRH_USER_FILE) {
            MPI_File h = (MPI_File)handle;
            e->file_fn(&h, &c);
        } else {
            MPI_Session h = (MPI_Session)handle;
            e->session_fn(&h, &c);
        }
        in_user_handler = 0;
        /* the call returns what the handler left in its code argument, as in
         * MPICH and Open MPI (a handler that sets MPI_SUCCESS clears the
         * error: MPICH's errors/io/fileerrret) */
        return c;
    }
    case LMPI_ERRH_ABORT:
    case LMPI_ERRH_FATAL:
    case LMPI_ERRH_NULL:
    default:
        fprintf(stderr, "[LeanMPI rank %d] fatal error: %s\n", lmpi_rt.world_rank, msg);
        fflush(stderr);
        lmpi_abort_job(code == 0 ? 1 : code, msg);
    }
}

int lmpi_errh_invoke(lmpi_comm *comm, int code, const char *msg)
{
    lmpi_errhandler *e = handler_of(comm);
    return lmpi_errh_call(e, e->kind == LMPI_ERRH_USER_COMM ? (void *)comm->handle : NULL, code, msg);
}

/* A code a user callback returned (an attribute copy or delete function, a
 * generalized request's): the call that ran the callback returns it as it
 * is, so that a user-defined class survives (lmpi_status_user). */
static _Thread_local int callback_code;
static _Thread_local lmpi_status user_code_status; /* what it travels as: a stale one is ignored */

lmpi_status lmpi_status_user(int code)
{
    callback_code = code;
    user_code_status = lmpi_status_from_code(code);
    return user_code_status;
}

int lmpi_error_message(const char *fn, const char *arg, lmpi_status st, const char *where, char *msg, size_t len)
{
    int code = lmpi_status_class(st), cls = code;
    if (callback_code && st == user_code_status) {
        code = callback_code;
        cls = code_class(code);
    }
    callback_code = 0;
    bool predefined = cls >= 0 && cls < N_CLASSES && class_name[cls];
    char place[256] = "";
    if (arg || where)
        snprintf(place, sizeof(place), "(%s%s%s)", arg ? arg : "", arg && where ? ", " : "", where ? where : "");
    snprintf(msg, len, "%s%s: %s: %s%s%s", fn, place, predefined ? class_name[cls] : "user-defined error class",
             predefined ? class_text[cls] : "", err_detail[0] ? ": " : "", err_detail);
    err_detail[0] = '\0';
    last_class = code;
    snprintf(last_message, sizeof(last_message), "%s", msg);
    if (lmpi_config.verbose_errors)
        fprintf(stderr, "[LeanMPI rank %d] %s\n", lmpi_rt.world_rank, msg);
    return code;
}

/* The communicator of a request whose completion failed: its handler, not
 * MPI_COMM_SELF's, is the one the completion call raises (MPI 5.0 §9.3). */
static _Thread_local lmpi_comm *request_comm;

void lmpi_err_blame_comm(lmpi_comm *c)
{
    /* an internal communicator (a collective's node or roots part, an
     * intercommunicator's local group: ft_parent names the one it serves)
     * is not the user's: the call's own communicator keeps the blame */
    if (!request_comm && !(c->flags & LMPI_COMM_INTERNAL) && !c->ft_parent)
        request_comm = c;
}

/* MPI_Session_init: its errors go to the handler it was given. */
static _Thread_local lmpi_errhandler *init_handler;

static _Thread_local void *init_handle;

void lmpi_err_blame_handler(lmpi_errhandler *e)
{
    init_handler = e;
    init_handle = (void *)MPI_SESSION_NULL;
}

void lmpi_err_blame_object(lmpi_errhandler *e, void *handle)
{
    init_handler = e;
    init_handle = handle;
}

int lmpi_coll_error(const char *fn, const char *arg, lmpi_status st, lmpi_comm *errh, lmpi_comm *coll, int kind)
{
    if (!lmpi_coll_counted && coll && coll->magic == LMPI_MAGIC_COMM)
        lmpi_coll_call_skip(coll, (lmpi_coll_kind)kind);
    return lmpi_binding_error(fn, arg, st, errh);
}

int lmpi_binding_error(const char *fn, const char *arg, lmpi_status st, lmpi_comm *comm)
{
    if (init_handler) {
        lmpi_errhandler *e = init_handler;
        char msg[MPI_MAX_ERROR_STRING + 600];
        init_handler = NULL;
        int code = lmpi_error_message(fn, arg, st, NULL, msg, sizeof(msg));
        return lmpi_errh_call(e, init_handle, code, msg);
    }
    if (request_comm) {
        if (request_comm->magic == LMPI_MAGIC_COMM)
            comm = request_comm;
        request_comm = NULL;
    }
    char msg[MPI_MAX_ERROR_STRING + 600];
    const char *comm_name = (comm && comm->magic == LMPI_MAGIC_COMM) ? lmpi_comm_display_name(comm) : NULL;
    int code = lmpi_error_message(fn, arg, st, comm_name, msg, sizeof(msg));
    return lmpi_errh_invoke(comm, code, msg);
}

int lmpi_binding_state_error(const char *fn)
{
    lmpi_err_detail("%s called %s", fn,
                    lmpi_rt.state == LMPI_STATE_NONE ? "before MPI_Init" : "after MPI_Finalize");
    /* After MPI_Finalize the handler the user left on MPI_COMM_SELF applies. */
    return lmpi_binding_error(fn, NULL, LMPI_ERR_OTHER,
                              lmpi_rt.state == LMPI_STATE_FINALIZED ? lmpi_comm_self : NULL);
}

int lmpi_tool_error(const char *fn, const char *arg, lmpi_status st, lmpi_comm *comm)
{
    (void)comm;
    if (lmpi_config.verbose_errors)
        fprintf(stderr, "[LeanMPI rank %d] %s(%s): %s: %s\n", lmpi_rt.world_rank, fn, arg ? arg : "",
                class_name[lmpi_status_class(st)], err_detail);
    err_detail[0] = '\0';
    return lmpi_status_class(st);
}
