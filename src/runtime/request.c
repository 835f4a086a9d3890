/* Request pool: requests come from an lmpi_pool (slabs of 64) and are
 * recycled; the magic word is cleared on free so stale handles are caught. */
#include <string.h>

#include "runtime/pool.h"
#include "datatype/datatype.h"
#include "runtime/request.h"

static lmpi_pool pool;
static bool ready;

lmpi_request *lmpi_request_alloc(lmpi_req_kind kind)
{
    if (LMPI_UNLIKELY(!ready)) {
        lmpi_pool_init(&pool, sizeof(lmpi_request), 64, LMPI_MEM_REQUEST);
        pool.arena = true; /* request handles are checked against it */
        ready = true;
    }
    lmpi_request *r = lmpi_pool_get(&pool);
    if (!r)
        return NULL;
    lmpi_memzero(r, sizeof(*r));
    r->magic = LMPI_MAGIC_REQUEST;
    r->kind = (uint8_t)kind;
    return r;
}

void lmpi_request_free(lmpi_request *r)
{
    if (LMPI_UNLIKELY(r->abandoned))
        return; /* a late packet may still name it (src/ft) */
    /* a send or receive of a non-contiguous type holds its type (released
     * here too when it completed without a Wait: MPI_Request_free), and a
     * persistent request holds the type it was made with */
    if ((r->kind == LMPI_REQ_SEND || r->kind == LMPI_REQ_RECV || r->kind == LMPI_REQ_PERSISTENT) && r->dt)
        lmpi_datatype_release(r->dt);
    r->magic = 0;
    lmpi_pool_put(&pool, r);
}

void lmpi_request_pool_finalize(void)
{
    if (ready)
        lmpi_pool_destroy(&pool);
    ready = false;
}
