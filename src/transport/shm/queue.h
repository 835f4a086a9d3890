/* Lock-free multi-producer / single-consumer queue of cells in a shared
 * segment (the Nemesis design).  Links are segment offsets, not pointers,
 * because every process maps the segment at its own address; 0 means none.
 *
 * Producers swap themselves into the tail and then link the old tail to
 * them; the one consumer takes from the head.  Between a producer's swap and
 * its link the consumer may see a tail it cannot reach yet: it waits for the
 * link (yielding, since under oversubscription the producer may be
 * descheduled exactly there). */
#ifndef LMPI_SHM_QUEUE_H
#define LMPI_SHM_QUEUE_H

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

typedef struct {
    _Atomic uint64_t next;
} lmpi_shmq_link;

typedef struct {
    _Atomic uint64_t head; /* written by the consumer, and by a producer finding the queue empty */
    char pad0[56];
    _Atomic uint64_t tail; /* swapped by producers */
    char pad1[56];
} lmpi_shmq;

static inline lmpi_shmq_link *lmpi_shmq_at(char *base, uint64_t off)
{
    return (lmpi_shmq_link *)(base + off);
}

static inline void lmpi_shmq_init(lmpi_shmq *q)
{
    atomic_store_explicit(&q->head, 0, memory_order_relaxed);
    atomic_store_explicit(&q->tail, 0, memory_order_relaxed);
}

static inline void lmpi_shmq_enqueue(lmpi_shmq *q, char *base, uint64_t off)
{
    atomic_store_explicit(&lmpi_shmq_at(base, off)->next, 0, memory_order_relaxed);
    uint64_t prev = atomic_exchange_explicit(&q->tail, off, memory_order_acq_rel);
    if (prev == 0)
        atomic_store_explicit(&q->head, off, memory_order_release);
    else
        atomic_store_explicit(&lmpi_shmq_at(base, prev)->next, off, memory_order_release);
}

static inline int lmpi_shmq_empty(lmpi_shmq *q)
{
    return atomic_load_explicit(&q->head, memory_order_acquire) == 0;
}

/* Consumer only.  Returns the offset of the oldest cell or 0. */
static inline uint64_t lmpi_shmq_dequeue(lmpi_shmq *q, char *base)
{
    uint64_t h = atomic_load_explicit(&q->head, memory_order_acquire);
    if (h == 0)
        return 0;
    lmpi_shmq_link *cell = lmpi_shmq_at(base, h);
    uint64_t next = atomic_load_explicit(&cell->next, memory_order_acquire);
    if (next != 0) {
        atomic_store_explicit(&q->head, next, memory_order_relaxed);
        return h;
    }
    /* h looks like the last cell: detach it unless a producer got in. */
    atomic_store_explicit(&q->head, 0, memory_order_relaxed);
    uint64_t expected = h;
    if (atomic_compare_exchange_strong_explicit(&q->tail, &expected, 0, memory_order_acq_rel,
                                                memory_order_acquire))
        return h;
    int spins = 0;
    while ((next = atomic_load_explicit(&cell->next, memory_order_acquire)) == 0)
        if (++spins > 64)
            sched_yield();
    atomic_store_explicit(&q->head, next, memory_order_relaxed);
    return h;
}

#endif
