/* Message queue items (MQI) and the lists every matching structure is built
 * from.  An MQI is embedded in the object it stands for (a posted receive's
 * request, an unexpected message's record), so queueing allocates nothing.
 *
 * seq is the per-context order of posting (PRQ) or arrival (UMQ): structures
 * that split a queue into many short lists use it to give MPI's order back
 * (the oldest candidate wins). */
#ifndef LMPI_MATCH_MQI_H
#define LMPI_MATCH_MQI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

typedef struct lmpi_mqi {
    struct lmpi_mqi *next, *prev;   /* the list of the structure's sub-queue */
    struct lmpi_mqi *gnext, *gprev; /* hash only: the queue in seq order */
    uint64_t seq;
    int32_t rank; /* MPI_ANY_SOURCE allowed in the PRQ */
    int32_t tag;  /* MPI_ANY_TAG allowed in the PRQ */
} lmpi_mqi;

typedef struct {
    lmpi_mqi *head, *tail;
} lmpi_mqi_list;

/* Items compared by the current operation: the search depth reported in
 * MPI_T and used by the auto structure. */
extern uint64_t lmpi_match_visits;

static inline void lmpi_mqi_append(lmpi_mqi_list *l, lmpi_mqi *m)
{
    m->next = NULL;
    m->prev = l->tail;
    if (l->tail)
        l->tail->next = m;
    else
        l->head = m;
    l->tail = m;
}

static inline void lmpi_mqi_unlink(lmpi_mqi_list *l, lmpi_mqi *m)
{
    if (m->prev)
        m->prev->next = m->next;
    else
        l->head = m->next;
    if (m->next)
        m->next->prev = m->prev;
    else
        l->tail = m->prev;
    m->next = m->prev = NULL;
}

/* Does a posted receive (rank/tag may be wildcards) accept this message? */
static inline bool lmpi_mqi_accepts(const lmpi_mqi *posted, int rank, int tag)
{
    return (posted->rank == rank || posted->rank == MPI_ANY_SOURCE) &&
           (posted->tag == tag || posted->tag == MPI_ANY_TAG);
}

/* Oldest item of l that `accepts` (posted side) or is accepted by (rank, tag)
 * (unexpected side, rank/tag may be wildcards). */
static inline lmpi_mqi *lmpi_mqi_find_posted(const lmpi_mqi_list *l, int rank, int tag)
{
    for (lmpi_mqi *m = l->head; m; m = m->next) {
        lmpi_match_visits++;
        if (lmpi_mqi_accepts(m, rank, tag))
            return m;
    }
    return NULL;
}

static inline lmpi_mqi *lmpi_mqi_find_unexpected(const lmpi_mqi_list *l, int rank, int tag)
{
    for (lmpi_mqi *m = l->head; m; m = m->next) {
        lmpi_match_visits++;
        if ((rank == MPI_ANY_SOURCE || m->rank == rank) && (tag == MPI_ANY_TAG || m->tag == tag))
            return m;
    }
    return NULL;
}

static inline lmpi_mqi *lmpi_mqi_older(lmpi_mqi *a, lmpi_mqi *b)
{
    if (!a)
        return b;
    if (!b)
        return a;
    return a->seq < b->seq ? a : b;
}

#endif
