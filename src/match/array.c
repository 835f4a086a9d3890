/* `array`: a RankHead (PRQ and UMQ list) per rank of the communicator, as in
 * Open MPI: one index jump to the right lists, but 32 bytes x size per
 * context whether used or not, and an MPI_ANY_SOURCE search that visits
 * every rank. */
#include "match/structure.h"

typedef struct {
    lmpi_mqi_list prq, umq;
} rank_head;

typedef struct {
    int size;
    size_t umq_items;
    rank_head heads[];
} array_queue;

static void *array_create(int comm_size)
{
    array_queue *q = lmpi_calloc(1, sizeof(array_queue) + (size_t)comm_size * sizeof(rank_head), LMPI_MEM_MATCH);
    if (q)
        q->size = comm_size;
    return q;
}

static void array_destroy(void *s)
{
    lmpi_free(s);
}

static lmpi_mqi *array_arrive(void *s, int rank, int tag, uint64_t limit, lmpi_mqi *item)
{
    array_queue *q = s;
    rank_head *h = &q->heads[rank];
    lmpi_mqi *m = lmpi_mqi_find_posted(&h->prq, rank, tag);
    if (m && m->seq < limit) {
        lmpi_mqi_unlink(&h->prq, m);
        return m;
    }
    if (item) {
        lmpi_mqi_append(&h->umq, item);
        q->umq_items++;
    }
    return NULL;
}

static lmpi_mqi *array_post(void *s, int rank, int tag, bool take, lmpi_mqi *item)
{
    array_queue *q = s;
    rank_head *h = &q->heads[rank];
    lmpi_mqi *m = lmpi_mqi_find_unexpected(&h->umq, rank, tag);
    if (m) {
        if (take) {
            lmpi_mqi_unlink(&h->umq, m);
            q->umq_items--;
        }
        return m;
    }
    if (item)
        lmpi_mqi_append(&h->prq, item);
    return NULL;
}

static lmpi_mqi *array_umq_any(void *s, int tag, bool take)
{
    array_queue *q = s;
    if (q->umq_items == 0)
        return NULL;
    lmpi_mqi *best = NULL;
    for (int r = 0; r < q->size; r++) {
        lmpi_match_visits++;
        if (q->heads[r].umq.head)
            best = lmpi_mqi_older(best, lmpi_mqi_find_unexpected(&q->heads[r].umq, r, tag));
    }
    if (best && take) {
        lmpi_mqi_unlink(&q->heads[best->rank].umq, best);
        q->umq_items--;
    }
    return best;
}

static void array_prq_remove(void *s, lmpi_mqi *m)
{
    array_queue *q = s;
    lmpi_mqi_unlink(&q->heads[m->rank].prq, m);
}

static void move_all(lmpi_mqi_list *from, lmpi_mqi_list *to)
{
    while (from->head) {
        lmpi_mqi *m = from->head;
        lmpi_mqi_unlink(from, m);
        lmpi_mqi_append(to, m);
    }
}

static void array_drain(void *s, lmpi_mqi_list *prq, lmpi_mqi_list *umq)
{
    array_queue *q = s;
    prq->head = prq->tail = umq->head = umq->tail = NULL;
    for (int r = 0; r < q->size; r++) {
        move_all(&q->heads[r].prq, prq);
        move_all(&q->heads[r].umq, umq);
    }
    q->umq_items = 0;
    lmpi_mqi_sort(prq);
    lmpi_mqi_sort(umq);
}

static size_t array_metadata(const void *s)
{
    const array_queue *q = s;
    return sizeof(array_queue) + (size_t)q->size * sizeof(rank_head);
}

const lmpi_match_ops lmpi_match_array_ops = {
    .name = "array",
    .create = array_create,
    .destroy = array_destroy,
    .arrive = array_arrive,
    .post = array_post,
    .umq_any = array_umq_any,
    .prq_remove = array_prq_remove,
    .drain = array_drain,
    .metadata_bytes = array_metadata,
};
