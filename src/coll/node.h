/* Node-aware collectives (node.c). */
#ifndef LMPI_COLL_NODE_H
#define LMPI_COLL_NODE_H

#include "coll/steps.h"

/* *USE: whether C's collectives go node-aware (the same answer on every
 * member); NODE and ROOTS get its internal communicators.  _aware counts
 * the collective that asks in MPI_T (lmpi_coll_node_aware). */
lmpi_status lmpi_coll_node_layout(lmpi_comm *c, lmpi_comm **node, lmpi_comm **roots, bool *use);
lmpi_status lmpi_coll_node_aware(lmpi_comm *c, lmpi_comm **node, lmpi_comm **roots, bool *use);
lmpi_status lmpi_coll_node_barrier(lmpi_sched *s, lmpi_comm *node, lmpi_comm *roots);
lmpi_status lmpi_coll_node_allreduce(lmpi_sched *s, lmpi_comm *node, lmpi_comm *roots, const void *sbuf, void *rbuf,
                                     MPI_Count count, lmpi_datatype *dt, lmpi_op *op);
lmpi_status lmpi_coll_node_bcast(lmpi_sched *s, lmpi_comm *c, lmpi_comm *node, lmpi_comm *roots, void *buf,
                                 MPI_Count count, lmpi_datatype *dt, int root);
lmpi_status lmpi_coll_node_reduce(lmpi_sched *s, lmpi_comm *c, lmpi_comm *node, lmpi_comm *roots, const void *sbuf,
                                  void *rbuf, MPI_Count count, lmpi_datatype *dt, lmpi_op *op, int root);
/* Blocking, small (the short path on each phase). */
lmpi_status lmpi_coll_node_short_barrier(lmpi_comm *node, lmpi_comm *roots);
lmpi_status lmpi_coll_node_short_allreduce(lmpi_comm *node, lmpi_comm *roots, const void *sbuf, void *rbuf,
                                           MPI_Count count, lmpi_datatype *dt, lmpi_op *op);
lmpi_status lmpi_coll_node_short_bcast(lmpi_comm *c, lmpi_comm *node, lmpi_comm *roots, void *buf, MPI_Count count,
                                       lmpi_datatype *dt, int root);
/* OP commutative (as for the schedule). */
lmpi_status lmpi_coll_node_short_reduce(lmpi_comm *c, lmpi_comm *node, lmpi_comm *roots, const void *sbuf,
                                        void *rbuf, MPI_Count count, lmpi_datatype *dt, lmpi_op *op, int root);

#endif
