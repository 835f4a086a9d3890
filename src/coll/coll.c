/* Collective operations on intracommunicators, each built as a schedule
 * (src/coll/sched.c): the blocking call runs it, the I-form returns it as a
 * request advanced by Test/Wait.  Algorithms of this first version:
 * binomial broadcast and reduction (rank-ordered for non-commutative
 * operations), reduce + broadcast allreduce, linear gather/scatter, ring
 * allgather, pairwise alltoall, chain scan. */
#include <string.h>

#include "binding/check.h"
#include "binding/gen/impl.h"
#include "coll/algos.h"
#include "coll/calls.h"
#include "coll/node.h"
#include "coll/shmcoll.h"
#include "coll/short.h"
#include "coll/steps.h"
#include "runtime/config.h"

/* Intercommunicators take no MPI_IN_PLACE (MPI 5.0 §6.2.3). */
static lmpi_status no_in_place(const lmpi_comm *comm, const void *sbuf, const void *rbuf)
{
    if (comm->is_inter && (IN_PLACE(sbuf) || IN_PLACE(rbuf))) {
        lmpi_err_detail("MPI_IN_PLACE is not allowed on an intercommunicator");
        return LMPI_ERR_BUFFER;
    }
    return LMPI_OK;
}

/* The send buffer passed again as the receive block this rank's own data
 * would fill: erroneous (the standard asks for MPI_IN_PLACE there), and a
 * copy between overlapping buffers.  MPICH refuses it the same way; one
 * pointer comparison.  (MPI_BOTTOM on both sides is not an alias.) */
static lmpi_status not_aliased(const lmpi_comm *comm, const void *out, const void *in_block, MPI_Count count,
                               const char *out_name, const char *in_name)
{
    if (comm->is_inter || count <= 0 || !out || out != in_block || IN_PLACE(out))
        return LMPI_OK;
    lmpi_err_detail("%s is also %s, where this rank's own block goes (pass MPI_IN_PLACE instead)", out_name, in_name);
    return LMPI_ERR_BUFFER;
}

/* (intracommunicators only: the block arguments index this rank's entry,
 * which an intercommunicator's arrays, sized by the remote group, may lack) */
#define NOT_ALIASED(comm, sbuf, rblock, count)                                          \
    do {                                                                                \
        if (!(comm)->is_inter)                                                          \
            TRY(not_aliased(comm, sbuf, rblock, count, "sendbuf", "recvbuf"));         \
    } while (0)

/* The root of a rooted collective: on an intercommunicator the process
 * that passes MPI_ROOT. */
static bool is_root(const lmpi_comm *comm, int root)
{
    return comm->is_inter ? root == MPI_ROOT : comm->rank == root;
}

/* A process that contributes to (or receives from) the root: on an
 * intercommunicator the other group, which names the root's rank. */
static bool is_leaf(const lmpi_comm *comm, int root)
{
    return comm->is_inter ? root >= 0 : comm->rank != root;
}

/* A datatype the binding let through as possibly insignificant: where it
 * matters it must be a committed type. */
static lmpi_status need_type(const lmpi_datatype *dt, const char *what)
{
    if (!dt) {
        lmpi_err_detail("%s is not a datatype (it is significant here)", what);
        return LMPI_ERR_TYPE;
    }
    if (!dt->committed) {
        lmpi_err_detail("%s is not committed", what);
        return LMPI_ERR_TYPE;
    }
    return LMPI_OK;
}

/* A count and a datatype that are significant at this rank. */
static lmpi_status need_block(MPI_Count count, const lmpi_datatype *dt, const char *count_what, const char *dt_what)
{
    if (count < 0) {
        lmpi_err_detail("%s %lld is negative", count_what, (long long)count);
        return LMPI_ERR_COUNT;
    }
    TRY(need_type(dt, dt_what));
    if (lmpi_dt_count_overflows(count, dt)) {
        lmpi_err_detail("%s %lld of a type of %lld bytes (extent %lld) overflows MPI_Count", count_what,
                        (long long)count, (long long)dt->size, (long long)dt->extent);
        return LMPI_ERR_COUNT;
    }
    return LMPI_OK;
}

/* Allgather and alltoall: the receive block matters everywhere, the send
 * block unless the send buffer is MPI_IN_PLACE (intracommunicators only).
 * Counts of the v/w forms are arrays: scount/rcount 0 then. */
static lmpi_status all_types(const lmpi_comm *comm, const void *sbuf, MPI_Count scount, const lmpi_datatype *sdt,
                             const void *rbuf, MPI_Count rcount, const lmpi_datatype *rdt)
{
    TRY(need_block(rcount, rdt, "recvcount", "recvtype"));
    if (!IN_PLACE(sbuf))
        TRY(need_block(scount, sdt, "sendcount", "sendtype"));
    return no_in_place(comm, sbuf, rbuf);
}

/* Gather and scatter: the root's whole-buffer block (the receive block of a
 * gather, the send block of a scatter) matters at the root only; the
 * per-process block everywhere else, and at an intracommunicator root
 * unless its own block is MPI_IN_PLACE (block_buf).  On an
 * intercommunicator the root group's other ranks (MPI_PROC_NULL) pass
 * nothing significant. */
static lmpi_status rooted_types(const lmpi_comm *comm, int root, bool root_sends, MPI_Count root_count,
                                const lmpi_datatype *root_dt, MPI_Count block_count, const lmpi_datatype *block_dt,
                                const void *block_buf)
{
    if (is_root(comm, root))
        TRY(need_block(root_count, root_dt, root_sends ? "sendcount" : "recvcount", root_sends ? "sendtype" : "recvtype"));
    if (is_leaf(comm, root) || (!comm->is_inter && !IN_PLACE(block_buf)))
        TRY(need_block(block_count, block_dt, root_sends ? "recvcount" : "sendcount", root_sends ? "recvtype" : "sendtype"));
    return LMPI_OK;
}

/* ---- broadcast: binomial tree ------------------------------------------------------ */
lmpi_status lmpi_coll_bcast_steps(lmpi_sched *s, lmpi_comm *c, void *buf, MPI_Count count, lmpi_datatype *dt, int root)
{
    int n = c->size, rel = (c->rank - root + n) % n, mask = 1;
    while (mask < n) {
        if (rel & mask) {
            TRY(lmpi_sched_recv(s, buf, count, dt, (rel - mask + root) % n));
            break;
        }
        mask <<= 1;
    }
    TRY(lmpi_sched_fence(s));
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rel + mask < n)
            TRY(lmpi_sched_send(s, buf, count, dt, (rel + mask + root) % n));
    return lmpi_sched_fence(s);
}

/* ---- reduction to root: binomial; rank order kept for non-commutative ops -------- */
lmpi_status lmpi_coll_reduce_steps(lmpi_sched *s, lmpi_comm *c, const void *sendbuf, void *recvbuf, MPI_Count count,
                                   lmpi_datatype *dt, lmpi_op *op, int root)
{
    int n = c->size, me = c->rank;
    /* commutative: a tree rooted at root; otherwise at 0, so that every
     * combination is (lower ranks) op (higher ranks), then moved to root */
    int tree_root = op->commutative ? root : 0;
    int rel = (me - tree_root + n) % n;
    const void *mine = IN_PLACE(sendbuf) ? recvbuf : sendbuf;
    bool children = rel + 1 < n && (rel == 0 || !(rel & 1));
    /* Where the partial result accumulates: a leaf sends its own buffer; a
     * commutative root accumulates in recvbuf (no copy at the end); others
     * in scratch.  Large reductions are memory-bound: each copy saved
     * counts (measured on 1 MiB, docs/performance.md). */
    /* A commutative accumulator starts as (first child's data) op mine,
     * written straight into it; a non-commutative one starts as mine itself
     * (the first reduction writes into the child's buffer).  No copy of
     * mine in either case. */
    void *acc = (void *)mine, *in = NULL;
    const void *first = NULL; /* mine, while acc has not been written yet */
    if (children && op->commutative) {
        if (me == root)
            acc = recvbuf;
        else if (!(acc = scratch_for(s, count, dt)))
            return LMPI_ERR_NO_MEM;
        if (acc != mine)
            first = mine;
    }
    for (int mask = 1; mask < n; mask <<= 1) {
        if (rel & mask) {
            TRY(lmpi_sched_send(s, acc, count, dt, (rel - mask + tree_root) % n));
            TRY(lmpi_sched_fence(s));
            break;
        }
        if (rel + mask < n) {
            if (first && dt->contiguous) {
                /* The first child's data lands in the accumulator itself and
                 * mine is folded into it: one pass less over memory than
                 * receiving into scratch and writing "scratch op mine". */
                TRY(lmpi_sched_recv(s, acc, count, dt, (rel + mask + tree_root) % n));
                TRY(lmpi_sched_fence(s));
                TRY(lmpi_sched_reduce(s, first, acc, count, dt, op)); /* acc = mine op acc */
                TRY(lmpi_sched_fence(s));
                first = NULL;
                continue;
            }
            if (!in || !op->commutative)
                in = scratch_for(s, count, dt);
            if (!in)
                return LMPI_ERR_NO_MEM;
            TRY(lmpi_sched_recv(s, in, count, dt, (rel + mask + tree_root) % n));
            TRY(lmpi_sched_fence(s));
            if (op->commutative) {
                TRY(lmpi_sched_reduce_into(s, in, first ? first : acc, acc, count, dt, op)); /* acc = in op acc */
                first = NULL;
            } else {
                /* acc covers lower ranks than `in`: in = acc op in, then it is acc */
                TRY(lmpi_sched_reduce(s, acc, in, count, dt, op));
                acc = in;
            }
            TRY(lmpi_sched_fence(s));
        }
    }
    if (me == tree_root && tree_root == root)
        return acc == recvbuf ? LMPI_OK : lmpi_sched_copy(s, acc, count, dt, recvbuf, count, dt);
    if (me == tree_root)
        TRY(lmpi_sched_send(s, acc, count, dt, root));
    if (me == root && tree_root != root)
        TRY(lmpi_sched_recv(s, recvbuf, count, dt, tree_root));
    return lmpi_sched_fence(s);
}

