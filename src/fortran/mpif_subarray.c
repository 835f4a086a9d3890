/* Array sections as mpi_f08's choice buffers (mpif_subarray.h).  Internal
 * calls go to PMPI_: a profiling tool sees the user's call, not these. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "fortran/mpif_section.h"
#include "fortran/mpif_subarray.h"

/* ---- datatypes over the section ----------------------------------------------- */

/* How many whole datatypes one element holds (0: the datatype does not
 * divide the elements: lb 0, its data inside its extent, extent | elem_len). */
static MPI_Count per_element(const CFI_cdesc_t *d, MPI_Datatype type)
{
    MPI_Count lb, ext, tlb, text;
    if (type == MPI_DATATYPE_NULL || PMPI_Type_get_extent_c(type, &lb, &ext) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent_c(type, &tlb, &text) != MPI_SUCCESS)
        return 0;
    if (lb != 0 || ext <= 0 || tlb < 0 || tlb + text > ext || (MPI_Count)d->elem_len % ext != 0)
        return 0;
    return (MPI_Count)d->elem_len / ext;
}

/* The whole section: one element is k datatypes, then an hvector per
 * dimension (the first innermost). */
static int whole_section_type(const CFI_cdesc_t *d, MPI_Datatype type, MPI_Count k, MPI_Datatype *out)
{
    MPI_Datatype t = type, next;
    int rc = MPI_SUCCESS;
    if (k > 1)
        rc = PMPI_Type_contiguous_c(k, type, &t);
    for (int i = 0; i < d->rank && rc == MPI_SUCCESS; i++) {
        rc = PMPI_Type_create_hvector_c(d->dim[i].extent, 1, d->dim[i].sm, t, &next);
        if (t != type)
            PMPI_Type_free(&t);
        t = next;
    }
    if (rc != MPI_SUCCESS) {
        if (t != type)
            PMPI_Type_free(&t);
        return rc;
    }
    if (t == type) /* a rank-0 descriptor never gets here (contiguous) */
        return MPI_ERR_INTERN;
    *out = t;
    return MPI_SUCCESS;
}

/* The first count datatypes of the section (count < all of it): each
 * element's address, k datatypes at each, and the remainder after them. */
static int partial_section_type(const CFI_cdesc_t *d, MPI_Datatype type, MPI_Count k, MPI_Count count,
                                MPI_Datatype *out)
{
    MPI_Count m = count / k, r = count % k;
    MPI_Count *displ = malloc(sizeof(MPI_Count) * (size_t)(m + 1));
    if (!displ)
        return MPI_ERR_NO_MEM;
    for (MPI_Count i = 0; i <= m; i++)
        displ[i] = lmpif_section_offset(d, i);
    MPI_Datatype whole;
    int rc = PMPI_Type_create_hindexed_block_c(m, k, displ, type, &whole);
    if (rc == MPI_SUCCESS && r) {
        MPI_Count lens[2] = {1, r}, at[2] = {0, displ[m]};
        MPI_Datatype types[2] = {whole, type};
        rc = PMPI_Type_create_struct_c(2, lens, at, types, out);
        PMPI_Type_free(&whole);
    } else if (rc == MPI_SUCCESS) {
        *out = whole;
    }
    free(displ);
    return rc;
}

/* ---- the datatypes of recent sections ---------------------------------------- */

/* A program sends the same section shape again and again (a halo row each
 * step): the whole-section datatypes over predefined datatypes are kept,
 * a few, and reused.  An entry in use by a call in flight is not evicted
 * (another thread may be between lookup and call). */
#define CACHED_TYPES 8
static struct cached_type {
    MPI_Datatype base, made;
    MPI_Count k;
    size_t elem_len;
    int rank, users;
    bool filled; /* static storage is zeros, and MPI_DATATYPE_NULL is not 0 */
    CFI_index_t extent[CFI_MAX_RANK], sm[CFI_MAX_RANK];
} cache[CACHED_TYPES];
static int cache_next;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static bool cache_matches(const struct cached_type *e, const CFI_cdesc_t *d, MPI_Datatype type, MPI_Count k)
{
    if (!e->filled || e->base != type || e->k != k || e->rank != d->rank ||
        e->elem_len != d->elem_len)
        return false;
    for (int i = 0; i < d->rank; i++)
        if (e->extent[i] != d->dim[i].extent || e->sm[i] != d->dim[i].sm)
            return false;
    return true;
}

/* The cached datatype of this shape (s->cached set), or a new one put in
 * the cache when a slot is free of users. */
