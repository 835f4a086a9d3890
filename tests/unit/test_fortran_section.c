/* The geometry of Fortran array sections (src/fortran/mpif_section.c), with
 * descriptors made by hand as gfortran makes them for a(…) sections. */
#include <string.h>

#include "fortran/mpif_section.h"
#include "unit.h"

/* a rank-r descriptor of elements of elem bytes from base */
static void describe(CFI_cdesc_t *d, void *base, size_t elem, int rank, const CFI_index_t *extent,
                     const CFI_index_t *sm)
{
    d->base_addr = base;
    d->elem_len = elem;
    d->rank = (CFI_rank_t)rank;
    for (int i = 0; i < rank; i++) {
        d->dim[i].lower_bound = 0;
        d->dim[i].extent = extent[i];
        d->dim[i].sm = sm[i];
    }
}

int main(void)
{
    double a[6 * 4];
    for (int i = 0; i < 24; i++)
        a[i] = i;
    CFI_CDESC_T(2) desc;
    CFI_cdesc_t *d = (CFI_cdesc_t *)&desc;
    int64_t stride = 0;

    /* a(:) of 10: one run */
    describe(d, a, 8, 1, (CFI_index_t[]){10}, (CFI_index_t[]){8});
    CHECK(lmpif_section_contiguous(d));
    CHECK(lmpif_section_uniform(d, &stride));
    CHECK_EQ(stride, 8);
    CHECK_EQ(lmpif_section_elems(d), 10);

    /* a(1:10:2): every other element */
    describe(d, a, 8, 1, (CFI_index_t[]){5}, (CFI_index_t[]){16});
    CHECK(!lmpif_section_contiguous(d));
    CHECK(lmpif_section_uniform(d, &stride));
    CHECK_EQ(stride, 16);
    CHECK_EQ(lmpif_section_offset(d, 3), 48);

    /* m(1:6:2, :) of m(6,4): rows 1, 3, 5, one stride throughout (6 is even) */
    describe(d, a, 8, 2, (CFI_index_t[]){3, 4}, (CFI_index_t[]){16, 48});
    CHECK(!lmpif_section_contiguous(d));
    CHECK(lmpif_section_uniform(d, &stride));
    CHECK_EQ(stride, 16);
    CHECK_EQ(lmpif_section_elems(d), 12);

    /* m(1:5:2, :) of m(5,4): rows 1, 3, 5, then a jump of one row: uneven */
    describe(d, a, 8, 2, (CFI_index_t[]){3, 4}, (CFI_index_t[]){16, 40});
    CHECK(!lmpif_section_uniform(d, &stride));
    CHECK_EQ(lmpif_section_offset(d, 3), 40);
    CHECK_EQ(lmpif_section_offset(d, 5), 40 + 32);
    double flat[12];
    lmpif_section_copy(d, (char *)flat, true);
    CHECK_EQ(flat[0], 0);
    CHECK_EQ(flat[2], 4);
    CHECK_EQ(flat[3], 5);  /* the second column starts at element 5 */
    CHECK_EQ(flat[11], 19);
    for (int i = 0; i < 12; i++)
        flat[i] = -1 - i;
    lmpif_section_copy(d, (char *)flat, false);
    CHECK_EQ(a[0], -1);
    CHECK_EQ(a[1], 1); /* between the rows: untouched */
    CHECK_EQ(a[19], -12);

    /* a(10:1:-1): backwards from the last element */
    describe(d, a + 9, 8, 1, (CFI_index_t[]){10}, (CFI_index_t[]){-8});
    CHECK(!lmpif_section_contiguous(d));
    CHECK(lmpif_section_uniform(d, &stride));
    CHECK_EQ(stride, -8);
    CHECK_EQ(lmpif_section_offset(d, 9), -72);

    /* a scalar, an assumed-size array, an empty section, a one-element one */
    describe(d, a, 8, 0, NULL, NULL);
    CHECK(lmpif_section_contiguous(d));
    CHECK_EQ(lmpif_section_elems(d), 1);
    describe(d, a, 8, 2, (CFI_index_t[]){6, -1}, (CFI_index_t[]){8, 48});
    CHECK(lmpif_section_contiguous(d));
    describe(d, a, 8, 1, (CFI_index_t[]){0}, (CFI_index_t[]){16});
    CHECK(lmpif_section_contiguous(d));
    CHECK_EQ(lmpif_section_elems(d), 0);
    describe(d, a, 8, 2, (CFI_index_t[]){1, 1}, (CFI_index_t[]){16, 480});
    CHECK(lmpif_section_contiguous(d));

    if (unit_failures)
        return 1;
    printf("test_fortran_section: passed\n");
    return 0;
}
