/* File views and data representations (MPI 5.0 §14.3, §14.5).
 *
 * A view is (disp, etype, filetype, datarep).  The data a process sees is the
 * "view stream": the data bytes of the filetype tiled from disp, in the file
 * representation.  Mapping stream bytes to file runs reuses the datatype
 * engine's iovec walk over a fake base address: the runs of tile k of the
 * filetype are exactly the memory runs of element k of a buffer at disp.
 *
 * Representations: native and internal are the same here (the stream is the
 * packed user buffer); external32 converts through MPI_Pack_external's code;
 * user representations call the registered conversion functions. */
#include <stdio.h>
#include <string.h>

#include "binding/gen/impl.h"
#include "io/file.h"

/* File offsets ride on memory addresses in the engine's walk: a base far
 * from 0 keeps negative lower bounds and huge offsets free of wrap-around. */
#define VIEW_BASE ((uintptr_t)1 << 46)

static lmpi_datarep *datareps;

void lmpi_datarep_finalize(void)
{
    while (datareps) {
        lmpi_datarep *d = datareps;
        datareps = d->next;
        lmpi_free(d);
    }
}

static const lmpi_datarep *datarep_find(const char *name)
{
    for (lmpi_datarep *d = datareps; d; d = d->next)
        if (!strcmp(d->name, name))
            return d;
    return NULL;
}

static lmpi_status register_datarep(const char *name, MPI_Datarep_conversion_function *rd,
                                    MPI_Datarep_conversion_function *wr, MPI_Datarep_conversion_function_c *rd_c,
                                    MPI_Datarep_conversion_function_c *wr_c, bool large,
                                    MPI_Datarep_extent_function *extent_fn, void *extra)
{
    if (!name || !name[0] || strlen(name) >= MPI_MAX_DATAREP_STRING) {
        lmpi_err_detail("datarep name is %s", !name ? "NULL" : !name[0] ? "empty" : "longer than MPI_MAX_DATAREP_STRING");
        return LMPI_ERR_ARG;
    }
    if (!extent_fn) {
        lmpi_err_detail("dtype_file_extent_fn is NULL");
        return LMPI_ERR_ARG;
    }
    if (!strcmp(name, "native") || !strcmp(name, "internal") || !strcmp(name, "external32") || datarep_find(name)) {
        lmpi_err_detail("datarep \"%s\" is already defined", name);
        return LMPI_ERR_DUP_DATAREP;
    }
    lmpi_datarep *d = lmpi_calloc(1, sizeof(*d), LMPI_MEM_IO);
    if (!d)
        return LMPI_ERR_NO_MEM;
    strcpy(d->name, name);
    d->large = large;
    d->read_fn = rd;
    d->write_fn = wr;
    d->read_fn_c = rd_c;
    d->write_fn_c = wr_c;
    d->extent_fn = extent_fn;
    d->extra_state = extra;
    d->next = datareps;
    datareps = d;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                                       MPI_Datarep_conversion_function *write_conversion_fn,
                                       MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    return register_datarep(datarep, read_conversion_fn, write_conversion_fn, NULL, NULL, false, dtype_file_extent_fn,
                            extra_state);
}

lmpi_status lmpi_impl_Register_datarep_c(const char *datarep, MPI_Datarep_conversion_function_c *read_conversion_fn,
                                         MPI_Datarep_conversion_function_c *write_conversion_fn,
                                         MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    return register_datarep(datarep, NULL, NULL, read_conversion_fn, write_conversion_fn, true, dtype_file_extent_fn,
                            extra_state);
}

/* ---- sizes in the file representation ---------------------------------------- */

typedef struct {
    const lmpi_datarep *rep;
    MPI_Count bytes;
    lmpi_status st;
} user_size;