static int cached_section_type(lmpif_sub *s, const CFI_cdesc_t *d, MPI_Datatype type, MPI_Count k)
{
    bool predefined = (uintptr_t)type < LMPIF_PREDEFINED_LIMIT; /* never freed, never reused */
    if (predefined) {
        pthread_mutex_lock(&cache_lock);
        for (int i = 0; i < CACHED_TYPES; i++)
            if (cache_matches(&cache[i], d, type, k)) {
                cache[i].users++;
                s->made = cache[i].made;
                s->cached = i + 1;
                pthread_mutex_unlock(&cache_lock);
                return MPI_SUCCESS;
            }
        pthread_mutex_unlock(&cache_lock);
    }
    int rc = whole_section_type(d, type, k, &s->made);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_commit(&s->made);
    if (rc != MPI_SUCCESS || !predefined)
        return rc;
    pthread_mutex_lock(&cache_lock);
    for (int tries = 0; tries < CACHED_TYPES; tries++) {
        struct cached_type *e = &cache[cache_next];
        cache_next = (cache_next + 1) % CACHED_TYPES;
        if (e->users)
            continue;
        if (e->filled)
            PMPI_Type_free(&e->made); /* a call in flight keeps its own reference */
        *e = (struct cached_type){.base = type, .made = s->made, .k = k, .elem_len = d->elem_len,
                                  .rank = d->rank, .users = 1, .filled = true};
        for (int i = 0; i < d->rank; i++) {
            e->extent[i] = d->dim[i].extent;
            e->sm[i] = d->dim[i].sm;
        }
        s->cached = (int)(e - cache) + 1;
        break;
    }
    pthread_mutex_unlock(&cache_lock);
    return MPI_SUCCESS;
}

/* ---- errors of the Fortran layer -------------------------------------------- */

/* One error code per message, made once (MPI_Add_error_code/string), so
 * MPI_ERROR_STRING says what went wrong and MPI_ERROR_CLASS the class. */
#define MAX_MESSAGES 128
static struct { int cls, code; char msg[MPI_MAX_ERROR_STRING]; } messages[MAX_MESSAGES];
static int n_messages;
static pthread_mutex_t messages_lock = PTHREAD_MUTEX_INITIALIZER;

static int code_for(int cls, const char *msg)
{
    int code = cls;
    pthread_mutex_lock(&messages_lock);
    for (int i = 0; i < n_messages; i++)
        if (messages[i].cls == cls && strcmp(messages[i].msg, msg) == 0) {
            code = messages[i].code;
            goto out;
        }
    if (n_messages < MAX_MESSAGES && PMPI_Add_error_code(cls, &code) == MPI_SUCCESS &&
        PMPI_Add_error_string(code, msg) == MPI_SUCCESS) {
        messages[n_messages].cls = cls;
        messages[n_messages].code = code;
        snprintf(messages[n_messages].msg, sizeof messages[0].msg, "%s", msg);
        n_messages++;
    }
out:
    pthread_mutex_unlock(&messages_lock);
    return code;
}

int lmpif_raise(lmpif_errobj eo, int cls, const char *msg)
{
    int code = code_for(cls, msg);
    switch (eo.cls) {
    case LMPIF_WIN: PMPI_Win_call_errhandler((MPI_Win)eo.handle, code); break;
    case LMPIF_FILE: PMPI_File_call_errhandler((MPI_File)eo.handle, code); break;
    default:
        PMPI_Comm_call_errhandler(eo.handle ? (MPI_Comm)eo.handle : MPI_COMM_SELF, code);
        break;
    }
    return code;
}

/* ---- the conversion --------------------------------------------------------- */

static int sub_fail(lmpif_errobj eo, int cls, const char *proc, const char *arg, const char *why)
{
    char msg[MPI_MAX_ERROR_STRING];
    snprintf(msg, sizeof msg, "%s: %s: %s", proc, arg, why);
    return lmpif_raise(eo, cls, msg);
}

static int sub_commit(lmpif_sub *s, int rc, lmpif_errobj eo, const char *proc, const char *arg)
{
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_commit(&s->made);
    if (rc != MPI_SUCCESS) {
        if (s->made != MPI_DATATYPE_NULL)
            PMPI_Type_free(&s->made);
        s->one = false;
        return sub_fail(eo, rc, proc, arg, "no datatype could describe the array section");
    }
    return MPI_SUCCESS;
}

