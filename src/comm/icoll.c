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

static lmpi_status exchange(lmpi_comm *c, uint32_t ctx, const void *sbuf, size_t sbytes, int dest, void *rbuf,
                            size_t rbytes, int src, int tag)
{
    lmpi_request *rr = NULL, *sr = NULL;
    lmpi_status st = lmpi_pt2pt_irecv(rbuf, rbytes, src, tag, c, ctx, &rr);
    if (st == LMPI_OK)
        st = lmpi_pt2pt_isend(sbuf, sbytes, dest, tag, c, ctx, LMPI_MODE_STANDARD, NULL, &sr);
    lmpi_status s1 = sr ? lmpi_pt2pt_wait_free(sr, MPI_STATUS_IGNORE) : LMPI_OK;
    lmpi_status s2 = rr ? lmpi_pt2pt_wait_free(rr, MPI_STATUS_IGNORE) : LMPI_OK;
    return st != LMPI_OK ? st : s1 != LMPI_OK ? s1 : s2;
}

/* Dissemination: after ceil(log2 n) rounds everyone has seen every value;
 * max is idempotent, so values seen twice do no harm. */
lmpi_status lmpi_icoll_allreduce_max_u32(lmpi_comm *c, uint32_t *v)
{
    int n = c->size, me = c->rank, tag = next_tag(c);
    for (int d = 1; d < n; d *= 2) {
        uint32_t in;
        lmpi_status st = exchange(c, c->context_id + LMPI_CTX_COLL, v, sizeof(*v), (me + d) % n, &in, sizeof(in),
                                  (me - d + n) % n, tag);
        if (st != LMPI_OK)
            return st;
        if (in > *v)
            *v = in;
    }
    return LMPI_OK;
}

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
        st = exchange(c, c->context_id + LMPI_CTX_COLL, work, bytes * (size_t)cnt, (me - d + n) % n,
                      work + bytes * (size_t)have, bytes * (size_t)cnt, (me + d) % n, tag);
        have += cnt;
    }
    if (st == LMPI_OK)
        for (int i = 0; i < n; i++)
            memcpy((char *)all + bytes * (size_t)((me + i) % n), work + bytes * (size_t)i, bytes);
    lmpi_free(work);
    return st;
}

/* Binomial tree from root. */
lmpi_status lmpi_icoll_bcast(lmpi_comm *c, void *buf, size_t bytes, int root)
{
    int n = c->size, rel = (c->rank - root + n) % n, tag = next_tag(c);
    uint32_t ctx = c->context_id + LMPI_CTX_COLL;
    int mask = 1;
    while (mask < n) {
        if (rel & mask) {
            lmpi_request *r;
            lmpi_status st = lmpi_pt2pt_irecv(buf, bytes, (rel - mask + root) % n, tag, c, ctx, &r);
            if (st == LMPI_OK)
                st = lmpi_pt2pt_wait_free(r, MPI_STATUS_IGNORE);
            if (st != LMPI_OK)
                return st;
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rel + mask < n) {
            lmpi_request *r;
            lmpi_status st = lmpi_pt2pt_isend(buf, bytes, (rel + mask + root) % n, tag, c, ctx, LMPI_MODE_STANDARD,
                                              NULL, &r);
            if (st == LMPI_OK)
                st = lmpi_pt2pt_wait_free(r, MPI_STATUS_IGNORE);
            if (st != LMPI_OK)
                return st;
        }
    return LMPI_OK;
}
