#include "runtime/objarena.h"
#include "runtime/pool.h"

void lmpi_pool_init(lmpi_pool *p, size_t obj_size, size_t per_slab, lmpi_mem_cat cat)
{
    p->obj_size = obj_size < sizeof(void *) ? sizeof(void *) : (obj_size + 7) / 8 * 8;
    p->per_slab = per_slab ? per_slab : 64;
    p->cat = cat;
    p->free_list = NULL;
    p->slabs = NULL;
    p->live = 0;
    p->arena = false;
}

/* A slab starts with a link to the previous slab, then per_slab objects. */
void *lmpi_pool_grow(lmpi_pool *p)
{
    size_t bytes = sizeof(void *) + p->per_slab * p->obj_size;
    char *slab = p->arena ? lmpi_obj_alloc(bytes, p->cat) : lmpi_malloc(bytes, p->cat);
    if (!slab)
        return NULL;
    *(void **)slab = p->slabs;
    p->slabs = slab;
    char *objs = slab + sizeof(void *);
    for (size_t i = p->per_slab; i-- > 0;) {
        void *o = objs + i * p->obj_size;
        *(void **)o = p->free_list;
        p->free_list = o;
    }
    return p->free_list;
}

void lmpi_pool_destroy(lmpi_pool *p)
{
    void *s = p->slabs;
    while (s) {
        void *n = *(void **)s;
        if (p->arena)
            lmpi_obj_free(s, sizeof(void *) + p->per_slab * p->obj_size, p->cat);
        else
            lmpi_free(s);
        s = n;
    }
    p->slabs = p->free_list = NULL;
    p->live = 0;
}
