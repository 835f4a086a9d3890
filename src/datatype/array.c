/* MPI_Type_create_subarray and MPI_Type_create_darray, built from the other
 * constructors (as the standard defines them) and then labelled with their
 * own combiner and arguments. */
#include <string.h>

#include "binding/gen/impl.h"
#include "datatype/datatype.h"

static lmpi_datatype *T(MPI_Datatype h) { return lmpi_datatype_from_handle(h); }

static void drop(MPI_Datatype *h)
{
    if (*h != MPI_DATATYPE_NULL && !T(*h)->predefined)
        lmpi_impl_Type_free(h);
}

/* Place `inner` at byte displacement disp inside an array of `total` bytes
 * (lb 0, extent total). */
static lmpi_status place(MPI_Datatype inner, MPI_Aint disp, MPI_Aint total, MPI_Datatype *out)
{
    MPI_Datatype at;
    MPI_Aint d[1] = {disp};
    lmpi_status st = lmpi_impl_Type_create_hindexed_block(1, 1, (lmpi_iarray){d, 8}, T(inner), &at);
    if (st != LMPI_OK)
        return st;
    st = lmpi_impl_Type_create_resized(T(at), 0, total, out);
    drop(&at);
    return st;
}

/* The last step of both: place the built type in the whole array and drop
 * the intermediate. */
static lmpi_status finish_array(lmpi_status st, MPI_Datatype cur, MPI_Aint disp, MPI_Aint total, MPI_Datatype *out)
{
    if (st != LMPI_OK)
        return st;
    st = place(cur, disp, total, out);
    drop(&cur);
    return st;
}

/* Replace the recorded constructor of d (built internally) by the user's. */
static lmpi_status relabel(MPI_Datatype h, int combiner, int ni, const int *ints, int nc, const MPI_Count *counts,
                           lmpi_datatype *old, bool large)
{
    lmpi_datatype *d = T(h);
    for (int i = 0; i < d->nt; i++)
        lmpi_datatype_release(d->types[i]);
    d->combiner = combiner;
    d->large = large;
    d->ni = ni, d->na = 0, d->nc = nc, d->nt = 1;
    lmpi_free(d->ints), lmpi_free(d->counts), lmpi_free(d->aints), lmpi_free(d->types);
    d->ints = lmpi_malloc(sizeof(int) * (size_t)(ni + 1), LMPI_MEM_DATATYPE);
    d->counts = lmpi_malloc(sizeof(MPI_Count) * (size_t)(nc + 1), LMPI_MEM_DATATYPE);
    d->aints = lmpi_malloc(sizeof(MPI_Aint), LMPI_MEM_DATATYPE);
    d->types = lmpi_malloc(sizeof(*d->types), LMPI_MEM_DATATYPE);
    if (!d->ints || !d->counts || !d->aints || !d->types) {
        d->nt = 0;
        return LMPI_ERR_NO_MEM;
    }
    if (ni)
        memcpy(d->ints, ints, sizeof(int) * (size_t)ni);
    if (nc)
        memcpy(d->counts, counts, sizeof(MPI_Count) * (size_t)nc);
    d->types[0] = old;
    lmpi_datatype_retain(old);
    return LMPI_OK;
}

