/* Request pool: slabs of 64 requests threaded on a free list.  Slabs are kept
 * until MPI_Finalize; the pool's footprint is counted in the request category. */
#include <string.h>

#include "runtime/request.h"

#define SLAB_REQUESTS 64

typedef struct slab {
    struct slab *next;
    lmpi_request reqs[SLAB_REQUESTS];
} slab;

static slab *slabs;
static lmpi_request *free_list;

lmpi_request *lmpi_request_alloc(lmpi_req_kind kind)
{
    if (LMPI_UNLIKELY(!free_list)) {
        slab *s = lmpi_malloc(sizeof(*s), LMPI_MEM_REQUEST);
        if (!s)
            return NULL;
        s->next = slabs;
        slabs = s;
        for (int i = 0; i < SLAB_REQUESTS; i++) {
            s->reqs[i].next = free_list;
            s->reqs[i].magic = 0;
            free_list = &s->reqs[i];
        }
    }
    lmpi_request *r = free_list;
    free_list = r->next;
    memset(r, 0, sizeof(*r));
    r->magic = LMPI_MAGIC_REQUEST;
    r->kind = (uint8_t)kind;
    return r;
}

void lmpi_request_free(lmpi_request *r)
{
    r->magic = 0;
    r->next = free_list;
    free_list = r;
}

void lmpi_request_pool_finalize(void)
{
    while (slabs) {
        slab *n = slabs->next;
        lmpi_free(slabs);
        slabs = n;
    }
    free_list = NULL;
}