static void add_user_extent(const lmpi_datatype *basic, MPI_Aint off, void *arg)
{
    (void)off;
    user_size *u = arg;
    MPI_Aint ext = 0;
    if (u->st != LMPI_OK)
        return;
    int rc = u->rep->extent_fn(basic->handle, &ext, u->rep->extra_state);
    if (rc != MPI_SUCCESS || ext < 0) {
        lmpi_err_detail("the extent function of datarep \"%s\" failed for %s (%d)", u->rep->name,
                        basic->name ? basic->name : "a basic type", rc);
        u->st = LMPI_ERR_CONVERSION;
        return;
    }
    u->bytes += ext;
}

/* Data bytes of one instance of dt in the representation. */
static lmpi_status rep_size(lmpi_rep_kind rep, const lmpi_datarep *user, lmpi_datatype *dt, MPI_Count *out)
{
    if (rep == LMPI_REP_NATIVE || rep == LMPI_REP_INTERNAL) {
        *out = dt->size;
        return LMPI_OK;
    }
    if (rep == LMPI_REP_EXTERNAL32)
        return lmpi_impl_Pack_external_size("external32", 1, dt, out);
    user_size u = {.rep = user, .st = LMPI_OK};
    LMPI_TRY(lmpi_dt_walk_elements(dt, 0, add_user_extent, &u));
    *out = u.bytes;
    return u.st;
}

void lmpi_view_default(lmpi_view *v)
{
    memset(v, 0, sizeof(*v));
    v->etype = v->ftype = lmpi_datatype_from_handle(MPI_BYTE);
    v->rep = LMPI_REP_NATIVE;
    strcpy(v->datarep, "native");
    v->esize = v->tsize = 1;
    v->textent = 1;
    v->dense = true;
}

void lmpi_view_clear(lmpi_view *v)
{
    if (v->etype && !v->etype->predefined)
        lmpi_datatype_release(v->etype);
    if (v->ftype && !v->ftype->predefined)
        lmpi_datatype_release(v->ftype);
    v->etype = v->ftype = NULL;
}

lmpi_status lmpi_view_type_extent(const lmpi_view *v, lmpi_datatype *dt, MPI_Count *extent)
{
    if (v->rep == LMPI_REP_NATIVE || v->rep == LMPI_REP_INTERNAL) {
        *extent = dt->extent;
        return LMPI_OK;
    }
    /* a type's file extent keeps its holes only where the sizes agree */
    MPI_Count fsize;
    LMPI_TRY(rep_size(v->rep, v->user, dt, &fsize));
    *extent = fsize == dt->size ? dt->extent : fsize;
    return LMPI_OK;
}

lmpi_status lmpi_view_stream_bytes(const lmpi_view *v, MPI_Count count, lmpi_datatype *dt, MPI_Count *bytes)
{
    MPI_Count one;
    LMPI_TRY(rep_size(v->rep, v->user, dt, &one));
    if (one && count > INT64_MAX / one) {
        lmpi_err_detail("count %lld of a %lld-byte type overflows MPI_Count", (long long)count, (long long)one);
        return LMPI_ERR_COUNT;
    }
    *bytes = one * count;
    if (*bytes > 0 && v->tsize == 0) {
        lmpi_err_detail("the view's filetype has no data: only accesses of 0 bytes fit it (%lld asked)",
                        (long long)*bytes);
        return LMPI_ERR_ARG;
    }
    if (*bytes % v->esize) {
        lmpi_err_detail("the datatype's %lld bytes are not a whole number of etypes (%lld bytes each)",
                        (long long)*bytes, (long long)v->esize);
        return LMPI_ERR_TYPE;
    }
    return LMPI_OK;
}

/* ---- stream bytes to file runs --------------------------------------------------- */

