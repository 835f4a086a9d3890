/* Node-aware collectives: an intra-node phase on the communicator's internal
 * node communicator (its ranks on this node, over the shared-memory
 * transport), an inter-node phase among one leader per node (the node-roots
 * communicator), and a second intra-node phase.  Only one message per node
 * pair crosses between nodes.  Used when the communicator spans several
 * nodes and some node holds more than one of its ranks (LMPI_COLL_NODE_AWARE;
 * nodes are real hosts, LMPI_NODE_SIZE blocks or mpiexec's virtual nodes).
 * Reductions need commutative operations: the node grouping does not keep
 * rank order. */
#include <string.h>

#include "coll/node.h"
#include "coll/shmcoll.h"
#include "coll/short.h"
#include "runtime/config.h"

/* Every member reaches the same answer: it depends on the node layout of
 * the communicator only. */
lmpi_status lmpi_coll_node_layout(lmpi_comm *c, lmpi_comm **node, lmpi_comm **roots, bool *use)
{
    *use = false;
    if (!lmpi_config.coll_node_aware || c->is_inter || (c->flags & LMPI_COMM_INTERNAL) || c->size < 3)
        return LMPI_OK;
    lmpi_status st = lmpi_comm_node_comms(c, node, roots);
    if (st != LMPI_OK)
        return st;
    *use = c->nnodes > 1 && c->nnodes < c->size;
    return LMPI_OK;
}

lmpi_status lmpi_coll_node_aware(lmpi_comm *c, lmpi_comm **node, lmpi_comm **roots, bool *use)
{
    TRY(lmpi_coll_node_layout(c, node, roots, use));
    lmpi_coll_stat.node_aware += *use;
    return LMPI_OK;
}

/* The leader (first rank) of ROOT's node in C, and that node's rank in the
 * node-roots communicator (nodes in order of their first rank). */
static lmpi_status root_node(lmpi_comm *c, int root, int *leader, int *roots_rank)
{
    const lmpi_rankmap *m = lmpi_comm_local_map(c);
    /* on the stack for up to 4096 nodes: this runs in every small node-aware
     * bcast and reduce */
    uint8_t local[4096];
    size_t nn = (size_t)lmpi_comm_node_bound(m);
    uint8_t *seen = nn <= sizeof(local) ? memset(local, 0, nn) : lmpi_calloc(nn, 1, LMPI_MEM_COLL);
    if (!seen)
        return LMPI_ERR_NO_MEM;
    int target = lmpi_comm_node_of(m, root);
    *roots_rank = 0;
    for (int r = 0; r <= root; r++) {
        int nd = lmpi_comm_node_of(m, r);
        if (nd == target) {
            *leader = r;
            break;
        }
        if (!seen[nd])
            (*roots_rank)++;
        seen[nd] = 1;
    }
    if (seen != local)
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
/* The node phases go through the node communicator's shared-memory area
 * when it has one, else through messages; the node-roots phase is the same
 * either way, so nodes may differ (one whose pool was full uses messages). */
static lmpi_status node_gather(const void *sbuf, void *acc, MPI_Count count, lmpi_datatype *dt, lmpi_op *op,
                               lmpi_comm *node)
{
    if (lmpi_coll_shm_use(node, count, dt))
        return lmpi_coll_shm_gather(sbuf, acc, count, dt, op, 0, node);
    return op ? lmpi_coll_short_reduce(sbuf, acc, count, dt, op, 0, node) : lmpi_coll_short_barrier(node);
}

static lmpi_status node_release(void *buf, MPI_Count count, lmpi_datatype *dt, lmpi_comm *node, bool mismatched)
{
    return lmpi_coll_shm_use(node, count, dt) ? lmpi_coll_shm_release(buf, count, dt, 0, node, mismatched)
                                              : lmpi_coll_short_bcast(buf, count, dt, 0, node, mismatched);
}

/* Counts that differ from the root's (an erroneous program): the phase
 * that found them goes on, so that nobody waits forever. */
static bool counts_differ(lmpi_status st) { return st == LMPI_ERR_TRUNCATE || st == LMPI_ERR_COUNT; }

lmpi_status lmpi_coll_node_short_barrier(lmpi_comm *node, lmpi_comm *roots)
{
    lmpi_datatype *byte = lmpi_datatype_from_handle(MPI_BYTE);
    TRY(node_gather(NULL, NULL, 0, byte, NULL, node));
    if (roots)
        TRY(lmpi_coll_short_barrier(roots));
    return node_release(NULL, 0, byte, node, false);
}

lmpi_status lmpi_coll_node_short_allreduce(lmpi_comm *node, lmpi_comm *roots, const void *sbuf, void *rbuf,
                                           MPI_Count count, lmpi_datatype *dt, lmpi_op *op)
{
    TRY(node_gather(sbuf, rbuf, count, dt, op, node));
    if (roots)
        TRY(lmpi_coll_short_allreduce(MPI_IN_PLACE, rbuf, count, dt, op, roots));
    return node_release(rbuf, count, dt, node, false);
}

lmpi_status lmpi_coll_node_short_bcast(lmpi_comm *c, lmpi_comm *node, lmpi_comm *roots, void *buf, MPI_Count count,
                                       lmpi_datatype *dt, int root)
{
    int leader, rroot;
    TRY(root_node(c, root, &leader, &rroot));
    TRY(lmpi_coll_short_handoff((char *)lmpi_dt_contig_ptr(buf, dt), (size_t)(count * dt->size), root, leader, c));
    lmpi_status st = roots ? lmpi_coll_short_bcast(buf, count, dt, rroot, roots, false) : LMPI_OK;
    if (st != LMPI_OK && !counts_differ(st))
        return st;
    lmpi_status st2 = node_release(buf, count, dt, node, st != LMPI_OK);
    return st != LMPI_OK ? st : st2;
}

lmpi_status lmpi_coll_node_short_reduce(lmpi_comm *c, lmpi_comm *node, lmpi_comm *roots, const void *sbuf,
                                        void *rbuf, MPI_Count count, lmpi_datatype *dt, lmpi_op *op, int root)
{
    int leader, rroot;
    TRY(root_node(c, root, &leader, &rroot));
    /* leaders accumulate on the stack (only the root's rbuf is significant) */
    _Alignas(16) char acc[LMPI_COLL_SHORT_MAX];
    void *tacc = acc - dt->true_lb;
    const void *mine = IN_PLACE(sbuf) ? rbuf : sbuf;
    TRY(node_gather(mine, tacc, count, dt, op, node));
    if (roots)
        TRY(lmpi_coll_short_reduce(MPI_IN_PLACE, tacc, count, dt, op, rroot, roots));
    size_t bytes = (size_t)(count * dt->size);
    if (c->rank == root && root == leader)
        memcpy((char *)lmpi_dt_contig_ptr(rbuf, dt), acc, bytes);
    return lmpi_coll_short_handoff(c->rank == root ? (char *)lmpi_dt_contig_ptr(rbuf, dt) : acc, bytes, leader, root,
                                   c);
}
