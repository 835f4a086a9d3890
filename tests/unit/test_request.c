#include "runtime/request.h"
#include "unit.h"

int main(void)
{
    lmpi_request *r[200];
    for (int i = 0; i < 200; i++) {
        r[i] = lmpi_request_alloc(i % 2 ? LMPI_REQ_RECV : LMPI_REQ_SEND);
        CHECK(r[i] != NULL);
        CHECK_EQ(r[i]->magic, LMPI_MAGIC_REQUEST);
        CHECK_EQ(r[i]->complete, 0);
        CHECK(lmpi_request_from_handle((MPI_Request)r[i]) == r[i]);
    }
    int64_t bytes = lmpi_mem_current(LMPI_MEM_REQUEST);
    CHECK(bytes > 0);
    lmpi_request *freed = r[17];
    lmpi_request_free(r[17]);
    CHECK(lmpi_request_from_handle((MPI_Request)freed) == NULL); /* stale handle detected */
    lmpi_request *again = lmpi_request_alloc(LMPI_REQ_SEND);
    CHECK(again == freed); /* recycled, no new memory */
    CHECK_EQ(lmpi_mem_current(LMPI_MEM_REQUEST), bytes);
    CHECK(lmpi_request_from_handle(MPI_REQUEST_NULL) == NULL);

    MPI_Status s;
    lmpi_status_set_bytes(&s, ((int64_t)5 << 32) + 77);
    CHECK_EQ(lmpi_status_bytes(&s), ((int64_t)5 << 32) + 77);
    lmpi_request_pool_finalize();
    CHECK_EQ(lmpi_mem_current(LMPI_MEM_REQUEST), 0);
    return unit_finish("test_request");
}
