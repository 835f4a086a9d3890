/* Small blocking collectives without a schedule.  Below LMPI_COLL_SHORT
 * bytes a schedule's bookkeeping (steps, requests, rounds) costs more than
 * the messages: these versions send with the transport's immediate path,
 * receive into requests on the stack and keep scratch data on the stack, so
 * they allocate nothing.  Same algorithms as the schedules (binomial trees,
 * recursive doubling, dissemination) and the same tags (one sequence number
 * per collective), so they mix with nonblocking collectives on the same
 * communicator. */
#include <string.h>

#include "coll/sched.h"
#include "coll/short.h"
#include "runtime/config.h"


typedef struct {
    lmpi_comm *comm;
    uint32_t ctx;
    int tag;
} xfer;

/* Tags: one sequence number per collective.  On internal communicators (a
 * node-aware collective's node and node-roots phases) the schedules of the
 * parent use the parent's numbers in the same context, so these take
 * another range. */
int lmpi_coll_short_tag(lmpi_comm *c)
{
    int range = (c->flags & LMPI_COMM_INTERNAL) ? 0x20000000 : LMPI_COLL_TAG_BLOCKING;
    return range | (int)(c->coll_seq++ & LMPI_COLL_SEQ_MASK);
}

static xfer begin(lmpi_comm *c)
{
    lmpi_coll_stat.short_path++;
    return (xfer){c, c->context_id + LMPI_CTX_COLL, lmpi_coll_short_tag(c)};
}

bool lmpi_coll_short_fits_bytes(MPI_Count bytes)
{
    int64_t limit = lmpi_config.coll_short < LMPI_COLL_SHORT_MAX ? lmpi_config.coll_short : LMPI_COLL_SHORT_MAX;
    return bytes <= limit;
}

bool lmpi_coll_short_fits(MPI_Count count, const lmpi_datatype *dt)
{
    return dt->contiguous && lmpi_coll_short_fits_bytes(count * dt->size);
}

bool lmpi_coll_short_ok(const lmpi_comm *c, MPI_Count count, const lmpi_datatype *dt)
{
    return !c->is_inter && lmpi_coll_short_fits(count, dt);
}

static lmpi_status send(const void *bytes, size_t n, int dest, const xfer *x)
{
    return lmpi_icoll_send(x->comm, x->ctx, x->tag, bytes, n, dest);
}

static lmpi_status recv(void *bytes, size_t n, int src, const xfer *x)
{
    return lmpi_icoll_recv(x->comm, x->ctx, x->tag, bytes, n, src);
}

static lmpi_status exchange(const void *out, void *in, size_t n, int dest, int src, const xfer *x)
{
    return lmpi_icoll_exchange(x->comm, x->ctx, x->tag, out, n, dest, in, n, src);
}

lmpi_status lmpi_coll_short_barrier(lmpi_comm *c)
{
    xfer x = begin(c);
    int n = c->size, me = c->rank;
    char token = 0, sink;
    for (int d = 1; d < n; d *= 2) {
        lmpi_status st = exchange(&token, &sink, 0, (me + d) % n, (me - d + n) % n, &x);
        if (st != LMPI_OK)
            return st;
    }
    return LMPI_OK;
}

lmpi_status lmpi_coll_short_bcast(void *buf, MPI_Count count, lmpi_datatype *dt, int root, lmpi_comm *c,
                                  bool mismatched)
{
    xfer x = begin(c);
    return lmpi_icoll_tree_bcast(c, x.ctx, x.tag, (char *)lmpi_dt_contig_ptr(buf, dt), (size_t)(count * dt->size), root,
                                 mismatched);
}

lmpi_status lmpi_coll_short_handoff(void *buf, size_t bytes, int from, int to, lmpi_comm *c)
{
    xfer x = begin(c);
    if (from == to)
        return LMPI_OK;
    if (c->rank == from)
        return send(buf, bytes, to, &x);
    return c->rank == to ? recv(buf, bytes, from, &x) : LMPI_OK;
}

/* User-style pointer for BYTES laid out as a contiguous DT. */
static void *typed(void *bytes, const lmpi_datatype *dt) { return (char *)bytes - dt->true_lb; }

/* Binomial reduction to ROOT; the operation is commutative (the caller
 * checks), so any combination order is right. */
lmpi_status lmpi_coll_short_reduce(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, lmpi_op *op,
                                   int root, lmpi_comm *c)
{
    xfer x = begin(c);
    int n = c->size, rel = (c->rank - root + n) % n;
    size_t bytes = (size_t)(count * dt->size);
    _Alignas(16) char accbuf[LMPI_COLL_SHORT_MAX], tmp[LMPI_COLL_SHORT_MAX];
    char *acc = c->rank == root ? (char *)lmpi_dt_contig_ptr(rbuf, dt) : accbuf;
    /* in place (the root, or every rank of a node-aware allreduce's first
     * phase): the contribution is in rbuf */
    const char *mine = lmpi_dt_contig_ptr(sbuf == MPI_IN_PLACE ? rbuf : sbuf, dt);
    if (mine != acc)
        memcpy(acc, mine, bytes);
    for (int mask = 1; mask < n; mask <<= 1) {
        lmpi_status st;
        if (rel & mask)
            return send(acc, bytes, (rel - mask + root) % n, &x);
        if (rel + mask < n) {
            st = recv(tmp, bytes, (rel + mask + root) % n, &x);
            if (st == LMPI_OK)
                st = lmpi_op_apply(op, typed(tmp, dt), typed(acc, dt), count, dt);
            if (st != LMPI_OK)
                return st;
        }
    }
    return LMPI_OK;
}

