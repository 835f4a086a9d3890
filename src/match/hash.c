/* `hash`: fully specified items hashed on (rank, tag), the UCX design.
 * Posted receives with MPI_ANY_TAG (specific rank) wait in a wildcard list;
 * an arrival takes the older of its bucket's and the wildcard list's
 * candidates.  Every unexpected message is also on one seq-ordered list for
 * MPI_ANY_TAG / MPI_ANY_SOURCE receives and probes.  The table doubles when
 * it holds more than two items per bucket. */
#include "match/structure.h"

typedef struct {
    lmpi_mqi_list prq, umq;
} bucket;

typedef struct {
    unsigned nbuckets;
    size_t items; /* items in buckets */
    lmpi_mqi_list prq_wild;
    lmpi_mqi_list umq_all; /* linked through gnext/gprev */
    bucket *b;
} hash_queue;

#define INITIAL_BUCKETS 16

static void g_append(lmpi_mqi_list *l, lmpi_mqi *m)
{
    m->gnext = NULL;
    m->gprev = l->tail;
    if (l->tail)
        l->tail->gnext = m;
    else
        l->head = m;
    l->tail = m;
}

static void g_unlink(lmpi_mqi_list *l, lmpi_mqi *m)
{
    if (m->gprev)
        m->gprev->gnext = m->gnext;
    else
        l->head = m->gnext;
    if (m->gnext)
        m->gnext->gprev = m->gprev;
    else
        l->tail = m->gprev;
}

static inline bucket *bucket_of(hash_queue *q, int rank, int tag)
{
    uint32_t h = (uint32_t)rank * 2654435761u ^ ((uint32_t)tag * 40503u + 0x9e3779b9u);
    h ^= h >> 15;
    return &q->b[h & (q->nbuckets - 1)];
}

static void *hash_create(int comm_size)
{
    (void)comm_size;
    hash_queue *q = lmpi_calloc(1, sizeof(hash_queue), LMPI_MEM_MATCH);
    if (!q)
        return NULL;
    q->nbuckets = INITIAL_BUCKETS;
    q->b = lmpi_calloc(q->nbuckets, sizeof(bucket), LMPI_MEM_MATCH);
    if (!q->b) {
        lmpi_free(q);
        return NULL;
    }
    return q;
}

static void hash_destroy(void *s)
{
    hash_queue *q = s;
    lmpi_free(q->b);
    lmpi_free(q);
}

/* Double the table.  Bucket i splits into buckets i and i + n of the new
 * table; walking it in order keeps both halves in seq order, no sort. */
static void grow(hash_queue *q)
{
    unsigned n = q->nbuckets;
    bucket *nb = lmpi_calloc((size_t)n * 2, sizeof(bucket), LMPI_MEM_MATCH);
    if (!nb)
        return; /* keep the smaller table: slower, still correct */
    bucket *old = q->b;
    q->b = nb;
    q->nbuckets = n * 2;
    for (unsigned i = 0; i < n; i++) {
        lmpi_mqi *m = old[i].prq.head;
        while (m) {
            lmpi_mqi *next = m->next;
            lmpi_mqi_append(&bucket_of(q, m->rank, m->tag)->prq, m);
            m = next;
        }
        m = old[i].umq.head;
        while (m) {
            lmpi_mqi *next = m->next;
            lmpi_mqi_append(&bucket_of(q, m->rank, m->tag)->umq, m);
            m = next;
        }
    }
    lmpi_free(old);
}

static void added(hash_queue *q)
{
    if (++q->items > 2 * (size_t)q->nbuckets)
        grow(q);
}

static lmpi_mqi *hash_arrive(void *s, int rank, int tag, uint64_t limit, lmpi_mqi *item)
{
    hash_queue *q = s;
    bucket *b = bucket_of(q, rank, tag);
    lmpi_mqi *exact = lmpi_mqi_find_posted(&b->prq, rank, tag);
    lmpi_mqi *wild = q->prq_wild.head ? lmpi_mqi_find_posted(&q->prq_wild, rank, tag) : NULL;
    lmpi_mqi *m = lmpi_mqi_older(exact, wild);
    if (m && m->seq < limit) {
        if (m == wild) {
            lmpi_mqi_unlink(&q->prq_wild, m);
        } else {
            lmpi_mqi_unlink(&b->prq, m);
            q->items--;
        }
        return m;
    }
    if (item) {
        lmpi_mqi_append(&b->umq, item);
        g_append(&q->umq_all, item);
        added(q);
    }
    return NULL;
}

