/* `4d`: the multidimensional queue of Zounmevo & Afsahi (paper:
 * multidimensional-message-queues, sections 4.1-4.3).
 *
 * A rank splits into four coordinates of b bits, (c3, c2, c1, c0), with
 * dimensionSpan = 2^b = 2^ceil(log2(size)/4).  c3 selects a Plane (an
 * ordered list), c2 an X slot (an array inside the Plane), c1 a Segment on
 * that slot's ordered Y list; a Segment holds the short PRQ and UMQ lists of
 * the ranks that differ only in c0.  Planes and Segments exist only while
 * they hold items: created where the failed search stopped, freed when they
 * empty.  The worst-case reach of an item is span + 1 + span + span pointer
 * steps, instead of the queue length. */
#include <string.h>

#include "match/structure.h"
#include "runtime/pool.h"

typedef struct segment {
    struct segment *next; /* next Y in the slot, ascending */
    uint32_t y;
    uint32_t unused;
    lmpi_mqi_list prq, umq;
} segment;

typedef struct plane {
    struct plane *next; /* ascending c3 */
    uint32_t c3;
    uint32_t nsegs;
    segment *x[]; /* span Y-list heads */
} plane;

_Static_assert(sizeof(segment) == 48, "the paper's Segment is 48 bytes");

#define MAX_BITS 8 /* span up to 256: ranks up to 2^32 */

typedef struct {
    unsigned bits;
    uint32_t span, mask;
    plane *planes;
    size_t nplanes, nsegs;
    size_t umq_items;
} q4d;

/* Shared by every 4d context: Segments, and Planes of each span. */
static lmpi_pool seg_pool;
static lmpi_pool plane_pool[MAX_BITS + 1];
static bool pools_ready;

static size_t plane_size(unsigned bits)
{
    return sizeof(plane) + ((size_t)1 << bits) * sizeof(segment *);
}

unsigned lmpi_match_span_bits(int comm_size)
{
    unsigned log2 = 0;
    while ((1ull << log2) < (unsigned long long)comm_size)
        log2++;
    unsigned bits = (log2 + 3) / 4;
    return bits ? bits : 1;
}

unsigned lmpi_match_traversal_threshold(int comm_size)
{
    unsigned span = 1u << lmpi_match_span_bits(comm_size);
    return 3 * span + 1;
}

static void *q4d_create(int comm_size)
{
    if (!pools_ready) {
        lmpi_pool_init(&seg_pool, sizeof(segment), 64, LMPI_MEM_MATCH);
        for (unsigned b = 1; b <= MAX_BITS; b++)
            lmpi_pool_init(&plane_pool[b], plane_size(b), 8, LMPI_MEM_MATCH);
        pools_ready = true;
    }
    q4d *q = lmpi_calloc(1, sizeof(q4d), LMPI_MEM_MATCH);
    if (!q)
        return NULL;
    q->bits = lmpi_match_span_bits(comm_size);
    if (q->bits > MAX_BITS)
        q->bits = MAX_BITS;
    q->span = 1u << q->bits;
    q->mask = q->span - 1;
    return q;
}

static void q4d_destroy(void *s)
{
    lmpi_free(s);
}

/* At finalize, once no 4d context is left. */
void lmpi_match_4d_pools_destroy(void)
{
    if (!pools_ready)
        return;
    lmpi_pool_destroy(&seg_pool);
    for (unsigned b = 1; b <= MAX_BITS; b++)
        lmpi_pool_destroy(&plane_pool[b]);
    pools_ready = false;
}

/* Where a rank lives; with create, build the missing Plane and Segment at
 * the place the search stopped. */
static segment *locate(q4d *q, int rank, bool create)
{
    uint32_t r = (uint32_t)rank;
    uint32_t c1 = (r >> q->bits) & q->mask;
    uint32_t c2 = (r >> (2 * q->bits)) & q->mask;
    uint32_t c3 = r >> (3 * q->bits);
    plane **pp = &q->planes;
    while (*pp && (*pp)->c3 < c3) {
        lmpi_match_visits++;
        pp = &(*pp)->next;
    }
    plane *p = *pp;
    if (!p || p->c3 != c3) {
        if (!create)
            return NULL;
        p = lmpi_pool_get(&plane_pool[q->bits]);
        if (!p)
            return NULL;
        memset(p, 0, plane_size(q->bits));
        p->c3 = c3;
        p->next = *pp;
        *pp = p;
        q->nplanes++;
    }
    segment **sp = &p->x[c2];
    while (*sp && (*sp)->y < c1) {
        lmpi_match_visits++;
        sp = &(*sp)->next;
    }
    segment *g = *sp;
    if (!g || g->y != c1) {
        if (!create)
            return NULL;
        g = lmpi_pool_get(&seg_pool);
        if (!g)
            return NULL;
        memset(g, 0, sizeof(*g));
        g->y = c1;
        g->next = *sp;
        *sp = g;
        p->nsegs++;
        q->nsegs++;
    }
    return g;
}

