/* Collectives on intercommunicators.  Data flows between the two groups;
 * the rooted ones go through each group's leader (local rank 0) and the
 * local group's own tree (the intracommunicator builders run on local_comm
 * through ON_COMM), the all-to-all kinds exchange directly with
 * every remote rank.  MPI_IN_PLACE is not allowed here (checked by the
 * callers in coll.c). */
#include "coll/steps.h"

/* The two leaders swap their group's data: mine goes out, theirs comes in. */
static lmpi_status leaders_swap(lmpi_sched *s, lmpi_comm *c, const void *mine, MPI_Count scount, void *theirs,
                                MPI_Count rcount, lmpi_datatype *dt)
{
    if (c->rank == 0) {
        TRY(lmpi_sched_send(s, mine, scount, dt, 0));
        TRY(lmpi_sched_recv(s, theirs, rcount, dt, 0));
    }
    return lmpi_sched_fence(s);
}

lmpi_status lmpi_coll_inter_barrier(lmpi_sched *s, lmpi_comm *c)
{
    /* everyone here has arrived, the leaders tell each other, then every
     * member learns that both groups have arrived */
    lmpi_datatype *byte = lmpi_datatype_from_handle(MPI_BYTE);
    ON_COMM(s, c->local_comm, lmpi_coll_barrier_steps(s, c->local_comm));
    TRY(leaders_swap(s, c, NULL, 0, NULL, 0, byte));
    ON_COMM(s, c->local_comm, lmpi_coll_bcast_steps(s, c->local_comm, NULL, 0, byte, 0));
    return LMPI_OK;
}

lmpi_status lmpi_coll_inter_bcast(lmpi_sched *s, lmpi_comm *c, void *buf, MPI_Count count, lmpi_datatype *dt,
                                  int root)
{
    if (root == MPI_PROC_NULL)
        return LMPI_OK;
    if (root == MPI_ROOT) /* to the other group's leader */
        return lmpi_sched_send(s, buf, count, dt, 0);
    if (c->rank == 0) {
        TRY(lmpi_sched_recv(s, buf, count, dt, root));
        TRY(lmpi_sched_fence(s));
    }
    ON_COMM(s, c->local_comm, lmpi_coll_bcast_steps(s, c->local_comm, buf, count, dt, 0));
    return LMPI_OK;
}

lmpi_status lmpi_coll_inter_reduce(lmpi_sched *s, lmpi_comm *c, const void *sbuf, void *rbuf, MPI_Count count,
                                   lmpi_datatype *dt, lmpi_op *op, int root)
{
    if (root == MPI_PROC_NULL)
        return LMPI_OK;
    if (root == MPI_ROOT)
        return lmpi_sched_recv(s, rbuf, count, dt, 0);
    /* the group reduces to its leader in rank order, which sends it on */
    void *acc = scratch_for(s, count, dt);
    if (!acc)
        return LMPI_ERR_NO_MEM;
    ON_COMM(s, c->local_comm, lmpi_coll_reduce_steps(s, c->local_comm, sbuf, acc, count, dt, op, 0));
    if (c->rank == 0)
        TRY(lmpi_sched_send(s, acc, count, dt, root));
    return lmpi_sched_fence(s);
}

lmpi_status lmpi_coll_inter_allreduce(lmpi_sched *s, lmpi_comm *c, const void *sbuf, void *rbuf, MPI_Count count,
                                      lmpi_datatype *dt, lmpi_op *op)
{
    /* each group's reduction goes to the other group */
    void *acc = scratch_for(s, count, dt);
    if (!acc)
        return LMPI_ERR_NO_MEM;
    ON_COMM(s, c->local_comm, lmpi_coll_reduce_steps(s, c->local_comm, sbuf, acc, count, dt, op, 0));
    TRY(leaders_swap(s, c, acc, count, rbuf, count, dt));
    ON_COMM(s, c->local_comm, lmpi_coll_bcast_steps(s, c->local_comm, rbuf, count, dt, 0));
    return LMPI_OK;
}

