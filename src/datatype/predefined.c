/* The predefined datatypes of the standard ABI and their sizes on this
 * platform.  Fortran types follow the ABI's C view (INTEGER = int, REAL =
 * float, DOUBLE PRECISION = double, LOGICAL = int). */
#include <complex.h>
#include <stdbool.h>
#include <string.h>
#include <wchar.h>

#include "binding/gen/impl.h"
#include "datatype/datatype.h"

lmpi_datatype lmpi_datatype_builtin[LMPI_DATATYPE_BUILTIN_COUNT];

struct pair_fi { float a; int b; };
struct pair_di { double a; int b; };
struct pair_li { long a; int b; };
struct pair_si { short a; int b; };
struct pair_ldi { long double a; int b; };

#define BUILTIN(h, ctype) { (uintptr_t)(h), sizeof(ctype), #h }
#define BUILTIN_SZ(h, sz) { (uintptr_t)(h), (sz), #h }

static const struct { uintptr_t handle; size_t size; const char *name; } builtin_types[] = {
    BUILTIN(MPI_AINT, MPI_Aint), BUILTIN(MPI_COUNT, MPI_Count), BUILTIN(MPI_OFFSET, MPI_Offset),
    BUILTIN_SZ(MPI_PACKED, 1), BUILTIN(MPI_SHORT, short), BUILTIN(MPI_INT, int),
    BUILTIN(MPI_LONG, long), BUILTIN(MPI_LONG_LONG, long long),
    BUILTIN(MPI_UNSIGNED_SHORT, unsigned short), BUILTIN(MPI_UNSIGNED, unsigned),
    BUILTIN(MPI_UNSIGNED_LONG, unsigned long), BUILTIN(MPI_UNSIGNED_LONG_LONG, unsigned long long),
    BUILTIN(MPI_FLOAT, float), BUILTIN(MPI_C_FLOAT_COMPLEX, float _Complex),
    BUILTIN(MPI_CXX_FLOAT_COMPLEX, float _Complex), BUILTIN(MPI_DOUBLE, double),
    BUILTIN(MPI_C_DOUBLE_COMPLEX, double _Complex), BUILTIN(MPI_CXX_DOUBLE_COMPLEX, double _Complex),
    BUILTIN(MPI_LOGICAL, int), BUILTIN(MPI_INTEGER, int), BUILTIN(MPI_REAL, float),
    BUILTIN_SZ(MPI_COMPLEX, 2 * sizeof(float)), BUILTIN(MPI_DOUBLE_PRECISION, double),
    BUILTIN_SZ(MPI_DOUBLE_COMPLEX, 2 * sizeof(double)), BUILTIN_SZ(MPI_CHARACTER, 1),
    BUILTIN(MPI_LONG_DOUBLE, long double), BUILTIN(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex),
    BUILTIN(MPI_CXX_LONG_DOUBLE_COMPLEX, long double _Complex),
    BUILTIN_SZ(MPI_FLOAT_INT, sizeof(float) + sizeof(int)),
    BUILTIN_SZ(MPI_DOUBLE_INT, sizeof(double) + sizeof(int)),
    BUILTIN_SZ(MPI_LONG_INT, sizeof(long) + sizeof(int)), BUILTIN_SZ(MPI_2INT, 2 * sizeof(int)),
    BUILTIN_SZ(MPI_SHORT_INT, sizeof(short) + sizeof(int)),
    BUILTIN_SZ(MPI_LONG_DOUBLE_INT, sizeof(long double) + sizeof(int)),
    BUILTIN_SZ(MPI_2REAL, 2 * sizeof(float)), BUILTIN_SZ(MPI_2DOUBLE_PRECISION, 2 * sizeof(double)),
    BUILTIN_SZ(MPI_2INTEGER, 2 * sizeof(int)), BUILTIN(MPI_C_BOOL, bool), BUILTIN_SZ(MPI_CXX_BOOL, 1),
    BUILTIN(MPI_WCHAR, wchar_t), BUILTIN(MPI_INT8_T, int8_t), BUILTIN(MPI_UINT8_T, uint8_t),
    BUILTIN(MPI_CHAR, char), BUILTIN(MPI_SIGNED_CHAR, signed char),
    BUILTIN(MPI_UNSIGNED_CHAR, unsigned char), BUILTIN_SZ(MPI_BYTE, 1),
    BUILTIN(MPI_INT16_T, int16_t), BUILTIN(MPI_UINT16_T, uint16_t), BUILTIN(MPI_INT32_T, int32_t),
    BUILTIN(MPI_UINT32_T, uint32_t), BUILTIN(MPI_INT64_T, int64_t), BUILTIN(MPI_UINT64_T, uint64_t),
    BUILTIN_SZ(MPI_LOGICAL1, 1), BUILTIN_SZ(MPI_INTEGER1, 1), BUILTIN_SZ(MPI_LOGICAL2, 2),
    BUILTIN_SZ(MPI_INTEGER2, 2), BUILTIN_SZ(MPI_REAL2, 2), BUILTIN_SZ(MPI_LOGICAL4, 4),
    BUILTIN_SZ(MPI_INTEGER4, 4), BUILTIN_SZ(MPI_REAL4, 4), BUILTIN_SZ(MPI_COMPLEX4, 4),
    BUILTIN_SZ(MPI_LOGICAL8, 8), BUILTIN_SZ(MPI_INTEGER8, 8), BUILTIN_SZ(MPI_REAL8, 8),
    BUILTIN_SZ(MPI_COMPLEX8, 8), BUILTIN_SZ(MPI_LOGICAL16, 16), BUILTIN_SZ(MPI_INTEGER16, 16),
    BUILTIN_SZ(MPI_REAL16, 16), BUILTIN_SZ(MPI_COMPLEX16, 16), BUILTIN_SZ(MPI_COMPLEX32, 32),
};

