/* The predefined datatypes of the standard ABI and their sizes on this
 * platform.  Fortran types follow the ABI's C view (INTEGER = int, REAL =
 * float, DOUBLE PRECISION = double, LOGICAL = int). */
#include <complex.h>
#include <stddef.h>
#include <stdbool.h>
#include <string.h>
#include <wchar.h>

#include "binding/check.h"
#include "binding/gen/impl.h"
#include "datatype/datatype.h"

lmpi_datatype lmpi_datatype_builtin[LMPI_DATATYPE_BUILTIN_COUNT];

struct pair_fi { float a; int b; };
struct pair_di { double a; int b; };
struct pair_li { long a; int b; };
struct pair_si { short a; int b; };
struct pair_ldi { long double a; int b; };

/* Each type carries its C alignment (what struct padding follows); the
 * Fortran and pair types that have no C type of their own give theirs. */
#define BUILTIN(h, ctype) { (uintptr_t)(h), sizeof(ctype), _Alignof(ctype), #h }
#define BUILTIN_SZ(h, sz, al) { (uintptr_t)(h), (sz), (al), #h }

static const struct { uintptr_t handle; size_t size; size_t align; const char *name; } builtin_types[] = {
    BUILTIN(MPI_AINT, MPI_Aint), BUILTIN(MPI_COUNT, MPI_Count), BUILTIN(MPI_OFFSET, MPI_Offset),
    BUILTIN_SZ(MPI_PACKED, 1, 1), BUILTIN(MPI_SHORT, short), BUILTIN(MPI_INT, int),
    BUILTIN(MPI_LONG, long), BUILTIN(MPI_LONG_LONG, long long),
    BUILTIN(MPI_UNSIGNED_SHORT, unsigned short), BUILTIN(MPI_UNSIGNED, unsigned),
    BUILTIN(MPI_UNSIGNED_LONG, unsigned long), BUILTIN(MPI_UNSIGNED_LONG_LONG, unsigned long long),
    /* MPI_C_COMPLEX is MPI_C_FLOAT_COMPLEX's handle; named as MPICH names it */
    BUILTIN(MPI_FLOAT, float), BUILTIN(MPI_C_COMPLEX, float _Complex),
    BUILTIN(MPI_CXX_FLOAT_COMPLEX, float _Complex), BUILTIN(MPI_DOUBLE, double),
    BUILTIN(MPI_C_DOUBLE_COMPLEX, double _Complex), BUILTIN(MPI_CXX_DOUBLE_COMPLEX, double _Complex),
    BUILTIN(MPI_LOGICAL, int), BUILTIN(MPI_INTEGER, int), BUILTIN(MPI_REAL, float),
    BUILTIN_SZ(MPI_COMPLEX, 2 * sizeof(float), _Alignof(float)), BUILTIN(MPI_DOUBLE_PRECISION, double),
    BUILTIN_SZ(MPI_DOUBLE_COMPLEX, 2 * sizeof(double), _Alignof(double)), BUILTIN_SZ(MPI_CHARACTER, 1, 1),
    BUILTIN(MPI_LONG_DOUBLE, long double), BUILTIN(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex),
    BUILTIN(MPI_CXX_LONG_DOUBLE_COMPLEX, long double _Complex),
    BUILTIN_SZ(MPI_FLOAT_INT, sizeof(float) + sizeof(int), _Alignof(struct pair_fi)),
    BUILTIN_SZ(MPI_DOUBLE_INT, sizeof(double) + sizeof(int), _Alignof(struct pair_di)),
    BUILTIN_SZ(MPI_LONG_INT, sizeof(long) + sizeof(int), _Alignof(struct pair_li)), BUILTIN_SZ(MPI_2INT, 2 * sizeof(int), _Alignof(int)),
    BUILTIN_SZ(MPI_SHORT_INT, sizeof(short) + sizeof(int), _Alignof(struct pair_si)),
    BUILTIN_SZ(MPI_LONG_DOUBLE_INT, sizeof(long double) + sizeof(int), _Alignof(struct pair_ldi)),
    BUILTIN_SZ(MPI_2REAL, 2 * sizeof(float), _Alignof(float)), BUILTIN_SZ(MPI_2DOUBLE_PRECISION, 2 * sizeof(double), _Alignof(double)),
    BUILTIN_SZ(MPI_2INTEGER, 2 * sizeof(int), _Alignof(int)), BUILTIN(MPI_C_BOOL, bool), BUILTIN_SZ(MPI_CXX_BOOL, 1, 1),
    BUILTIN(MPI_WCHAR, wchar_t), BUILTIN(MPI_INT8_T, int8_t), BUILTIN(MPI_UINT8_T, uint8_t),
    BUILTIN(MPI_CHAR, char), BUILTIN(MPI_SIGNED_CHAR, signed char),
    BUILTIN(MPI_UNSIGNED_CHAR, unsigned char), BUILTIN_SZ(MPI_BYTE, 1, 1),
    BUILTIN(MPI_INT16_T, int16_t), BUILTIN(MPI_UINT16_T, uint16_t), BUILTIN(MPI_INT32_T, int32_t),
    BUILTIN(MPI_UINT32_T, uint32_t), BUILTIN(MPI_INT64_T, int64_t), BUILTIN(MPI_UINT64_T, uint64_t),
    BUILTIN_SZ(MPI_LOGICAL1, 1, 1), BUILTIN_SZ(MPI_INTEGER1, 1, 1), BUILTIN_SZ(MPI_LOGICAL2, 2, 2),
    BUILTIN_SZ(MPI_INTEGER2, 2, 2), BUILTIN_SZ(MPI_REAL2, 2, 2), BUILTIN_SZ(MPI_LOGICAL4, 4, 4),
    BUILTIN_SZ(MPI_INTEGER4, 4, 4), BUILTIN_SZ(MPI_REAL4, 4, 4), BUILTIN_SZ(MPI_COMPLEX4, 4, 2),
    BUILTIN_SZ(MPI_LOGICAL8, 8, 8), BUILTIN_SZ(MPI_INTEGER8, 8, 8), BUILTIN_SZ(MPI_REAL8, 8, 8),
    BUILTIN_SZ(MPI_COMPLEX8, 8, 4), BUILTIN_SZ(MPI_LOGICAL16, 16, 16), BUILTIN_SZ(MPI_INTEGER16, 16, 16),
    BUILTIN_SZ(MPI_REAL16, 16, 16), BUILTIN_SZ(MPI_COMPLEX16, 16, 8), BUILTIN_SZ(MPI_COMPLEX32, 32, 16),
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

/* Every predefined type is one run from offset 0, except MPI_SHORT_INT
 * (a short, two bytes of padding, an int): two runs.  The nodes are static
 * and never freed (their reference counts start high). */
#define PERMANENT (1u << 30)
static lmpi_dtnode builtin_nodes[sizeof(builtin_types) / sizeof(builtin_types[0])];
static MPI_Aint short_int_disps[2] = {0, offsetof(struct pair_si, b)};
static MPI_Count short_int_blens[2] = {sizeof(short), sizeof(int)};
static MPI_Count short_int_before[3] = {0, sizeof(short), sizeof(short) + sizeof(int)};
static lmpi_dtnode byte_leaf = {.kind = LMPI_DT_LEAF, .refs = PERMANENT, .size = 1};

void lmpi_datatype_init_builtin(void)
{
    for (size_t i = 0; i < sizeof(builtin_types) / sizeof(builtin_types[0]); i++) {
        uintptr_t h = builtin_types[i].handle;
        lmpi_datatype *d = &lmpi_datatype_builtin[h - LMPI_DATATYPE_BUILTIN_BASE];
        lmpi_dtnode *n = &builtin_nodes[i];
        memset(d, 0, sizeof(*d));
        memset(n, 0, sizeof(*n));
        d->magic = LMPI_MAGIC_DATATYPE;
        d->size = (MPI_Count)builtin_types[i].size;
        d->extent = pair_extent(h, builtin_types[i].size);
        d->lb = 0;
        d->true_lb = 0;
        d->true_extent = h == (uintptr_t)MPI_SHORT_INT ? (MPI_Aint)sizeof(struct pair_si) : (MPI_Aint)d->size;
        d->committed = true;
        d->predefined = true;
        d->refs = PERMANENT;
        d->handle = (MPI_Datatype)h;
        d->name = builtin_types[i].name;
        d->combiner = MPI_COMBINER_NAMED;
        d->align = (int)builtin_types[i].align;
        n->refs = PERMANENT;
        n->size = d->size;
        if (h == (uintptr_t)MPI_SHORT_INT) {
            n->kind = LMPI_DT_BLOCKS;
            n->count = 2;
            n->disps = short_int_disps;
            n->blens = short_int_blens;
            n->before = short_int_before;
            n->child = &byte_leaf;
            n->child_size = 1;
            n->child_extent = 1;
            n->child_is_run = 1;
        } else {
            n->kind = LMPI_DT_LEAF;
        }
        d->node = n;
        d->contiguous = n->kind == LMPI_DT_LEAF && d->extent == (MPI_Aint)d->size;
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

lmpi_status lmpi_impl_Type_get_name(MPI_Datatype handle, char *name, int *len)
{
    lmpi_datatype *dt = NULL;
    /* MPI_LB and MPI_UB (removed in MPI 3.0) are markers that only
     * MPI_Type_struct understands, not datatypes; they keep their names, as
     * in MPICH, for old programs that list the predefined types. */
    const char *marker = handle == MPI_LB ? "MPI_LB" : handle == MPI_UB ? "MPI_UB" : NULL;
    if (handle != MPI_DATATYPE_NULL && !marker) { /* whose name is "MPI_DATATYPE_NULL" (MPI 4.1) */
        lmpi_status st = lmpi_check_datatype(handle, &dt);
        if (st != LMPI_OK)
            return st;
    }
    if (!name || !len) {
        lmpi_err_detail("%s is NULL", name ? "resultlen" : "type_name");
        return LMPI_ERR_ARG;
    }
    const char *n = marker ? marker : !dt ? "MPI_DATATYPE_NULL" : dt->name ? dt->name : "";
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
