/* Reduction operations.  Predefined operations run typed loops generated
 * per (operation, C type); a derived datatype is reduced through its basic
 * type when all its elements share one (packed, reduced, unpacked when the
 * type is not contiguous). */
#include <complex.h>
#include <stdbool.h>
#include <string.h>
#include <wchar.h>

#include "binding/gen/impl.h"
#include "runtime/objarena.h"
#include "coll/op.h"

/* ---- type classes --------------------------------------------------------- */
typedef enum { CL_NONE, CL_INT, CL_FLOAT, CL_COMPLEX, CL_LOGICAL, CL_BYTE, CL_PAIR } type_class;

typedef void (*kernel)(const void *in, void *inout, MPI_Count n);

/* The loops below are memory- and vector-width-bound: on x86-64 each is
 * built for AVX-512, AVX2 and the baseline, the loader picking one (a sum of
 * 16K doubles in cache: 11 us with SSE2, 6.2 us with AVX-512 here). */
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones) && !defined(__SANITIZE_ADDRESS__)
#define KERNEL_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#endif
#ifndef KERNEL_CLONES
#define KERNEL_CLONES
#endif

/* Arithmetic and comparisons, per C type. */
#define ARITH(T, name)                                                                          \
    KERNEL_CLONES                                                                               \
    static void sum_##name(const void *a, void *b, MPI_Count n)                                 \
    {                                                                                           \
        const T *restrict x = a;                                                                \
        T *restrict y = b;                                                                      \
        for (MPI_Count i = 0; i < n; i++)                                                       \
            y[i] = x[i] + y[i];                                                                 \
    }                                                                                           \
    KERNEL_CLONES                                                                               \
    static void prod_##name(const void *a, void *b, MPI_Count n)                                \
    {                                                                                           \
        const T *restrict x = a;                                                                \
        T *restrict y = b;                                                                      \
        for (MPI_Count i = 0; i < n; i++)                                                       \
            y[i] = x[i] * y[i];                                                                 \
    }
#define MINMAX(T, name)                                                                         \
    KERNEL_CLONES                                                                               \
    static void max_##name(const void *a, void *b, MPI_Count n)                                 \
    {                                                                                           \
        const T *restrict x = a;                                                                \
        T *restrict y = b;                                                                      \
        for (MPI_Count i = 0; i < n; i++)                                                       \
            y[i] = x[i] > y[i] ? x[i] : y[i];                                                   \
    }                                                                                           \
    KERNEL_CLONES                                                                               \
    static void min_##name(const void *a, void *b, MPI_Count n)                                 \
    {                                                                                           \
        const T *restrict x = a;                                                                \
        T *restrict y = b;                                                                      \
        for (MPI_Count i = 0; i < n; i++)                                                       \
            y[i] = x[i] < y[i] ? x[i] : y[i];                                                   \
    }
#define LOGICAL(T, name)                                                                        \
    KERNEL_CLONES                                                                               \
    static void land_##name(const void *a, void *b, MPI_Count n)                                \
    {                                                                                           \
        const T *restrict x = a;                                                                \
        T *restrict y = b;                                                                      \
        for (MPI_Count i = 0; i < n; i++)                                                       \
            y[i] = (T)(x[i] && y[i]);                                                           \
    }                                                                                           \
    KERNEL_CLONES                                                                               \
    static void lor_##name(const void *a, void *b, MPI_Count n)                                 \
    {                                                                                           \
        const T *restrict x = a;                                                                \
        T *restrict y = b;                                                                      \
        for (MPI_Count i = 0; i < n; i++)                                                       \
            y[i] = (T)(x[i] || y[i]);                                                           \
    }                                                                                           \
    KERNEL_CLONES                                                                               \
    static void lxor_##name(const void *a, void *b, MPI_Count n)                                \
    {                                                                                           \
        const T *restrict x = a;                                                                \
        T *restrict y = b;                                                                      \
        for (MPI_Count i = 0; i < n; i++)                                                       \
            y[i] = (T)(!x[i] != !y[i]);                                                         \
    }
