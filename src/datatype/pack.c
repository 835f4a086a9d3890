/* MPI_Pack / MPI_Unpack / MPI_Pack_size, the external32 representation
 * (big-endian, the standard's fixed sizes), and element counting.
 *
 * Native packing is the engine's byte stream.  external32 needs every basic
 * element converted, so it walks the type's recorded constructor (its type
 * map) element by element. */
#include <string.h>

#include "binding/gen/impl.h"
#include "datatype/datatype.h"

lmpi_status lmpi_impl_Pack_size(MPI_Count incount, lmpi_datatype *dt, lmpi_comm *comm, MPI_Count *size)
{
    (void)comm;
    if (dt->size && incount > INT64_MAX / dt->size) {
        lmpi_err_detail("incount %lld of %lld-byte elements overflows", (long long)incount, (long long)dt->size);
        return LMPI_ERR_COUNT;
    }
    *size = incount * dt->size;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Pack(const void *inbuf, MPI_Count incount, lmpi_datatype *dt, void *outbuf, MPI_Count outsize,
                           MPI_Count *position, lmpi_comm *comm)
{
    (void)comm;
    MPI_Count need = incount * dt->size;
    if (*position < 0 || need > outsize - *position) {
        lmpi_err_detail("packing %lld bytes at position %lld overflows the %lld-byte output buffer", (long long)need,
                        (long long)*position, (long long)outsize);
        return LMPI_ERR_TRUNCATE;
    }
    lmpi_dt_pack(inbuf, incount, dt, 0, need, (char *)outbuf + *position);
    *position += need;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Unpack(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
                             MPI_Count outcount, lmpi_datatype *dt, lmpi_comm *comm)
{
    (void)comm;
    MPI_Count need = outcount * dt->size;
    if (*position < 0 || need > insize - *position) {
        lmpi_err_detail("unpacking %lld bytes at position %lld reads past the %lld-byte input buffer",
                        (long long)need, (long long)*position, (long long)insize);
        return LMPI_ERR_TRUNCATE;
    }
    lmpi_dt_unpack(outbuf, outcount, dt, 0, need, (const char *)inbuf + *position);
    *position += need;
    return LMPI_OK;
}

/* ---- the type map, element by element ---------------------------------------- */

typedef lmpi_dt_elem_fn elem_fn;

static const lmpi_datatype *B(MPI_Datatype h) { return lmpi_datatype_from_handle(h); }

/* Pair types are two basic elements. */
static bool pair_parts(const lmpi_datatype *t, MPI_Datatype *a, MPI_Datatype *b, MPI_Aint *boff)
{
    MPI_Datatype h = t->handle;
    if (h == MPI_FLOAT_INT) *a = MPI_FLOAT, *b = MPI_INT, *boff = 4;
    else if (h == MPI_DOUBLE_INT) *a = MPI_DOUBLE, *b = MPI_INT, *boff = 8;
    else if (h == MPI_LONG_INT) *a = MPI_LONG, *b = MPI_INT, *boff = sizeof(long);
    else if (h == MPI_SHORT_INT) *a = MPI_SHORT, *b = MPI_INT, *boff = 4;
    else if (h == MPI_LONG_DOUBLE_INT) *a = MPI_LONG_DOUBLE, *b = MPI_INT, *boff = sizeof(long double);
    else if (h == MPI_2INT || h == MPI_2INTEGER) *a = *b = MPI_INT, *boff = 4;
    else if (h == MPI_2REAL) *a = *b = MPI_FLOAT, *boff = 4;
    else if (h == MPI_2DOUBLE_PRECISION) *a = *b = MPI_DOUBLE, *boff = 8;
    else return false;
    return true;
}

static lmpi_status walk_elements(const lmpi_datatype *t, MPI_Aint off, elem_fn fn, void *arg);

lmpi_status lmpi_dt_walk_elements(const lmpi_datatype *t, MPI_Aint off, lmpi_dt_elem_fn fn, void *arg)
{
    return walk_elements(t, off, fn, arg);
}

static lmpi_status walk_n(const lmpi_datatype *t, MPI_Count n, MPI_Aint off, MPI_Aint step, elem_fn fn, void *arg)
{
    for (MPI_Count i = 0; i < n; i++) {
        lmpi_status st = walk_elements(t, off + (MPI_Aint)i * step, fn, arg);
        if (st != LMPI_OK)
            return st;
    }
    return LMPI_OK;
}

/* Integer argument k of the recorded constructor, wherever it was stored. */
static MPI_Count arg(const lmpi_datatype *t, int k) { return t->large ? t->counts[k] : t->ints[k]; }

static lmpi_status walk_elements(const lmpi_datatype *t, MPI_Aint off, elem_fn fn, void *arg_)
{
    if (t->predefined) {
        MPI_Datatype a, b;
        MPI_Aint boff;
        if (pair_parts(t, &a, &b, &boff)) {
            fn(B(a), off, arg_);
            fn(B(b), off + boff, arg_);
        } else {
            fn(t, off, arg_);
        }
        return LMPI_OK;
    }
    const lmpi_datatype *old = t->nt ? t->types[0] : NULL;
    switch (t->combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
        return walk_elements(old, off, fn, arg_);
    case MPI_COMBINER_CONTIGUOUS:
        return walk_n(old, arg(t, 0), off, old->extent, fn, arg_);
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
        MPI_Count count = arg(t, 0), bl = arg(t, 1);
        MPI_Aint stride = t->combiner == MPI_COMBINER_VECTOR ? (MPI_Aint)arg(t, 2) * old->extent
                          : t->large                          ? (MPI_Aint)t->counts[2]
                                                              : t->aints[0];
        for (MPI_Count i = 0; i < count; i++) {
            lmpi_status st = walk_n(old, bl, off + (MPI_Aint)i * stride, old->extent, fn, arg_);
            if (st != LMPI_OK)
                return st;
        }
        return LMPI_OK;
    }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK: {
        bool block = t->combiner == MPI_COMBINER_INDEXED_BLOCK || t->combiner == MPI_COMBINER_HINDEXED_BLOCK;
        bool bytes = t->combiner == MPI_COMBINER_HINDEXED || t->combiner == MPI_COMBINER_HINDEXED_BLOCK;
        MPI_Count count = arg(t, 0);
        for (MPI_Count i = 0; i < count; i++) {
            MPI_Count bl = block ? arg(t, 1) : arg(t, 1 + (int)i);
            int dk = (int)(block ? 2 + i : 1 + count + i);
            MPI_Aint d;
            if (bytes && !t->large)
                d = t->aints[i];
            else
                d = (MPI_Aint)arg(t, bytes && !t->large ? 0 : dk) * (bytes ? 1 : old->extent);
            lmpi_status st = walk_n(old, bl, off + d, old->extent, fn, arg_);
            if (st != LMPI_OK)
                return st;
        }
        return LMPI_OK;
    }
    case MPI_COMBINER_STRUCT: {
        MPI_Count count = arg(t, 0);
        for (MPI_Count i = 0; i < count; i++) {
            MPI_Aint d = t->large ? (MPI_Aint)t->counts[1 + count + i] : t->aints[i];
            lmpi_status st = walk_n(t->types[i], arg(t, 1 + (int)i), off + d, t->types[i]->extent, fn, arg_);
            if (st != LMPI_OK)
                return st;
        }
        return LMPI_OK;
    }
    case MPI_COMBINER_SUBARRAY:
    case MPI_COMBINER_DARRAY: {
        /* the compiled runs are whole elements of a contiguous old type */
        if (!old->contiguous) {
            lmpi_err_detail("element-wise walks of subarray/darray types over non-contiguous types are not implemented");
            return LMPI_ERR_UNSUPPORTED_OPERATION;
        }
        struct iovec iov[64];
        MPI_Count first = 0, done;
        for (;;) {
            int n = lmpi_dt_iov((const void *)off, 1, t, first, t->size - first, iov, 64, &done);
            for (int k = 0; k < n; k++) {
                MPI_Aint base = (MPI_Aint)(uintptr_t)iov[k].iov_base - old->true_lb;
                lmpi_status st = walk_n(old, (MPI_Count)iov[k].iov_len / old->size, base, old->extent, fn, arg_);
                if (st != LMPI_OK)
                    return st;
            }
            first += done;
            if (n < 64 || first >= t->size)
                break;
        }
        return LMPI_OK;
    }
    default:
        lmpi_err_detail("combiner %d has no element walk", t->combiner);
        return LMPI_ERR_INTERN;
    }
}

/* ---- external32 ----------------------------------------------------------------- */

/* Size of a basic type in external32 (MPI 5.0 §13.5.2) and the size of the
 * pieces that are byte-swapped (complex numbers swap each half). */
static int ext32_size(const lmpi_datatype *t, int *piece)
{
    MPI_Datatype h = t->handle;
    *piece = 0;
    if (h == MPI_LONG || h == MPI_UNSIGNED_LONG)
        return *piece = 4, 4;
    if (h == MPI_LONG_DOUBLE)
        return *piece = 16, 16;
    if (h == MPI_C_LONG_DOUBLE_COMPLEX || h == MPI_CXX_LONG_DOUBLE_COMPLEX)
        return *piece = 16, 32;
    if (h == MPI_WCHAR)
        return *piece = 2, 2;
    if (h == MPI_C_BOOL || h == MPI_CXX_BOOL)
        return *piece = 1, 1;
    if (h == MPI_C_FLOAT_COMPLEX || h == MPI_CXX_FLOAT_COMPLEX || h == MPI_COMPLEX || h == MPI_COMPLEX8)
        return *piece = 4, 8;
    if (h == MPI_C_DOUBLE_COMPLEX || h == MPI_CXX_DOUBLE_COMPLEX || h == MPI_DOUBLE_COMPLEX || h == MPI_COMPLEX16)
        return *piece = 8, 16;
    if (h == MPI_COMPLEX32)
        return *piece = 16, 32;
    if (h == MPI_COMPLEX4)
        return *piece = 2, 4;
    return *piece = (int)t->size, (int)t->size;
}

typedef struct {
    char *ext;        /* the external32 stream */
    char *native;     /* the user buffer (origin) */
    bool to_ext;
    MPI_Count bytes;  /* external bytes done */
    MPI_Count limit;  /* room in the external stream */
    bool overflow;
} ext_state;

/* Big-endian store of a native value of `ns` bytes in `es` external bytes
 * (integers narrowed or widened with their sign). */
static void convert(const lmpi_datatype *t, MPI_Aint off, void *arg)
{
    ext_state *s = arg;
    int piece;
    int es = ext32_size(t, &piece);
    if (s->bytes + es > s->limit) {
        s->overflow = true;
        return;
    }
    char *nat = s->native + off, *ext = s->ext + s->bytes;
    int ns = (int)t->size;
    if (es == ns) { /* same width: swap each piece */
        for (int p = 0; p < es; p += piece)
            for (int i = 0; i < piece; i++) {
                if (s->to_ext)
                    ext[p + i] = nat[p + piece - 1 - i];
                else
                    nat[p + piece - 1 - i] = ext[p + i];
            }
    } else { /* long: 8 native bytes, 4 external */
        bool is_signed = t->handle == MPI_LONG;
        if (s->to_ext) {
            int64_t v;
            memcpy(&v, nat, 8);
            uint32_t u = (uint32_t)v;
            for (int i = 0; i < 4; i++)
                ext[i] = (char)(u >> (24 - 8 * i));
        } else {
            uint32_t u = 0;
            for (int i = 0; i < 4; i++)
                u = u << 8 | (uint8_t)ext[i];
            int64_t v = is_signed ? (int64_t)(int32_t)u : (int64_t)u;
            memcpy(nat, &v, 8);
        }
    }
    s->bytes += es;
}

static void count_ext(const lmpi_datatype *t, MPI_Aint off, void *arg)
{
    (void)off;
    int piece;
    *(MPI_Count *)arg += ext32_size(t, &piece);
}

static lmpi_status check_datarep(const char *datarep)
{
    if (!datarep || strcmp(datarep, "external32") != 0) {
        lmpi_err_detail("datarep \"%s\" is not supported (only \"external32\")", datarep ? datarep : "(null)");
        return LMPI_ERR_ARG;
    }
    return LMPI_OK;
}

lmpi_status lmpi_impl_Pack_external_size(const char *datarep, MPI_Count incount, lmpi_datatype *dt, MPI_Count *size)
{
    lmpi_status st = check_datarep(datarep);
    MPI_Count one = 0;
    if (st == LMPI_OK)
        st = walk_elements(dt, 0, count_ext, &one);
    if (st == LMPI_OK)
        *size = one * incount;
    return st;
}

static lmpi_status external(const char *datarep, void *native, MPI_Count count, lmpi_datatype *dt, void *ext,
                            MPI_Count extsize, MPI_Count *position, bool to_ext)
{
    lmpi_status st = check_datarep(datarep);
    if (st != LMPI_OK)
        return st;
    ext_state s = {.ext = (char *)ext + *position, .to_ext = to_ext, .limit = extsize - *position};
    for (MPI_Count i = 0; i < count && st == LMPI_OK && !s.overflow; i++) {
        s.native = (char *)native + i * dt->extent;
        st = walk_elements(dt, 0, convert, &s);
    }
    if (st == LMPI_OK && s.overflow) {
        lmpi_err_detail("the external32 data does not fit in the %lld bytes after position %lld",
                        (long long)(extsize - *position), (long long)*position);
        return LMPI_ERR_TRUNCATE;
    }
    if (st == LMPI_OK)
        *position += s.bytes;
    return st;
}

lmpi_status lmpi_impl_Pack_external(const char *datarep, const void *inbuf, MPI_Count incount, lmpi_datatype *dt,
                                    void *outbuf, MPI_Count outsize, MPI_Count *position)
{
    return external(datarep, (void *)inbuf, incount, dt, outbuf, outsize, position, true);
}

lmpi_status lmpi_impl_Unpack_external(const char datarep[], const void *inbuf, MPI_Count insize, MPI_Count *position,
                                      void *outbuf, MPI_Count outcount, lmpi_datatype *dt)
{
    return external(datarep, outbuf, outcount, dt, (void *)inbuf, insize, position, false);
}

/* ---- elements ------------------------------------------------------------------- */

/* Basic elements are counted by arithmetic on the constructor tree, never
 * element by element (a type of 2^31 elements took seconds that way): every
 * combiner but struct is copies of one old type, laid one after the other
 * in the type map, so their elements and bytes follow from the old type's;
 * a struct adds up its blocks in order. */

static MPI_Count elems_of(const lmpi_datatype *t);

static MPI_Count struct_blocks(const lmpi_datatype *t) { return arg(t, 0); }

/* Basic elements in one instance. */
static MPI_Count elems_of(const lmpi_datatype *t)
{
    if (t->predefined) {
        MPI_Datatype a, b;
        MPI_Aint boff;
        return pair_parts(t, &a, &b, &boff) ? 2 : 1;
    }
    if (t->size == 0)
        return 0;
    if (t->combiner == MPI_COMBINER_STRUCT) {
        MPI_Count n = 0;
        for (MPI_Count i = 0; i < struct_blocks(t); i++)
            n += arg(t, 1 + (int)i) * elems_of(t->types[i]);
        return n;
    }
    const lmpi_datatype *old = t->types[0];
    return t->size / old->size * elems_of(old);
}

/* Basic elements in the first `bytes` bytes of one instance's packed
 * stream (bytes < t->size); *partial when they end inside an element. */
static MPI_Count elems_in(const lmpi_datatype *t, MPI_Count bytes, bool *partial)
{
    if (bytes == 0)
        return 0;
    if (t->predefined) {
        MPI_Datatype a, b;
        MPI_Aint boff;
        if (pair_parts(t, &a, &b, &boff) && bytes == B(a)->size)
            return 1;
        *partial = true;
        return 0;
    }
    if (t->combiner == MPI_COMBINER_STRUCT) {
        MPI_Count n = 0;
        for (MPI_Count i = 0; i < struct_blocks(t) && bytes > 0; i++) {
            const lmpi_datatype *o = t->types[i];
            MPI_Count bl = arg(t, 1 + (int)i), whole = o->size ? bytes / o->size : bl;
            if (whole >= bl) {
                n += bl * elems_of(o);
                bytes -= bl * o->size;
            } else {
                return n + whole * elems_of(o) + elems_in(o, bytes - whole * o->size, partial);
            }
        }
        return n;
    }
    const lmpi_datatype *old = t->types[0];
    return bytes / old->size * elems_of(old) + elems_in(old, bytes % old->size, partial);
}

/* Bytes of the first `n` basic elements of one instance (n < elems_of(t)). */
static MPI_Count bytes_of_elems(const lmpi_datatype *t, MPI_Count n)
{
    if (n == 0)
        return 0;
    if (t->predefined) {
        MPI_Datatype a, b;
        MPI_Aint boff;
        return pair_parts(t, &a, &b, &boff) ? B(a)->size : t->size;
    }
    if (t->combiner == MPI_COMBINER_STRUCT) {
        MPI_Count bytes = 0;
        for (MPI_Count i = 0; i < struct_blocks(t) && n > 0; i++) {
            const lmpi_datatype *o = t->types[i];
            MPI_Count bl = arg(t, 1 + (int)i), e = elems_of(o);
            if (e == 0)
                continue;
            if (n >= bl * e) {
                n -= bl * e;
                bytes += bl * o->size;
            } else {
                return bytes + n / e * o->size + bytes_of_elems(o, n % e);
            }
        }
        return bytes;
    }
    const lmpi_datatype *old = t->types[0];
    MPI_Count e = elems_of(old);
    return n / e * old->size + bytes_of_elems(old, n % e);
}

MPI_Count lmpi_dt_elements(const lmpi_datatype *dt, MPI_Count bytes)
{
    if (dt->size == 0)
        return 0;
    bool partial = false;
    MPI_Count n = bytes / dt->size * elems_of(dt) + elems_in(dt, bytes % dt->size, &partial);
    return partial ? -1 : n;
}

MPI_Count lmpi_dt_elements_bytes(const lmpi_datatype *dt, MPI_Count elements)
{
    MPI_Count e = elems_of(dt);
    if (e == 0)
        return 0;
    return elements / e * dt->size + bytes_of_elems(dt, elements % e);
}
