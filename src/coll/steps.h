/* Shared by the collective algorithms (coll.c, inter.c): buffer helpers and
 * the step builders each of them reuses. */
#ifndef LMPI_COLL_STEPS_H
#define LMPI_COLL_STEPS_H

#include "coll/sched.h"

#define IN_PLACE(p) ((const void *)(p) == MPI_IN_PLACE)
#define TRY(x) LMPI_TRY(x)

static inline char *at(const void *buf, MPI_Count index, const lmpi_datatype *dt)
{
    return (char *)buf + index * dt->extent;
}

/* Scratch space for count elements of dt, laid out as dt lays them out. */
static inline void *scratch_for(lmpi_sched *s, MPI_Count count, const lmpi_datatype *dt)
{
    MPI_Aint span = count ? (MPI_Aint)(count - 1) * dt->extent + dt->true_extent : 0;
    char *p = lmpi_sched_scratch(s, (size_t)span + 1);
    return p ? p - dt->true_lb : NULL;
}

/* Run BUILD's steps on COMM, an internal communicator of the schedule's
 * (an intercommunicator's local group, the node or node-roots
 * communicator), then close the round. */
#define ON_COMM(s, comm, build)                \
    do {                                       \
        lmpi_sched_use_comm((s), (comm));      \
        lmpi_status ost_ = (build);            \
        if (ost_ == LMPI_OK)                   \
            ost_ = lmpi_sched_fence(s);        \
        lmpi_sched_use_comm((s), NULL);        \
        if (ost_ != LMPI_OK)                   \
            return ost_;                       \
    } while (0)

typedef struct {
    lmpi_iarray counts, displs;
    MPI_Count count; /* when counts.p is NULL: every block is count, at i * count */
} blocks;

static inline MPI_Count block_count(const blocks *b, int i)
{
    return b->counts.p ? lmpi_iarray_get(b->counts, (size_t)i) : b->count;
}

static inline MPI_Count block_displ(const blocks *b, int i)
{
    return b->counts.p ? lmpi_iarray_get(b->displs, (size_t)i) : (MPI_Count)i * b->count;
}

/* Intracommunicator builders (coll.c), also used on internal communicators
 * (lmpi_sched_use_comm). */
lmpi_status lmpi_coll_bcast_steps(lmpi_sched *s, lmpi_comm *c, void *buf, MPI_Count count, lmpi_datatype *dt,
                                  int root);
lmpi_status lmpi_coll_reduce_steps(lmpi_sched *s, lmpi_comm *c, const void *sendbuf, void *recvbuf, MPI_Count count,
                                   lmpi_datatype *dt, lmpi_op *op, int root);
lmpi_status lmpi_coll_gather_steps(lmpi_sched *s, lmpi_comm *c, const void *sbuf, MPI_Count scount,
                                   lmpi_datatype *sdt, void *rbuf, const blocks *rb, lmpi_datatype *rdt, int root);
lmpi_status lmpi_coll_scatter_steps(lmpi_sched *s, lmpi_comm *c, const void *sbuf, const blocks *sb,
                                    lmpi_datatype *sdt, void *rbuf, MPI_Count rcount, lmpi_datatype *rdt, int root);
lmpi_status lmpi_coll_barrier_steps(lmpi_sched *s, lmpi_comm *c);
/* Non-powers of two (algos.c): ranks below 2 * rem pair up, the odd one of
 * each pair carries on with both contributions (*NEWRANK, -1 for the even
 * one), and hands the result back at the end. */
lmpi_status lmpi_coll_fold_in(lmpi_sched *s, lmpi_comm *c, void *acc, void *tmp, MPI_Count count, lmpi_datatype *dt,
                              lmpi_op *op, int rem, int *newrank);
lmpi_status lmpi_coll_fold_out(lmpi_sched *s, lmpi_comm *c, void *acc, MPI_Count count, lmpi_datatype *dt, int rem);
/* Recursive doubling; commutative operations. */
lmpi_status lmpi_coll_allreduce_rd_steps(lmpi_sched *s, lmpi_comm *c, const void *sbuf, void *rbuf, MPI_Count count,
                                         lmpi_datatype *dt, lmpi_op *op);

/* Intercommunicator algorithms (inter.c): ROOT is MPI_ROOT at the root,
 * MPI_PROC_NULL in the rest of its group, the root's rank in the other. */
lmpi_status lmpi_coll_inter_barrier(lmpi_sched *s, lmpi_comm *c);
lmpi_status lmpi_coll_inter_bcast(lmpi_sched *s, lmpi_comm *c, void *buf, MPI_Count count, lmpi_datatype *dt,
                                  int root);
lmpi_status lmpi_coll_inter_reduce(lmpi_sched *s, lmpi_comm *c, const void *sbuf, void *rbuf, MPI_Count count,
                                   lmpi_datatype *dt, lmpi_op *op, int root);
lmpi_status lmpi_coll_inter_allreduce(lmpi_sched *s, lmpi_comm *c, const void *sbuf, void *rbuf, MPI_Count count,
                                      lmpi_datatype *dt, lmpi_op *op);
lmpi_status lmpi_coll_inter_gather(lmpi_sched *s, lmpi_comm *c, const void *sbuf, MPI_Count scount,
                                   lmpi_datatype *sdt, void *rbuf, const blocks *rb, lmpi_datatype *rdt, int root);
lmpi_status lmpi_coll_inter_scatter(lmpi_sched *s, lmpi_comm *c, const void *sbuf, const blocks *sb,
                                    lmpi_datatype *sdt, void *rbuf, MPI_Count rcount, lmpi_datatype *rdt, int root);
lmpi_status lmpi_coll_inter_allgather(lmpi_sched *s, lmpi_comm *c, const void *sbuf, MPI_Count scount,
                                      lmpi_datatype *sdt, void *rbuf, const blocks *rb, lmpi_datatype *rdt);
lmpi_status lmpi_coll_inter_alltoall(lmpi_sched *s, lmpi_comm *c, const void *sbuf, const blocks *sb,
                                     lmpi_datatype *sdt, void *rbuf, const blocks *rb, lmpi_datatype *rdt);
lmpi_status lmpi_coll_inter_reduce_scatter(lmpi_sched *s, lmpi_comm *c, const void *sbuf, void *rbuf,
                                           const blocks *rb, lmpi_datatype *dt, lmpi_op *op);

#endif