/* ---- gather / scatter: linear ------------------------------------------------------ */
lmpi_status lmpi_coll_gather_steps(lmpi_sched *s, lmpi_comm *c, const void *sbuf, MPI_Count scount, lmpi_datatype *sdt,
                                void *rbuf, const blocks *rb, lmpi_datatype *rdt, int root)
{
    if (c->rank != root)
        return lmpi_sched_send(s, sbuf, scount, sdt, root);
    for (int i = 0; i < c->size; i++) {
        void *dst = at(rbuf, block_displ(rb, i), rdt);
        if (i != root)
            TRY(lmpi_sched_recv(s, dst, block_count(rb, i), rdt, i));
        else if (!IN_PLACE(sbuf))
            TRY(lmpi_sched_copy(s, sbuf, scount, sdt, dst, block_count(rb, i), rdt));
    }
    return lmpi_sched_fence(s);
}

lmpi_status lmpi_coll_scatter_steps(lmpi_sched *s, lmpi_comm *c, const void *sbuf, const blocks *sb, lmpi_datatype *sdt,
                                 void *rbuf, MPI_Count rcount, lmpi_datatype *rdt, int root)
{
    if (c->rank != root)
        return lmpi_sched_recv(s, rbuf, rcount, rdt, root);
    for (int i = 0; i < c->size; i++) {
        const void *src = at(sbuf, block_displ(sb, i), sdt);
        if (i != root)
            TRY(lmpi_sched_send(s, src, block_count(sb, i), sdt, i));
        else if (!IN_PLACE(rbuf))
            TRY(lmpi_sched_copy(s, src, block_count(sb, i), sdt, rbuf, rcount, rdt));
    }
    return lmpi_sched_fence(s);
}

/* MPI_IN_PLACE aside, the caller's block goes to its place in rbuf. */
static lmpi_status copy_own_block(lmpi_sched *s, lmpi_comm *c, const void *sbuf, MPI_Count scount,
                                  lmpi_datatype *sdt, void *rbuf, const blocks *rb, lmpi_datatype *rdt)
{
    if (IN_PLACE(sbuf))
        return LMPI_OK;
    return lmpi_sched_copy(s, sbuf, scount, sdt, at(rbuf, block_displ(rb, c->rank), rdt), block_count(rb, c->rank),
                           rdt);
}

/* ---- allgather: ring ------------------------------------------------------------------ */
static lmpi_status allgather_steps(lmpi_sched *s, lmpi_comm *c, const void *sbuf, MPI_Count scount,
                                   lmpi_datatype *sdt, void *rbuf, const blocks *rb, lmpi_datatype *rdt)
{
    int n = c->size, me = c->rank;
    for (int k = 0; k < n - 1; k++) {
        int sblk = (me - k + n) % n, rblk = (me - k - 1 + n) % n;
        if (k > 0)
            TRY(lmpi_sched_fence(s));
        /* The first step sends the caller's own buffer: the neighbour then
         * reads clean lines instead of the ones our local copy dirtied. */
        if (k == 0 && !IN_PLACE(sbuf))
            TRY(lmpi_sched_send(s, sbuf, scount, sdt, (me + 1) % n));
        else
            TRY(lmpi_sched_send(s, at(rbuf, block_displ(rb, sblk), rdt), block_count(rb, sblk), rdt, (me + 1) % n));
        TRY(lmpi_sched_recv(s, at(rbuf, block_displ(rb, rblk), rdt), block_count(rb, rblk), rdt, (me - 1 + n) % n));
    }
    TRY(copy_own_block(s, c, sbuf, scount, sdt, rbuf, rb, rdt)); /* while the last block travels */
    return lmpi_sched_fence(s);
}

/* How many exchanges the direct allgather and pairwise alltoall start
 * before waiting for them. */
static int exchange_batch(void)
{
    return lmpi_config.coll_alltoall_batch > 0 ? (int)lmpi_config.coll_alltoall_batch : 1;
}

/* ---- allgather: direct exchanges ------------------------------------------------------ */
/* Every rank sends its own block to every other, in batches like the
 * pairwise alltoall.  Each block is still copied once per receiver, as in
 * the ring, but no block waits for a neighbour to forward it: n - 1
 * dependent steps become one wait per batch. */
static lmpi_status allgather_direct_steps(lmpi_sched *s, lmpi_comm *c, const void *sbuf, MPI_Count scount,
                                          lmpi_datatype *sdt, void *rbuf, const blocks *rb, lmpi_datatype *rdt)
{
    int n = c->size, me = c->rank;
    int batch = exchange_batch();
    const void *mine = sbuf;
    MPI_Count mcount = scount;
    lmpi_datatype *mdt = sdt;
    if (IN_PLACE(sbuf))
        mine = at(rbuf, block_displ(rb, me), rdt), mcount = block_count(rb, me), mdt = rdt;
    for (int k = 1; k < n; k++) {
        int to = (me + k) % n, from = (me - k + n) % n;
        TRY(lmpi_sched_send(s, mine, mcount, mdt, to));
        TRY(lmpi_sched_recv(s, at(rbuf, block_displ(rb, from), rdt), block_count(rb, from), rdt, from));
        if (k % batch == 0 && k < n - 1)
            TRY(lmpi_sched_fence(s));
    }
    TRY(copy_own_block(s, c, sbuf, scount, sdt, rbuf, rb, rdt)); /* while the last batch travels */
    return lmpi_sched_fence(s);
}

/* ---- alltoall: pairwise exchange ------------------------------------------------------ */
static lmpi_status alltoall_steps(lmpi_sched *s, lmpi_comm *c, const void *sbuf, const blocks *sb, lmpi_datatype *sdt,
                                  void *rbuf, const blocks *rb, lmpi_datatype *rdt)
{
    int n = c->size, me = c->rank;
    if (IN_PLACE(sbuf)) { /* send from a copy of the receive buffer */
        MPI_Count hi = 0;
        for (int i = 0; i < n; i++)
            if (block_displ(rb, i) + block_count(rb, i) > hi)
                hi = block_displ(rb, i) + block_count(rb, i);
        void *copy = scratch_for(s, hi, rdt);
        if (!copy)
            return LMPI_ERR_NO_MEM;
        TRY(lmpi_sched_copy(s, rbuf, hi, rdt, copy, hi, rdt));
        TRY(lmpi_sched_fence(s));
        sbuf = copy, sb = rb, sdt = rdt;
    }
    /* Exchanges go out in batches: a rank waits for its partners once per
     * batch, not once per partner (each wait costs a trip through the
     * scheduler when ranks outnumber cores).  The local copy runs in the
     * last batch, while its messages are on their way. */
    int batch = exchange_batch();
    for (int k = 1; k < n; k++) {
        int to = (me + k) % n, from = (me - k + n) % n;
        TRY(lmpi_sched_send(s, at(sbuf, block_displ(sb, to), sdt), block_count(sb, to), sdt, to));
        TRY(lmpi_sched_recv(s, at(rbuf, block_displ(rb, from), rdt), block_count(rb, from), rdt, from));
        if (k % batch == 0 && k < n - 1)
            TRY(lmpi_sched_fence(s));
    }
    TRY(lmpi_sched_copy(s, at(sbuf, block_displ(sb, me), sdt), block_count(sb, me), sdt,
                        at(rbuf, block_displ(rb, me), rdt), block_count(rb, me), rdt));
    return lmpi_sched_fence(s);
}