#define BITWISE(T, name)                                                                        \
    KERNEL_CLONES                                                                               \
    static void band_##name(const void *a, void *b, MPI_Count n)                                \
    {                                                                                           \
        const T *restrict x = a;                                                                \
        T *restrict y = b;                                                                      \
        for (MPI_Count i = 0; i < n; i++)                                                       \
            y[i] = x[i] & y[i];                                                                 \
    }                                                                                           \
    KERNEL_CLONES                                                                               \
    static void bor_##name(const void *a, void *b, MPI_Count n)                                 \
    {                                                                                           \
        const T *restrict x = a;                                                                \
        T *restrict y = b;                                                                      \
        for (MPI_Count i = 0; i < n; i++)                                                       \
            y[i] = x[i] | y[i];                                                                 \
    }                                                                                           \
    KERNEL_CLONES                                                                               \
    static void bxor_##name(const void *a, void *b, MPI_Count n)                                \
    {                                                                                           \
        const T *restrict x = a;                                                                \
        T *restrict y = b;                                                                      \
        for (MPI_Count i = 0; i < n; i++)                                                       \
            y[i] = x[i] ^ y[i];                                                                 \
    }

#define INTEGER_KERNELS(T, name) ARITH(T, name) MINMAX(T, name) LOGICAL(T, name) BITWISE(T, name)
INTEGER_KERNELS(signed char, i8)
INTEGER_KERNELS(unsigned char, u8)
INTEGER_KERNELS(int16_t, i16)
INTEGER_KERNELS(uint16_t, u16)
INTEGER_KERNELS(int32_t, i32)
INTEGER_KERNELS(uint32_t, u32)
INTEGER_KERNELS(int64_t, i64)
INTEGER_KERNELS(uint64_t, u64)
ARITH(float, f32)
MINMAX(float, f32)
ARITH(double, f64)
MINMAX(double, f64)
ARITH(long double, f80)
MINMAX(long double, f80)
ARITH(float _Complex, c32)
ARITH(double _Complex, c64)
ARITH(long double _Complex, c80)
LOGICAL(bool, bool)
BITWISE(unsigned char, byte)

/* MINLOC / MAXLOC on (value, index) pairs: ties keep the smaller index. */
#define LOC(V, I, name)                                                                         \
    typedef struct {                                                                            \
        V v;                                                                                    \
        I i;                                                                                    \
    } pair_##name;                                                                              \
    static void minloc_##name(const void *a, void *b, MPI_Count n)                              \
    {                                                                                           \
        const pair_##name *x = a;                                                               \
        pair_##name *y = b;                                                                     \
        for (MPI_Count k = 0; k < n; k++)                                                       \
            if (x[k].v < y[k].v || (x[k].v == y[k].v && x[k].i < y[k].i))                       \
                y[k] = x[k];                                                                    \
    }                                                                                           \
    static void maxloc_##name(const void *a, void *b, MPI_Count n)                              \
    {                                                                                           \
        const pair_##name *x = a;                                                               \
        pair_##name *y = b;                                                                     \
        for (MPI_Count k = 0; k < n; k++)                                                       \
            if (x[k].v > y[k].v || (x[k].v == y[k].v && x[k].i < y[k].i))                       \
                y[k] = x[k];                                                                    \
    }
LOC(float, int, fi)
LOC(double, int, di)
LOC(long, int, li)
LOC(int, int, ii)
LOC(short, int, si)
LOC(long double, int, ldi)
LOC(float, float, ff)
LOC(double, double, dd)

/* ---- the table: predefined type -> class and kernels ------------------------ */
typedef struct {
    MPI_Datatype h;
    type_class cls;
    kernel sum, prod, max, min, land, lor, lxor, band, bor, bxor, minloc, maxloc;
} type_ops;

#define K_INT(h, n) {h, CL_INT, sum_##n, prod_##n, max_##n, min_##n, land_##n, lor_##n, lxor_##n, band_##n, bor_##n, bxor_##n, 0, 0}
#define K_FLOAT(h, n) {h, CL_FLOAT, sum_##n, prod_##n, max_##n, min_##n, 0, 0, 0, 0, 0, 0, 0, 0}
#define K_CPLX(h, n) {h, CL_COMPLEX, sum_##n, prod_##n, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
#define K_LOGICAL(h, n) {h, CL_LOGICAL, 0, 0, 0, 0, land_##n, lor_##n, lxor_##n, 0, 0, 0, 0, 0}
#define K_PAIR(h, n) {h, CL_PAIR, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, minloc_##n, maxloc_##n}

