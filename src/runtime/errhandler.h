/* Error handlers and the binding-boundary error path.
 *
 * Every MPI function returns through lmpi_binding_error() when something went
 * wrong: it turns the internal status into an MPI error code, builds the one
 * message that names the function, the argument, the class and the rank, and
 * invokes the handler of the object the error belongs to (the communicator,
 * else MPI_COMM_SELF, else the initial handler before MPI_Init). */
#ifndef LMPI_ERRHANDLER_H
#define LMPI_ERRHANDLER_H

#include "runtime/lmpi.h"

typedef enum {
    LMPI_ERRH_NULL,
    LMPI_ERRH_FATAL,
    LMPI_ERRH_ABORT,
    LMPI_ERRH_RETURN,
    LMPI_ERRH_USER_COMM,
    LMPI_ERRH_USER_SESSION,
    LMPI_ERRH_USER_WIN,
    LMPI_ERRH_USER_FILE,
} lmpi_errh_kind;

struct lmpi_errhandler {
    uint32_t magic;
    lmpi_errh_kind kind;
    int refcount; /* user handlers only; predefined ones are never freed */
    MPI_Errhandler handle;
    MPI_Comm_errhandler_function *comm_fn;
    MPI_Session_errhandler_function *session_fn;
    MPI_Win_errhandler_function *win_fn;
    MPI_File_errhandler_function *file_fn;
};

lmpi_errhandler *lmpi_errhandler_from_handle(MPI_Errhandler h);
/* A user handler of `kind` (refcount 1); the caller sets its function. */
lmpi_status lmpi_errhandler_new(lmpi_errh_kind kind, lmpi_mem_cat cat, lmpi_errhandler **out);
lmpi_errhandler *lmpi_errhandler_initial(void);
/* A predefined handler, or a user one made for objects of user_kind (a
 * handler made for files must not be called with a communicator). */
bool lmpi_errhandler_fits(const lmpi_errhandler *e, lmpi_errh_kind want);
const char *lmpi_errhandler_made_for(const lmpi_errhandler *e);
void lmpi_errhandler_retain(lmpi_errhandler *e);
void lmpi_errhandler_release(lmpi_errhandler *e);

/* Which communicator's handler an error goes to: the function's own
 * communicator; for an invalid communicator argument MPI_COMM_WORLD (as MPICH
 * and Open MPI do); for functions without one MPI_COMM_SELF (MPI-4 rule). */
lmpi_comm *lmpi_errh_for(lmpi_comm *comm, int fn_has_comm);

int lmpi_binding_error(const char *fn, const char *arg, lmpi_status st, lmpi_comm *comm);
/* A collective failing at this rank: when it failed before taking its call
 * number (an argument check), take it anyway, so that the next collective on
 * coll matches the others' (KIND: an lmpi_coll_kind; src/coll/calls.h). */
int lmpi_coll_error(const char *fn, const char *arg, lmpi_status st, lmpi_comm *errh, lmpi_comm *coll, int kind);
/* The next error a binding raises goes to c's handler (a request's
 * communicator, found while completing it). */
void lmpi_err_blame_comm(lmpi_comm *c);
/* The next error a binding raises goes to handler e (NULL: forget it). */
void lmpi_err_blame_handler(lmpi_errhandler *e);
/* ... to handler e of an object other than a communicator (a window), which
 * a user handler receives as its handle. */
void lmpi_err_blame_object(lmpi_errhandler *e, void *handle);
/* Sessions (session.c): a live session or MPI_ERR_SESSION; process sets by
 * name (any case): 0 mpi://WORLD, 1 mpi://SELF, -1 none. */
lmpi_status lmpi_session_check(MPI_Session h);
/* A live session's id (never 0), and the buffer a session with that id
 * has attached for buffered sends (NULL: none, or no such session now). */
uint32_t lmpi_session_id(MPI_Session h);
struct lmpi_bsend_buffer *lmpi_session_buffer(uint32_t id);
int lmpi_pset_find(const char *name);
int lmpi_pset_size(int pset);
/* Errors of session functions: the session's handler (MPI_COMM_SELF's when
 * the session handle itself is invalid). */
int lmpi_session_error(const char *fn, const char *arg, lmpi_status st, MPI_Session session);
/* Errors of file functions (src/io): the file's handler, MPI_FILE_NULL's
 * for open, delete and an invalid handle; the message names the file. */
int lmpi_file_error(const char *fn, const char *arg, lmpi_status st, MPI_File fh);
/* Format the binding's error message; the detail is consumed. */
int lmpi_error_message(const char *fn, const char *arg, lmpi_status st, const char *where, char *msg, size_t len);
/* Invoke a handler with an MPI error code; user handlers get handle. */
int lmpi_errh_call(lmpi_errhandler *e, void *handle, int code, const char *msg);

/* MPI_T: the code is returned, no handler is called (the standard's rule). */
int lmpi_tool_error(const char *fn, const char *arg, lmpi_status st, lmpi_comm *comm);
/* A call before MPI_Init or after MPI_Finalize. */
int lmpi_binding_state_error(const char *fn);
/* Raise an MPI error code (possibly user-defined) on a communicator. */
int lmpi_errh_invoke(lmpi_comm *comm, int code, const char *msg);

void lmpi_errors_finalize(void);

#endif