/* ---- scan / exscan: a chain in rank order ------------------------------------------- */
static lmpi_status scan_steps(lmpi_sched *s, lmpi_comm *c, const void *sbuf, void *rbuf, MPI_Count count,
                              lmpi_datatype *dt, lmpi_op *op, bool exclusive)
{
    int me = c->rank, n = c->size;
    const void *mine = IN_PLACE(sbuf) ? rbuf : sbuf;
    void *acc = scratch_for(s, count, dt); /* prefix through me */
    if (!acc)
        return LMPI_ERR_NO_MEM;
    TRY(lmpi_sched_copy(s, mine, count, dt, acc, count, dt));
    TRY(lmpi_sched_fence(s));
    if (me > 0) {
        void *prev = scratch_for(s, count, dt);
        if (!prev)
            return LMPI_ERR_NO_MEM;
        TRY(lmpi_sched_recv(s, prev, count, dt, me - 1));
        TRY(lmpi_sched_fence(s));
        TRY(lmpi_sched_reduce(s, prev, acc, count, dt, op)); /* acc = prev op mine */
        if (exclusive)
            TRY(lmpi_sched_copy(s, prev, count, dt, rbuf, count, dt));
        TRY(lmpi_sched_fence(s));
    }
    if (me + 1 < n)
        TRY(lmpi_sched_send(s, acc, count, dt, me + 1));
    if (!exclusive)
        TRY(lmpi_sched_copy(s, acc, count, dt, rbuf, count, dt));
    return lmpi_sched_fence(s);
}

/* ---- the MPI functions: build, then run or return ------------------------------------- */

#define NEW_SCHED(comm)                   \
    lmpi_sched *s = lmpi_sched_new(comm); \
    if (!s)                               \
        return LMPI_ERR_NO_MEM;

static lmpi_status get_op(MPI_Op h, lmpi_datatype *dt, lmpi_op **op)
{
    TRY(lmpi_op_arg(h, op, "op"));
    return lmpi_op_check(*op, dt);
}

/* Does a small blocking collective take the communicator's shared-memory
 * area?  (Attached by the call's start: calls.c.) */
static bool shm_path(lmpi_comm *comm, const MPI_Request *request, MPI_Count count, const lmpi_datatype *dt)
{
    return !request && lmpi_coll_short_ok(comm, count, dt) && lmpi_coll_shm_use(comm, count, dt);
}

static lmpi_status do_bcast(void *buf, MPI_Count count, lmpi_datatype *dt, int root, lmpi_comm *comm,
                            MPI_Request *request, bool persist);

/* A short blocking bcast whose type is not contiguous here.  Ranks may pass
 * different types of the same signature, so the path is chosen from the
 * byte count alone (what every rank shares): this rank packs, takes the
 * same path in bytes, and unpacks. */
static lmpi_status bcast_packed(void *buf, MPI_Count count, lmpi_datatype *dt, int root, lmpi_comm *comm)
{
    char tmp[LMPI_COLL_SHORT_MAX];
    MPI_Count bytes = count * dt->size;
    bool mine = comm->rank == root;
    if (mine)
        lmpi_dt_pack(buf, count, dt, 0, bytes, tmp);
    TRY(do_bcast(tmp, bytes, lmpi_datatype_from_handle(MPI_BYTE), root, comm, NULL, false));
    if (!mine)
        lmpi_dt_unpack(buf, count, dt, 0, bytes, tmp);
    return LMPI_OK;
}

static lmpi_status do_bcast(void *buf, MPI_Count count, lmpi_datatype *dt, int root, lmpi_comm *comm,
                            MPI_Request *request, bool persist)
{
    if (comm->is_inter && root == MPI_PROC_NULL) {
        /* nothing of this rank is significant */
        NEW_SCHED(comm);
        return lmpi_sched_finish(s, LMPI_OK, request, persist);
    }
    TRY(need_block(count, dt, "count", "datatype"));
    /* short_fits caps the bytes at LMPI_COLL_SHORT_MAX: bcast_packed's buffer */
    if (!request && !comm->is_inter && !dt->contiguous &&
        lmpi_coll_short_fits(count * dt->size, lmpi_datatype_from_handle(MPI_BYTE)))
        return bcast_packed(buf, count, dt, root, comm);
    lmpi_comm *node, *roots;
    bool node_aware;
    TRY(lmpi_coll_node_aware(comm, &node, &roots, &node_aware));
    if (node_aware && !request && lmpi_coll_short_fits(count, dt))
        return lmpi_coll_node_short_bcast(comm, node, roots, buf, count, dt, root);
    if (node_aware) {
        NEW_SCHED(comm);
        return lmpi_sched_finish(s, lmpi_coll_node_bcast(s, comm, node, roots, buf, count, dt, root), request, persist);
    }
    if (lmpi_config.coll_shm_bcast_min_ranks > 0 && comm->size >= lmpi_config.coll_shm_bcast_min_ranks &&
        shm_path(comm, request, count, dt))
        return lmpi_coll_shm_bcast(buf, count, dt, root, comm);
    if (!request && lmpi_coll_short_ok(comm, count, dt))
        return lmpi_coll_short_bcast(buf, count, dt, root, comm, false);
    NEW_SCHED(comm);
    lmpi_status st;
    if (comm->is_inter)
        st = lmpi_coll_inter_bcast(s, comm, buf, count, dt, root);
    else if (dt->contiguous && comm->size >= 3 && count * dt->size >= lmpi_config.coll_bcast_sag)
        st = lmpi_coll_bcast_sag(s, comm, buf, count, dt, root);
    else
        st = lmpi_coll_bcast_steps(s, comm, buf, count, dt, root);
    return lmpi_sched_finish(s, st, request, persist);
}

lmpi_status lmpi_impl_Bcast(void *buf, MPI_Count count, lmpi_datatype *dt, int root, lmpi_comm *comm)
{
    LMPI_COLL_BLOCKING(comm, LMPI_COLL_AREA, do_bcast(buf, count, dt, root, comm, NULL, false));
}

lmpi_status lmpi_impl_Ibcast(void *buf, MPI_Count count, lmpi_datatype *dt, int root, lmpi_comm *comm,
                             MPI_Request *request)
{
    return do_bcast(buf, count, dt, root, comm, request, false);
}

static lmpi_status do_reduce(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, MPI_Op oph, int root,
                             lmpi_comm *comm, MPI_Request *request, bool persist)
{
    if (comm->is_inter && root == MPI_PROC_NULL) {
        /* the root group's other ranks: nothing of theirs is significant */
        NEW_SCHED(comm);
        return lmpi_sched_finish(s, LMPI_OK, request, persist);
    }
    TRY(need_block(count, dt, "count", "datatype"));
    lmpi_op *op;
    TRY(get_op(oph, dt, &op));
    TRY(no_in_place(comm, sbuf, rbuf));
    if (IN_PLACE(sbuf) && comm->rank != root) {
        lmpi_err_detail("MPI_IN_PLACE as sendbuf is only allowed at the root");
        return LMPI_ERR_BUFFER;
    }
    if (comm->rank == root)
        NOT_ALIASED(comm, sbuf, rbuf, count);
    lmpi_comm *node, *roots;
    bool node_aware = false;
    if (op->commutative)
        TRY(lmpi_coll_node_aware(comm, &node, &roots, &node_aware));
    if (node_aware && !request && lmpi_coll_short_fits(count, dt))
        return lmpi_coll_node_short_reduce(comm, node, roots, sbuf, rbuf, count, dt, op, root);
    if (node_aware) {
        NEW_SCHED(comm);
        return lmpi_sched_finish(s, lmpi_coll_node_reduce(s, comm, node, roots, sbuf, rbuf, count, dt, op, root), request,
                      persist);
    }
    if (shm_path(comm, request, count, dt)) /* rank order: any operation */
        return lmpi_coll_shm_reduce(sbuf, rbuf, count, dt, op, root, comm);
    if (!request && op->commutative && lmpi_coll_short_ok(comm, count, dt))
        return lmpi_coll_short_reduce(sbuf, rbuf, count, dt, op, root, comm);
    NEW_SCHED(comm);
    return lmpi_sched_finish(s, comm->is_inter ? lmpi_coll_inter_reduce(s, comm, sbuf, rbuf, count, dt, op, root)
                                    : lmpi_coll_reduce_steps(s, comm, sbuf, rbuf, count, dt, op, root),
                  request, persist);
}

