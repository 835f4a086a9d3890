/* Collective schedules' scratch memory: small blocks from the schedule's
 * own arena, large ones page aligned (a block 16 bytes into a page made the
 * kernel's cross-memory copies 5x slow beside page-aligned user buffers),
 * kept for the next schedule, and every byte accounted to "coll" and given
 * back at finalize. */
#include <stdint.h>
#include <string.h>

#include "coll/sched.h"
#include "comm/comm.h"
#include "unit.h"

static void test_scratch(void)
{
    static lmpi_comm comm; /* only its context id is read */
    int64_t before = lmpi_mem_current(LMPI_MEM_COLL);
    lmpi_sched *s = lmpi_sched_new(&comm);
    CHECK(s != NULL);
    char *small = lmpi_sched_scratch(s, 100), *mid = lmpi_sched_scratch(s, 32 << 10);
    const size_t big_bytes = (1u << 20) + 1;
    char *big = lmpi_sched_scratch(s, big_bytes);
    CHECK(small && mid && big);
    CHECK_EQ((uintptr_t)big % 4096, 0);
    memset(small, 1, 100);
    memset(mid, 2, 32 << 10);
    memset(big, 3, big_bytes);
    CHECK(lmpi_mem_current(LMPI_MEM_COLL) - before >= (int64_t)big_bytes);
    lmpi_sched_free(s);

    /* the next schedule's megabyte is the one kept */
    s = lmpi_sched_new(&comm);
    char *again = lmpi_sched_scratch(s, 1u << 20);
    CHECK(again == big);
    CHECK_EQ(again[(1u << 20) - 1], 3);
    /* two large blocks at once: the second is a fresh mapping, aligned too */
    char *second = lmpi_sched_scratch(s, 200u << 10);
    CHECK(second && second != big);
    CHECK_EQ((uintptr_t)second % 4096, 0);
    memset(second, 4, 200u << 10);
    lmpi_sched_free(s);

    lmpi_sched_finalize();
    CHECK_EQ(lmpi_mem_current(LMPI_MEM_COLL), before);
}

int main(void)
{
    test_scratch();
    return unit_finish("test_sched");
}
