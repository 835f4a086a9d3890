/* The matching engine: context lookup, the MPI_ANY_SOURCE sub-queue, the
 * choice between the structures, and the auto policy. */
#include <string.h>
#include <time.h>

#include "match/match.h"
#include "runtime/config.h"

uint64_t lmpi_match_visits;
lmpi_match_stats lmpi_match_stat;

static struct {
    lmpi_match_queue **buckets;
    unsigned nbuckets;
    size_t count;
    lmpi_match_queue *last; /* consecutive messages mostly share a context */
    const lmpi_match_ops *ops;
    bool is_auto;
    const lmpi_match_ops *auto_target;
    bool selected;
} eng;

static const lmpi_match_ops *ops_by_name(const char *name)
{
    if (!strcmp(name, "list")) return &lmpi_match_list_ops;
    if (!strcmp(name, "array")) return &lmpi_match_array_ops;
    if (!strcmp(name, "hash")) return &lmpi_match_hash_ops;
    if (!strcmp(name, "4d")) return &lmpi_match_4d_ops;
    return NULL;
}

lmpi_status lmpi_match_select(const char *name)
{
    lmpi_config_ensure_loaded();
    if (!name)
        name = lmpi_config.match;
    const lmpi_match_ops *target = ops_by_name(lmpi_config.match_auto_target);
    if (!target || target == &lmpi_match_list_ops) {
        lmpi_err_detail("LMPI_MATCH_AUTO_TARGET=%s: must be array, hash or 4d", lmpi_config.match_auto_target);
        return LMPI_ERR_ARG;
    }
    eng.auto_target = target;
    if (!strcmp(name, "auto")) {
        eng.ops = &lmpi_match_list_ops;
        eng.is_auto = true;
    } else {
        eng.ops = ops_by_name(name);
        eng.is_auto = false;
        if (!eng.ops) {
            lmpi_err_detail("LMPI_MATCH=%s: expected list, array, hash, 4d or auto", name);
            eng.ops = &lmpi_match_list_ops;
            return LMPI_ERR_ARG;
        }
    }
    eng.selected = true;
    return LMPI_OK;
}

const char *lmpi_match_selected(void)
{
    return eng.is_auto ? "auto" : eng.ops ? eng.ops->name : "unset";
}

static inline unsigned ctx_hash(uint32_t ctx, unsigned n)
{
    return (ctx * 2654435761u) >> 7 & (n - 1);
}

static void table_grow(void)
{
    unsigned n = eng.nbuckets ? eng.nbuckets * 2 : 64;
    lmpi_match_queue **nb = lmpi_calloc(n, sizeof(*nb), LMPI_MEM_MATCH);
    if (!nb)
        return;
    for (unsigned i = 0; i < eng.nbuckets; i++)
        while (eng.buckets[i]) {
            lmpi_match_queue *q = eng.buckets[i];
            eng.buckets[i] = q->hnext;
            q->hnext = nb[ctx_hash(q->ctx, n)];
            nb[ctx_hash(q->ctx, n)] = q;
        }
    lmpi_free(eng.buckets);
    eng.buckets = nb;
    eng.nbuckets = n;
}

lmpi_match_queue *lmpi_match_queue_get(uint32_t ctx, int comm_size)
{
    if (LMPI_LIKELY(eng.last && eng.last->ctx == ctx))
        return eng.last;
    if (eng.nbuckets) {
        for (lmpi_match_queue *q = eng.buckets[ctx_hash(ctx, eng.nbuckets)]; q; q = q->hnext)
            if (q->ctx == ctx)
                return eng.last = q;
    }
    if (!eng.selected)
        lmpi_match_select(NULL);
    if (eng.count + 1 > 2 * (size_t)eng.nbuckets)
        table_grow();
    if (!eng.nbuckets)
        return NULL;
    lmpi_match_queue *q = lmpi_calloc(1, sizeof(*q), LMPI_MEM_MATCH);
    if (!q)
        return NULL;
    q->ctx = ctx;
    q->comm_size = comm_size;
    q->ops = eng.ops;
    q->is_auto = eng.is_auto;
    q->up_threshold16 = (uint32_t)(16.0 * lmpi_match_traversal_threshold(comm_size) * lmpi_config.match_adjustment);
    q->s = q->ops->create(comm_size);
    if (!q->s) {
        lmpi_free(q);
        return NULL;
    }
    unsigned h = ctx_hash(ctx, eng.nbuckets);
    q->hnext = eng.buckets[h];
    eng.buckets[h] = q;
    eng.count++;
    return eng.last = q;
}

