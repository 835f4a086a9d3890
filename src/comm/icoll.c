/* The few collectives that building a communicator needs, over
 * point-to-point on the parent's collective context.  They stay here (and
 * simple) so that communicator creation does not depend on the collective
 * module; each call takes a fresh tag from the communicator's collective
 * sequence, so they never mix with one another or with a barrier. */
#include <string.h>

#include "comm/comm.h"
#include "pt2pt/pt2pt.h"

#define ICOLL_TAG_BASE 0x40000000

static int next_tag(lmpi_comm *c)
{
    if (c->flags & LMPI_COMM_FIXED_TAG)
        return (int)c->coll_seq;
    return ICOLL_TAG_BASE | (int)(c->coll_seq++ & 0x3fffffff);
}

/* ---- byte-level steps on an explicit context and tag (also the schedule-
 * free collectives of src/coll/short.c): immediate sends when the transport
 * takes the message at once, receives into requests on the stack ---------- */
lmpi_status lmpi_icoll_send(lmpi_comm *c, uint32_t ctx, int tag, const void *buf, size_t bytes, int dest)
{
    if (lmpi_pt2pt_try_send(buf, bytes, dest, tag, c, ctx))
        return LMPI_OK;
    lmpi_request *r;
    lmpi_status st = lmpi_pt2pt_isend(buf, bytes, dest, tag, c, ctx, LMPI_MODE_STANDARD, NULL, &r);
    return st != LMPI_OK ? st : lmpi_pt2pt_wait_free(r, MPI_STATUS_IGNORE);
}

void lmpi_icoll_post_recv(lmpi_request *r, lmpi_comm *c, uint32_t ctx, int tag, void *buf, size_t bytes, int src)
{
    lmpi_pt2pt_recv_init(r, buf, bytes, src, tag, c, ctx);
    lmpi_pt2pt_recv_start(r);
}

#define post lmpi_icoll_post_recv
#define finish_recv lmpi_icoll_finish_recv

lmpi_status lmpi_icoll_finish_recv(lmpi_request *r)
{
    lmpi_request_wait(r); /* (a failure or a revoke may end it: src/ft) */
    if (LMPI_UNLIKELY(r->status.MPI_ERROR == MPI_ERR_TRUNCATE)) {
        lmpi_err_detail("a collective's message is longer than expected (mismatched counts?)");
        return LMPI_ERR_TRUNCATE;
    }
    return r->status.MPI_ERROR == MPI_SUCCESS ? LMPI_OK : lmpi_pt2pt_status_error(&r->status);
}

lmpi_status lmpi_icoll_recv(lmpi_comm *c, uint32_t ctx, int tag, void *buf, size_t bytes, int src)
{
    lmpi_request r;
    post(&r, c, ctx, tag, buf, bytes, src);
    return finish_recv(&r);
}

/* Send to DEST and receive from SRC at once (the receive posted first, so
 * pairs of ranks exchanging never deadlock). */
lmpi_status lmpi_icoll_exchange(lmpi_comm *c, uint32_t ctx, int tag, const void *out, size_t sbytes, int dest,
                                void *in, size_t rbytes, int src)
{
    lmpi_request r;
    post(&r, c, ctx, tag, in, rbytes, src);
    lmpi_status st = lmpi_icoll_send(c, ctx, tag, out, sbytes, dest);
    lmpi_status st2 = finish_recv(&r);
    return st != LMPI_OK ? st : st2;
}

/* Binomial tree from root.  A rank whose message from above has not the
 * size of its own buffer (counts or types that differ from the root's: an
 * erroneous program) still passes a message on, or its subtree would wait
 * forever, and one its children cannot take for a match: what it got when
 * that was short, one byte more than its buffer when it was truncated.  So
 * every rank below a mismatch gets an error too.  MISMATCHED: this rank
 * (the root of this tree) already found one (a node leader, coll/node.c). */
