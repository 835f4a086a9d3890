#include <string.h>

#include "runtime/lmpi.h"
#include "unit.h"

int main(void)
{
    int64_t base = lmpi_mem_current(LMPI_MEM_COMM);
    void *a = lmpi_malloc(1000, LMPI_MEM_COMM);
    void *b = lmpi_calloc(10, 100, LMPI_MEM_COMM);
    CHECK(a && b);
    CHECK_EQ(((uintptr_t)a) % 16, 0);
    CHECK_EQ(lmpi_mem_current(LMPI_MEM_COMM) - base, 2000);
    for (int i = 0; i < 1000; i++)
        CHECK_EQ(((char *)b)[i], 0);
    lmpi_free(a);
    CHECK_EQ(lmpi_mem_current(LMPI_MEM_COMM) - base, 1000);
    CHECK(lmpi_mem_peak(LMPI_MEM_COMM) >= base + 2000);
    /* realloc may move a block to another category */
    b = lmpi_realloc(b, 3000, LMPI_MEM_MATCH);
    CHECK_EQ(lmpi_mem_current(LMPI_MEM_COMM) - base, 0);
    CHECK_EQ(lmpi_mem_current(LMPI_MEM_MATCH), 3000);
    char *s = lmpi_strdup("leanmpi", LMPI_MEM_OTHER);
    CHECK(strcmp(s, "leanmpi") == 0);
    CHECK_EQ(lmpi_mem_current(LMPI_MEM_OTHER), 8);
    lmpi_free(s);
    lmpi_free(b);
    lmpi_free(NULL);
    CHECK_EQ(lmpi_mem_current(LMPI_MEM_MATCH), 0);
    CHECK_EQ(lmpi_mem_current(LMPI_MEM_OTHER), 0);
    lmpi_mem_account(LMPI_MEM_SHM, 4096);
    CHECK_EQ(lmpi_mem_current(LMPI_MEM_SHM), 4096);
    lmpi_mem_account(LMPI_MEM_SHM, -4096);
    CHECK_EQ(lmpi_mem_peak(LMPI_MEM_SHM), 4096);
    CHECK(strcmp(lmpi_mem_cat_name(LMPI_MEM_RANKMAP), "rankmap") == 0);
    return unit_finish("test_memory");
}
