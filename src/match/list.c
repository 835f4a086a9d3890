#include "match/match.h"

static struct {
    lmpi_request *posted_head, *posted_tail;
    lmpi_unexpected *unexp_head, *unexp_tail;
    size_t posted_len, unexp_len;
} q;

static inline bool matches(uint32_t ctx, int rank, int tag, uint32_t want_ctx, int want_rank, int want_tag)
{
    return ctx == want_ctx && (want_rank == MPI_ANY_SOURCE || want_rank == rank) &&
           (want_tag == MPI_ANY_TAG || want_tag == tag);
}

void lmpi_match_post(lmpi_request *r)
{
    r->next = NULL;
    r->prev = q.posted_tail;
    if (q.posted_tail)
        q.posted_tail->next = r;
    else
        q.posted_head = r;
    q.posted_tail = r;
    q.posted_len++;
}

static void posted_unlink(lmpi_request *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        q.posted_head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        q.posted_tail = r->prev;
    r->next = r->prev = NULL;
    q.posted_len--;
}

lmpi_request *lmpi_match_posted_take(uint32_t ctx, int rank, int tag)
{
    for (lmpi_request *r = q.posted_head; r; r = r->next)
        if (matches(ctx, rank, tag, r->ctx, r->rank, r->tag)) {
            posted_unlink(r);
            return r;
        }
    return NULL;
}

int lmpi_match_posted_remove(lmpi_request *r)
{
    for (lmpi_request *p = q.posted_head; p; p = p->next)
        if (p == r) {
            posted_unlink(r);
            return 1;
        }
    return 0;
}

void lmpi_match_unexpected_add(lmpi_unexpected *u)
{
    u->next = NULL;
    if (q.unexp_tail)
        q.unexp_tail->next = u;
    else
        q.unexp_head = u;
    q.unexp_tail = u;
    q.unexp_len++;
}

lmpi_unexpected *lmpi_match_unexpected_take(uint32_t ctx, int rank, int tag)
{
    lmpi_unexpected *prev = NULL;
    for (lmpi_unexpected *u = q.unexp_head; u; prev = u, u = u->next) {
        if (!matches(u->hdr.ctx, u->hdr.rank, u->hdr.tag, ctx, rank, tag))
            continue;
        if (prev)
            prev->next = u->next;
        else
            q.unexp_head = u->next;
        if (q.unexp_tail == u)
            q.unexp_tail = prev;
        q.unexp_len--;
        u->next = NULL;
        return u;
    }
    return NULL;
}

size_t lmpi_match_posted_length(void)
{
    return q.posted_len;
}

size_t lmpi_match_unexpected_length(void)
{
    return q.unexp_len;
}
