/* The arena of user-visible objects: communicators, datatypes, operations
 * and requests are carved from one reserved range of address space, so a
 * handle can be checked before it is dereferenced: a handle outside the
 * range is garbage (MPI_ERR_COMM, _TYPE, _OP, _REQUEST), never a crash, and
 * one inside it is readable memory whose magic word says the rest. */
#ifndef LMPI_OBJARENA_H
#define LMPI_OBJARENA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/lmpi.h"

extern uintptr_t lmpi_obj_base; /* 0 before the first object, or when the range could not be reserved */
extern size_t lmpi_obj_used;    /* bytes handed out from the start, all readable */
extern bool lmpi_obj_unreserved; /* the range could not be reserved: objects come from the heap */

/* Zeroed, accounted to cat; NULL when out of memory. */
void *lmpi_obj_alloc(size_t size, lmpi_mem_cat cat);
/* Back to the arena (reused by objects of the same size class). */
void lmpi_obj_free(void *p, size_t size, lmpi_mem_cat cat);

/* Could p be an object of `size` bytes from the arena?  One subtraction and
 * one compare.  Before the first object nothing is valid (a garbage handle
 * then must not be read: the range is reserved only by the first
 * allocation); when no range could be reserved the magic check is all there
 * is. */
static inline bool lmpi_obj_valid(const void *p, size_t size)
{
    if (LMPI_UNLIKELY(!lmpi_obj_base))
        return lmpi_obj_unreserved && p != NULL;
    uintptr_t off = (uintptr_t)p - lmpi_obj_base;
    return off < lmpi_obj_used && lmpi_obj_used - off >= size && (off & 7) == 0;
}

#endif
