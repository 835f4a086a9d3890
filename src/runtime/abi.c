/* The standard ABI's queries (MPI 5.0 §20): the sizes of the C integer
 * types behind MPI_Aint, MPI_Count and MPI_Offset, and what a Fortran
 * binding layered on this library declared about its types and LOGICAL
 * values (it tells us with the set functions; nothing is set until then). */
#include <stdio.h>
#include <string.h>

#include "binding/gen/impl.h"
#include "runtime/info.h"

static lmpi_status info_with(const char *const kv[][2], int n, MPI_Info *out)
{
    lmpi_info *i = lmpi_info_new();
    if (!i)
        return LMPI_ERR_NO_MEM;
    for (int k = 0; k < n; k++)
        if (lmpi_info_put(i, kv[k][0], kv[k][1]) != LMPI_OK) {
            lmpi_info_destroy(i);
            return LMPI_ERR_NO_MEM;
        }
    *out = (MPI_Info)i;
    return LMPI_OK;
}


lmpi_status lmpi_impl_Abi_get_info(MPI_Info *info)
{
    char aint[8], count[8], offset[8];
    snprintf(aint, sizeof(aint), "%zu", sizeof(MPI_Aint));
    snprintf(count, sizeof(count), "%zu", sizeof(MPI_Count));
    snprintf(offset, sizeof(offset), "%zu", sizeof(MPI_Offset));
    const char *const kv[][2] = {{"mpi_aint_size", aint}, {"mpi_count_size", count}, {"mpi_offset_size", offset}};
    return info_with(kv, 3, info);
}

/* ---- Fortran: what the Fortran layer declared --------------------------- */
static lmpi_info *fortran_info;

lmpi_status lmpi_impl_Abi_set_fortran_info(MPI_Info info)
{
    lmpi_info *i;
    lmpi_status st = lmpi_info_arg(info, &i);
    if (st != LMPI_OK)
        return st;
    if (!i) {
        lmpi_err_detail("info is MPI_INFO_NULL");
        return LMPI_ERR_INFO;
    }
    if (fortran_info) {
        lmpi_err_detail("the Fortran information was set already");
        return LMPI_ERR_OTHER;
    }
    fortran_info = lmpi_info_copy(i);
    return fortran_info ? LMPI_OK : LMPI_ERR_NO_MEM;
}

/* MPI_INFO_NULL until a Fortran layer has said what it has. */
lmpi_status lmpi_impl_Abi_get_fortran_info(MPI_Info *info)
{
    if (!fortran_info) {
        *info = MPI_INFO_NULL;
        return LMPI_OK;
    }
    lmpi_info *c = lmpi_info_copy(fortran_info);
    if (!c)
        return LMPI_ERR_NO_MEM;
    *info = (MPI_Info)c;
    return LMPI_OK;
}

/* LOGICAL true/false per size (1, 2, 4, 8, 16 bytes). */
static struct {
    bool set;
    unsigned char t[16], f[16];
} booleans[5];

static int logical_slot(int size)
{
    for (int s = 0; s < 5; s++)
        if (size == 1 << s)
            return s;
    return -1;
}

lmpi_status lmpi_impl_Abi_set_fortran_booleans(int logical_size, void *logical_true, void *logical_false)
{
    int s = logical_slot(logical_size);
    if (s < 0 || !logical_true || !logical_false) {
        lmpi_err_detail(s < 0 ? "logical_size %d is not 1, 2, 4, 8 or 16" : "logical_true or logical_false is NULL",
                        logical_size);
        return LMPI_ERR_ARG;
    }
    memcpy(booleans[s].t, logical_true, (size_t)logical_size);
    memcpy(booleans[s].f, logical_false, (size_t)logical_size);
    booleans[s].set = true;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Abi_get_fortran_booleans(int logical_size, void *logical_true, void *logical_false, int *is_set)
{
    int s = logical_slot(logical_size);
    if (s < 0) {
        lmpi_err_detail("logical_size %d is not 1, 2, 4, 8 or 16", logical_size);
        return LMPI_ERR_ARG;
    }
    *is_set = booleans[s].set;
    if (booleans[s].set && logical_true && logical_false) {
        memcpy(logical_true, booleans[s].t, (size_t)logical_size);
        memcpy(logical_false, booleans[s].f, (size_t)logical_size);
    }
    return LMPI_OK;
}
