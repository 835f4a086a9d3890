/* The geometry of a Fortran array section (mpif_section.h): no MPI here. */
#include <string.h>

#include "fortran/mpif_section.h"

int64_t lmpif_section_elems(const CFI_cdesc_t *d)
{
    int64_t n = 1;
    for (int i = 0; i < d->rank; i++)
        n *= d->dim[i].extent;
    return n;
}

/* An assumed-size array (last extent -1) is contiguous by definition, a
 * scalar trivially, an empty section has nothing to lay out. */
bool lmpif_section_contiguous(const CFI_cdesc_t *d)
{
    if (d->rank == 0 || d->dim[d->rank - 1].extent < 0)
        return true;
    CFI_index_t expect = (CFI_index_t)d->elem_len;
    for (int i = 0; i < d->rank; i++) {
        if (d->dim[i].extent == 0)
            return true;
        if (d->dim[i].extent != 1 && d->dim[i].sm != expect)
            return false;
        expect *= d->dim[i].extent;
    }
    return true;
}

/* One stride between all consecutive elements (a(1:n:2), or a(1:n:2, :) of
 * an array with n even): *stride gets it. */
bool lmpif_section_uniform(const CFI_cdesc_t *d, int64_t *stride)
{
    int64_t s = 0, next = 0;
    for (int i = 0; i < d->rank; i++) {
        if (d->dim[i].extent == 1)
            continue;
        if (s == 0)
            s = d->dim[i].sm;
        else if (d->dim[i].sm != next)
            return false;
        next = (int64_t)d->dim[i].sm * d->dim[i].extent;
    }
    *stride = s ? s : (int64_t)d->elem_len;
    return true;
}

/* The byte offset of element i (array element order) from base_addr. */
int64_t lmpif_section_offset(const CFI_cdesc_t *d, int64_t i)
{
    int64_t off = 0;
    for (int k = 0; k < d->rank; k++) {
        int64_t e = d->dim[k].extent;
        off += (i % e) * d->dim[k].sm;
        i /= e;
    }
    return off;
}

/* Copies between the section and a contiguous buffer, element by element,
 * the first dimension's run without a division per element. */
void lmpif_section_copy(const CFI_cdesc_t *d, char *flat, bool to_flat)
{
    int64_t n = lmpif_section_elems(d), e0 = d->rank ? d->dim[0].extent : 1;
    int64_t sm0 = d->rank ? d->dim[0].sm : 0;
    size_t len = d->elem_len;
    for (int64_t i = 0; i < n; i += e0) {
        char *p = (char *)d->base_addr + lmpif_section_offset(d, i);
        for (int64_t j = 0; j < e0; j++, p += sm0, flat += len) {
            if (to_flat)
                memcpy(flat, p, len);
            else
                memcpy(p, flat, len);
        }
    }
}
