/* MPI_Alloc_mem / MPI_Free_mem: memory for the user, aligned as the info
 * key "mpi_minimum_memory_alignment" asks (at least 16 bytes), counted in
 * the "other" category of the memory report.  A small header just below
 * the returned address remembers the size and the alignment so that
 * MPI_Free_mem finds the block's start. */
#include <stdlib.h>
#include <string.h>

#include "binding/gen/impl.h"
#include "runtime/info.h"

typedef struct {
    size_t size, align;
} mem_header;

lmpi_status lmpi_impl_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    lmpi_info *i;
    lmpi_status st = lmpi_info_arg(info, &i);
    if (st != LMPI_OK)
        return st;
    if (size < 0 || !baseptr) {
        lmpi_err_detail(size < 0 ? "size %lld is negative" : "baseptr is NULL", (long long)size);
        return LMPI_ERR_ARG;
    }
    size_t align = 16;
    const char *v = i ? lmpi_info_value(i, "mpi_minimum_memory_alignment") : NULL;
    if (v) {
        char *end;
        unsigned long long a = strtoull(v, &end, 10);
        if (*end || a == 0 || (a & (a - 1))) {
            lmpi_err_detail("mpi_minimum_memory_alignment \"%s\" is not a power of two", v);
            return LMPI_ERR_INFO_VALUE;
        }
        if (a > align)
            align = (size_t)a;
    }
    void *raw;
    if (posix_memalign(&raw, align, align + (size_t)size) != 0) {
        lmpi_err_detail("cannot allocate %lld bytes", (long long)size);
        return LMPI_ERR_NO_MEM;
    }
    char *p = (char *)raw + align;
    mem_header h = {(size_t)size, align};
    memcpy(p - sizeof(h), &h, sizeof(h));
    lmpi_mem_account(LMPI_MEM_OTHER, (int64_t)size);
    *(void **)baseptr = p;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Free_mem(void *base)
{
    if (!base)
        return LMPI_OK;
    mem_header h;
    memcpy(&h, (char *)base - sizeof(h), sizeof(h));
    lmpi_mem_account(LMPI_MEM_OTHER, -(int64_t)h.size);
    free((char *)base - h.align);
    return LMPI_OK;
}
