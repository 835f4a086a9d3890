/* Datatypes.  This first version knows the predefined types (size, extent,
 * name); derived types and the pack engine come with the datatype issue. */
#ifndef LMPI_DATATYPE_H
#define LMPI_DATATYPE_H

#include "runtime/lmpi.h"

struct lmpi_datatype {
    uint32_t magic;
    uint32_t size;    /* bytes of data in one element */
    MPI_Aint extent;
    MPI_Aint lb;
    bool contiguous;
    bool committed;
    bool predefined;
    MPI_Datatype handle;
    const char *name;
};

/* Predefined datatype handles are 0x200..0x2ff in the standard ABI. */
#define LMPI_DATATYPE_BUILTIN_BASE 0x200u
#define LMPI_DATATYPE_BUILTIN_COUNT 0x100u
extern lmpi_datatype lmpi_datatype_builtin[LMPI_DATATYPE_BUILTIN_COUNT];

static inline lmpi_datatype *lmpi_datatype_from_handle(MPI_Datatype h)
{
    uintptr_t v = (uintptr_t)h;
    if (LMPI_UNLIKELY(v < LMPI_PREDEF_LIMIT)) {
        v -= LMPI_DATATYPE_BUILTIN_BASE;
        if (v >= LMPI_DATATYPE_BUILTIN_COUNT || lmpi_datatype_builtin[v].magic != LMPI_MAGIC_DATATYPE)
            return NULL;
        return &lmpi_datatype_builtin[v];
    }
    return (lmpi_datatype *)h;
}

void lmpi_datatype_init_builtin(void);

#endif