lmpi_status lmpi_impl_Reduce(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, MPI_Op op, int root,
                             lmpi_comm *comm)
{
    LMPI_COLL_BLOCKING(comm, LMPI_COLL_AREA, do_reduce(sbuf, rbuf, count, dt, op, root, comm, NULL, false));
}

lmpi_status lmpi_impl_Ireduce(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, MPI_Op op, int root,
                              lmpi_comm *comm, MPI_Request *request)
{
    return do_reduce(sbuf, rbuf, count, dt, op, root, comm, request, false);
}

/* Recursive doubling for commutative operations (log2 n exchanges instead
 * of a reduction and a broadcast); with n not a power of two the first
 * 2 * (n - pof2) ranks pair up first, and the even one of each pair gets the
 * result at the end. */
lmpi_status lmpi_coll_allreduce_rd_steps(lmpi_sched *s, lmpi_comm *c, const void *sbuf, void *rbuf, MPI_Count count,
                                         lmpi_datatype *dt, lmpi_op *op)
{
    int n = c->size, pof2 = 1;
    while (pof2 * 2 <= n)
        pof2 *= 2;
    int rem = n - pof2, newrank;
    /* the result accumulates in rbuf itself */
    void *acc = rbuf, *tmp = scratch_for(s, count, dt);
    if (!tmp)
        return LMPI_ERR_NO_MEM;
    /* Without a fold, the first exchange sends sbuf itself and writes
     * tmp op sbuf into rbuf: sbuf is never copied. */
    const void *first = NULL;
    if (!IN_PLACE(sbuf) && rem == 0 && pof2 > 1)
        first = sbuf;
    else if (!IN_PLACE(sbuf))
        TRY(lmpi_sched_copy(s, sbuf, count, dt, acc, count, dt));
    TRY(lmpi_sched_fence(s));
    TRY(lmpi_coll_fold_in(s, c, acc, tmp, count, dt, op, rem, &newrank));
    if (newrank >= 0)
        for (int mask = 1; mask < pof2; mask <<= 1) {
            int nd = newrank ^ mask, dst = nd < rem ? nd * 2 + 1 : nd + rem;
            TRY(lmpi_sched_send(s, first ? first : acc, count, dt, dst));
            TRY(lmpi_sched_recv(s, tmp, count, dt, dst));
            TRY(lmpi_sched_fence(s));
            TRY(lmpi_sched_reduce_into(s, tmp, first ? first : acc, acc, count, dt, op));
            TRY(lmpi_sched_fence(s));
            first = NULL;
        }
    return lmpi_coll_fold_out(s, c, acc, count, dt, rem);
}

static lmpi_status do_allreduce(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, MPI_Op oph,
                                lmpi_comm *comm, MPI_Request *request, bool persist)
{
    lmpi_op *op;
    TRY(get_op(oph, dt, &op));
    TRY(no_in_place(comm, sbuf, rbuf));
    NOT_ALIASED(comm, sbuf, rbuf, count);
    lmpi_comm *node, *roots;
    bool node_aware = false;
    if (op->commutative)
        TRY(lmpi_coll_node_aware(comm, &node, &roots, &node_aware));
    if (node_aware && !request && lmpi_coll_short_fits(count, dt))
        return lmpi_coll_node_short_allreduce(node, roots, sbuf, rbuf, count, dt, op);
    if (node_aware) {
        NEW_SCHED(comm);
        return lmpi_sched_finish(s, lmpi_coll_node_allreduce(s, node, roots, sbuf, rbuf, count, dt, op), request, persist);
    }
    if (shm_path(comm, request, count, dt)) /* rank order: any operation */
        return lmpi_coll_shm_allreduce(sbuf, rbuf, count, dt, op, comm);
    if (!request && op->commutative && lmpi_coll_short_ok(comm, count, dt))
        return lmpi_coll_short_allreduce(sbuf, rbuf, count, dt, op, comm);
    NEW_SCHED(comm);
    lmpi_status st;
    if (comm->is_inter) {
        st = lmpi_coll_inter_allreduce(s, comm, sbuf, rbuf, count, dt, op);
    } else if (op->commutative) {
        /* thresholds from the configuration table (docs/performance.md) */
        MPI_Count bytes = count * dt->size;
        if (dt->contiguous && comm->size > 2 && bytes >= lmpi_config.coll_allreduce_ring)
            st = lmpi_coll_allreduce_ring(s, comm, sbuf, rbuf, count, dt, op);
        else if (dt->contiguous && comm->size > 2 && bytes >= lmpi_config.coll_allreduce_rsag)
            st = lmpi_coll_allreduce_rsag(s, comm, sbuf, rbuf, count, dt, op);
        else
            st = lmpi_coll_allreduce_rd_steps(s, comm, sbuf, rbuf, count, dt, op);
    } else { /* rank order matters: reduce to 0 in order, then broadcast */
        st = lmpi_coll_reduce_steps(s, comm, sbuf, rbuf, count, dt, op, 0);
        if (st == LMPI_OK)
            st = lmpi_coll_bcast_steps(s, comm, rbuf, count, dt, 0);
    }
    return lmpi_sched_finish(s, st, request, persist);
}

lmpi_status lmpi_impl_Allreduce(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, MPI_Op op,
                                lmpi_comm *comm)
{
    LMPI_COLL_BLOCKING(comm, LMPI_COLL_AREA, do_allreduce(sbuf, rbuf, count, dt, op, comm, NULL, false));
}

lmpi_status lmpi_impl_Iallreduce(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, MPI_Op op,
                                 lmpi_comm *comm, MPI_Request *request)
{
    return do_allreduce(sbuf, rbuf, count, dt, op, comm, request, false);
}

static lmpi_status do_gather(const void *sbuf, MPI_Count scount, lmpi_datatype *sdt, void *rbuf, blocks rb,
                             lmpi_datatype *rdt, int root, lmpi_comm *comm, MPI_Request *request, bool persist)
{
    TRY(no_in_place(comm, sbuf, rbuf));
    TRY(rooted_types(comm, root, false, rb.count, rdt, scount, sdt, sbuf));
    if (is_root(comm, root))
        NOT_ALIASED(comm, sbuf, at(rbuf, block_displ(&rb, comm->rank), rdt), scount);
    NEW_SCHED(comm);
    return lmpi_sched_finish(s, comm->is_inter ? lmpi_coll_inter_gather(s, comm, sbuf, scount, sdt, rbuf, &rb, rdt, root)
                                    : lmpi_coll_gather_steps(s, comm, sbuf, scount, sdt, rbuf, &rb, rdt, root),
                  request, persist);
}

lmpi_status lmpi_impl_Gather(const void *sbuf, MPI_Count scount, lmpi_datatype *sdt, void *rbuf, MPI_Count rcount,
                             lmpi_datatype *rdt, int root, lmpi_comm *comm)
{
    LMPI_COLL_BLOCKING(comm, LMPI_COLL_PLAIN, do_gather(sbuf, scount, sdt, rbuf, (blocks){.count = rcount}, rdt, root, comm, NULL, false));
}

lmpi_status lmpi_impl_Igather(const void *sbuf, MPI_Count scount, lmpi_datatype *sdt, void *rbuf, MPI_Count rcount,
                              lmpi_datatype *rdt, int root, lmpi_comm *comm, MPI_Request *request)
{
    return do_gather(sbuf, scount, sdt, rbuf, (blocks){.count = rcount}, rdt, root, comm, request, false);
}

lmpi_status lmpi_impl_Gatherv(const void *sbuf, MPI_Count scount, lmpi_datatype *sdt, void *rbuf, lmpi_iarray rcounts,
                              lmpi_iarray displs, lmpi_datatype *rdt, int root, lmpi_comm *comm)
{
    LMPI_COLL_BLOCKING(comm, LMPI_COLL_PLAIN, do_gather(sbuf, scount, sdt, rbuf, (blocks){rcounts, displs, 0}, rdt, root, comm, NULL, false));
}

lmpi_status lmpi_impl_Igatherv(const void *sbuf, MPI_Count scount, lmpi_datatype *sdt, void *rbuf,
                               lmpi_iarray rcounts, lmpi_iarray displs, lmpi_datatype *rdt, int root, lmpi_comm *comm,
                               MPI_Request *request)
{
    return do_gather(sbuf, scount, sdt, rbuf, (blocks){rcounts, displs, 0}, rdt, root, comm, request, false);
}