int lmpi_view_runs(const lmpi_view *v, MPI_Count first, MPI_Count len, MPI_Offset *off, MPI_Count *rlen, int max,
                   MPI_Count *done)
{
    if (len <= 0 || max <= 0 || v->tsize == 0) {
        *done = 0;
        return 0;
    }
    if (v->dense) {
        off[0] = v->disp + v->tfirst + first;
        rlen[0] = len;
        *done = len;
        return 1;
    }
    MPI_Count tile = first / v->tsize;
    MPI_Count tiles = (first + len + v->tsize - 1) / v->tsize - tile;
    struct iovec iov[64];
    int n = 0;
    MPI_Count got = 0, at = first - tile * v->tsize;
    const char *base = (const char *)VIEW_BASE + v->disp + tile * v->textent;
    while (n < max && got < len) {
        MPI_Count part;
        int want = max - n < 64 ? max - n : 64;
        int k = lmpi_dt_iov(base, tiles, v->ftype, at + got, len - got, iov, want, &part);
        for (int i = 0; i < k; i++) {
            MPI_Offset o = (MPI_Offset)((uintptr_t)iov[i].iov_base - VIEW_BASE);
            /* merge runs that touch (a vector of whole tiles, a resized type) */
            if (n && off[n - 1] + rlen[n - 1] == o)
                rlen[n - 1] += (MPI_Count)iov[i].iov_len;
            else {
                if (n == max)
                    break;
                off[n] = o;
                rlen[n++] = (MPI_Count)iov[i].iov_len;
            }
        }
        got += part;
        if (k == 0)
            break;
    }
    /* a run that did not fit is left for the next call: the kept runs are a
     * prefix of the stream, so they cover exactly their length */
    MPI_Count cover = 0;
    for (int i = 0; i < n; i++)
        cover += rlen[i];
    *done = cover;
    return n;
}

MPI_Offset lmpi_view_offset(const lmpi_view *v, MPI_Count s)
{
    MPI_Offset off;
    MPI_Count len, done;
    if (lmpi_view_runs(v, s, 1, &off, &len, 1, &done) == 1)
        return off;
    return v->disp;
}

/* ---- conversions ----------------------------------------------------------------------- */

static lmpi_status user_convert(const lmpi_datarep *d, bool to_file, void *buf, MPI_Count count, lmpi_datatype *dt,
                                MPI_Offset pos, void *filebuf)
{
    int rc;
    if (d->large) {
        MPI_Datarep_conversion_function_c *fn = to_file ? d->write_fn_c : d->read_fn_c;
        rc = fn(buf, dt->handle, count, filebuf, pos, d->extra_state);
    } else {
        MPI_Datarep_conversion_function *fn = to_file ? d->write_fn : d->read_fn;
        if (count > INT32_MAX) {
            lmpi_err_detail("count %lld does not fit the int of datarep \"%s\"'s conversion function",
                            (long long)count, d->name);
            return LMPI_ERR_COUNT;
        }
        rc = fn(buf, dt->handle, (int)count, filebuf, pos, d->extra_state);
    }
    if (rc != MPI_SUCCESS) {
        lmpi_err_detail("the %s conversion function of datarep \"%s\" returned %d", to_file ? "write" : "read",
                        d->name, rc);
        return LMPI_ERR_CONVERSION;
    }
    return LMPI_OK;
}

static bool user_has_fn(const lmpi_datarep *d, bool to_file)
{
    return d->large ? (to_file ? d->write_fn_c : d->read_fn_c) != NULL : (to_file ? d->write_fn : d->read_fn) != NULL;
}

lmpi_status lmpi_view_to_file(const lmpi_view *v, const void *buf, MPI_Count count, lmpi_datatype *dt, MPI_Offset pos,
                              void *out, MPI_Count bytes)
{
    if (v->rep == LMPI_REP_EXTERNAL32) {
        MPI_Count p = 0;
        return lmpi_impl_Pack_external("external32", buf, count, dt, out, bytes, &p);
    }
    if (v->rep == LMPI_REP_USER && user_has_fn(v->user, true))
        return user_convert(v->user, true, (void *)buf, count, dt, pos, out);
    lmpi_dt_pack(buf, count, dt, 0, bytes, out);
    return LMPI_OK;
}

