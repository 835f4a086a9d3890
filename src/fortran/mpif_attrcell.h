/* Attribute values set from Fortran, as C must see them.
 *
 * Fortran stores integers as attribute values where C stores pointers, and
 * the standard (MPI 5.0 §19.3.7) has C read a value set from Fortran as a
 * pointer to that integer.  A value set from Fortran is therefore stored as
 * the address of a cell holding it; Fortran reads it back through the cell,
 * and reads a pointer set from C as its address.  Over the standard ABI the
 * Fortran layer cannot ask the library which language set a value, so it
 * keeps a registry of the cells it made: an address that is not in it was
 * set from C, and is never dereferenced.
 *
 * A cell's first member is the value: the cell's address is the address of
 * an MPI_Aint, whose low-order INTEGER (little-endian) is where MPI_ATTR_PUT's
 * value is read in C.  Thread-safe (a mutex; attributes are not a hot path).
 * No MPI calls: tests/unit covers it. */
#ifndef LMPI_FORTRAN_MPIF_ATTRCELL_H
#define LMPI_FORTRAN_MPIF_ATTRCELL_H

#include <stdbool.h>
#include <stdint.h>

/* A new registered cell holding value; NULL when out of memory. */
intptr_t *lmpif_cell_new(intptr_t value);
/* True, with *value set, when p is a registered cell. */
bool lmpif_cell_get(const void *p, intptr_t *value);
/* Unregisters and frees p when it is a registered cell; anything else is
 * left alone. */
void lmpif_cell_release(void *p);
/* Registered cells (tests). */
long lmpif_cell_count(void);

#endif