/* the sized kernel for an integer C type */
#define INTK(h, T) (sizeof(T) == 1 ? (type_ops)K_INT(h, i8) : sizeof(T) == 2 ? (type_ops)K_INT(h, i16) \
                    : sizeof(T) == 4 ? (type_ops)K_INT(h, i32) : (type_ops)K_INT(h, i64))
#define UINTK(h, T) (sizeof(T) == 1 ? (type_ops)K_INT(h, u8) : sizeof(T) == 2 ? (type_ops)K_INT(h, u16) \
                     : sizeof(T) == 4 ? (type_ops)K_INT(h, u32) : (type_ops)K_INT(h, u64))

static type_ops table[64];
static int ntable;
/* predefined handle -> table position + 1 (handles are below LMPI_PREDEF_LIMIT):
 * the search this replaced was a tenth of a streamed 8-byte reduce */
static uint8_t position_of[LMPI_PREDEF_LIMIT];

static void build_table(void)
{
    if (ntable)
        return;
    type_ops t[] = {
        INTK(MPI_SHORT, short), INTK(MPI_INT, int), INTK(MPI_LONG, long), INTK(MPI_LONG_LONG, long long),
        INTK(MPI_SIGNED_CHAR, signed char), UINTK(MPI_UNSIGNED_CHAR, unsigned char),
        /* MPI_CHAR is text to the standard, but both peers reduce it as a
         * signed 8-bit integer and benchmark suites rely on that */
        K_INT(MPI_CHAR, i8),
        UINTK(MPI_UNSIGNED_SHORT, unsigned short), UINTK(MPI_UNSIGNED, unsigned),
        UINTK(MPI_UNSIGNED_LONG, unsigned long), UINTK(MPI_UNSIGNED_LONG_LONG, unsigned long long),
        K_INT(MPI_INT8_T, i8), K_INT(MPI_INT16_T, i16), K_INT(MPI_INT32_T, i32), K_INT(MPI_INT64_T, i64),
        K_INT(MPI_UINT8_T, u8), K_INT(MPI_UINT16_T, u16), K_INT(MPI_UINT32_T, u32), K_INT(MPI_UINT64_T, u64),
        K_INT(MPI_AINT, i64), K_INT(MPI_OFFSET, i64), K_INT(MPI_COUNT, i64),
        INTK(MPI_INTEGER, int), K_INT(MPI_INTEGER1, i8), K_INT(MPI_INTEGER2, i16), K_INT(MPI_INTEGER4, i32),
        K_INT(MPI_INTEGER8, i64),
        K_FLOAT(MPI_FLOAT, f32), K_FLOAT(MPI_DOUBLE, f64), K_FLOAT(MPI_LONG_DOUBLE, f80), K_FLOAT(MPI_REAL, f32),
        K_FLOAT(MPI_DOUBLE_PRECISION, f64), K_FLOAT(MPI_REAL4, f32), K_FLOAT(MPI_REAL8, f64),
        K_CPLX(MPI_C_FLOAT_COMPLEX, c32), K_CPLX(MPI_C_DOUBLE_COMPLEX, c64), K_CPLX(MPI_C_LONG_DOUBLE_COMPLEX, c80),
        K_CPLX(MPI_CXX_FLOAT_COMPLEX, c32), K_CPLX(MPI_CXX_DOUBLE_COMPLEX, c64),
        K_CPLX(MPI_CXX_LONG_DOUBLE_COMPLEX, c80), K_CPLX(MPI_COMPLEX, c32), K_CPLX(MPI_DOUBLE_COMPLEX, c64),
        K_CPLX(MPI_COMPLEX8, c32), K_CPLX(MPI_COMPLEX16, c64),
        K_LOGICAL(MPI_C_BOOL, bool), K_LOGICAL(MPI_CXX_BOOL, bool), K_LOGICAL(MPI_LOGICAL, i32),
        K_LOGICAL(MPI_LOGICAL1, i8), K_LOGICAL(MPI_LOGICAL2, i16), K_LOGICAL(MPI_LOGICAL4, i32),
        K_LOGICAL(MPI_LOGICAL8, i64),
        {MPI_BYTE, CL_BYTE, 0, 0, 0, 0, 0, 0, 0, band_byte, bor_byte, bxor_byte, 0, 0},
        K_PAIR(MPI_FLOAT_INT, fi), K_PAIR(MPI_DOUBLE_INT, di), K_PAIR(MPI_LONG_INT, li), K_PAIR(MPI_2INT, ii),
        K_PAIR(MPI_SHORT_INT, si), K_PAIR(MPI_LONG_DOUBLE_INT, ldi), K_PAIR(MPI_2REAL, ff),
        K_PAIR(MPI_2DOUBLE_PRECISION, dd), K_PAIR(MPI_2INTEGER, ii),
    };
    _Static_assert(sizeof(t) <= sizeof(table), "the kernel table fits");
    memcpy(table, t, sizeof(t));
    for (int i = (int)(sizeof(t) / sizeof(t[0])) - 1; i >= 0; i--) /* the first entry of a handle wins */
        if ((uintptr_t)t[i].h < LMPI_PREDEF_LIMIT)
            position_of[(uintptr_t)t[i].h] = (uint8_t)(i + 1);
    ntable = (int)(sizeof(t) / sizeof(t[0]));
}

