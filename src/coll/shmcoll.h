/* Small blocking collectives through a shared-memory area of the
 * communicator (shmcoll.c): every member writes its contribution into its
 * slot; a root combines them in rank order and publishes the result in one
 * buffer that the others copy out (reduce, bcast, the node phases), or
 * every member reads every slot itself (barrier, allreduce, allgather,
 * alltoall).  For communicators whose members all
 * share this host's segment: a single-node communicator, or the node phase
 * of a node-aware collective. */
#ifndef LMPI_COLL_SHMCOLL_H
#define LMPI_COLL_SHMCOLL_H

#include "coll/op.h"
#include "comm/comm.h"

/* At every blocking collective that may take the area (calls.c), before
 * anything else: the first one on C is collective, C's rank 0 takes an area
 * from the segment's pool and tells the others (offset 0: the pool is full,
 * C keeps using messages; every member learns the same answer).  Only for
 * intracommunicators whose members all share this node.  Waits for
 * nobody: a member learns rank 0's answer at its first use. */
lmpi_status lmpi_coll_shm_prepare(lmpi_comm *c);
/* Whether COUNT elements of DT (contiguous, at most LMPI_COLL_SHORT bytes)
 * take C's area: the same answer at every member that passes the same
 * signature. */
bool lmpi_coll_shm_use(lmpi_comm *c, MPI_Count count, const lmpi_datatype *dt);
/* This member will not take part in C's current call (it failed here). */
void lmpi_coll_shm_skip(lmpi_comm *c);

lmpi_status lmpi_coll_shm_barrier(lmpi_comm *c);
lmpi_status lmpi_coll_shm_bcast(void *buf, MPI_Count count, lmpi_datatype *dt, int root, lmpi_comm *c);
/* Any operation: the combination keeps rank order. */
lmpi_status lmpi_coll_shm_reduce(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, lmpi_op *op,
                                 int root, lmpi_comm *c);
lmpi_status lmpi_coll_shm_allreduce(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, lmpi_op *op,
                                    lmpi_comm *c);
/* Whether C's area takes BYTES per member (the same answer at every
 * member: the bytes of a signature, not its types). */
bool lmpi_coll_shm_fits(lmpi_comm *c, size_t bytes);
/* Blocks of one size (at most a slot per member: all n of them for
 * alltoall); SBUF may be MPI_IN_PLACE. */
lmpi_status lmpi_coll_shm_allgather(const void *sbuf, MPI_Count scount, const lmpi_datatype *sdt, void *rbuf,
                                    MPI_Count rcount, const lmpi_datatype *rdt, lmpi_comm *c);
lmpi_status lmpi_coll_shm_alltoall(const void *sbuf, MPI_Count scount, const lmpi_datatype *sdt, void *rbuf,
                                   MPI_Count rcount, const lmpi_datatype *rdt, lmpi_comm *c);
/* The two halves, for node-aware collectives: everyone's data combined at
 * ROOT (OP NULL: arrival only), and ROOT's data copied to everyone. */
lmpi_status lmpi_coll_shm_gather(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, lmpi_op *op,
                                 int root, lmpi_comm *c);
lmpi_status lmpi_coll_shm_release(void *buf, MPI_Count count, lmpi_datatype *dt, int root, lmpi_comm *c,
                                  bool mismatched);

/* Communicator destruction: drop this member's hold on the area. */
void lmpi_coll_shm_detach(lmpi_comm *c);

#endif