static lmpi_status do_scatter(const void *sbuf, blocks sb, lmpi_datatype *sdt, void *rbuf, MPI_Count rcount,
                              lmpi_datatype *rdt, int root, lmpi_comm *comm, MPI_Request *request, bool persist)
{
    TRY(no_in_place(comm, sbuf, rbuf));
    TRY(rooted_types(comm, root, true, sb.count, sdt, rcount, rdt, rbuf));
    if (!comm->is_inter && comm->rank == root)
        TRY(not_aliased(comm, rbuf, at(sbuf, block_displ(&sb, comm->rank), sdt), rcount, "recvbuf", "sendbuf"));
    NEW_SCHED(comm);
    return lmpi_sched_finish(s, comm->is_inter ? lmpi_coll_inter_scatter(s, comm, sbuf, &sb, sdt, rbuf, rcount, rdt, root)
                                    : lmpi_coll_scatter_steps(s, comm, sbuf, &sb, sdt, rbuf, rcount, rdt, root),
                  request, persist);
}

lmpi_status lmpi_impl_Scatter(const void *sbuf, MPI_Count scount, lmpi_datatype *sdt, void *rbuf, MPI_Count rcount,
                              lmpi_datatype *rdt, int root, lmpi_comm *comm)
{
    LMPI_COLL_BLOCKING(comm, LMPI_COLL_PLAIN, do_scatter(sbuf, (blocks){.count = scount}, sdt, rbuf, rcount, rdt, root, comm, NULL, false));
}

lmpi_status lmpi_impl_Iscatter(const void *sbuf, MPI_Count scount, lmpi_datatype *sdt, void *rbuf, MPI_Count rcount,
                               lmpi_datatype *rdt, int root, lmpi_comm *comm, MPI_Request *request)
{
    return do_scatter(sbuf, (blocks){.count = scount}, sdt, rbuf, rcount, rdt, root, comm, request, false);
}

lmpi_status lmpi_impl_Scatterv(const void *sbuf, lmpi_iarray scounts, lmpi_iarray displs, lmpi_datatype *sdt,
                               void *rbuf, MPI_Count rcount, lmpi_datatype *rdt, int root, lmpi_comm *comm)
{
    LMPI_COLL_BLOCKING(comm, LMPI_COLL_PLAIN, do_scatter(sbuf, (blocks){scounts, displs, 0}, sdt, rbuf, rcount, rdt, root, comm, NULL, false));
}

lmpi_status lmpi_impl_Iscatterv(const void *sbuf, lmpi_iarray scounts, lmpi_iarray displs, lmpi_datatype *sdt,
                                void *rbuf, MPI_Count rcount, lmpi_datatype *rdt, int root, lmpi_comm *comm,
                                MPI_Request *request)
{
    return do_scatter(sbuf, (blocks){scounts, displs, 0}, sdt, rbuf, rcount, rdt, root, comm, request, false);
}

/* Blocking allgather and alltoall of small blocks skip the schedule (a
 * microsecond of bookkeeping around two 8-byte messages at 2 ranks): an
 * intracommunicator of at most MAX_GROUP ranks, one block size, all n
 * blocks within LMPI_COLL_SHORT.  The choice follows the bytes alone: ranks
 * may pass different types of one signature, and one that took the short
 * path while another took a schedule would wait for it forever.  A rank
 * whose types are not contiguous packs and unpacks around the path.
 * *bytes: one block. */
static bool short_blocks(const lmpi_comm *c, const MPI_Request *request, const void *sbuf, MPI_Count scount,
                         const lmpi_datatype *sdt, MPI_Count rcount, const lmpi_datatype *rdt, int max_group,
                         size_t *bytes)
{
    if (request || c->is_inter || c->size > max_group || !lmpi_coll_short_fits_bytes(rcount * rdt->size * c->size))
        return false;
    *bytes = (size_t)(rcount * rdt->size);
    return IN_PLACE(sbuf) || (size_t)(scount * sdt->size) == *bytes;
}

static bool contiguous_blocks(const void *sbuf, const lmpi_datatype *sdt, const lmpi_datatype *rdt)
{
    return rdt->contiguous && (IN_PLACE(sbuf) || sdt->contiguous);
}

static lmpi_status allgather_packed(const void *sbuf, MPI_Count scount, const lmpi_datatype *sdt, void *rbuf,
                                    MPI_Count rcount, const lmpi_datatype *rdt, size_t bytes, lmpi_comm *comm)
{
    char all[LMPI_COLL_SHORT_MAX];
    MPI_Aint block = (MPI_Aint)rcount * rdt->extent;
    char *mine = all + (size_t)comm->rank * bytes;
    if (IN_PLACE(sbuf))
        lmpi_dt_pack((char *)rbuf + comm->rank * block, rcount, rdt, 0, (MPI_Count)bytes, mine);
    else
        lmpi_dt_pack(sbuf, scount, sdt, 0, (MPI_Count)bytes, mine);
    TRY(lmpi_coll_short_allgather(NULL, all, bytes, comm));
    for (int i = 0; i < comm->size; i++)
        lmpi_dt_unpack((char *)rbuf + i * block, rcount, rdt, 0, (MPI_Count)bytes, all + (size_t)i * bytes);
    return LMPI_OK;
}

static lmpi_status alltoall_packed(const void *sbuf, MPI_Count scount, const lmpi_datatype *sdt, void *rbuf,
                                   MPI_Count rcount, const lmpi_datatype *rdt, size_t bytes, lmpi_comm *comm)
{
    char out[LMPI_COLL_SHORT_MAX], in[LMPI_COLL_SHORT_MAX];
    MPI_Count total = (MPI_Count)bytes * comm->size;
    lmpi_dt_pack(sbuf, scount * comm->size, sdt, 0, total, out);
    TRY(lmpi_coll_short_alltoall(out, in, bytes, comm));
    lmpi_dt_unpack(rbuf, rcount * comm->size, rdt, 0, total, in);
    return LMPI_OK;
}

static lmpi_status do_allgather(const void *sbuf, MPI_Count scount, lmpi_datatype *sdt, void *rbuf, blocks rb,
                                lmpi_datatype *rdt, lmpi_comm *comm, MPI_Request *request, bool persist)
{
    TRY(all_types(comm, sbuf, scount, sdt, rbuf, rb.count, rdt));
    NOT_ALIASED(comm, sbuf, at(rbuf, block_displ(&rb, comm->rank), rdt), scount);
    size_t bytes;
    if (!request && !comm->is_inter && !rb.counts.p && lmpi_coll_shm_fits(comm, (size_t)(rb.count * rdt->size)))
        return lmpi_coll_shm_allgather(sbuf, scount, sdt, rbuf, rb.count, rdt, comm);
    /* recursive doubling at any power of two, a ring up to 8 ranks */
    int ring_max = (comm->size & (comm->size - 1)) == 0 ? comm->size : 8;
    if (!rb.counts.p && short_blocks(comm, request, sbuf, scount, sdt, rb.count, rdt, ring_max, &bytes)) {
        if (!contiguous_blocks(sbuf, sdt, rdt))
            return allgather_packed(sbuf, scount, sdt, rbuf, rb.count, rdt, bytes, comm);
        return lmpi_coll_short_allgather(IN_PLACE(sbuf) ? NULL : lmpi_dt_contig_ptr(sbuf, sdt),
                                         (char *)lmpi_dt_contig_ptr(rbuf, rdt), bytes, comm);
    }
    NEW_SCHED(comm);
    lmpi_status st;
    if (comm->is_inter)
        st = lmpi_coll_inter_allgather(s, comm, sbuf, scount, sdt, rbuf, &rb, rdt);
    else if (!rb.counts.p && comm->size >= 3 && rb.count * rdt->size <= lmpi_config.coll_allgather_bruck)
        st = lmpi_coll_allgather_bruck(s, comm, sbuf, scount, sdt, rbuf, rb.count, rdt);
    else if (!rb.counts.p && rb.count * rdt->size >= lmpi_config.coll_allgather_ring)
        st = allgather_steps(s, comm, sbuf, scount, sdt, rbuf, &rb, rdt);
    else
        st = allgather_direct_steps(s, comm, sbuf, scount, sdt, rbuf, &rb, rdt);
    return lmpi_sched_finish(s, st, request, persist);
}