static const type_ops *ops_of(MPI_Datatype h)
{
    if (LMPI_UNLIKELY(!ntable))
        build_table();
    uintptr_t v = (uintptr_t)h;
    return v < LMPI_PREDEF_LIMIT && position_of[v] ? &table[position_of[v] - 1] : NULL;
}

static kernel kernel_of(const type_ops *t, int op)
{
    if (!t)
        return NULL;
    switch (op) {
    case (int)(uintptr_t)MPI_SUM: return t->sum;
    case (int)(uintptr_t)MPI_PROD: return t->prod;
    case (int)(uintptr_t)MPI_MAX: return t->max;
    case (int)(uintptr_t)MPI_MIN: return t->min;
    case (int)(uintptr_t)MPI_LAND: return t->land;
    case (int)(uintptr_t)MPI_LOR: return t->lor;
    case (int)(uintptr_t)MPI_LXOR: return t->lxor;
    case (int)(uintptr_t)MPI_BAND: return t->band;
    case (int)(uintptr_t)MPI_BOR: return t->bor;
    case (int)(uintptr_t)MPI_BXOR: return t->bxor;
    case (int)(uintptr_t)MPI_MINLOC: return t->minloc;
    case (int)(uintptr_t)MPI_MAXLOC: return t->maxloc;
    default: return NULL;
    }
}

/* ---- operation objects -------------------------------------------------------- */

static lmpi_op predefined_ops[0x40];

static void init_predefined(void)
{
    static const MPI_Op all[] = {MPI_SUM,  MPI_MIN, MPI_MAX,  MPI_PROD,   MPI_BAND,   MPI_BOR,     MPI_BXOR,
                                 MPI_LAND, MPI_LOR, MPI_LXOR, MPI_MINLOC, MPI_MAXLOC, MPI_REPLACE, MPI_NO_OP};
    if (predefined_ops[(uintptr_t)MPI_SUM].magic)
        return;
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        lmpi_op *o = &predefined_ops[(uintptr_t)all[i]];
        o->magic = LMPI_MAGIC_OP;
        o->refs = 1u << 30;
        o->predefined = (int)(uintptr_t)all[i];
        o->commutative = true;
        o->handle = all[i];
    }
}

lmpi_status lmpi_op_arg(MPI_Op h, lmpi_op **out, const char *what)
{
    init_predefined();
    uintptr_t v = (uintptr_t)h;
    lmpi_op *o = NULL;
    if (v < sizeof(predefined_ops) / sizeof(predefined_ops[0]))
        o = &predefined_ops[v];
    else if (v >= LMPI_PREDEF_LIMIT && lmpi_obj_valid(h, sizeof(*o)))
        o = (lmpi_op *)h;
    if (!o || o->magic != LMPI_MAGIC_OP) {
        lmpi_err_detail(h == MPI_OP_NULL ? "%s is MPI_OP_NULL" : "%s is not an operation (freed or garbage handle)",
                        what);
        return LMPI_ERR_OP;
    }
    *out = o;
    return LMPI_OK;
}

static const char *op_name(int op)
{
    const char *n = lmpi_predefined_name((uintptr_t)op);
    return n ? n : "the operation";
}

