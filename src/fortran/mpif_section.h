/* The geometry of an array section as a Fortran compiler describes it
 * (ISO_Fortran_binding.h's CFI_cdesc_t): how many elements, whether they are
 * contiguous or evenly strided, where element i lies, and copies to and
 * from a contiguous buffer.  Pure functions, no MPI: tests/unit covers them
 * with hand-made descriptors. */
#ifndef LMPI_FORTRAN_MPIF_SECTION_H
#define LMPI_FORTRAN_MPIF_SECTION_H

#include <stdbool.h>
#include <stdint.h>

#include <ISO_Fortran_binding.h>

/* Elements in the section (a scalar: 1). */
int64_t lmpif_section_elems(const CFI_cdesc_t *d);
/* One run of elements: a scalar, an assumed-size array, an empty section,
 * or strides that match the extents. */
bool lmpif_section_contiguous(const CFI_cdesc_t *d);
/* One stride between all consecutive elements (a(1:n:2), or a(1:n:2, :) of
 * an array with n even): *stride gets it. */
bool lmpif_section_uniform(const CFI_cdesc_t *d, int64_t *stride);
/* The byte offset of element i (array element order) from base_addr. */
int64_t lmpif_section_offset(const CFI_cdesc_t *d, int64_t i);
/* Copies between the section and a contiguous buffer of its elements. */
void lmpif_section_copy(const CFI_cdesc_t *d, char *flat, bool to_flat);

#endif