lmpi_status lmpi_impl_Allgather(const void *sbuf, MPI_Count scount, lmpi_datatype *sdt, void *rbuf, MPI_Count rcount,
                                lmpi_datatype *rdt, lmpi_comm *comm)
{
    LMPI_COLL_BLOCKING(comm, LMPI_COLL_AREA, do_allgather(sbuf, scount, sdt, rbuf, (blocks){.count = rcount}, rdt, comm, NULL, false));
}

lmpi_status lmpi_impl_Iallgather(const void *sbuf, MPI_Count scount, lmpi_datatype *sdt, void *rbuf,
                                 MPI_Count rcount, lmpi_datatype *rdt, lmpi_comm *comm, MPI_Request *request)
{
    return do_allgather(sbuf, scount, sdt, rbuf, (blocks){.count = rcount}, rdt, comm, request, false);
}

lmpi_status lmpi_impl_Allgatherv(const void *sbuf, MPI_Count scount, lmpi_datatype *sdt, void *rbuf,
                                 lmpi_iarray rcounts, lmpi_iarray displs, lmpi_datatype *rdt, lmpi_comm *comm)
{
    LMPI_COLL_BLOCKING(comm, LMPI_COLL_PLAIN, do_allgather(sbuf, scount, sdt, rbuf, (blocks){rcounts, displs, 0}, rdt, comm, NULL, false));
}

lmpi_status lmpi_impl_Iallgatherv(const void *sbuf, MPI_Count scount, lmpi_datatype *sdt, void *rbuf,
                                  lmpi_iarray rcounts, lmpi_iarray displs, lmpi_datatype *rdt, lmpi_comm *comm,
                                  MPI_Request *request)
{
    return do_allgather(sbuf, scount, sdt, rbuf, (blocks){rcounts, displs, 0}, rdt, comm, request, false);
}

static lmpi_status do_alltoall(const void *sbuf, blocks sb, lmpi_datatype *sdt, void *rbuf, blocks rb,
                               lmpi_datatype *rdt, lmpi_comm *comm, MPI_Request *request, bool persist)
{
    TRY(all_types(comm, sbuf, sb.count, sdt, rbuf, rb.count, rdt));
    /* (empty blocks may share one address: mpi4py's zero-length arrays) */
    NOT_ALIASED(comm, sbuf, rbuf, IN_PLACE(sbuf) ? 0 : block_count(&sb, comm->rank));
    size_t bytes;
    /* (an alltoallv in place may pass no send counts: its receive counts
     * say it is one) */
    bool one_size = !sb.counts.p && !rb.counts.p;
    if (!request && !comm->is_inter && one_size &&
        lmpi_coll_shm_fits(comm, (size_t)(rb.count * rdt->size) * (size_t)comm->size))
        return lmpi_coll_shm_alltoall(sbuf, sb.count, sdt, rbuf, rb.count, rdt, comm);
    if (one_size && !IN_PLACE(sbuf) &&
        short_blocks(comm, request, sbuf, sb.count, sdt, rb.count, rdt, LMPI_COLL_SHORT_ALLTOALL_MAX, &bytes)) {
        if (!contiguous_blocks(sbuf, sdt, rdt))
            return alltoall_packed(sbuf, sb.count, sdt, rbuf, rb.count, rdt, bytes, comm);
        return lmpi_coll_short_alltoall(lmpi_dt_contig_ptr(sbuf, sdt), (char *)lmpi_dt_contig_ptr(rbuf, rdt), bytes,
                                        comm);
    }
    NEW_SCHED(comm);
    lmpi_status st;
    if (comm->is_inter)
        st = lmpi_coll_inter_alltoall(s, comm, sbuf, &sb, sdt, rbuf, &rb, rdt);
    else if (!sb.counts.p && !IN_PLACE(sbuf) && comm->size >= 4 && sb.count * sdt->size <= lmpi_config.coll_alltoall_bruck)
        st = lmpi_coll_alltoall_bruck(s, comm, sbuf, sb.count, sdt, rbuf, rb.count, rdt);
    else
        st = alltoall_steps(s, comm, sbuf, &sb, sdt, rbuf, &rb, rdt);
    return lmpi_sched_finish(s, st, request, persist);
}

lmpi_status lmpi_impl_Alltoall(const void *sbuf, MPI_Count scount, lmpi_datatype *sdt, void *rbuf, MPI_Count rcount,
                               lmpi_datatype *rdt, lmpi_comm *comm)
{
    LMPI_COLL_BLOCKING(comm, LMPI_COLL_AREA, do_alltoall(sbuf, (blocks){.count = scount}, sdt, rbuf, (blocks){.count = rcount}, rdt, comm, NULL, false));
}

lmpi_status lmpi_impl_Ialltoall(const void *sbuf, MPI_Count scount, lmpi_datatype *sdt, void *rbuf, MPI_Count rcount,
                                lmpi_datatype *rdt, lmpi_comm *comm, MPI_Request *request)
{
    return do_alltoall(sbuf, (blocks){.count = scount}, sdt, rbuf, (blocks){.count = rcount}, rdt, comm, request, false);
}

lmpi_status lmpi_impl_Alltoallv(const void *sbuf, lmpi_iarray scounts, lmpi_iarray sdispls, lmpi_datatype *sdt,
                                void *rbuf, lmpi_iarray rcounts, lmpi_iarray rdispls, lmpi_datatype *rdt,
                                lmpi_comm *comm)
{
    LMPI_COLL_BLOCKING(comm, LMPI_COLL_PLAIN, do_alltoall(sbuf, (blocks){scounts, sdispls, 0}, sdt, rbuf, (blocks){rcounts, rdispls, 0}, rdt, comm,
                       NULL, false));
}

lmpi_status lmpi_impl_Ialltoallv(const void *sbuf, lmpi_iarray scounts, lmpi_iarray sdispls, lmpi_datatype *sdt,
                                 void *rbuf, lmpi_iarray rcounts, lmpi_iarray rdispls, lmpi_datatype *rdt,
                                 lmpi_comm *comm, MPI_Request *request)
{
    return do_alltoall(sbuf, (blocks){scounts, sdispls, 0}, sdt, rbuf, (blocks){rcounts, rdispls, 0}, rdt, comm,
                       request, false);
}

static lmpi_status do_scan(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, MPI_Op oph,
                           lmpi_comm *comm, bool exclusive, MPI_Request *request, bool persist)
{
    lmpi_op *op;
    TRY(get_op(oph, dt, &op));
    if (comm->is_inter) {
        lmpi_err_detail("%s is not defined on intercommunicators", exclusive ? "MPI_Exscan" : "MPI_Scan");
        return LMPI_ERR_COMM;
    }
    NOT_ALIASED(comm, sbuf, rbuf, count);
    NEW_SCHED(comm);
    return lmpi_sched_finish(s, scan_steps(s, comm, sbuf, rbuf, count, dt, op, exclusive), request, persist);
}

lmpi_status lmpi_impl_Scan(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, MPI_Op op, lmpi_comm *comm)
{
    LMPI_COLL_BLOCKING(comm, LMPI_COLL_PLAIN, do_scan(sbuf, rbuf, count, dt, op, comm, false, NULL, false));
}

lmpi_status lmpi_impl_Iscan(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, MPI_Op op,
                            lmpi_comm *comm, MPI_Request *request)
{
    return do_scan(sbuf, rbuf, count, dt, op, comm, false, request, false);
}

lmpi_status lmpi_impl_Exscan(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, MPI_Op op,
                             lmpi_comm *comm)
{
    LMPI_COLL_BLOCKING(comm, LMPI_COLL_PLAIN, do_scan(sbuf, rbuf, count, dt, op, comm, true, NULL, false));
}

lmpi_status lmpi_impl_Iexscan(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, MPI_Op op,
                              lmpi_comm *comm, MPI_Request *request)
{
    return do_scan(sbuf, rbuf, count, dt, op, comm, true, request, false);
}

/* The dissemination barrier as empty messages: ceil(log2 n) rounds. */
lmpi_status lmpi_coll_barrier_steps(lmpi_sched *s, lmpi_comm *c)
{
    lmpi_datatype *byte = lmpi_datatype_from_handle(MPI_BYTE);
    int n = c->size, me = c->rank;
    for (int d = 1; d < n; d *= 2) {
        TRY(lmpi_sched_send(s, NULL, 0, byte, (me + d) % n));
        TRY(lmpi_sched_recv(s, NULL, 0, byte, (me - d + n) % n));
        TRY(lmpi_sched_fence(s));
    }
    return LMPI_OK;
}