/* The one basic type all of dt's elements share (pair types count as one),
 * or NULL. */
static const lmpi_datatype *basic_of(const lmpi_datatype *dt)
{
    if (dt->predefined)
        return dt;
    if (dt->cached) /* an MPI_Type_create_f90_* type: its predefined base */
        return dt->types[0];
    const lmpi_datatype *b = NULL;
    for (int i = 0; i < dt->nt; i++) {
        const lmpi_datatype *c = basic_of(dt->types[i]);
        if (!c || (b && c != b))
            return NULL;
        b = c;
    }
    return b;
}

lmpi_status lmpi_op_check(const lmpi_op *op, const lmpi_datatype *dt)
{
    if (!op->predefined || op->predefined == (int)(uintptr_t)MPI_REPLACE ||
        op->predefined == (int)(uintptr_t)MPI_NO_OP || dt->size == 0)
        return LMPI_OK;
    const lmpi_datatype *b = basic_of(dt);
    if (!b) {
        lmpi_err_detail("%s needs a datatype whose elements are all of one basic type", op_name(op->predefined));
        return LMPI_ERR_OP;
    }
    if (!kernel_of(ops_of(b->handle), op->predefined)) {
        lmpi_err_detail("%s is not defined for %s", op_name(op->predefined), b->name ? b->name : "this type");
        return LMPI_ERR_OP;
    }
    return LMPI_OK;
}

/* User functions take int counts: larger reductions go in pieces. */
static void apply_user(const lmpi_op *op, const void *in, void *inout, MPI_Count count, lmpi_datatype *dt)
{
    MPI_Datatype h = dt->handle;
    if (op->fn_c) {
        MPI_Count n = count;
        op->fn_c((void *)in, inout, &n, &h);
        return;
    }
    for (MPI_Count done = 0; done < count;) {
        int n = count - done > INT32_MAX ? INT32_MAX : (int)(count - done);
        op->fn((char *)in + done * dt->extent, (char *)inout + done * dt->extent, &n, &h);
        done += n;
    }
}

lmpi_status lmpi_op_apply(const lmpi_op *op, const void *in, void *inout, MPI_Count count, lmpi_datatype *dt)
{
    if (count == 0 || op->predefined == (int)(uintptr_t)MPI_NO_OP)
        return LMPI_OK;
    if (!op->predefined) {
        apply_user(op, in, inout, count, dt);
        return LMPI_OK;
    }
    MPI_Count bytes = count * dt->size;
    if (op->predefined == (int)(uintptr_t)MPI_REPLACE) {
        if (dt->contiguous)
            memmove((char *)inout + dt->true_lb, (const char *)in + dt->true_lb, (size_t)bytes);
        else {
            void *tmp = lmpi_malloc((size_t)bytes, LMPI_MEM_COLL);
            if (!tmp)
                return LMPI_ERR_NO_MEM;
            lmpi_dt_pack(in, count, dt, 0, bytes, tmp);
            lmpi_dt_unpack(inout, count, dt, 0, bytes, tmp);
            lmpi_free(tmp);
        }
        return LMPI_OK;
    }
    const lmpi_datatype *b = basic_of(dt);
    kernel k = kernel_of(ops_of(b->handle), op->predefined);
    MPI_Count n = bytes / b->size;
    if (dt->contiguous && (b->contiguous || b == dt)) {
        k((const char *)in + dt->true_lb, (char *)inout + dt->true_lb, n);
        return LMPI_OK;
    }
    /* non-contiguous: reduce the packed elements, then put them back; pair
     * types with padding are packed into their padded layout one by one */
    MPI_Count nel = bytes / b->size, unit = b->extent;
    char *x = lmpi_malloc((size_t)(nel * unit + 1), LMPI_MEM_COLL), *y = lmpi_malloc((size_t)(nel * unit + 1), LMPI_MEM_COLL);
    char *px = lmpi_malloc((size_t)bytes + 1, LMPI_MEM_COLL), *py = lmpi_malloc((size_t)bytes + 1, LMPI_MEM_COLL);
    if (!x || !y || !px || !py) {
        lmpi_free(x), lmpi_free(y), lmpi_free(px), lmpi_free(py);
        return LMPI_ERR_NO_MEM;
    }
    lmpi_dt_pack(in, count, dt, 0, bytes, px);
    lmpi_dt_pack(inout, count, dt, 0, bytes, py);
    lmpi_dt_unpack(x, nel, b, 0, bytes, px); /* packed elements -> an array of b */
    lmpi_dt_unpack(y, nel, b, 0, bytes, py);
    k(x, y, nel);
    lmpi_dt_pack(y, nel, b, 0, bytes, py);
    lmpi_dt_unpack(inout, count, dt, 0, bytes, py);
    lmpi_free(x), lmpi_free(y), lmpi_free(px), lmpi_free(py);
    return LMPI_OK;
}

