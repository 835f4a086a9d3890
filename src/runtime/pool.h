/* Fixed-size object pools: slabs carved into objects threaded on a free
 * list.  Used for every object created on a message path (matching planes
 * and segments, unexpected-message records), so those paths call malloc only
 * when a pool grows.  Memory is accounted to the pool's category and returned
 * when the pool is destroyed. */
#ifndef LMPI_POOL_H
#define LMPI_POOL_H

#include "runtime/lmpi.h"

typedef struct lmpi_pool {
    size_t obj_size;
    size_t per_slab;
    lmpi_mem_cat cat;
    void *free_list;
    void *slabs;
    size_t live; /* objects handed out */
    bool arena;  /* slabs from the object arena (objects users hold handles to) */
} lmpi_pool;

void lmpi_pool_init(lmpi_pool *p, size_t obj_size, size_t per_slab, lmpi_mem_cat cat);
void lmpi_pool_destroy(lmpi_pool *p);

void *lmpi_pool_grow(lmpi_pool *p);

static inline void *lmpi_pool_get(lmpi_pool *p)
{
    void *o = p->free_list;
    if (LMPI_UNLIKELY(!o)) {
        o = lmpi_pool_grow(p);
        if (!o)
            return NULL;
    }
    p->free_list = *(void **)o;
    p->live++;
    return o;
}

static inline void lmpi_pool_put(lmpi_pool *p, void *o)
{
    *(void **)o = p->free_list;
    p->free_list = o;
    p->live--;
}

#endif