static lmpi_status do_barrier(lmpi_comm *comm, MPI_Request *request, bool persist)
{
    lmpi_comm *node, *roots;
    bool node_aware;
    TRY(lmpi_coll_node_aware(comm, &node, &roots, &node_aware));
    if (node_aware) {
        NEW_SCHED(comm);
        return lmpi_sched_finish(s, lmpi_coll_node_barrier(s, node, roots), request, persist);
    }
    NEW_SCHED(comm);
    return lmpi_sched_finish(s, comm->is_inter ? lmpi_coll_inter_barrier(s, comm) : lmpi_coll_barrier_steps(s, comm), request,
                  persist);
}

lmpi_status lmpi_impl_Ibarrier(lmpi_comm *comm, MPI_Request *request) { return do_barrier(comm, request, false); }

static lmpi_status blocking_barrier(lmpi_comm *comm)
{
    if (comm->is_inter || lmpi_config.coll_short == 0)
        return do_barrier(comm, NULL, false);
    lmpi_comm *node, *roots;
    bool node_aware;
    TRY(lmpi_coll_node_aware(comm, &node, &roots, &node_aware));
    if (node_aware)
        return lmpi_coll_node_short_barrier(node, roots);
    return shm_path(comm, NULL, 0, lmpi_datatype_from_handle(MPI_BYTE)) ? lmpi_coll_shm_barrier(comm)
                                                                         : lmpi_coll_short_barrier(comm);
}

lmpi_status lmpi_impl_Barrier(lmpi_comm *comm) { LMPI_COLL_BLOCKING(comm, LMPI_COLL_AREA, blocking_barrier(comm)); }

/* ---- reduce_scatter: a reduction to rank 0, then a scatter of the blocks ---- */
static lmpi_status do_reduce_scatter(const void *sbuf, void *rbuf, blocks rb, lmpi_datatype *dt, MPI_Op oph,
                                     lmpi_comm *comm, MPI_Request *request, bool persist)
{
    lmpi_op *op;
    TRY(get_op(oph, dt, &op));
    TRY(no_in_place(comm, sbuf, rbuf));
    NOT_ALIASED(comm, sbuf, rbuf, block_count(&rb, comm->rank));
    NEW_SCHED(comm);
    if (comm->is_inter)
        return lmpi_sched_finish(s, lmpi_coll_inter_reduce_scatter(s, comm, sbuf, rbuf, &rb, dt, op), request, persist);
    if (op->commutative && dt->contiguous && comm->size > 1 && lmpi_config.coll_redscat_halving)
        return lmpi_sched_finish(s, lmpi_coll_reduce_scatter_halving(s, comm, sbuf, rbuf, &rb, dt, op), request, persist);
    int n = comm->size, me = comm->rank;
    MPI_Count total = 0;
    for (int i = 0; i < n; i++)
        total += block_count(&rb, i);
    /* the blocks lie one after another in the send buffer */
    blocks packed = rb;
    MPI_Count *displs = lmpi_sched_scratch(s, sizeof(MPI_Count) * (size_t)n);
    lmpi_status st = displs ? LMPI_OK : LMPI_ERR_NO_MEM;
    if (st == LMPI_OK) {
        MPI_Count at0 = 0;
        for (int i = 0; i < n; i++) {
            displs[i] = at0;
            at0 += block_count(&rb, i);
        }
        if (rb.counts.p)
            packed.displs = (lmpi_iarray){displs, 8};
    }
    void *full = st == LMPI_OK ? scratch_for(s, total, dt) : NULL;
    if (st == LMPI_OK && !full)
        st = LMPI_ERR_NO_MEM;
    /* in place: the contribution is the receive buffer (all blocks) */
    if (st == LMPI_OK)
        st = lmpi_coll_reduce_steps(s, comm, IN_PLACE(sbuf) ? rbuf : sbuf, full, total, dt, op, 0);
    if (st == LMPI_OK)
        st = lmpi_coll_scatter_steps(s, comm, full, &packed, dt, rbuf, block_count(&rb, me), dt, 0);
    return lmpi_sched_finish(s, st, request, persist);
}

lmpi_status lmpi_impl_Reduce_scatter_block(const void *sbuf, void *rbuf, MPI_Count rcount, lmpi_datatype *dt,
                                           MPI_Op op, lmpi_comm *comm)
{
    LMPI_COLL_BLOCKING(comm, LMPI_COLL_PLAIN, do_reduce_scatter(sbuf, rbuf, (blocks){.count = rcount}, dt, op, comm, NULL, false));
}

lmpi_status lmpi_impl_Ireduce_scatter_block(const void *sbuf, void *rbuf, MPI_Count rcount, lmpi_datatype *dt,
                                            MPI_Op op, lmpi_comm *comm, MPI_Request *request)
{
    return do_reduce_scatter(sbuf, rbuf, (blocks){.count = rcount}, dt, op, comm, request, false);
}

lmpi_status lmpi_impl_Reduce_scatter(const void *sbuf, void *rbuf, lmpi_iarray rcounts, lmpi_datatype *dt, MPI_Op op,
                                     lmpi_comm *comm)
{
    LMPI_COLL_BLOCKING(comm, LMPI_COLL_PLAIN, do_reduce_scatter(sbuf, rbuf, (blocks){rcounts, rcounts, 0}, dt, op, comm, NULL, false));
}

lmpi_status lmpi_impl_Ireduce_scatter(const void *sbuf, void *rbuf, lmpi_iarray rcounts, lmpi_datatype *dt,
                                      MPI_Op op, lmpi_comm *comm, MPI_Request *request)
{
    return do_reduce_scatter(sbuf, rbuf, (blocks){rcounts, rcounts, 0}, dt, op, comm, request, false);
}

/* ---- persistent forms: built once, run at every MPI_Start ------------------------ */
lmpi_status lmpi_impl_Barrier_init(lmpi_comm *comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return do_barrier(comm, request, true);
}

lmpi_status lmpi_impl_Bcast_init(void *buf, MPI_Count count, lmpi_datatype *dt, int root, lmpi_comm *comm,
                                 MPI_Info info, MPI_Request *request)
{
    (void)info;
    return do_bcast(buf, count, dt, root, comm, request, true);
}

lmpi_status lmpi_impl_Reduce_init(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, MPI_Op op,
                                  int root, lmpi_comm *comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return do_reduce(sbuf, rbuf, count, dt, op, root, comm, request, true);
}

lmpi_status lmpi_impl_Allreduce_init(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, MPI_Op op,
                                     lmpi_comm *comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return do_allreduce(sbuf, rbuf, count, dt, op, comm, request, true);
}

lmpi_status lmpi_impl_Gather_init(const void *sbuf, MPI_Count scount, lmpi_datatype *sdt, void *rbuf,
                                  MPI_Count rcount, lmpi_datatype *rdt, int root, lmpi_comm *comm, MPI_Info info,
                                  MPI_Request *request)
{
    (void)info;
    return do_gather(sbuf, scount, sdt, rbuf, (blocks){.count = rcount}, rdt, root, comm, request, true);
}

lmpi_status lmpi_impl_Gatherv_init(const void *sbuf, MPI_Count scount, lmpi_datatype *sdt, void *rbuf,
                                   lmpi_iarray rcounts, lmpi_iarray displs, lmpi_datatype *rdt, int root,
                                   lmpi_comm *comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return do_gather(sbuf, scount, sdt, rbuf, (blocks){rcounts, displs, 0}, rdt, root, comm, request, true);
}

lmpi_status lmpi_impl_Scatter_init(const void *sbuf, MPI_Count scount, lmpi_datatype *sdt, void *rbuf,
                                   MPI_Count rcount, lmpi_datatype *rdt, int root, lmpi_comm *comm, MPI_Info info,
                                   MPI_Request *request)
{
    (void)info;
    return do_scatter(sbuf, (blocks){.count = scount}, sdt, rbuf, rcount, rdt, root, comm, request, true);
}

lmpi_status lmpi_impl_Scatterv_init(const void *sbuf, lmpi_iarray scounts, lmpi_iarray displs, lmpi_datatype *sdt,
                                    void *rbuf, MPI_Count rcount, lmpi_datatype *rdt, int root, lmpi_comm *comm,
                                    MPI_Info info, MPI_Request *request)
{
    (void)info;
    return do_scatter(sbuf, (blocks){scounts, displs, 0}, sdt, rbuf, rcount, rdt, root, comm, request, true);
}

