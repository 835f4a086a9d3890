/* MPI_COMM_WORLD, MPI_COMM_SELF and the queries every program makes. */
#include <string.h>

#include "binding/gen/impl.h"
#include "comm/comm.h"

lmpi_comm lmpi_comm_builtin[LMPI_COMM_BUILTIN_COUNT];

static void init_one(lmpi_comm *c, MPI_Comm h, uint32_t ctx, const char *name)
{
    memset(c, 0, sizeof(*c));
    c->magic = LMPI_MAGIC_COMM;
    c->context_id = ctx;
    c->handle = h;
    c->errh = lmpi_errhandler_initial();
    c->map_mode = LMPI_RANKMAP_DIRECT;
    c->rank = 0;
    c->size = 1;
    strncpy(c->name, name, sizeof(c->name) - 1);
}

void lmpi_comm_init_builtin(void)
{
    /* MPI_COMM_NULL keeps magic 0 so that every check rejects it. */
    memset(&lmpi_comm_builtin[0], 0, sizeof(lmpi_comm_builtin[0]));
    lmpi_comm_builtin[0].handle = MPI_COMM_NULL;
    strcpy(lmpi_comm_builtin[0].name, "MPI_COMM_NULL");
    init_one(lmpi_comm_world, MPI_COMM_WORLD, 0, "MPI_COMM_WORLD");
    init_one(lmpi_comm_self, MPI_COMM_SELF, 2, "MPI_COMM_SELF");
    lmpi_comm_self->map_mode = LMPI_RANKMAP_OFFSET;
}

/* The predefined communicators stay usable for error reporting after
 * MPI_Finalize; only user handlers they hold are released. */
void lmpi_comm_finalize_builtin(void)
{
    for (unsigned i = 1; i < LMPI_COMM_BUILTIN_COUNT; i++) {
        lmpi_comm *c = &lmpi_comm_builtin[i];
        if (c->errh && c->errh->kind == LMPI_ERRH_USER_COMM) {
            lmpi_errhandler_release(c->errh);
            c->errh = lmpi_errhandler_from_handle(MPI_ERRORS_ARE_FATAL);
        }
    }
}

lmpi_status lmpi_impl_Comm_rank(lmpi_comm *comm, int *rank)
{
    *rank = comm->rank;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Comm_size(lmpi_comm *comm, int *size)
{
    *size = comm->size;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Comm_get_name(lmpi_comm *comm, char *comm_name, int *resultlen)
{
    if (!comm_name) {
        lmpi_err_detail("comm_name is NULL");
        return LMPI_ERR_ARG;
    }
    size_t n = strnlen(comm->name, MPI_MAX_OBJECT_NAME - 1);
    memcpy(comm_name, comm->name, n);
    comm_name[n] = '\0';
    *resultlen = (int)n;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Comm_set_name(lmpi_comm *comm, const char *comm_name)
{
    if (!comm_name) {
        lmpi_err_detail("comm_name is NULL");
        return LMPI_ERR_ARG;
    }
    size_t n = strnlen(comm_name, MPI_MAX_OBJECT_NAME - 1);
    memcpy(comm->name, comm_name, n);
    comm->name[n] = '\0';
    return LMPI_OK;
}

lmpi_status lmpi_impl_Comm_test_inter(lmpi_comm *comm, int *flag)
{
    (void)comm;
    *flag = 0;
    return LMPI_OK;
}

/* Predefined attributes; user keyvals arrive with the communicator issue.
 * Attribute values are pointers to values that live as long as the process. */
lmpi_status lmpi_impl_Comm_get_attr(lmpi_comm *comm, int keyval, void *attribute_val, int *flag)
{
    (void)comm;
    static int tag_ub = LMPI_TAG_UB, wtime_global = 0, appnum, universe, host = MPI_PROC_NULL, io = MPI_ANY_SOURCE;
    static int lastused = MPI_ERR_LASTCODE;
    int *v = NULL;
    switch (keyval) {
    case MPI_TAG_UB: v = &tag_ub; break;
    case MPI_WTIME_IS_GLOBAL: v = &wtime_global; break;
    case MPI_HOST: v = &host; break;
    case MPI_IO: v = &io; break;
    case MPI_LASTUSEDCODE: v = &lastused; break;
    case MPI_APPNUM: appnum = lmpi_rt.appnum; v = &appnum; break;
    case MPI_UNIVERSE_SIZE: universe = lmpi_rt.universe_size; v = &universe; break;
    default:
        lmpi_err_detail("keyval %d: user-defined attributes are not implemented yet", keyval);
        return LMPI_ERR_KEYVAL;
    }
    *(int **)attribute_val = v;
    *flag = 1;
    return LMPI_OK;
}