static int sub_convert(lmpif_sub *s, const CFI_cdesc_t *d, enum lmpif_sub_mode mode, bool blocking,
                       bool reduction, bool out, MPI_Count count, MPI_Datatype type, lmpif_errobj eo,
                       const char *proc, const char *arg)
{
    *s = (lmpif_sub){.buf = LMPIF_BUF(d->base_addr), .made = MPI_DATATYPE_NULL, .d = d, .cached = 0};
    if (mode == LMPIF_SUB_BASE || lmpif_section_contiguous(d) || lmpif_section_elems(d) == 0)
        return MPI_SUCCESS;
    if (mode == LMPIF_SUB_CONTIG)
        return sub_fail(eo, MPI_ERR_BUFFER, proc, arg,
                        "memory given to the library must be contiguous, not an array section");
    MPI_Count k = per_element(d, type), stride;
    /* a blocking reduction copies: the library's operations take the
     * predefined datatypes' runs, not a section's strides */
    if (mode == LMPIF_SUB_TOTAL && k && !(blocking && reduction)) {
        MPI_Count all = lmpif_section_elems(d) * k;
        if (count > all)
            return sub_fail(eo, MPI_ERR_COUNT, proc, arg, "count is larger than the array section");
        if (count <= 0)
            return MPI_SUCCESS;
        s->one = true;
        if (count == all) {
            int rc = cached_section_type(s, d, type, k);
            if (rc != MPI_SUCCESS) {
                s->one = false;
                if (s->made != MPI_DATATYPE_NULL)
                    PMPI_Type_free(&s->made);
                return sub_fail(eo, rc, proc, arg, "no datatype could describe the array section");
            }
            return MPI_SUCCESS;
        }
        return sub_commit(s, partial_section_type(d, type, k, count, &s->made), eo, proc, arg);
    }
    if (mode == LMPIF_SUB_PERPROC && k == 1 && !(blocking && reduction) && lmpif_section_uniform(d, &stride) &&
        stride > 0) {
        int rc = PMPI_Type_create_resized_c(type, 0, stride, &s->made);
        return sub_commit(s, rc, eo, proc, arg);
    }
    if (!blocking)
        return sub_fail(eo, MPI_ERR_BUFFER, proc, arg,
                        "this array section cannot be described by a datatype for a nonblocking call "
                        "(its elements do not hold whole datatypes, or per-process counts over "
                        "unevenly strided elements): pass a contiguous array");
    size_t bytes = (size_t)lmpif_section_elems(d) * d->elem_len;
    if (!(s->copy = malloc(bytes)))
        return sub_fail(eo, MPI_ERR_NO_MEM, proc, arg, "no memory for a contiguous copy of the array section");
    lmpif_section_copy(d, s->copy, true);
    s->buf = s->copy;
    s->copy_back = out;
    return MPI_SUCCESS;
}

static bool same_layout(const CFI_cdesc_t *a, const CFI_cdesc_t *b)
{
    if (a->rank != b->rank || a->elem_len != b->elem_len)
        return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dim[i].extent != b->dim[i].extent || a->dim[i].sm != b->dim[i].sm)
            return false;
    return true;
}

/* Two buffers, one datatype argument: fine when neither needed a datatype of
 * its own, when one is MPI_IN_PLACE (not read), or when both are sections of
 * the same shape and strides (their datatypes are then the same). */
static bool shares_datatype(const lmpif_sub *s, const lmpif_sub *peer)
{
    bool a = s->made != MPI_DATATYPE_NULL, b = peer->made != MPI_DATATYPE_NULL;
    if (!a && !b)
        return true;
    if (s->buf == MPI_IN_PLACE || peer->buf == MPI_IN_PLACE)
        return true;
    return a && b && s->one == peer->one && same_layout(s->d, peer->d);
}

int lmpif_sub_begin(lmpif_sub *s, const CFI_cdesc_t *d, enum lmpif_sub_mode mode, bool blocking,
                    bool reduction, bool out, MPI_Count count, MPI_Datatype type, const lmpif_sub *peer,
                    lmpif_errobj eo, const char *proc, const char *arg)
{
    int rc = sub_convert(s, d, mode, blocking, reduction, out, count, type, eo, proc, arg);
    if (rc == MPI_SUCCESS && peer && !shares_datatype(s, peer)) {
        lmpif_sub_end(s, false);
        return sub_fail(eo, MPI_ERR_BUFFER, proc, arg,
                        "one datatype argument describes two buffers here: they must both be contiguous, "
                        "or array sections of the same shape and strides");
    }
    return rc;
}

void lmpif_sub_finish(lmpif_sub *s, bool ok)
{
    if (s->copy) {
        if (ok && s->copy_back)
            lmpif_section_copy(s->d, s->copy, false);
        free(s->copy);
        s->copy = NULL;
    }
    if (s->cached) { /* the cache keeps it */
        pthread_mutex_lock(&cache_lock);
        cache[s->cached - 1].users--;
        pthread_mutex_unlock(&cache_lock);
        s->made = MPI_DATATYPE_NULL;
        s->cached = 0;
    } else if (s->made != MPI_DATATYPE_NULL) {
        PMPI_Type_free(&s->made);
    }
}