/* ---- MPI functions ------------------------------------------------------------------ */

static lmpi_status op_new(MPI_User_function *fn, MPI_User_function_c *fn_c, int commute, MPI_Op *out)
{
    if (!fn && !fn_c) {
        lmpi_err_detail("user_fn is NULL");
        return LMPI_ERR_ARG;
    }
    lmpi_op *o = lmpi_obj_alloc(sizeof(*o), LMPI_MEM_COLL);
    if (!o)
        return LMPI_ERR_NO_MEM;
    o->magic = LMPI_MAGIC_OP;
    o->refs = 1;
    o->commutative = commute != 0;
    o->fn = fn;
    o->fn_c = fn_c;
    o->handle = (MPI_Op)o;
    *out = o->handle;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Op_create(MPI_User_function *fn, int commute, MPI_Op *op) { return op_new(fn, NULL, commute, op); }
lmpi_status lmpi_impl_Op_create_c(MPI_User_function_c *fn, int commute, MPI_Op *op)
{
    return op_new(NULL, fn, commute, op);
}

lmpi_status lmpi_impl_Op_free(MPI_Op *h)
{
    lmpi_op *o;
    lmpi_status st = lmpi_op_arg(*h, &o, "op");
    if (st != LMPI_OK)
        return st;
    if (o->predefined) {
        lmpi_err_detail("%s is predefined and cannot be freed", op_name(o->predefined));
        return LMPI_ERR_OP;
    }
    /* the handle dies now; the object lives until the last pending
     * operation that uses it lets go (lmpi_op_release) */
    o->magic = 0;
    lmpi_op_release(o);
    *h = MPI_OP_NULL;
    return LMPI_OK;
}

void lmpi_op_retain(lmpi_op *o)
{
    if (!o->predefined)
        o->refs++;
}

void lmpi_op_release(lmpi_op *o)
{
    if (!o->predefined && --o->refs == 0)
        lmpi_obj_free(o, sizeof(*o), LMPI_MEM_COLL);
}

lmpi_status lmpi_impl_Op_commutative(MPI_Op h, int *commute)
{
    lmpi_op *o;
    lmpi_status st = lmpi_op_arg(h, &o, "op");
    if (st == LMPI_OK)
        *commute = o->commutative;
    return st;
}

lmpi_status lmpi_impl_Reduce_local(const void *inbuf, void *inoutbuf, MPI_Count count, lmpi_datatype *dt, MPI_Op h)
{
    lmpi_op *o;
    lmpi_status st = lmpi_op_arg(h, &o, "op");
    if (st == LMPI_OK)
        st = lmpi_op_check(o, dt);
    if (st != LMPI_OK)
        return st;
    if (inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE) {
        lmpi_err_detail("%s is MPI_IN_PLACE, which MPI_Reduce_local does not accept",
                        inbuf == MPI_IN_PLACE ? "inbuf" : "inoutbuf");
        return LMPI_ERR_BUFFER;
    }
    if (count > 0 && (!inbuf || !inoutbuf) && dt->predefined) {
        lmpi_err_detail("inbuf or inoutbuf is NULL");
        return LMPI_ERR_BUFFER;
    }
    /* aliased arguments are erroneous; MPICH refuses this one too */
    if (count > 0 && inbuf && inbuf == inoutbuf) {
        lmpi_err_detail("inbuf and inoutbuf are the same buffer");
        return LMPI_ERR_BUFFER;
    }
    return lmpi_op_apply(o, inbuf, inoutbuf, count, dt);
}

const lmpi_datatype *lmpi_op_basic_type(const lmpi_datatype *dt) { return basic_of(dt); }