lmpi_status lmpi_impl_Allgather_init(const void *sbuf, MPI_Count scount, lmpi_datatype *sdt, void *rbuf,
                                     MPI_Count rcount, lmpi_datatype *rdt, lmpi_comm *comm, MPI_Info info,
                                     MPI_Request *request)
{
    (void)info;
    return do_allgather(sbuf, scount, sdt, rbuf, (blocks){.count = rcount}, rdt, comm, request, true);
}

lmpi_status lmpi_impl_Allgatherv_init(const void *sbuf, MPI_Count scount, lmpi_datatype *sdt, void *rbuf,
                                      lmpi_iarray rcounts, lmpi_iarray displs, lmpi_datatype *rdt, lmpi_comm *comm,
                                      MPI_Info info, MPI_Request *request)
{
    (void)info;
    return do_allgather(sbuf, scount, sdt, rbuf, (blocks){rcounts, displs, 0}, rdt, comm, request, true);
}

lmpi_status lmpi_impl_Alltoall_init(const void *sbuf, MPI_Count scount, lmpi_datatype *sdt, void *rbuf,
                                    MPI_Count rcount, lmpi_datatype *rdt, lmpi_comm *comm, MPI_Info info,
                                    MPI_Request *request)
{
    (void)info;
    return do_alltoall(sbuf, (blocks){.count = scount}, sdt, rbuf, (blocks){.count = rcount}, rdt, comm, request,
                       true);
}

lmpi_status lmpi_impl_Alltoallv_init(const void *sbuf, lmpi_iarray scounts, lmpi_iarray sdispls, lmpi_datatype *sdt,
                                     void *rbuf, lmpi_iarray rcounts, lmpi_iarray rdispls, lmpi_datatype *rdt,
                                     lmpi_comm *comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return do_alltoall(sbuf, (blocks){scounts, sdispls, 0}, sdt, rbuf, (blocks){rcounts, rdispls, 0}, rdt, comm,
                       request, true);
}

lmpi_status lmpi_impl_Reduce_scatter_block_init(const void *sbuf, void *rbuf, MPI_Count rcount, lmpi_datatype *dt,
                                                MPI_Op op, lmpi_comm *comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return do_reduce_scatter(sbuf, rbuf, (blocks){.count = rcount}, dt, op, comm, request, true);
}

lmpi_status lmpi_impl_Reduce_scatter_init(const void *sbuf, void *rbuf, lmpi_iarray rcounts, lmpi_datatype *dt,
                                          MPI_Op op, lmpi_comm *comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return do_reduce_scatter(sbuf, rbuf, (blocks){rcounts, rcounts, 0}, dt, op, comm, request, true);
}

lmpi_status lmpi_impl_Scan_init(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, MPI_Op op,
                                lmpi_comm *comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return do_scan(sbuf, rbuf, count, dt, op, comm, false, request, true);
}

lmpi_status lmpi_impl_Exscan_init(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, MPI_Op op,
                                  lmpi_comm *comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return do_scan(sbuf, rbuf, count, dt, op, comm, true, request, true);
}

/* ---- alltoallw: a type per peer, displacements in bytes; pairwise ----------------- */
typedef struct {
    lmpi_iarray scounts, sdispls, rcounts, rdispls;
    const MPI_Datatype *stypes, *rtypes;
} wargs;

static lmpi_status do_alltoallw(const void *sbuf, wargs a, void *rbuf, lmpi_comm *comm, MPI_Request *request,
                                bool persist)
{
    TRY(no_in_place(comm, sbuf, rbuf));
    NOT_ALIASED(comm, sbuf, rbuf, IN_PLACE(sbuf) || !a.scounts.p ? 0 : lmpi_iarray_get(a.scounts, (size_t)comm->rank));
    int n = comm->peer_size, me = comm->rank;
    if (!a.rtypes || (!IN_PLACE(sbuf) && !a.stypes)) {
        lmpi_err_detail("sendtypes or recvtypes is NULL");
        return LMPI_ERR_ARG;
    }
    for (int i = 0; i < n; i++) {
        TRY(need_type(lmpi_datatype_or_null(a.rtypes[i]), "a recvtypes entry"));
        if (!IN_PLACE(sbuf))
            TRY(need_type(lmpi_datatype_or_null(a.stypes[i]), "a sendtypes entry"));
    }
    NEW_SCHED(comm);
    lmpi_status st = LMPI_OK;
    const char *src = sbuf;
    if (IN_PLACE(sbuf)) { /* send from a copy of the receive buffer's bytes */
        MPI_Aint lo = 0, hi = 0;
        for (int i = 0; i < n; i++) {
            lmpi_datatype *t = lmpi_datatype_or_null(a.rtypes[i]);
            MPI_Count c = lmpi_iarray_get(a.rcounts, (size_t)i);
            if (c == 0 || t->size == 0)
                continue;
            MPI_Aint d = (MPI_Aint)lmpi_iarray_get(a.rdispls, (size_t)i);
            MPI_Aint l = d + t->true_lb, h = d + (MPI_Aint)(c - 1) * t->extent + t->true_lb + t->true_extent;
            lo = (hi == lo || l < lo) ? l : lo;
            hi = h > hi ? h : hi;
        }
        char *copy = lmpi_sched_scratch(s, (size_t)(hi - lo) + 1);
        if (!copy)
            st = LMPI_ERR_NO_MEM;
        lmpi_datatype *byte = lmpi_datatype_from_handle(MPI_BYTE);
        if (st == LMPI_OK && hi > lo)
            st = lmpi_sched_copy(s, (char *)rbuf + lo, hi - lo, byte, copy, hi - lo, byte);
        if (st == LMPI_OK)
            st = lmpi_sched_fence(s);
        src = copy - lo;
        a.scounts = a.rcounts, a.sdispls = a.rdispls, a.stypes = a.rtypes;
    }
    for (int k = 0; k < n && st == LMPI_OK; k++) {
        /* intercommunicator: every remote rank, no copy to self */
        int to = (me + k) % n, from = comm->is_inter ? to : (me - k + n) % n;
        const char *sp = src + lmpi_iarray_get(a.sdispls, (size_t)to);
        char *rp = (char *)rbuf + lmpi_iarray_get(a.rdispls, (size_t)from);
        lmpi_datatype *stt = lmpi_datatype_or_null(a.stypes[to]), *rtt = lmpi_datatype_or_null(a.rtypes[from]);
        MPI_Count sc = lmpi_iarray_get(a.scounts, (size_t)to), rc = lmpi_iarray_get(a.rcounts, (size_t)from);
        if (k == 0 && !comm->is_inter) {
            st = lmpi_sched_copy(s, sp, sc, stt, rp, rc, rtt);
        } else {
            st = lmpi_sched_send(s, sp, sc, stt, to);
            if (st == LMPI_OK)
                st = lmpi_sched_recv(s, rp, rc, rtt, from);
        }
        /* rounds pair up within one group; across two groups they would
         * not (A0 waits for B1 while B1 waits for A2): one round there */
        if (st == LMPI_OK && (!comm->is_inter || k == n - 1))
            st = lmpi_sched_fence(s);
    }
    return lmpi_sched_finish(s, st, request, persist);
}

lmpi_status lmpi_impl_Alltoallw(const void *sbuf, lmpi_iarray scounts, lmpi_iarray sdispls, const MPI_Datatype stypes[],
                                void *rbuf, lmpi_iarray rcounts, lmpi_iarray rdispls, const MPI_Datatype rtypes[],
                                lmpi_comm *comm)
{
    LMPI_COLL_BLOCKING(comm, LMPI_COLL_PLAIN, do_alltoallw(sbuf, (wargs){scounts, sdispls, rcounts, rdispls, stypes, rtypes}, rbuf, comm, NULL, false));
}

lmpi_status lmpi_impl_Ialltoallw(const void *sbuf, lmpi_iarray scounts, lmpi_iarray sdispls,
                                 const MPI_Datatype stypes[], void *rbuf, lmpi_iarray rcounts, lmpi_iarray rdispls,
                                 const MPI_Datatype rtypes[], lmpi_comm *comm, MPI_Request *request)
{
    return do_alltoallw(sbuf, (wargs){scounts, sdispls, rcounts, rdispls, stypes, rtypes}, rbuf, comm, request, false);
}

lmpi_status lmpi_impl_Alltoallw_init(const void *sbuf, lmpi_iarray scounts, lmpi_iarray sdispls,
                                     const MPI_Datatype stypes[], void *rbuf, lmpi_iarray rcounts, lmpi_iarray rdispls,
                                     const MPI_Datatype rtypes[], lmpi_comm *comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return do_alltoallw(sbuf, (wargs){scounts, sdispls, rcounts, rdispls, stypes, rtypes}, rbuf, comm, request, true);
}