static void take_unexpected(hash_queue *q, lmpi_mqi *m)
{
    lmpi_mqi_unlink(&bucket_of(q, m->rank, m->tag)->umq, m);
    g_unlink(&q->umq_all, m);
    q->items--;
}

static lmpi_mqi *find_in_all(hash_queue *q, int rank, int tag)
{
    for (lmpi_mqi *m = q->umq_all.head; m; m = m->gnext) {
        lmpi_match_visits++;
        if ((rank == MPI_ANY_SOURCE || m->rank == rank) && (tag == MPI_ANY_TAG || m->tag == tag))
            return m;
    }
    return NULL;
}

static lmpi_mqi *hash_post(void *s, int rank, int tag, bool take, lmpi_mqi *item)
{
    hash_queue *q = s;
    lmpi_mqi *m = tag == MPI_ANY_TAG ? find_in_all(q, rank, tag)
                                     : lmpi_mqi_find_unexpected(&bucket_of(q, rank, tag)->umq, rank, tag);
    if (m) {
        if (take)
            take_unexpected(q, m);
        return m;
    }
    if (item) {
        if (tag == MPI_ANY_TAG) {
            lmpi_mqi_append(&q->prq_wild, item);
        } else {
            lmpi_mqi_append(&bucket_of(q, rank, tag)->prq, item);
            added(q);
        }
    }
    return NULL;
}

static lmpi_mqi *hash_umq_any(void *s, int tag, bool take)
{
    hash_queue *q = s;
    lmpi_mqi *m = find_in_all(q, MPI_ANY_SOURCE, tag);
    if (m && take)
        take_unexpected(q, m);
    return m;
}

static void hash_prq_remove(void *s, lmpi_mqi *m)
{
    hash_queue *q = s;
    if (m->tag == MPI_ANY_TAG) {
        lmpi_mqi_unlink(&q->prq_wild, m);
    } else {
        lmpi_mqi_unlink(&bucket_of(q, m->rank, m->tag)->prq, m);
        q->items--;
    }
}

static void hash_drain(void *s, lmpi_mqi_list *prq, lmpi_mqi_list *umq)
{
    hash_queue *q = s;
    prq->head = prq->tail = umq->head = umq->tail = NULL;
    while (q->prq_wild.head) {
        lmpi_mqi *m = q->prq_wild.head;
        lmpi_mqi_unlink(&q->prq_wild, m);
        lmpi_mqi_append(prq, m);
    }
    for (unsigned i = 0; i < q->nbuckets; i++) {
        while (q->b[i].prq.head) {
            lmpi_mqi *m = q->b[i].prq.head;
            lmpi_mqi_unlink(&q->b[i].prq, m);
            lmpi_mqi_append(prq, m);
        }
        q->b[i].umq.head = q->b[i].umq.tail = NULL;
    }
    lmpi_mqi_sort(prq);
    lmpi_mqi *m = q->umq_all.head;
    while (m) {
        lmpi_mqi *n = m->gnext;
        lmpi_mqi_append(umq, m);
        m = n;
    }
    q->umq_all.head = q->umq_all.tail = NULL;
    q->items = 0;
}

static size_t hash_metadata(const void *s)
{
    const hash_queue *q = s;
    return sizeof(hash_queue) + (size_t)q->nbuckets * sizeof(bucket);
}

const lmpi_match_ops lmpi_match_hash_ops = {
    .name = "hash",
    .create = hash_create,
    .destroy = hash_destroy,
    .arrive = hash_arrive,
    .post = hash_post,
    .umq_any = hash_umq_any,
    .prq_remove = hash_prq_remove,
    .drain = hash_drain,
    .metadata_bytes = hash_metadata,
};
