/* `list`: one ordered PRQ and one ordered UMQ per context, searched from the
 * head.  Cheapest for shallow queues; linear in depth. */
#include "match/structure.h"

typedef struct {
    lmpi_mqi_list prq, umq;
} list_queue;

static void *list_create(int comm_size)
{
    (void)comm_size;
    return lmpi_calloc(1, sizeof(list_queue), LMPI_MEM_MATCH);
}

static void list_destroy(void *s)
{
    lmpi_free(s);
}

static lmpi_mqi *list_arrive(void *s, int rank, int tag, uint64_t limit, lmpi_mqi *item)
{
    list_queue *q = s;
    lmpi_mqi *m = lmpi_mqi_find_posted(&q->prq, rank, tag);
    if (m && m->seq < limit) {
        lmpi_mqi_unlink(&q->prq, m);
        return m;
    }
    if (item)
        lmpi_mqi_append(&q->umq, item);
    return NULL;
}

static lmpi_mqi *list_post(void *s, int rank, int tag, bool take, lmpi_mqi *item)
{
    list_queue *q = s;
    lmpi_mqi *m = lmpi_mqi_find_unexpected(&q->umq, rank, tag);
    if (m) {
        if (take)
            lmpi_mqi_unlink(&q->umq, m);
        return m;
    }
    if (item)
        lmpi_mqi_append(&q->prq, item);
    return NULL;
}

static lmpi_mqi *list_umq_any(void *s, int tag, bool take)
{
    return list_post(s, MPI_ANY_SOURCE, tag, take, NULL);
}

static void list_prq_remove(void *s, lmpi_mqi *m)
{
    lmpi_mqi_unlink(&((list_queue *)s)->prq, m);
}

static void list_drain(void *s, lmpi_mqi_list *prq, lmpi_mqi_list *umq)
{
    list_queue *q = s;
    *prq = q->prq;
    *umq = q->umq;
    q->prq.head = q->prq.tail = q->umq.head = q->umq.tail = NULL;
}

static size_t list_metadata(const void *s)
{
    (void)s;
    return sizeof(list_queue);
}

const lmpi_match_ops lmpi_match_list_ops = {
    .name = "list",
    .create = list_create,
    .destroy = list_destroy,
    .arrive = list_arrive,
    .post = list_post,
    .umq_any = list_umq_any,
    .prq_remove = list_prq_remove,
    .drain = list_drain,
    .metadata_bytes = list_metadata,
};