/* Recursive doubling (as allreduce_rd_steps in coll.c): with n not a power
 * of two the first 2 * (n - pof2) ranks pair up first. */
lmpi_status lmpi_coll_short_allreduce(const void *sbuf, void *rbuf, MPI_Count count, lmpi_datatype *dt, lmpi_op *op,
                                      lmpi_comm *c)
{
    xfer x = begin(c);
    int n = c->size, me = c->rank, pof2 = 1;
    while (pof2 * 2 <= n)
        pof2 *= 2;
    int rem = n - pof2, newrank = me - rem;
    size_t bytes = (size_t)(count * dt->size);
    char *acc = (char *)lmpi_dt_contig_ptr(rbuf, dt);
    _Alignas(16) char tmp[LMPI_COLL_SHORT_MAX];
    lmpi_status st = LMPI_OK;
    if (sbuf != MPI_IN_PLACE)
        memcpy(acc, lmpi_dt_contig_ptr(sbuf, dt), bytes);
    if (me < 2 * rem) {
        if (me % 2 == 0) {
            st = send(acc, bytes, me + 1, &x);
            newrank = -1;
        } else {
            st = recv(tmp, bytes, me - 1, &x);
            if (st == LMPI_OK)
                st = lmpi_op_apply(op, typed(tmp, dt), typed(acc, dt), count, dt);
            newrank = me / 2;
        }
    }
    for (int mask = 1; newrank >= 0 && mask < pof2 && st == LMPI_OK; mask <<= 1) {
        int nd = newrank ^ mask, peer = nd < rem ? nd * 2 + 1 : nd + rem;
        st = exchange(acc, tmp, bytes, peer, peer, &x);
        if (st == LMPI_OK)
            st = lmpi_op_apply(op, typed(tmp, dt), typed(acc, dt), count, dt);
    }
    if (st == LMPI_OK && me < 2 * rem) {
        if (me % 2) {
            st = send(acc, bytes, me - 1, &x);
        } else {
            st = recv(acc, bytes, me + 1, &x);
        }
    }
    return st;
}

/* Every rank's BYTES into ALL (contiguous, rank order; MINE NULL: in
 * place).  Recursive doubling when the size is a power of two (log2 n
 * exchanges of growing halves of ALL), a ring otherwise (n - 1 exchanges;
 * the caller keeps it to small groups). */
lmpi_status lmpi_coll_short_allgather(const void *mine, char *all, size_t bytes, lmpi_comm *c)
{
    xfer x = begin(c);
    int n = c->size, me = c->rank;
    lmpi_status st = LMPI_OK;
    if (mine)
        memcpy(all + (size_t)me * bytes, mine, bytes);
    if ((n & (n - 1)) == 0) {
        for (int m = 1; m < n && st == LMPI_OK; m <<= 1) {
            int peer = me ^ m;
            size_t have = (size_t)(me & ~(m - 1)) * bytes, get = (size_t)(peer & ~(m - 1)) * bytes;
            st = exchange(all + have, all + get, (size_t)m * bytes, peer, peer, &x);
        }
        return st;
    }
    for (int i = 0; i < n - 1 && st == LMPI_OK; i++) {
        size_t out = (size_t)((me - i + n) % n) * bytes, in = (size_t)((me - i - 1 + n) % n) * bytes;
        st = exchange(all + out, all + in, bytes, (me + 1) % n, (me - 1 + n) % n, &x);
    }
    return st;
}

/* Block k of OUT to rank k, block k of IN from it (BYTES each, contiguous,
 * not in place), n <= LMPI_COLL_SHORT_ALLTOALL_MAX: every receive posted
 * (requests on the stack), then every send, then the waits, as one batch
 * of the schedule's pairwise exchange (one exchange at a time doubled the
 * time at 4 ranks on 2 cores: a trip through the scheduler per partner). */
lmpi_status lmpi_coll_short_alltoall(const char *out, char *in, size_t bytes, lmpi_comm *c)
{
    xfer x = begin(c);
    int n = c->size, me = c->rank;
    lmpi_request r[LMPI_COLL_SHORT_ALLTOALL_MAX];
    for (int k = 1; k < n; k++) {
        int from = (me - k + n) % n;
        lmpi_icoll_post_recv(&r[k], c, x.ctx, x.tag, in + (size_t)from * bytes, bytes, from);
    }
    lmpi_status st = LMPI_OK;
    for (int k = 1; k < n && st == LMPI_OK; k++) {
        int to = (me + k) % n;
        st = send(out + (size_t)to * bytes, bytes, to, &x);
    }
    memcpy(in + (size_t)me * bytes, out + (size_t)me * bytes, bytes);
    for (int k = 1; k < n; k++) { /* every posted receive finishes, also after an error */
        lmpi_status st2 = lmpi_icoll_finish_recv(&r[k]);
        if (st == LMPI_OK)
            st = st2;
    }
    return st;
}
