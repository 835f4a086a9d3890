/* Argument checks used by the generated bindings (gen/bindings.c).  Each takes
 * a public argument and returns LMPI_OK or the status to raise; the binding
 * names the argument.  They are inline: with valid arguments a check is a
 * compare or two on data the call needs anyway. */
#ifndef LMPI_BINDING_CHECK_H
#define LMPI_BINDING_CHECK_H

#include "comm/comm.h"
#include "datatype/datatype.h"
#include "runtime/errhandler.h"
#include "runtime/lmpi.h"

enum { LMPI_RANK_ALLOW_PROC_NULL = 1, LMPI_RANK_ALLOW_ANY = 2, LMPI_RANK_ROOT = 4 };

static inline lmpi_status lmpi_check_comm(MPI_Comm h, lmpi_comm **out)
{
    lmpi_comm *c = lmpi_comm_from_handle(h);
    if (LMPI_UNLIKELY(c == NULL || c->magic != LMPI_MAGIC_COMM)) {
        lmpi_err_detail(h == MPI_COMM_NULL ? "MPI_COMM_NULL" : "not a communicator (freed or garbage handle %p)",
                        (void *)h);
        return LMPI_ERR_COMM;
    }
    *out = c;
    return LMPI_OK;
}

static inline lmpi_status lmpi_check_datatype(MPI_Datatype h, lmpi_datatype **out)
{
    lmpi_datatype *d = lmpi_datatype_from_handle(h);
    if (LMPI_UNLIKELY(d == NULL || d->magic != LMPI_MAGIC_DATATYPE)) {
        lmpi_err_detail(h == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" : "not a datatype (handle %p)", (void *)h);
        return LMPI_ERR_TYPE;
    }
    *out = d;
    return LMPI_OK;
}

/* A datatype argument that may be insignificant (non-root ranks, the send
 * type with MPI_IN_PLACE): the object, or NULL when it is not one. */
static inline lmpi_datatype *lmpi_datatype_or_null(MPI_Datatype h)
{
    lmpi_datatype *d = lmpi_datatype_from_handle(h);
    return d && d->magic == LMPI_MAGIC_DATATYPE ? d : NULL;
}

static inline lmpi_status lmpi_check_count(MPI_Count count)
{
    if (LMPI_UNLIKELY(count < 0)) {
        lmpi_err_detail("count %lld is negative", (long long)count);
        return LMPI_ERR_COUNT;
    }
    return LMPI_OK;
}

/* A communication buffer: its type must be committed, and NULL with data to
 * move is an error unless a derived type may carry absolute addresses
 * (MPI_BOTTOM). */
static inline lmpi_status lmpi_check_buffer(const void *buf, MPI_Count count, const lmpi_datatype *dt)
{
    if (LMPI_UNLIKELY(!dt->committed)) {
        lmpi_err_detail("datatype is not committed");
        return LMPI_ERR_TYPE;
    }
    if (LMPI_UNLIKELY(buf == NULL && count > 0 && dt->predefined && dt->size > 0)) {
        lmpi_err_detail("NULL buffer with count %lld", (long long)count);
        return LMPI_ERR_BUFFER;
    }
    if (LMPI_UNLIKELY(lmpi_dt_count_overflows(count, dt))) {
        lmpi_err_detail("count %lld of a type of %lld bytes (extent %lld) overflows MPI_Count", (long long)count,
                        (long long)dt->size, (long long)dt->extent);
        return LMPI_ERR_COUNT;
    }
    return LMPI_OK;
}

static inline lmpi_status lmpi_check_rank(int rank, const lmpi_comm *c, int allow)
{
    if (LMPI_LIKELY(rank >= 0 && rank < c->peer_size))
        return LMPI_OK;
    if ((allow & LMPI_RANK_ALLOW_PROC_NULL) && rank == MPI_PROC_NULL)
        return LMPI_OK;
    if ((allow & LMPI_RANK_ALLOW_ANY) && rank == MPI_ANY_SOURCE)
        return LMPI_OK;
    /* an intercommunicator's root group passes MPI_ROOT (the root) or MPI_PROC_NULL */
    if ((allow & LMPI_RANK_ROOT) && c->is_inter && (rank == MPI_ROOT || rank == MPI_PROC_NULL))
        return LMPI_OK;
    lmpi_err_detail(c->is_inter ? "rank %d but the remote group has %d ranks" : "rank %d but the communicator has %d ranks",
                    rank, c->peer_size);
    return (allow & LMPI_RANK_ROOT) ? LMPI_ERR_ROOT : LMPI_ERR_RANK;
}

static inline lmpi_status lmpi_check_tag(int tag, int allow_any)
{
    if (LMPI_LIKELY(tag >= 0 && tag <= LMPI_TAG_UB))
        return LMPI_OK;
    if (allow_any && tag == MPI_ANY_TAG)
        return LMPI_OK;
    lmpi_err_detail("tag %d outside 0..MPI_TAG_UB (%d)", tag, LMPI_TAG_UB);
    return LMPI_ERR_TAG;
}

static inline lmpi_status lmpi_check_ptr(const void *p)
{
    if (LMPI_UNLIKELY(p == NULL)) {
        lmpi_err_detail("NULL pointer for an output argument");
        return LMPI_ERR_ARG;
    }
    return LMPI_OK;
}

#endif
