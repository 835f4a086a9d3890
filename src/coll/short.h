/* Small blocking collectives without a schedule (short.c). */
#ifndef LMPI_COLL_SHORT_H
#define LMPI_COLL_SHORT_H

#include "coll/op.h"
#include "comm/comm.h"

/* The cap on LMPI_COLL_SHORT: the short paths keep their data on the stack. */
#define LMPI_COLL_SHORT_MAX 8192

/* True when COUNT elements of DT on C take the direct path: an
 * intracommunicator, contiguous data, at most LMPI_COLL_SHORT bytes. */
bool lmpi_coll_short_ok(const lmpi_comm *c, MPI_Count count, const lmpi_datatype *dt);
/* The tag of C's next message step (the collective context): one of the
 * current call's block (calls.h). */
int lmpi_coll_short_tag(lmpi_comm *c);
/* The size and layout test alone. */
bool lmpi_coll_short_fits(MPI_Count count, const lmpi_datatype *dt);
/* The same for BYTES whatever their type (allgather and alltoall, whose
 * members may pass different types of one signature). */
bool lmpi_coll_short_fits_bytes(MPI_Count bytes);
lmpi_status lmpi_coll_short_barrier(lmpi_comm *c);
/* MISMATCHED: the root already found counts that differ (coll/node.c); its
 * tree then gets a message no member can take for a match. */
lmpi_status lmpi_coll_short_bcast(void *buf, MPI_Count count, lmpi_datatype *dt, int root, lmpi_comm *c,
                                  bool mismatched);
/* BYTES from FROM to TO (nothing when they are the same rank); every
 * member calls it, as it takes one collective sequence number. */
lmpi_status lmpi_coll_short_handoff(void *buf, size_t bytes, int from, int to, lmpi_comm *c);
/* OP must be commutative. */
lmpi_status lmpi_coll_short_reduce(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, lmpi_op *op,
                                   int root, lmpi_comm *c);
lmpi_status lmpi_coll_short_allreduce(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, lmpi_op *op,
                                      lmpi_comm *c);
/* BYTES per rank, contiguous at both ends; MINE NULL: in place. */
lmpi_status lmpi_coll_short_allgather(const void *mine, char *all, size_t bytes, lmpi_comm *c);
/* BYTES per pair of ranks, contiguous, not in place, at most
 * LMPI_COLL_SHORT_ALLTOALL_MAX ranks. */
#define LMPI_COLL_SHORT_ALLTOALL_MAX 8
lmpi_status lmpi_coll_short_alltoall(const char *out, char *in, size_t bytes, lmpi_comm *c);

#endif