lmpi_status lmpi_impl_Type_create_subarray(int ndims, lmpi_iarray sizes, lmpi_iarray subsizes, lmpi_iarray starts,
                                           int order, lmpi_datatype *old, MPI_Datatype *out)
{
    if (ndims <= 0) {
        lmpi_err_detail("ndims %d must be positive", ndims);
        return LMPI_ERR_ARG;
    }
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN) {
        lmpi_err_detail("order %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", order);
        return LMPI_ERR_ARG;
    }
    for (int i = 0; i < ndims; i++) {
        MPI_Count n = lmpi_iarray_get(sizes, (size_t)i), s = lmpi_iarray_get(subsizes, (size_t)i),
                  st = lmpi_iarray_get(starts, (size_t)i);
        if (n <= 0 || s < 0 || s > n || st < 0 || st > n - s) {
            lmpi_err_detail("dimension %d: size %lld, subsize %lld, start %lld do not describe a subarray", i,
                            (long long)n, (long long)s, (long long)st);
            return LMPI_ERR_ARG;
        }
    }
    /* walk from the fastest dimension outwards */
    MPI_Datatype cur = old->handle;
    MPI_Aint stride = old->extent, disp = 0;
    lmpi_status st = LMPI_OK;
    for (int k = 0; k < ndims && st == LMPI_OK; k++) {
        int i = order == MPI_ORDER_C ? ndims - 1 - k : k;
        MPI_Datatype next;
        st = lmpi_impl_Type_create_hvector(lmpi_iarray_get(subsizes, (size_t)i), 1, stride, T(cur), &next);
        if (cur != old->handle)
            drop(&cur);
        cur = next;
        disp += (MPI_Aint)lmpi_iarray_get(starts, (size_t)i) * stride;
        stride *= (MPI_Aint)lmpi_iarray_get(sizes, (size_t)i);
    }
    if ((st = finish_array(st, cur, disp, stride, out)) != LMPI_OK)
        return st;
    bool large = sizes.width == 8;
    int ints[3 * 64 + 2];
    MPI_Count counts[3 * 64 + 1];
    int ni = 0, nc = 0;
    if (ndims > 64) {
        lmpi_err_detail("ndims %d: at most 64 dimensions", ndims);
        drop(out);
        return LMPI_ERR_ARG;
    }
    ints[ni++] = ndims;
    for (int a = 0; a < 3; a++) {
        lmpi_iarray arr = a == 0 ? sizes : a == 1 ? subsizes : starts;
        for (int i = 0; i < ndims; i++) {
            if (large)
                counts[nc++] = lmpi_iarray_get(arr, (size_t)i);
            else
                ints[ni++] = (int)lmpi_iarray_get(arr, (size_t)i);
        }
    }
    ints[ni++] = order;
    return relabel(*out, MPI_COMBINER_SUBARRAY, ni, ints, nc, counts, old, large);
}

/* One dimension of a darray: the elements of this process along it, as a
 * type over `unit` (one element of the dimension, extent = its stride),
 * and the offset of its first element. */
static lmpi_status darray_dim(int distrib, int darg, MPI_Count gsize, int psize, int coord, MPI_Datatype unit,
                              MPI_Aint stride, MPI_Datatype *out, MPI_Aint *offset)
{
    if (distrib == MPI_DISTRIBUTE_NONE) {
        *offset = 0;
        return lmpi_impl_Type_contiguous(gsize, T(unit), out);
    }
    if (distrib == MPI_DISTRIBUTE_BLOCK) {
        MPI_Count b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + psize - 1) / psize : darg;
        if (b * psize < gsize) {
            lmpi_err_detail("block size %lld x %d processes does not cover %lld elements", (long long)b, psize,
                            (long long)gsize);
            return LMPI_ERR_ARG;
        }
        MPI_Count start = coord * b, n = gsize - start < b ? gsize - start : b;
        if (n < 0)
            n = 0;
        *offset = (MPI_Aint)start * stride;
        return lmpi_impl_Type_contiguous(n, T(unit), out);
    }
    if (distrib != MPI_DISTRIBUTE_CYCLIC) {
        lmpi_err_detail("distribution %d is not MPI_DISTRIBUTE_BLOCK, _CYCLIC or _NONE", distrib);
        return LMPI_ERR_ARG;
    }
    MPI_Count b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    if (b <= 0) {
        lmpi_err_detail("cyclic block size %lld must be positive", (long long)b);
        return LMPI_ERR_ARG;
    }
    MPI_Count first = coord * b, step = (MPI_Count)psize * b;
    MPI_Count full = 0, rem = 0;
    if (first < gsize) {
        MPI_Count left = gsize - first;
        full = left / step;
        MPI_Count tail = left - full * step;
        if (tail >= b)
            full++;
        else
            rem = tail;
    }
    *offset = (MPI_Aint)first * stride;
    MPI_Datatype main;
    lmpi_status st = lmpi_impl_Type_create_hvector(full, b, (MPI_Count)step * stride, T(unit), &main);
    if (st != LMPI_OK || rem == 0) {
        *out = main;
        return st;
    }
    MPI_Datatype tail;
    st = lmpi_impl_Type_contiguous(rem, T(unit), &tail);
    if (st != LMPI_OK) {
        drop(&main);
        return st;
    }
    MPI_Count bl[2] = {1, 1};
    MPI_Count dp[2] = {0, full * step * stride};
    MPI_Datatype ty[2] = {main, tail};
    st = lmpi_impl_Type_create_struct(2, (lmpi_iarray){bl, 8}, (lmpi_iarray){dp, 8}, ty, out);
    drop(&main);
    drop(&tail);
    return st;
}

