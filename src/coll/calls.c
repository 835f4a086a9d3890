/* Call numbers: every member of a communicator numbers its collective calls
 * alike, whether a call ran, failed its argument checks at this member
 * only (MPI_ERRORS_RETURN), or took another path than elsewhere (a bad
 * count here chose no path at all).  So one rank's failed collective leaves
 * the communicator usable: the next call lines up everywhere.
 *
 * Blocking call number N owns a block of LMPI_COLL_CALL_TAGS tags of the
 * collective sequence, whatever path takes them (short.c, schedules, the
 * area's first bcast, the hand-off of a node-aware bcast); the shared-memory
 * areas of the communicator and of its node communicator stamp N itself
 * (shmcoll.c), and the node and node-roots communicators take their tags
 * from the same block.  Nonblocking calls take one number of their own
 * sequence each (sched.c).
 *
 * Paths chosen by the data size stay local decisions; what every member
 * must do alike happens here, before the arguments matter: the collective
 * attach of the areas at the first call that could use them. */
#include "coll/calls.h"
#include "coll/node.h"
#include "coll/shmcoll.h"
#include "runtime/lmpi.h"

_Thread_local bool lmpi_coll_counted;

/* Temporary communicators of comm creation use one fixed tag throughout. */
static bool numbered(const lmpi_comm *c) { return !(c->flags & LMPI_COMM_FIXED_TAG); }

static lmpi_status prepare_areas(lmpi_comm *c, uint32_t base)
{
    if (c->is_inter)
        return LMPI_OK;
    lmpi_comm *node, *roots;
    bool node_aware;
    LMPI_TRY(lmpi_coll_node_layout(c, &node, &roots, &node_aware));
    if (!node_aware)
        return lmpi_coll_shm_prepare(c);
    node->coll_seq = base;
    node->coll_calls = c->coll_calls;
    if (roots) {
        roots->coll_seq = base;
        roots->coll_calls = c->coll_calls;
    }
    return lmpi_coll_shm_prepare(node);
}

lmpi_status lmpi_coll_call_begin(lmpi_comm *c, lmpi_coll_kind kind, uint32_t *base)
{
    lmpi_coll_counted = true;
    if (numbered(c))
        c->coll_seq = (c->coll_seq + LMPI_COLL_CALL_TAGS - 1) & ~(LMPI_COLL_CALL_TAGS - 1);
    *base = c->coll_seq;
    c->coll_calls++;
    return kind == LMPI_COLL_AREA ? prepare_areas(c, *base) : LMPI_OK;
}

void lmpi_coll_call_end(lmpi_comm *c, uint32_t base)
{
    if (numbered(c))
        c->coll_seq = base + LMPI_COLL_CALL_TAGS;
}

void lmpi_coll_call_skip(lmpi_comm *c, lmpi_coll_kind kind)
{
    if (kind == LMPI_COLL_NONBLOCKING) {
        c->nbc_seq++;
        return;
    }
    int locked = lmpi_lock_enter();
    uint32_t base;
    /* rank 0 still hands out the areas; the others take theirs later */
    (void)lmpi_coll_call_begin(c, kind, &base);
    if (kind == LMPI_COLL_AREA && !c->is_inter) {
        lmpi_coll_shm_skip(c);
        if (c->node_built && c->node && c->node != c)
            lmpi_coll_shm_skip(c->node);
    }
    lmpi_coll_call_end(c, base);
    lmpi_lock_leave(locked);
}