lmpi_status lmpi_icoll_tree_bcast(lmpi_comm *c, uint32_t ctx, int tag, void *buf, size_t bytes, int root,
                                  bool mismatched)
{
    int n = c->size, rel = (c->rank - root + n) % n, mask = 1;
    lmpi_status mismatch = LMPI_OK;
    size_t pass = bytes;
    bool poison = mismatched;
    while (mask < n) {
        if (rel & mask) {
            lmpi_request r;
            post(&r, c, ctx, tag, buf, bytes, (rel - mask + root) % n);
            lmpi_status st = finish_recv(&r);
            size_t got = (size_t)lmpi_status_bytes(&r.status);
            if (st == LMPI_OK && got != bytes) {
                lmpi_err_detail("the root's message has %zu bytes, this rank's buffer %zu (counts or types differ "
                                "from the root's)", got, bytes);
                st = LMPI_ERR_COUNT;
                pass = got;
            } else if (st == LMPI_ERR_TRUNCATE)
                poison = true;
            else if (st != LMPI_OK)
                return st; /* a failure or a revoke: src/ft tells the others */
            mismatch = st;
            break;
        }
        mask <<= 1;
    }
    char *longer = NULL;
    if (poison && (longer = lmpi_malloc(bytes + 1, LMPI_MEM_COLL))) {
        memcpy(longer, buf, bytes);
        longer[bytes] = 0;
        pass = bytes + 1;
    }
    lmpi_status st = LMPI_OK;
    for (mask >>= 1; mask > 0 && st == LMPI_OK; mask >>= 1)
        if (rel + mask < n)
            st = lmpi_icoll_send(c, ctx, tag, longer ? longer : buf, pass, (rel + mask + root) % n);
    lmpi_free(longer);
    return mismatch != LMPI_OK ? mismatch : st;
}

/* Dissemination: after ceil(log2 n) rounds everyone has seen every value;
 * max is idempotent, so values seen twice do no harm.  Elementwise over k
 * values (at most 4). */
lmpi_status lmpi_icoll_allreduce_max_u32n(lmpi_comm *c, uint32_t *v, int k)
{
    if (k > 4)
        return LMPI_ERR_INTERN;
    int n = c->size, me = c->rank, tag = next_tag(c);
    for (int d = 1; d < n; d *= 2) {
        uint32_t in[4];
        lmpi_status st = lmpi_icoll_exchange(c, c->context_id + LMPI_CTX_COLL, tag, v, sizeof(*v) * (size_t)k,
                                             (me + d) % n, in, sizeof(*v) * (size_t)k, (me - d + n) % n);
        if (st != LMPI_OK)
            return st;
        for (int i = 0; i < k; i++)
            if (in[i] > v[i])
                v[i] = in[i];
    }
    return LMPI_OK;
}

lmpi_status lmpi_icoll_allreduce_max_u32(lmpi_comm *c, uint32_t *v) { return lmpi_icoll_allreduce_max_u32n(c, v, 1); }

/* Bruck's allgather: log2(n) rounds; block i of the work buffer holds rank
 * (me + i) % n, rotated into place at the end. */
lmpi_status lmpi_icoll_allgather(lmpi_comm *c, const void *mine, void *all, size_t bytes)
{
    int n = c->size, me = c->rank, tag = next_tag(c);
    char *work = lmpi_malloc(bytes * (size_t)n + 1, LMPI_MEM_COMM);
    if (!work)
        return LMPI_ERR_NO_MEM;
    memcpy(work, mine, bytes);
    int have = 1;
    lmpi_status st = LMPI_OK;
    for (int d = 1; d < n && st == LMPI_OK; d *= 2) {
        int cnt = have < n - have ? have : n - have;
        st = lmpi_icoll_exchange(c, c->context_id + LMPI_CTX_COLL, tag, work, bytes * (size_t)cnt, (me - d + n) % n,
                                 work + bytes * (size_t)have, bytes * (size_t)cnt, (me + d) % n);
        have += cnt;
    }
    if (st == LMPI_OK)
        for (int i = 0; i < n; i++)
            memcpy((char *)all + bytes * (size_t)((me + i) % n), work + bytes * (size_t)i, bytes);
    lmpi_free(work);
    return st;
}

lmpi_status lmpi_icoll_bcast(lmpi_comm *c, void *buf, size_t bytes, int root)
{
    return lmpi_icoll_tree_bcast(c, c->context_id + LMPI_CTX_COLL, next_tag(c), buf, bytes, root, false);
}