/* Free the Segment of rank if it emptied, and its Plane if that emptied too. */
static void release(q4d *q, int rank, segment *g)
{
    if (g->prq.head || g->umq.head)
        return;
    uint32_t r = (uint32_t)rank;
    uint32_t c2 = (r >> (2 * q->bits)) & q->mask;
    uint32_t c3 = r >> (3 * q->bits);
    plane **pp = &q->planes;
    while ((*pp)->c3 != c3)
        pp = &(*pp)->next;
    plane *p = *pp;
    segment **sp = &p->x[c2];
    while (*sp != g)
        sp = &(*sp)->next;
    *sp = g->next;
    lmpi_pool_put(&seg_pool, g);
    q->nsegs--;
    if (--p->nsegs == 0) {
        *pp = p->next;
        lmpi_pool_put(&plane_pool[q->bits], p);
        q->nplanes--;
    }
}

static lmpi_mqi *q4d_arrive(void *s, int rank, int tag, uint64_t limit, lmpi_mqi *item)
{
    q4d *q = s;
    segment *g = locate(q, rank, item != NULL);
    if (!g)
        return NULL;
    lmpi_mqi *m = lmpi_mqi_find_posted(&g->prq, rank, tag);
    if (m && m->seq < limit) {
        lmpi_mqi_unlink(&g->prq, m);
        release(q, rank, g);
        return m;
    }
    if (item) {
        lmpi_mqi_append(&g->umq, item);
        q->umq_items++;
    } else {
        release(q, rank, g);
    }
    return NULL;
}

static lmpi_mqi *q4d_post(void *s, int rank, int tag, bool take, lmpi_mqi *item)
{
    q4d *q = s;
    segment *g = locate(q, rank, item != NULL);
    if (!g)
        return NULL;
    lmpi_mqi *m = lmpi_mqi_find_unexpected(&g->umq, rank, tag);
    if (m) {
        if (take) {
            lmpi_mqi_unlink(&g->umq, m);
            q->umq_items--;
            release(q, rank, g);
        }
        return m;
    }
    if (item)
        lmpi_mqi_append(&g->prq, item);
    return NULL;
}

/* MPI_ANY_SOURCE: every Segment's oldest match, the oldest of those wins. */
static lmpi_mqi *q4d_umq_any(void *s, int tag, bool take)
{
    q4d *q = s;
    if (q->umq_items == 0)
        return NULL;
    lmpi_mqi *best = NULL;
    for (plane *p = q->planes; p; p = p->next)
        for (uint32_t x = 0; x < q->span; x++)
            for (segment *g = p->x[x]; g; g = g->next) {
                lmpi_match_visits++;
                if (g->umq.head)
                    best = lmpi_mqi_older(best, lmpi_mqi_find_unexpected(&g->umq, MPI_ANY_SOURCE, tag));
            }
    if (best && take) {
        segment *g = locate(q, best->rank, false);
        lmpi_mqi_unlink(&g->umq, best);
        q->umq_items--;
        release(q, best->rank, g);
    }
    return best;
}

static void q4d_prq_remove(void *s, lmpi_mqi *m)
{
    q4d *q = s;
    segment *g = locate(q, m->rank, false);
    lmpi_mqi_unlink(&g->prq, m);
    release(q, m->rank, g);
}

static void q4d_drain(void *s, lmpi_mqi_list *prq, lmpi_mqi_list *umq)
{
    q4d *q = s;
    prq->head = prq->tail = umq->head = umq->tail = NULL;
    while (q->planes) {
        plane *p = q->planes;
        for (uint32_t x = 0; x < q->span; x++)
            while (p->x[x]) {
                segment *g = p->x[x];
                lmpi_mqi *m;
                while ((m = g->prq.head)) {
                    lmpi_mqi_unlink(&g->prq, m);
                    lmpi_mqi_append(prq, m);
                }
                while ((m = g->umq.head)) {
                    lmpi_mqi_unlink(&g->umq, m);
                    lmpi_mqi_append(umq, m);
                }
                p->x[x] = g->next;
                lmpi_pool_put(&seg_pool, g);
            }
        q->planes = p->next;
        lmpi_pool_put(&plane_pool[q->bits], p);
    }
    q->nplanes = q->nsegs = q->umq_items = 0;
    lmpi_mqi_sort(prq);
    lmpi_mqi_sort(umq);
}

static size_t q4d_metadata(const void *s)
{
    const q4d *q = s;
    return sizeof(q4d) + q->nplanes * plane_size(q->bits) + q->nsegs * sizeof(segment);
}

const lmpi_match_ops lmpi_match_4d_ops = {
    .name = "4d",
    .create = q4d_create,
    .destroy = q4d_destroy,
    .arrive = q4d_arrive,
    .post = q4d_post,
    .umq_any = q4d_umq_any,
    .prq_remove = q4d_prq_remove,
    .drain = q4d_drain,
    .metadata_bytes = q4d_metadata,
};