lmpi_status lmpi_impl_Type_create_darray(int size, int rank, int ndims, lmpi_iarray gsizes, const int distribs[],
                                         const int dargs[], const int psizes[], int order, lmpi_datatype *old,
                                         MPI_Datatype *out)
{
    if (size <= 0 || rank < 0 || rank >= size || ndims <= 0 || ndims > 64) {
        lmpi_err_detail("size %d, rank %d, ndims %d: not a valid process grid", size, rank, ndims);
        return LMPI_ERR_ARG;
    }
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN) {
        lmpi_err_detail("order %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", order);
        return LMPI_ERR_ARG;
    }
    int prod = 1, coords[64];
    for (int i = 0; i < ndims; i++) {
        if (psizes[i] <= 0 || lmpi_iarray_get(gsizes, (size_t)i) <= 0) {
            lmpi_err_detail("dimension %d: gsize or psize not positive", i);
            return LMPI_ERR_ARG;
        }
        if (distribs[i] == MPI_DISTRIBUTE_NONE && psizes[i] != 1) {
            lmpi_err_detail("dimension %d is not distributed but psizes[%d] = %d", i, i, psizes[i]);
            return LMPI_ERR_ARG;
        }
        prod *= psizes[i];
    }
    if (prod != size) {
        lmpi_err_detail("the process grid has %d processes, size is %d", prod, size);
        return LMPI_ERR_ARG;
    }
    /* processes are numbered row-major whatever the array order */
    for (int i = ndims - 1, r = rank; i >= 0; i--) {
        coords[i] = r % psizes[i];
        r /= psizes[i];
    }
    MPI_Datatype cur = old->handle;
    MPI_Aint stride = old->extent, disp = 0;
    lmpi_status st = LMPI_OK;
    for (int k = 0; k < ndims && st == LMPI_OK; k++) {
        int i = order == MPI_ORDER_C ? ndims - 1 - k : k;
        MPI_Datatype unit, next;
        MPI_Aint off = 0;
        st = lmpi_impl_Type_create_resized(T(cur), 0, stride, &unit);
        if (cur != old->handle)
            drop(&cur);
        if (st != LMPI_OK)
            return st;
        st = darray_dim(distribs[i], dargs[i], lmpi_iarray_get(gsizes, (size_t)i), psizes[i], coords[i], unit, stride,
                        &next, &off);
        drop(&unit);
        cur = next;
        disp += off;
        stride *= (MPI_Aint)lmpi_iarray_get(gsizes, (size_t)i);
    }
    if ((st = finish_array(st, cur, disp, stride, out)) != LMPI_OK)
        return st;
    bool large = gsizes.width == 8;
    int ints[4 * 64 + 4];
    MPI_Count counts[64];
    int ni = 0, nc = 0;
    ints[ni++] = size;
    ints[ni++] = rank;
    ints[ni++] = ndims;
    for (int i = 0; i < ndims; i++) {
        if (large)
            counts[nc++] = lmpi_iarray_get(gsizes, (size_t)i);
        else
            ints[ni++] = (int)lmpi_iarray_get(gsizes, (size_t)i);
    }
    for (int i = 0; i < ndims; i++)
        ints[ni++] = distribs[i];
    for (int i = 0; i < ndims; i++)
        ints[ni++] = dargs[i];
    for (int i = 0; i < ndims; i++)
        ints[ni++] = psizes[i];
    ints[ni++] = order;
    return relabel(*out, MPI_COMBINER_DARRAY, ni, ints, nc, counts, old, large);
}