static void queue_free(lmpi_match_queue *q)
{
    q->ops->destroy(q->s);
    lmpi_free(q);
}

/* A freed communicator's queue goes away only when empty: receives still
 * posted there complete normally when their messages come (MPI_Comm_free
 * lets pending operations finish); otherwise it stays until MPI_Finalize
 * (context ids are never reused, so nothing else lands in it). */
void lmpi_match_queue_release(uint32_t ctx)
{
    if (!eng.nbuckets)
        return;
    for (lmpi_match_queue **pq = &eng.buckets[ctx_hash(ctx, eng.nbuckets)]; *pq; pq = &(*pq)->hnext)
        if ((*pq)->ctx == ctx) {
            lmpi_match_queue *q = *pq;
            if (q->prq_len || q->umq_len)
                return;
            *pq = q->hnext;
            if (eng.last == q)
                eng.last = NULL;
            eng.count--;
            queue_free(q);
            return;
        }
}

void lmpi_match_finalize(void)
{
    for (unsigned i = 0; i < eng.nbuckets; i++)
        while (eng.buckets[i]) {
            lmpi_match_queue *q = eng.buckets[i];
            eng.buckets[i] = q->hnext;
            queue_free(q);
        }
    lmpi_free(eng.buckets);
    lmpi_match_4d_pools_destroy();
    memset(&eng, 0, sizeof(eng));
    memset(&lmpi_match_stat, 0, sizeof(lmpi_match_stat));
}

/* ---- auto: move a context between list and the target structure ------- */
static void migrate(lmpi_match_queue *q, const lmpi_match_ops *to)
{
    void *ns = to->create(q->comm_size);
    if (!ns)
        return; /* stay where we are */
    lmpi_mqi_list prq, umq;
    q->ops->drain(q->s, &prq, &umq);
    q->ops->destroy(q->s);
    q->ops = to;
    q->s = ns;
    /* posted receives first: the new UMQ is empty, so each one is queued */
    while (prq.head) {
        lmpi_mqi *m = prq.head;
        lmpi_mqi_unlink(&prq, m);
        to->post(ns, m->rank, m->tag, true, m);
    }
    /* limit 0: nothing posted is older, so each message is queued */
    while (umq.head) {
        lmpi_mqi *m = umq.head;
        lmpi_mqi_unlink(&umq, m);
        to->arrive(ns, m->rank, m->tag, 0, m);
    }
    lmpi_match_stat.migrations++;
}

/* Called after every search with its depth.  The average decays by 1/8 per
 * search, so a burst of deep searches moves a context within a few
 * operations and a quiet, empty context goes back to the cheaper list. */
static void auto_observe(lmpi_match_queue *q, uint64_t depth)
{
    /* searches skipped since the last observation were shallow (<= 2): they
     * decay the average as depth-0 samples would */
    uint64_t skipped = q->searches - q->last_observed - 1;
    q->last_observed = q->searches;
    for (uint64_t k = 0; k < skipped && q->depth_avg16; k++)
        q->depth_avg16 -= (q->depth_avg16 + 7) >> 3;

    uint32_t d16 = (uint32_t)(depth > 1u << 20 ? 1u << 24 : depth << 4);
    q->depth_avg16 = q->depth_avg16 - (q->depth_avg16 >> 3) + (d16 >> 3);
    if (q->ops == &lmpi_match_list_ops) {
        if (LMPI_UNLIKELY(q->depth_avg16 > q->up_threshold16))
            migrate(q, eng.auto_target);
    } else if (q->depth_avg16 < q->up_threshold16 / 8 && (q->prq_len + q->umq_len) * 16 < q->up_threshold16) {
        migrate(q, &lmpi_match_list_ops);
    }
}

static inline uint64_t begin(void)
{
    lmpi_match_visits = 0;
    return LMPI_UNLIKELY(lmpi_match_stat.timing) ? lmpi_now_ns() : 0;
}

static inline void end(lmpi_match_queue *q, uint64_t t0)
{
    lmpi_match_stat.searches++;
    lmpi_match_stat.visits += lmpi_match_visits;
    if (lmpi_match_visits > lmpi_match_stat.max_depth)
        lmpi_match_stat.max_depth = lmpi_match_visits;
    if (LMPI_UNLIKELY(lmpi_match_stat.timing))
        lmpi_match_stat.time_ns += lmpi_now_ns() - t0;
    q->searches++;
    /* Shallow searches on a list are not observed one by one (they are
     * folded in as decay at the next deep one): the checks below are the
     * same two for list and auto, so auto costs what list costs on short
     * queues. */
    if (LMPI_UNLIKELY(lmpi_match_visits > 2 || q->ops != &lmpi_match_list_ops) && q->is_auto)
        auto_observe(q, lmpi_match_visits);
}