lmpi_status lmpi_coll_inter_gather(lmpi_sched *s, lmpi_comm *c, const void *sbuf, MPI_Count scount,
                                   lmpi_datatype *sdt, void *rbuf, const blocks *rb, lmpi_datatype *rdt, int root)
{
    if (root == MPI_PROC_NULL)
        return LMPI_OK;
    if (root != MPI_ROOT)
        return lmpi_sched_send(s, sbuf, scount, sdt, root);
    for (int i = 0; i < c->peer_size; i++)
        TRY(lmpi_sched_recv(s, at(rbuf, block_displ(rb, i), rdt), block_count(rb, i), rdt, i));
    return lmpi_sched_fence(s);
}

lmpi_status lmpi_coll_inter_scatter(lmpi_sched *s, lmpi_comm *c, const void *sbuf, const blocks *sb,
                                    lmpi_datatype *sdt, void *rbuf, MPI_Count rcount, lmpi_datatype *rdt, int root)
{
    if (root == MPI_PROC_NULL)
        return LMPI_OK;
    if (root != MPI_ROOT)
        return lmpi_sched_recv(s, rbuf, rcount, rdt, root);
    for (int i = 0; i < c->peer_size; i++)
        TRY(lmpi_sched_send(s, at(sbuf, block_displ(sb, i), sdt), block_count(sb, i), sdt, i));
    return lmpi_sched_fence(s);
}

lmpi_status lmpi_coll_inter_allgather(lmpi_sched *s, lmpi_comm *c, const void *sbuf, MPI_Count scount,
                                      lmpi_datatype *sdt, void *rbuf, const blocks *rb, lmpi_datatype *rdt)
{
    /* my contribution to every remote rank; theirs into their blocks;
     * started at my own rank so that not everyone sends to rank 0 first */
    int n = c->peer_size;
    for (int k = 0; k < n; k++) {
        int i = (c->rank + k) % n;
        TRY(lmpi_sched_send(s, sbuf, scount, sdt, i));
        TRY(lmpi_sched_recv(s, at(rbuf, block_displ(rb, i), rdt), block_count(rb, i), rdt, i));
    }
    return lmpi_sched_fence(s);
}

lmpi_status lmpi_coll_inter_alltoall(lmpi_sched *s, lmpi_comm *c, const void *sbuf, const blocks *sb,
                                     lmpi_datatype *sdt, void *rbuf, const blocks *rb, lmpi_datatype *rdt)
{
    int n = c->peer_size;
    for (int k = 0; k < n; k++) {
        int i = (c->rank + k) % n;
        TRY(lmpi_sched_send(s, at(sbuf, block_displ(sb, i), sdt), block_count(sb, i), sdt, i));
        TRY(lmpi_sched_recv(s, at(rbuf, block_displ(rb, i), rdt), block_count(rb, i), rdt, i));
    }
    return lmpi_sched_fence(s);
}

/* The reduction of one group's vectors is scattered over the other group
 * (MPI 5.0 §6.10): both groups' vectors have the same length, the sum of
 * the receive counts of either group. */
lmpi_status lmpi_coll_inter_reduce_scatter(lmpi_sched *s, lmpi_comm *c, const void *sbuf, void *rbuf,
                                           const blocks *rb, lmpi_datatype *dt, lmpi_op *op)
{
    int n = c->size;
    MPI_Count total = 0;
    for (int i = 0; i < n; i++)
        total += block_count(rb, i);
    void *acc = scratch_for(s, total, dt), *theirs = scratch_for(s, total, dt);
    MPI_Count *displs = lmpi_sched_scratch(s, sizeof(MPI_Count) * (size_t)n);
    if (!acc || !theirs || !displs)
        return LMPI_ERR_NO_MEM;
    blocks packed = *rb;
    MPI_Count off = 0;
    for (int i = 0; i < n; i++) {
        displs[i] = off;
        off += block_count(rb, i);
    }
    if (rb->counts.p)
        packed.displs = (lmpi_iarray){displs, 8};
    ON_COMM(s, c->local_comm, lmpi_coll_reduce_steps(s, c->local_comm, sbuf, acc, total, dt, op, 0));
    TRY(leaders_swap(s, c, acc, total, theirs, total, dt));
    ON_COMM(s, c->local_comm,
            lmpi_coll_scatter_steps(s, c->local_comm, theirs, &packed, dt, rbuf, block_count(rb, c->rank), dt, 0));
    return LMPI_OK;
}
