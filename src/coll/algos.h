/* Size-dependent collective algorithms (algos.c), chosen in coll.c by the
 * LMPI_COLL_* thresholds.  Contiguous data only; the allreduce and
 * reduce_scatter ones need a commutative operation. */
#ifndef LMPI_COLL_ALGOS_H
#define LMPI_COLL_ALGOS_H

#include "coll/steps.h"

lmpi_status lmpi_coll_bcast_sag(lmpi_sched *s, lmpi_comm *c, void *buf, MPI_Count count, lmpi_datatype *dt, int root);
lmpi_status lmpi_coll_allreduce_ring(lmpi_sched *s, lmpi_comm *c, const void *sbuf, void *rbuf, MPI_Count count,
                                     lmpi_datatype *dt, lmpi_op *op);
lmpi_status lmpi_coll_allreduce_rsag(lmpi_sched *s, lmpi_comm *c, const void *sbuf, void *rbuf, MPI_Count count,
                                     lmpi_datatype *dt, lmpi_op *op);
lmpi_status lmpi_coll_allgather_bruck(lmpi_sched *s, lmpi_comm *c, const void *sbuf, MPI_Count scount,
                                      lmpi_datatype *sdt, void *rbuf, MPI_Count rcount, lmpi_datatype *rdt);
lmpi_status lmpi_coll_alltoall_bruck(lmpi_sched *s, lmpi_comm *c, const void *sbuf, MPI_Count scount,
                                     lmpi_datatype *sdt, void *rbuf, MPI_Count rcount, lmpi_datatype *rdt);
lmpi_status lmpi_coll_reduce_scatter_halving(lmpi_sched *s, lmpi_comm *c, const void *sbuf, void *rbuf,
                                             const blocks *rb, lmpi_datatype *dt, lmpi_op *op);

#endif