/* Pair types have the padded extent of the C struct, not the sum of sizes. */
static MPI_Aint pair_extent(uintptr_t h, size_t size)
{
    if (h == (uintptr_t)MPI_FLOAT_INT) return sizeof(struct pair_fi);
    if (h == (uintptr_t)MPI_DOUBLE_INT) return sizeof(struct pair_di);
    if (h == (uintptr_t)MPI_LONG_INT) return sizeof(struct pair_li);
    if (h == (uintptr_t)MPI_SHORT_INT) return sizeof(struct pair_si);
    if (h == (uintptr_t)MPI_LONG_DOUBLE_INT) return sizeof(struct pair_ldi);
    return (MPI_Aint)size;
}

void lmpi_datatype_init_builtin(void)
{
    for (size_t i = 0; i < sizeof(builtin_types) / sizeof(builtin_types[0]); i++) {
        lmpi_datatype *d = &lmpi_datatype_builtin[builtin_types[i].handle - LMPI_DATATYPE_BUILTIN_BASE];
        d->magic = LMPI_MAGIC_DATATYPE;
        d->size = (uint32_t)builtin_types[i].size;
        d->extent = pair_extent(builtin_types[i].handle, builtin_types[i].size);
        d->lb = 0;
        d->contiguous = d->extent == (MPI_Aint)d->size;
        d->committed = true;
        d->predefined = true;
        d->handle = (MPI_Datatype)builtin_types[i].handle;
        d->name = builtin_types[i].name;
    }
}

/* Queries on predefined types. */
lmpi_status lmpi_impl_Type_size(lmpi_datatype *dt, MPI_Count *size)
{
    *size = dt->size;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Type_get_extent(lmpi_datatype *dt, MPI_Count *lb, MPI_Count *extent)
{
    *lb = dt->lb;
    *extent = dt->extent;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Type_get_name(lmpi_datatype *dt, char *name, int *len)
{
    const char *n = dt->name ? dt->name : "";
    size_t l = strlen(n);
    if (l >= MPI_MAX_OBJECT_NAME)
        l = MPI_MAX_OBJECT_NAME - 1;
    memcpy(name, n, l);
    name[l] = '\0';
    *len = (int)l;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Type_size_x(lmpi_datatype *dt, MPI_Count *size)
{
    return lmpi_impl_Type_size(dt, size);
}