lmpi_mqi *lmpi_match_arrive(lmpi_match_queue *q, int rank, int tag, lmpi_mqi *item)
{
    uint64_t t0 = begin();
    lmpi_mqi *any = q->any_prq.head ? lmpi_mqi_find_posted(&q->any_prq, rank, tag) : NULL;
    item->rank = rank;
    item->tag = tag;
    item->seq = q->next_seq++;
    lmpi_mqi *m = q->ops->arrive(q->s, rank, tag, any ? any->seq : UINT64_MAX, any ? NULL : item);
    if (!m && any) {
        lmpi_mqi_unlink(&q->any_prq, any);
        m = any;
    }
    if (m)
        q->prq_len--;
    else
        q->umq_len++;
    end(q, t0);
    return m;
}

lmpi_mqi *lmpi_match_post(lmpi_match_queue *q, int rank, int tag, lmpi_mqi *item)
{
    uint64_t t0 = begin();
    item->rank = rank;
    item->tag = tag;
    item->seq = q->next_seq++;
    lmpi_mqi *m;
    if (rank == MPI_ANY_SOURCE) {
        m = q->umq_len ? q->ops->umq_any(q->s, tag, true) : NULL;
        if (!m)
            lmpi_mqi_append(&q->any_prq, item); /* O(1): no rank to place */
    } else {
        m = q->ops->post(q->s, rank, tag, true, item);
    }
    if (m)
        q->umq_len--;
    else
        q->prq_len++;
    end(q, t0);
    return m;
}

lmpi_mqi *lmpi_match_probe(lmpi_match_queue *q, int rank, int tag, bool take)
{
    uint64_t t0 = begin();
    lmpi_mqi *m = NULL;
    if (q->umq_len)
        m = rank == MPI_ANY_SOURCE ? q->ops->umq_any(q->s, tag, take) : q->ops->post(q->s, rank, tag, take, NULL);
    if (m && take)
        q->umq_len--;
    end(q, t0);
    return m;
}

void lmpi_match_cancel(lmpi_match_queue *q, lmpi_mqi *posted)
{
    if (posted->rank == MPI_ANY_SOURCE)
        lmpi_mqi_unlink(&q->any_prq, posted);
    else
        q->ops->prq_remove(q->s, posted);
    q->prq_len--;
}

static size_t sum(size_t (*f)(const lmpi_match_queue *))
{
    size_t t = 0;
    for (unsigned i = 0; i < eng.nbuckets; i++)
        for (lmpi_match_queue *q = eng.buckets[i]; q; q = q->hnext)
            t += f(q);
    return t;
}

static size_t prq_of(const lmpi_match_queue *q) { return q->prq_len; }
static size_t umq_of(const lmpi_match_queue *q) { return q->umq_len; }
static size_t meta_of(const lmpi_match_queue *q) { return sizeof(*q) + q->ops->metadata_bytes(q->s); }

size_t lmpi_match_posted_length(void) { return sum(prq_of); }
size_t lmpi_match_unexpected_length(void) { return sum(umq_of); }
size_t lmpi_match_metadata_bytes(void)
{
    return sum(meta_of) + eng.nbuckets * sizeof(lmpi_match_queue *);
}

/* ---- shared helper ------------------------------------------------------ */
static lmpi_mqi *merge(lmpi_mqi *a, lmpi_mqi *b)
{
    lmpi_mqi head = {0}, *t = &head;
    while (a && b) {
        if (a->seq <= b->seq) {
            t->next = a;
            a = a->next;
        } else {
            t->next = b;
            b = b->next;
        }
        t = t->next;
    }
    t->next = a ? a : b;
    return head.next;
}

static lmpi_mqi *sort_chain(lmpi_mqi *h)
{
    if (!h || !h->next)
        return h;
    lmpi_mqi *slow = h, *fast = h->next;
    while (fast && fast->next) {
        slow = slow->next;
        fast = fast->next->next;
    }
    lmpi_mqi *second = slow->next;
    slow->next = NULL;
    return merge(sort_chain(h), sort_chain(second));
}

void lmpi_mqi_sort(lmpi_mqi_list *l)
{
    lmpi_mqi *h = sort_chain(l->head);
    l->head = h;
    l->tail = NULL;
    lmpi_mqi *prev = NULL;
    for (lmpi_mqi *m = h; m; m = m->next) {
        m->prev = prev;
        prev = m;
    }
    l->tail = prev;
}
