#ifndef LMPI_PT2PT_H
#define LMPI_PT2PT_H

#include "runtime/request.h"

/* Byte-level send/receive on an explicit context id (collectives use
 * comm->context_id + 1).  The request completes through progress. */
lmpi_status lmpi_pt2pt_isend(const void *buf, size_t bytes, int dest, int tag, lmpi_comm *comm, uint32_t ctx,
                             lmpi_request **out);
lmpi_status lmpi_pt2pt_irecv(void *buf, size_t bytes, int source, int tag, lmpi_comm *comm, uint32_t ctx,
                             lmpi_request **out);
lmpi_status lmpi_pt2pt_wait_free(lmpi_request *r, MPI_Status *status);
int lmpi_pt2pt_progress_outbox(void);
int lmpi_pt2pt_spin_count(void);
void lmpi_pt2pt_finalize(void);

#endif
