/* Node-aware collectives: an intra-node phase on the communicator's internal
 * node communicator (its ranks on this node, over the shared-memory
 * transport), an inter-node phase among one leader per node (the node-roots
 * communicator), and a second intra-node phase.  Only one message per node
 * pair crosses between nodes.  Used when the communicator spans several
 * nodes and some node holds more than one of its ranks (LMPI_COLL_NODE_AWARE;
 * nodes are real hosts, LMPI_NODE_SIZE blocks or mpiexec's virtual nodes).
 * Reductions need commutative operations: the node grouping does not keep
 * rank order. */
#include "coll/node.h"
#include "coll/short.h"
#include "runtime/config.h"

/* Every member reaches the same answer: it depends on the node layout of
 * the communicator only. */
lmpi_status lmpi_coll_node_aware(lmpi_comm *c, lmpi_comm **node, lmpi_comm **roots, bool *use)
{
    *use = false;
    if (!lmpi_config.coll_node_aware || c->is_inter || (c->flags & LMPI_COMM_INTERNAL) || c->size < 3)
        return LMPI_OK;
    lmpi_status st = lmpi_comm_node_comms(c, node, roots);
    if (st != LMPI_OK)
        return st;
    *use = c->nnodes > 1 && c->nnodes < c->size;
    lmpi_coll_stat.node_aware += *use;
    return LMPI_OK;
}

/* The leader (first rank) of ROOT's node in C, and that node's rank in the
 * node-roots communicator (nodes in order of their first rank). */
static lmpi_status root_node(lmpi_comm *c, int root, int *leader, int *roots_rank)
{
    const lmpi_av *av = lmpi_av_world();
    const lmpi_rankmap *m = lmpi_comm_local_map(c);
    uint8_t *seen = lmpi_calloc((size_t)av->nodes.nnodes + 1, 1, LMPI_MEM_COLL);
    if (!seen)
        return LMPI_ERR_NO_MEM;
    int target = lmpi_nodemap_node(&av->nodes, lmpi_rankmap_lpid(m, root));
    *roots_rank = 0;
    for (int r = 0; r <= root; r++) {
        int nd = lmpi_nodemap_node(&av->nodes, lmpi_rankmap_lpid(m, r));
        if (nd == target) {
            *leader = r;
            break;
        }
        if (!seen[nd])
            (*roots_rank)++;
        seen[nd] = 1;
    }
    lmpi_free(seen);
    return LMPI_OK;
}

/* ---- schedules ------------------------------------------------------------- */

lmpi_status lmpi_coll_node_barrier(lmpi_sched *s, lmpi_comm *node, lmpi_comm *roots)
{
    lmpi_datatype *byte = lmpi_datatype_from_handle(MPI_BYTE);
    ON_COMM(s, node, lmpi_coll_barrier_steps(s, node));
    if (roots)
        ON_COMM(s, roots, lmpi_coll_barrier_steps(s, roots));
    ON_COMM(s, node, lmpi_coll_bcast_steps(s, node, NULL, 0, byte, 0));
    return LMPI_OK;
}

lmpi_status lmpi_coll_node_allreduce(lmpi_sched *s, lmpi_comm *node, lmpi_comm *roots, const void *sbuf, void *rbuf,
                                     MPI_Count count, lmpi_datatype *dt, lmpi_op *op)
{
    ON_COMM(s, node, lmpi_coll_reduce_steps(s, node, sbuf, rbuf, count, dt, op, 0));
    if (roots)
        ON_COMM(s, roots, lmpi_coll_allreduce_rd_steps(s, roots, MPI_IN_PLACE, rbuf, count, dt, op));
    ON_COMM(s, node, lmpi_coll_bcast_steps(s, node, rbuf, count, dt, 0));
    return LMPI_OK;
}

lmpi_status lmpi_coll_node_bcast(lmpi_sched *s, lmpi_comm *c, lmpi_comm *node, lmpi_comm *roots, void *buf,
                                 MPI_Count count, lmpi_datatype *dt, int root)
{
    int leader, rroot;
    TRY(root_node(c, root, &leader, &rroot));
    if (root != leader) { /* the root hands the data to its node's leader first */
        if (c->rank == root)
            TRY(lmpi_sched_send(s, buf, count, dt, leader));
        if (c->rank == leader)
            TRY(lmpi_sched_recv(s, buf, count, dt, root));
        TRY(lmpi_sched_fence(s));
    }
    if (roots)
        ON_COMM(s, roots, lmpi_coll_bcast_steps(s, roots, buf, count, dt, rroot));
    ON_COMM(s, node, lmpi_coll_bcast_steps(s, node, buf, count, dt, 0));
    return LMPI_OK;
}

lmpi_status lmpi_coll_node_reduce(lmpi_sched *s, lmpi_comm *c, lmpi_comm *node, lmpi_comm *roots, const void *sbuf,
                                  void *rbuf, MPI_Count count, lmpi_datatype *dt, lmpi_op *op, int root)
{
    int leader, rroot;
    TRY(root_node(c, root, &leader, &rroot));
    /* leaders accumulate in scratch (only the root's buffer is significant) */
    void *acc = scratch_for(s, count, dt);
    if (!acc)
        return LMPI_ERR_NO_MEM;
    const void *mine = IN_PLACE(sbuf) ? rbuf : sbuf;
    ON_COMM(s, node, lmpi_coll_reduce_steps(s, node, mine, acc, count, dt, op, 0));
    if (roots)
        ON_COMM(s, roots, lmpi_coll_reduce_steps(s, roots, MPI_IN_PLACE, acc, count, dt, op, rroot));
    if (c->rank == leader && root != leader)
        TRY(lmpi_sched_send(s, acc, count, dt, root));
    if (c->rank == root)
        TRY(root == leader ? lmpi_sched_copy(s, acc, count, dt, rbuf, count, dt)
                           : lmpi_sched_recv(s, rbuf, count, dt, leader));
    return lmpi_sched_fence(s);
}

/* ---- blocking, small: the short path on each phase ---------------------------- */
lmpi_status lmpi_coll_node_short_barrier(lmpi_comm *node, lmpi_comm *roots)
{
    TRY(lmpi_coll_short_barrier(node));
    if (roots)
        TRY(lmpi_coll_short_barrier(roots));
    return lmpi_coll_short_bcast(NULL, 0, lmpi_datatype_from_handle(MPI_BYTE), 0, node);
}

lmpi_status lmpi_coll_node_short_allreduce(lmpi_comm *node, lmpi_comm *roots, const void *sbuf, void *rbuf,
                                           MPI_Count count, lmpi_datatype *dt, lmpi_op *op)
{
    TRY(lmpi_coll_short_reduce(sbuf, rbuf, count, dt, op, 0, node));
    if (roots)
        TRY(lmpi_coll_short_allreduce(MPI_IN_PLACE, rbuf, count, dt, op, roots));
    return lmpi_coll_short_bcast(rbuf, count, dt, 0, node);
}