lmpi_status lmpi_view_from_file(const lmpi_view *v, void *buf, MPI_Count count, lmpi_datatype *dt, MPI_Offset pos,
                                const void *in, MPI_Count bytes)
{
    if (v->rep == LMPI_REP_EXTERNAL32) {
        MPI_Count p = 0;
        return lmpi_impl_Unpack_external("external32", in, bytes, &p, buf, count, dt);
    }
    if (v->rep == LMPI_REP_USER && user_has_fn(v->user, false))
        return user_convert(v->user, false, buf, count, dt, pos, (void *)in);
    lmpi_dt_unpack(buf, count, dt, 0, bytes, in);
    return LMPI_OK;
}

/* ---- MPI_File_set_view / get_view ---------------------------------------------------- */

static lmpi_status check_view_type(lmpi_datatype *t, const char *what, bool may_be_empty)
{
    if (!t->predefined && !t->committed) {
        lmpi_err_detail("%s is not committed", what);
        return LMPI_ERR_TYPE;
    }
    /* a filetype without data is legal (a process with nothing to access in
     * a collective, as PnetCDF's fill makes them); an etype is not */
    if (t->size == 0 && !may_be_empty) {
        lmpi_err_detail("%s has no data (size 0)", what);
        return LMPI_ERR_TYPE;
    }
    if (t->true_lb < 0) {
        /* negative displacements are forbidden in views (MPI 5.0 §14.3);
         * MPI_ERR_IO is what MPICH 5.0.2 and Open MPI 5.0.11 both answer */
        lmpi_err_detail("%s reaches below the displacement (lower bound %ld)", what, (long)t->true_lb);
        return LMPI_ERR_IO;
    }
    return LMPI_OK;
}

/* The typemap of a view's types runs forward: displacements nondecreasing
 * (MPI 5.0 §14.1.1) and, in a file open for writing, no byte twice (§14.3:
 * which of two overlapping writes lands would be undefined).  MPICH answers
 * MPI_ERR_IO here as for a negative displacement; Open MPI refuses too. */
static lmpi_status check_view_order(lmpi_datatype *t, const char *what, bool writable)
{
    if (t->contiguous || t->size == 0)
        return LMPI_OK;
    struct iovec iov[64];
    uintptr_t start = 0, end = 0;
    bool any = false;
    for (MPI_Count at = 0; at < t->size;) {
        MPI_Count part;
        int k = lmpi_dt_iov((const void *)VIEW_BASE, 1, t, at, t->size - at, iov, 64, &part);
        for (int i = 0; i < k; i++) {
            uintptr_t s = (uintptr_t)iov[i].iov_base;
            if (any && s < start) {
                lmpi_err_detail("%s's displacements decrease (byte %ld after byte %ld)", what,
                                (long)(s - VIEW_BASE), (long)(start - VIEW_BASE));
                return LMPI_ERR_IO;
            }
            if (any && writable && s < end) {
                lmpi_err_detail("%s overlaps itself at byte %ld in a file open for writing", what,
                                (long)(s - VIEW_BASE));
                return LMPI_ERR_IO;
            }
            start = s;
            end = s + iov[i].iov_len > end ? s + iov[i].iov_len : end;
            any = true;
        }
        if (k == 0 || part == 0)
            break;
        at += part;
    }
    return LMPI_OK;
}

