/* mpi_f08's choice buffers are TYPE(*), DIMENSION(..): the compiler passes a
 * descriptor (ISO_Fortran_binding.h), and a non-contiguous array section such
 * as a(1:n:2, :) arrives as it is, without a copy (MPI_SUBARRAYS_SUPPORTED).
 * These turn a descriptor and the call's (count, datatype) into what the C
 * interface takes:
 *
 *   - contiguous (or a scalar, or a sentinel): its address, nothing else;
 *   - a section whose elements hold whole copies of the datatype: a datatype
 *     made of the section's strides (hvector per dimension), committed for the
 *     call and freed after it (the standard lets a pending operation keep a
 *     freed datatype), the call's count then 1.  Nonblocking calls too.
 *   - per-process counts (gather, alltoall, the v and w forms): a uniformly
 *     strided section with one datatype per element becomes the datatype
 *     resized to the stride, so counts and displacements still count elements;
 *   - anything else, in a blocking call: a contiguous copy made inside the
 *     call and copied back (as the compiler's own copy-in/copy-out would), and
 *     in a nonblocking one an MPI_ERR_BUFFER error naming the procedure.
 *
 * Only the standard C ABI is used (datatype constructors, error codes). */
#ifndef LMPI_FORTRAN_MPIF_SUBARRAY_H
#define LMPI_FORTRAN_MPIF_SUBARRAY_H

#include <ISO_Fortran_binding.h>

#include "fortran/mpif_util.h"

/* How a buffer's (count, datatype) relate to its section. */
enum lmpif_sub_mode {
    LMPIF_SUB_TOTAL,   /* count datatypes in the whole buffer */
    LMPIF_SUB_PERPROC, /* counts per process or arrays of them: elements stay elements */
    LMPIF_SUB_BASE,    /* an address only (MPI_Get_address, split collectives' end) */
    LMPIF_SUB_CONTIG,  /* memory handed to the library (MPI_Buffer_attach, MPI_Win_create) */
};

/* The object whose error handler a conversion error goes to. */
typedef struct lmpif_errobj {
    int cls; /* LMPIF_COMM, LMPIF_WIN, LMPIF_FILE */
    void *handle;
} lmpif_errobj;

typedef struct lmpif_sub {
    void *buf;         /* the address the call gets */
    MPI_Datatype made; /* a datatype made for the call, or MPI_DATATYPE_NULL */
    bool one;          /* made describes the whole buffer: the call's count is 1 */
    void *copy;        /* a blocking call's contiguous copy, or NULL */
    const CFI_cdesc_t *d;
    bool copy_back;
    int cached;        /* made is the cache's entry cached - 1 (0: made for this call) */
} lmpif_sub;

#define LMPIF_SUB_NONE {.buf = NULL, .made = MPI_DATATYPE_NULL, .one = false, .copy = NULL, .d = NULL, .cached = 0}

/* Fills s; MPI_SUCCESS, or the error code the object's handler returned
 * (the message names proc and arg).  peer: a buffer converted before that
 * shares the datatype argument (a reduction's sendbuf and recvbuf): one
 * datatype must then describe both. */
int lmpif_sub_begin(lmpif_sub *s, const CFI_cdesc_t *d, enum lmpif_sub_mode mode, bool blocking,
                    bool reduction, bool out, MPI_Count count, MPI_Datatype type, const lmpif_sub *peer,
                    lmpif_errobj eo, const char *proc, const char *arg);
/* After the call: copies back (ok: the call succeeded) and frees. */
void lmpif_sub_finish(lmpif_sub *s, bool ok);
static inline void lmpif_sub_end(lmpif_sub *s, bool ok)
{
    if (s->copy || s->made != MPI_DATATYPE_NULL)
        lmpif_sub_finish(s, ok);
}

/* The common case inline, before any call: a scalar, or a contiguous
 * one-dimensional array (an assumed-size one too) is its address. */
static inline bool lmpif_desc_plain(const CFI_cdesc_t *d)
{
    return d->rank == 0 || (d->rank == 1 && (d->dim[0].sm == (CFI_index_t)d->elem_len || d->dim[0].extent <= 1));
}

static inline void lmpif_sub_set_plain(lmpif_sub *s, const CFI_cdesc_t *d)
{
    s->buf = LMPIF_BUF(d->base_addr);
    s->made = MPI_DATATYPE_NULL;
    s->one = false;
    s->copy = NULL;
    s->d = d;
    s->cached = 0;
}

static inline bool lmpif_sub_plain(lmpif_sub *s, const CFI_cdesc_t *d)
{
    if (!lmpif_desc_plain(d))
        return false;
    lmpif_sub_set_plain(s, d);
    return true;
}

/* The call's count and datatype after the conversion. */
#define LMPIF_SUB_COUNT(s, c) ((s).one ? 1 : (c))
#define LMPIF_SUB_TYPE(s, t) ((s).made != MPI_DATATYPE_NULL ? (s).made : (t))

/* An error of class cls with a message of the Fortran layer's own, through
 * the handler of eo (the returned code is what ierror gets). */
int lmpif_raise(lmpif_errobj eo, int cls, const char *msg);

#endif
