/* Collective operations on intracommunicators, each built as a schedule
 * (src/coll/sched.c): the blocking call runs it, the I-form returns it as a
 * request advanced by Test/Wait.  Algorithms of this first version:
 * binomial broadcast and reduction (rank-ordered for non-commutative
 * operations), reduce + broadcast allreduce, linear gather/scatter, ring
 * allgather, pairwise alltoall, chain scan. */
#include <string.h>

#include "binding/check.h"
#include "binding/gen/impl.h"
#include "coll/sched.h"

#define IN_PLACE(p) ((const void *)(p) == MPI_IN_PLACE)
#define TRY(x)                 \
    do {                       \
        lmpi_status st_ = (x); \
        if (st_ != LMPI_OK)    \
            return st_;        \
    } while (0)

static char *at(const void *buf, MPI_Count index, const lmpi_datatype *dt)
{
    return (char *)buf + index * dt->extent;
}

static lmpi_status intra_only(lmpi_comm *comm, const char *fn)
{
    if (comm->is_inter) {
        lmpi_err_detail("%s on an intercommunicator is not implemented yet", fn);
        return LMPI_ERR_UNSUPPORTED_OPERATION;
    }
    return LMPI_OK;
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

/* Scratch space for count elements of dt, laid out as dt lays them out. */
static void *scratch_for(lmpi_sched *s, MPI_Count count, const lmpi_datatype *dt)
{
    MPI_Aint span = count ? (MPI_Aint)(count - 1) * dt->extent + dt->true_extent : 0;
    char *p = lmpi_sched_scratch(s, (size_t)span + 1);
    return p ? p - dt->true_lb : NULL;
}

/* ---- broadcast: binomial tree ------------------------------------------------------ */
static lmpi_status bcast_steps(lmpi_sched *s, lmpi_comm *c, void *buf, MPI_Count count, lmpi_datatype *dt, int root)
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
static lmpi_status reduce_steps(lmpi_sched *s, lmpi_comm *c, const void *sendbuf, void *recvbuf, MPI_Count count,
                                lmpi_datatype *dt, lmpi_op *op, int root)
{
    int n = c->size, me = c->rank;
    /* commutative: a tree rooted at root; otherwise at 0, so that every
     * combination is (lower ranks) op (higher ranks), then moved to root */
    int tree_root = op->commutative ? root : 0;
    int rel = (me - tree_root + n) % n;
    const void *mine = IN_PLACE(sendbuf) ? recvbuf : sendbuf;
    void *acc = scratch_for(s, count, dt);
    if (!acc)
        return LMPI_ERR_NO_MEM;
    TRY(lmpi_sched_copy(s, mine, count, dt, acc, count, dt));
    TRY(lmpi_sched_fence(s));
    for (int mask = 1; mask < n; mask <<= 1) {
        if (rel & mask) {
            TRY(lmpi_sched_send(s, acc, count, dt, (rel - mask + tree_root) % n));
            TRY(lmpi_sched_fence(s));
            break;
        }
        if (rel + mask < n) {
            void *in = scratch_for(s, count, dt);
            if (!in)
                return LMPI_ERR_NO_MEM;
            TRY(lmpi_sched_recv(s, in, count, dt, (rel + mask + tree_root) % n));
            TRY(lmpi_sched_fence(s));
            /* acc covers lower ranks than `in`: in = acc op in, then it is acc */
            TRY(lmpi_sched_reduce(s, acc, in, count, dt, op));
            TRY(lmpi_sched_fence(s));
            acc = in;
        }
    }
    if (me == tree_root && tree_root == root)
        return lmpi_sched_copy(s, acc, count, dt, recvbuf, count, dt);
    if (me == tree_root)
        TRY(lmpi_sched_send(s, acc, count, dt, root));
    if (me == root && tree_root != root)
        TRY(lmpi_sched_recv(s, recvbuf, count, dt, tree_root));
    return lmpi_sched_fence(s);
}

/* ---- gather / scatter: linear ------------------------------------------------------ */
typedef struct {
    lmpi_iarray counts, displs;
    MPI_Count count; /* when counts.p is NULL: every block is count, at i * count */
} blocks;

static MPI_Count block_count(const blocks *b, int i)
{
    return b->counts.p ? lmpi_iarray_get(b->counts, (size_t)i) : b->count;
}

static MPI_Count block_displ(const blocks *b, int i)
{
    return b->counts.p ? lmpi_iarray_get(b->displs, (size_t)i) : (MPI_Count)i * b->count;
}

static lmpi_status gather_steps(lmpi_sched *s, lmpi_comm *c, const void *sbuf, MPI_Count scount, lmpi_datatype *sdt,
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

static lmpi_status scatter_steps(lmpi_sched *s, lmpi_comm *c, const void *sbuf, const blocks *sb, lmpi_datatype *sdt,
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

/* ---- allgather: ring ------------------------------------------------------------------ */
static lmpi_status allgather_steps(lmpi_sched *s, lmpi_comm *c, const void *sbuf, MPI_Count scount,
                                   lmpi_datatype *sdt, void *rbuf, const blocks *rb, lmpi_datatype *rdt)
{
    int n = c->size, me = c->rank;
    if (!IN_PLACE(sbuf))
        TRY(lmpi_sched_copy(s, sbuf, scount, sdt, at(rbuf, block_displ(rb, me), rdt), block_count(rb, me), rdt));
    TRY(lmpi_sched_fence(s));
    for (int k = 0; k < n - 1; k++) {
        int sblk = (me - k + n) % n, rblk = (me - k - 1 + n) % n;
        TRY(lmpi_sched_send(s, at(rbuf, block_displ(rb, sblk), rdt), block_count(rb, sblk), rdt, (me + 1) % n));
        TRY(lmpi_sched_recv(s, at(rbuf, block_displ(rb, rblk), rdt), block_count(rb, rblk), rdt, (me - 1 + n) % n));
        TRY(lmpi_sched_fence(s));
    }
    return LMPI_OK;
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
    for (int k = 0; k < n; k++) {
        int to = (me + k) % n, from = (me - k + n) % n;
        if (k == 0) {
            TRY(lmpi_sched_copy(s, at(sbuf, block_displ(sb, me), sdt), block_count(sb, me), sdt,
                                at(rbuf, block_displ(rb, me), rdt), block_count(rb, me), rdt));
        } else {
            TRY(lmpi_sched_send(s, at(sbuf, block_displ(sb, to), sdt), block_count(sb, to), sdt, to));
            TRY(lmpi_sched_recv(s, at(rbuf, block_displ(rb, from), rdt), block_count(rb, from), rdt, from));
        }
        TRY(lmpi_sched_fence(s));
    }
    return LMPI_OK;
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

/* Run (blocking), start as a request (I-forms), or keep for MPI_Start
 * (persistent _init forms). */
static lmpi_status finish(lmpi_sched *s, lmpi_status st, MPI_Request *request, bool persist)
{
    if (st != LMPI_OK) {
        lmpi_sched_free(s);
        return st;
    }
    if (persist)
        return lmpi_sched_persistent(s, request);
    return request ? lmpi_sched_start(s, request) : lmpi_sched_run(s);
}

#define NEW_SCHED(comm, fn)                              \
    TRY(intra_only(comm, fn));                           \
    lmpi_sched *s = lmpi_sched_new(comm);                \
    if (!s)                                              \
        return LMPI_ERR_NO_MEM;

static lmpi_status get_op(MPI_Op h, lmpi_datatype *dt, lmpi_op **op)
{
    TRY(lmpi_op_arg(h, op, "op"));
    return lmpi_op_check(*op, dt);
}

static lmpi_status do_bcast(void *buf, MPI_Count count, lmpi_datatype *dt, int root, lmpi_comm *comm,
                            MPI_Request *request, bool persist)
{
    NEW_SCHED(comm, "MPI_Bcast");
    return finish(s, bcast_steps(s, comm, buf, count, dt, root), request, persist);
}

lmpi_status lmpi_impl_Bcast(void *buf, MPI_Count count, lmpi_datatype *dt, int root, lmpi_comm *comm)
{
    return do_bcast(buf, count, dt, root, comm, NULL, false);
}

lmpi_status lmpi_impl_Ibcast(void *buf, MPI_Count count, lmpi_datatype *dt, int root, lmpi_comm *comm,
                             MPI_Request *request)
{
    return do_bcast(buf, count, dt, root, comm, request, false);
}

static lmpi_status do_reduce(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, MPI_Op oph, int root,
                             lmpi_comm *comm, MPI_Request *request, bool persist)
{
    lmpi_op *op;
    TRY(get_op(oph, dt, &op));
    if (IN_PLACE(sbuf) && comm->rank != root) {
        lmpi_err_detail("MPI_IN_PLACE as sendbuf is only allowed at the root");
        return LMPI_ERR_BUFFER;
    }
    NEW_SCHED(comm, "MPI_Reduce");
    return finish(s, reduce_steps(s, comm, sbuf, rbuf, count, dt, op, root), request, persist);
}

lmpi_status lmpi_impl_Reduce(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, MPI_Op op, int root,
                             lmpi_comm *comm)
{
    return do_reduce(sbuf, rbuf, count, dt, op, root, comm, NULL, false);
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
static lmpi_status allreduce_rd_steps(lmpi_sched *s, lmpi_comm *c, const void *sbuf, void *rbuf, MPI_Count count,
                                      lmpi_datatype *dt, lmpi_op *op)
{
    int n = c->size, me = c->rank, pof2 = 1;
    while (pof2 * 2 <= n)
        pof2 *= 2;
    int rem = n - pof2, newrank;
    void *acc = scratch_for(s, count, dt), *tmp = scratch_for(s, count, dt);
    if (!acc || !tmp)
        return LMPI_ERR_NO_MEM;
    TRY(lmpi_sched_copy(s, IN_PLACE(sbuf) ? rbuf : sbuf, count, dt, acc, count, dt));
    TRY(lmpi_sched_fence(s));
    if (me < 2 * rem) {
        if (me % 2 == 0) {
            TRY(lmpi_sched_send(s, acc, count, dt, me + 1));
            newrank = -1;
        } else {
            TRY(lmpi_sched_recv(s, tmp, count, dt, me - 1));
            TRY(lmpi_sched_fence(s));
            TRY(lmpi_sched_reduce(s, tmp, acc, count, dt, op));
            newrank = me / 2;
        }
        TRY(lmpi_sched_fence(s));
    } else {
        newrank = me - rem;
    }
    if (newrank >= 0)
        for (int mask = 1; mask < pof2; mask <<= 1) {
            int nd = newrank ^ mask, dst = nd < rem ? nd * 2 + 1 : nd + rem;
            TRY(lmpi_sched_send(s, acc, count, dt, dst));
            TRY(lmpi_sched_recv(s, tmp, count, dt, dst));
            TRY(lmpi_sched_fence(s));
            TRY(lmpi_sched_reduce(s, tmp, acc, count, dt, op));
            TRY(lmpi_sched_fence(s));
        }
    if (me < 2 * rem) {
        if (me % 2)
            TRY(lmpi_sched_send(s, acc, count, dt, me - 1));
        else
            TRY(lmpi_sched_recv(s, acc, count, dt, me + 1));
        TRY(lmpi_sched_fence(s));
    }
    return lmpi_sched_copy(s, acc, count, dt, rbuf, count, dt);
}

static lmpi_status do_allreduce(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, MPI_Op oph,
                                lmpi_comm *comm, MPI_Request *request, bool persist)
{
    lmpi_op *op;
    TRY(get_op(oph, dt, &op));
    NEW_SCHED(comm, "MPI_Allreduce");
    lmpi_status st;
    if (op->commutative) {
        st = allreduce_rd_steps(s, comm, sbuf, rbuf, count, dt, op);
    } else { /* rank order matters: reduce to 0 in order, then broadcast */
        st = reduce_steps(s, comm, sbuf, rbuf, count, dt, op, 0);
        if (st == LMPI_OK)
            st = bcast_steps(s, comm, rbuf, count, dt, 0);
    }
    return finish(s, st, request, persist);
}

lmpi_status lmpi_impl_Allreduce(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, MPI_Op op,
                                lmpi_comm *comm)
{
    return do_allreduce(sbuf, rbuf, count, dt, op, comm, NULL, false);
}

lmpi_status lmpi_impl_Iallreduce(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, MPI_Op op,
                                 lmpi_comm *comm, MPI_Request *request)
{
    return do_allreduce(sbuf, rbuf, count, dt, op, comm, request, false);
}

static lmpi_status do_gather(const void *sbuf, MPI_Count scount, lmpi_datatype *sdt, void *rbuf, blocks rb,
                             lmpi_datatype *rdt, int root, lmpi_comm *comm, MPI_Request *request, bool persist)
{
    if (comm->rank == root)
        TRY(need_type(rdt, "recvtype"));
    if (comm->rank != root || !IN_PLACE(sbuf))
        TRY(need_type(sdt, "sendtype"));
    NEW_SCHED(comm, "MPI_Gather");
    return finish(s, gather_steps(s, comm, sbuf, scount, sdt, rbuf, &rb, rdt, root), request, persist);
}

lmpi_status lmpi_impl_Gather(const void *sbuf, MPI_Count scount, lmpi_datatype *sdt, void *rbuf, MPI_Count rcount,
                             lmpi_datatype *rdt, int root, lmpi_comm *comm)
{
    return do_gather(sbuf, scount, sdt, rbuf, (blocks){.count = rcount}, rdt, root, comm, NULL, false);
}

lmpi_status lmpi_impl_Igather(const void *sbuf, MPI_Count scount, lmpi_datatype *sdt, void *rbuf, MPI_Count rcount,
                              lmpi_datatype *rdt, int root, lmpi_comm *comm, MPI_Request *request)
{
    return do_gather(sbuf, scount, sdt, rbuf, (blocks){.count = rcount}, rdt, root, comm, request, false);
}

lmpi_status lmpi_impl_Gatherv(const void *sbuf, MPI_Count scount, lmpi_datatype *sdt, void *rbuf, lmpi_iarray rcounts,
                              lmpi_iarray displs, lmpi_datatype *rdt, int root, lmpi_comm *comm)
{
    return do_gather(sbuf, scount, sdt, rbuf, (blocks){rcounts, displs, 0}, rdt, root, comm, NULL, false);
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
    if (comm->rank == root)
        TRY(need_type(sdt, "sendtype"));
    if (comm->rank != root || !IN_PLACE(rbuf))
        TRY(need_type(rdt, "recvtype"));
    NEW_SCHED(comm, "MPI_Scatter");
    return finish(s, scatter_steps(s, comm, sbuf, &sb, sdt, rbuf, rcount, rdt, root), request, persist);
}

lmpi_status lmpi_impl_Scatter(const void *sbuf, MPI_Count scount, lmpi_datatype *sdt, void *rbuf, MPI_Count rcount,
                              lmpi_datatype *rdt, int root, lmpi_comm *comm)
{
    return do_scatter(sbuf, (blocks){.count = scount}, sdt, rbuf, rcount, rdt, root, comm, NULL, false);
}

lmpi_status lmpi_impl_Iscatter(const void *sbuf, MPI_Count scount, lmpi_datatype *sdt, void *rbuf, MPI_Count rcount,
                               lmpi_datatype *rdt, int root, lmpi_comm *comm, MPI_Request *request)
{
    return do_scatter(sbuf, (blocks){.count = scount}, sdt, rbuf, rcount, rdt, root, comm, request, false);
}

lmpi_status lmpi_impl_Scatterv(const void *sbuf, lmpi_iarray scounts, lmpi_iarray displs, lmpi_datatype *sdt,
                               void *rbuf, MPI_Count rcount, lmpi_datatype *rdt, int root, lmpi_comm *comm)
{
    return do_scatter(sbuf, (blocks){scounts, displs, 0}, sdt, rbuf, rcount, rdt, root, comm, NULL, false);
}

lmpi_status lmpi_impl_Iscatterv(const void *sbuf, lmpi_iarray scounts, lmpi_iarray displs, lmpi_datatype *sdt,
                                void *rbuf, MPI_Count rcount, lmpi_datatype *rdt, int root, lmpi_comm *comm,
                                MPI_Request *request)
{
    return do_scatter(sbuf, (blocks){scounts, displs, 0}, sdt, rbuf, rcount, rdt, root, comm, request, false);
}

static lmpi_status do_allgather(const void *sbuf, MPI_Count scount, lmpi_datatype *sdt, void *rbuf, blocks rb,
                                lmpi_datatype *rdt, lmpi_comm *comm, MPI_Request *request, bool persist)
{
    TRY(need_type(rdt, "recvtype"));
    if (!IN_PLACE(sbuf))
        TRY(need_type(sdt, "sendtype"));
    NEW_SCHED(comm, "MPI_Allgather");
    return finish(s, allgather_steps(s, comm, sbuf, scount, sdt, rbuf, &rb, rdt), request, persist);
}

lmpi_status lmpi_impl_Allgather(const void *sbuf, MPI_Count scount, lmpi_datatype *sdt, void *rbuf, MPI_Count rcount,
                                lmpi_datatype *rdt, lmpi_comm *comm)
{
    return do_allgather(sbuf, scount, sdt, rbuf, (blocks){.count = rcount}, rdt, comm, NULL, false);
}

lmpi_status lmpi_impl_Iallgather(const void *sbuf, MPI_Count scount, lmpi_datatype *sdt, void *rbuf,
                                 MPI_Count rcount, lmpi_datatype *rdt, lmpi_comm *comm, MPI_Request *request)
{
    return do_allgather(sbuf, scount, sdt, rbuf, (blocks){.count = rcount}, rdt, comm, request, false);
}

lmpi_status lmpi_impl_Allgatherv(const void *sbuf, MPI_Count scount, lmpi_datatype *sdt, void *rbuf,
                                 lmpi_iarray rcounts, lmpi_iarray displs, lmpi_datatype *rdt, lmpi_comm *comm)
{
    return do_allgather(sbuf, scount, sdt, rbuf, (blocks){rcounts, displs, 0}, rdt, comm, NULL, false);
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
    TRY(need_type(rdt, "recvtype"));
    if (!IN_PLACE(sbuf))
        TRY(need_type(sdt, "sendtype"));
    NEW_SCHED(comm, "MPI_Alltoall");
    return finish(s, alltoall_steps(s, comm, sbuf, &sb, sdt, rbuf, &rb, rdt), request, persist);
}

lmpi_status lmpi_impl_Alltoall(const void *sbuf, MPI_Count scount, lmpi_datatype *sdt, void *rbuf, MPI_Count rcount,
                               lmpi_datatype *rdt, lmpi_comm *comm)
{
    return do_alltoall(sbuf, (blocks){.count = scount}, sdt, rbuf, (blocks){.count = rcount}, rdt, comm, NULL, false);
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
    return do_alltoall(sbuf, (blocks){scounts, sdispls, 0}, sdt, rbuf, (blocks){rcounts, rdispls, 0}, rdt, comm,
                       NULL, false);
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
    NEW_SCHED(comm, exclusive ? "MPI_Exscan" : "MPI_Scan");
    return finish(s, scan_steps(s, comm, sbuf, rbuf, count, dt, op, exclusive), request, persist);
}

lmpi_status lmpi_impl_Scan(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, MPI_Op op, lmpi_comm *comm)
{
    return do_scan(sbuf, rbuf, count, dt, op, comm, false, NULL, false);
}

lmpi_status lmpi_impl_Iscan(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, MPI_Op op,
                            lmpi_comm *comm, MPI_Request *request)
{
    return do_scan(sbuf, rbuf, count, dt, op, comm, false, request, false);
}

lmpi_status lmpi_impl_Exscan(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, MPI_Op op,
                             lmpi_comm *comm)
{
    return do_scan(sbuf, rbuf, count, dt, op, comm, true, NULL, false);
}

lmpi_status lmpi_impl_Iexscan(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, MPI_Op op,
                              lmpi_comm *comm, MPI_Request *request)
{
    return do_scan(sbuf, rbuf, count, dt, op, comm, true, request, false);
}

/* Ibarrier: the dissemination barrier as a schedule of empty messages. */
static lmpi_status do_barrier(lmpi_comm *comm, MPI_Request *request, bool persist)
{
    NEW_SCHED(comm, "MPI_Ibarrier");
    lmpi_datatype *byte = lmpi_datatype_from_handle(MPI_BYTE);
    int n = comm->size, me = comm->rank;
    lmpi_status st = LMPI_OK;
    for (int d = 1; d < n && st == LMPI_OK; d *= 2) {
        st = lmpi_sched_send(s, NULL, 0, byte, (me + d) % n);
        if (st == LMPI_OK)
            st = lmpi_sched_recv(s, NULL, 0, byte, (me - d + n) % n);
        if (st == LMPI_OK)
            st = lmpi_sched_fence(s);
    }
    return finish(s, st, request, persist);
}

lmpi_status lmpi_impl_Ibarrier(lmpi_comm *comm, MPI_Request *request) { return do_barrier(comm, request, false); }

/* ---- reduce_scatter: a reduction to rank 0, then a scatter of the blocks ---- */
static lmpi_status do_reduce_scatter(const void *sbuf, void *rbuf, blocks rb, lmpi_datatype *dt, MPI_Op oph,
                                     lmpi_comm *comm, MPI_Request *request, bool persist)
{
    lmpi_op *op;
    TRY(get_op(oph, dt, &op));
    NEW_SCHED(comm, "MPI_Reduce_scatter");
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
        st = reduce_steps(s, comm, IN_PLACE(sbuf) ? rbuf : sbuf, full, total, dt, op, 0);
    if (st == LMPI_OK)
        st = scatter_steps(s, comm, full, &packed, dt, rbuf, block_count(&rb, me), dt, 0);
    return finish(s, st, request, persist);
}

lmpi_status lmpi_impl_Reduce_scatter_block(const void *sbuf, void *rbuf, MPI_Count rcount, lmpi_datatype *dt,
                                           MPI_Op op, lmpi_comm *comm)
{
    return do_reduce_scatter(sbuf, rbuf, (blocks){.count = rcount}, dt, op, comm, NULL, false);
}

lmpi_status lmpi_impl_Ireduce_scatter_block(const void *sbuf, void *rbuf, MPI_Count rcount, lmpi_datatype *dt,
                                            MPI_Op op, lmpi_comm *comm, MPI_Request *request)
{
    return do_reduce_scatter(sbuf, rbuf, (blocks){.count = rcount}, dt, op, comm, request, false);
}

lmpi_status lmpi_impl_Reduce_scatter(const void *sbuf, void *rbuf, lmpi_iarray rcounts, lmpi_datatype *dt, MPI_Op op,
                                     lmpi_comm *comm)
{
    return do_reduce_scatter(sbuf, rbuf, (blocks){rcounts, rcounts, 0}, dt, op, comm, NULL, false);
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
    int n = comm->size, me = comm->rank;
    if (!a.rtypes || (!IN_PLACE(sbuf) && !a.stypes)) {
        lmpi_err_detail("sendtypes or recvtypes is NULL");
        return LMPI_ERR_ARG;
    }
    for (int i = 0; i < n; i++) {
        TRY(need_type(lmpi_datatype_or_null(a.rtypes[i]), "a recvtypes entry"));
        if (!IN_PLACE(sbuf))
            TRY(need_type(lmpi_datatype_or_null(a.stypes[i]), "a sendtypes entry"));
    }
    NEW_SCHED(comm, "MPI_Alltoallw");
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
        int to = (me + k) % n, from = (me - k + n) % n;
        const char *sp = src + lmpi_iarray_get(a.sdispls, (size_t)to);
        char *rp = (char *)rbuf + lmpi_iarray_get(a.rdispls, (size_t)from);
        lmpi_datatype *stt = lmpi_datatype_or_null(a.stypes[to]), *rtt = lmpi_datatype_or_null(a.rtypes[from]);
        MPI_Count sc = lmpi_iarray_get(a.scounts, (size_t)to), rc = lmpi_iarray_get(a.rcounts, (size_t)from);
        if (k == 0) {
            st = lmpi_sched_copy(s, sp, sc, stt, rp, rc, rtt);
        } else {
            st = lmpi_sched_send(s, sp, sc, stt, to);
            if (st == LMPI_OK)
                st = lmpi_sched_recv(s, rp, rc, rtt, from);
        }
        if (st == LMPI_OK)
            st = lmpi_sched_fence(s);
    }
    return finish(s, st, request, persist);
}

lmpi_status lmpi_impl_Alltoallw(const void *sbuf, lmpi_iarray scounts, lmpi_iarray sdispls, const MPI_Datatype stypes[],
                                void *rbuf, lmpi_iarray rcounts, lmpi_iarray rdispls, const MPI_Datatype rtypes[],
                                lmpi_comm *comm)
{
    return do_alltoallw(sbuf, (wargs){scounts, sdispls, rcounts, rdispls, stypes, rtypes}, rbuf, comm, NULL, false);
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