lmpi_status lmpi_view_build(lmpi_view *v, MPI_Offset disp, lmpi_datatype *etype, lmpi_datatype *ftype,
                            const char *datarep, bool writable)
{
    memset(v, 0, sizeof(*v));
    if (!datarep) {
        lmpi_err_detail("datarep is NULL");
        return LMPI_ERR_ARG;
    }
    if (!strcmp(datarep, "native"))
        v->rep = LMPI_REP_NATIVE;
    else if (!strcmp(datarep, "internal"))
        v->rep = LMPI_REP_INTERNAL;
    else if (!strcmp(datarep, "external32"))
        v->rep = LMPI_REP_EXTERNAL32;
    else if ((v->user = datarep_find(datarep)))
        v->rep = LMPI_REP_USER;
    else {
        lmpi_err_detail("datarep \"%.64s\" is not native, internal, external32 or a registered one", datarep);
        return LMPI_ERR_UNSUPPORTED_DATAREP;
    }
    snprintf(v->datarep, sizeof(v->datarep), "%s", datarep);
    LMPI_TRY(check_view_type(etype, "etype", false));
    LMPI_TRY(check_view_type(ftype, "filetype", true));
    LMPI_TRY(check_view_order(etype, "etype", writable));
    LMPI_TRY(check_view_order(ftype, "filetype", writable));
    MPI_Count fsize;
    LMPI_TRY(rep_size(v->rep, v->user, etype, &v->esize));
    LMPI_TRY(rep_size(v->rep, v->user, ftype, &fsize));
    if (v->esize <= 0 || fsize % v->esize) {
        lmpi_err_detail("filetype (%lld bytes) is not made of whole etypes (%lld bytes each)", (long long)fsize,
                        (long long)v->esize);
        return LMPI_ERR_TYPE;
    }
    bool dense_type = ftype->contiguous && ftype->size == ftype->extent && fsize > 0;
    v->disp = disp;
    v->tsize = fsize;
    if (fsize == ftype->size) {
        v->textent = ftype->extent;
        v->tfirst = ftype->true_lb;
        v->dense = dense_type;
    } else if (dense_type) {
        /* sizes differ from memory (external32 longs): a dense type stays dense */
        v->textent = fsize;
        v->tfirst = 0;
        v->dense = true;
    } else {
        lmpi_err_detail("a filetype with holes whose %s size (%lld) differs from its native size (%lld)", datarep,
                        (long long)fsize, (long long)ftype->size);
        return LMPI_ERR_UNSUPPORTED_DATAREP;
    }
    if (v->textent <= 0 && fsize > 0) {
        lmpi_err_detail("filetype has extent %ld (tiles must advance)", (long)v->textent);
        return LMPI_ERR_TYPE;
    }
    v->etype = etype;
    v->ftype = ftype;
    if (!etype->predefined)
        lmpi_datatype_retain(etype);
    if (!ftype->predefined)
        lmpi_datatype_retain(ftype);
    return LMPI_OK;
}

static MPI_Datatype handle_out(lmpi_datatype *t)
{
    /* derived types come back as new references the caller frees */
    if (!t->predefined)
        lmpi_datatype_retain(t);
    return t->handle;
}

lmpi_status lmpi_impl_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype,
                                    char *datarep)
{
    lmpi_file *f;
    LMPI_TRY(lmpi_file_arg(fh, &f));
    if (!disp || !etype || !filetype || !datarep) {
        lmpi_err_detail("%s is NULL", !disp ? "disp" : !etype ? "etype" : !filetype ? "filetype" : "datarep");
        return LMPI_ERR_ARG;
    }
    *disp = f->view.disp;
    *etype = handle_out(f->view.etype);
    *filetype = handle_out(f->view.ftype);
    strcpy(datarep, f->view.datarep);
    return LMPI_OK;
}

lmpi_status lmpi_impl_File_get_type_extent(MPI_File fh, lmpi_datatype *datatype, MPI_Count *extent)
{
    lmpi_file *f;
    LMPI_TRY(lmpi_file_arg(fh, &f));
    return lmpi_view_type_extent(&f->view, datatype, extent);
}

lmpi_status lmpi_impl_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    lmpi_file *f;
    LMPI_TRY(lmpi_file_arg(fh, &f));
    if (offset < 0) {
        lmpi_err_detail("offset %lld is negative", (long long)offset);
        return LMPI_ERR_ARG;
    }
    *disp = lmpi_view_offset(&f->view, offset * f->view.esize);
    return LMPI_OK;
}
