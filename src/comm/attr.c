/* Attribute caching: keyvals with copy and delete callbacks, and the
 * attributes attached to communicators.  Keyvals are generic over the
 * object kind (communicator, datatype, window) so that the datatype and
 * window modules reuse them; a keyval lives until it is freed and the last
 * attribute using it is deleted (MPI 5.0 §7.7). */
#include <stdio.h>
#include <string.h>

#include "binding/gen/impl.h"
#include "comm/comm.h"
#include "rma/win.h"
#include "datatype/datatype.h"

enum { KIND_COMM, KIND_TYPE, KIND_WIN };
#define KEYVAL_BASE 1000 /* above every predefined keyval */

typedef int (*copy_fn)(void *obj, int keyval, void *extra, void *in, void *out, int *flag);
typedef int (*delete_fn)(void *obj, int keyval, void *val, void *extra);

typedef struct {
    int kind;
    bool in_use; /* not freed by the user */
    int refs;    /* attributes using it + 1 while in use */
    copy_fn copy;
    delete_fn del;
    void *extra;
} keyval;

struct lmpi_attr {
    lmpi_attr *next;
    int keyval;
    void *value;
};

static keyval *keyvals;
static int nkeyvals, capkeyvals;

static lmpi_status keyval_new(int kind, copy_fn c, delete_fn d, void *extra, int *out)
{
    int id = -1;
    for (int i = 0; i < nkeyvals; i++)
        if (keyvals[i].refs == 0) {
            id = i;
            break;
        }
    if (id < 0) {
        if (nkeyvals == capkeyvals) {
            int ncap = capkeyvals ? 2 * capkeyvals : 16;
            keyval *n = lmpi_realloc(keyvals, sizeof(*n) * (size_t)ncap, LMPI_MEM_COMM);
            if (!n)
                return LMPI_ERR_NO_MEM;
            keyvals = n;
            capkeyvals = ncap;
        }
        id = nkeyvals++;
    }
    keyvals[id] = (keyval){.kind = kind, .in_use = true, .refs = 1, .copy = c, .del = d, .extra = extra};
    *out = KEYVAL_BASE + id;
    return LMPI_OK;
}

static void keyval_unref(int id)
{
    keyval *k = &keyvals[id - KEYVAL_BASE];
    if (--k->refs == 0)
        memset(k, 0, sizeof(*k));
    while (nkeyvals && keyvals[nkeyvals - 1].refs == 0)
        nkeyvals--;
    if (nkeyvals == 0) { /* no keyval left: give the table back */
        lmpi_free(keyvals);
        keyvals = NULL;
        capkeyvals = 0;
    }
}

static bool is_predefined_comm_keyval(int kv)
{
    return kv >= MPI_TAG_UB && kv <= MPI_UNIVERSE_SIZE;
}

static lmpi_status keyval_arg(int kv, int kind, keyval **out)
{
    if (kv >= KEYVAL_BASE && kv < KEYVAL_BASE + nkeyvals && keyvals[kv - KEYVAL_BASE].in_use) {
        keyval *k = &keyvals[kv - KEYVAL_BASE];
        if (k->kind != kind) {
            lmpi_err_detail("keyval %d was created for another kind of object", kv);
            return LMPI_ERR_KEYVAL;
        }
        *out = k;
        return LMPI_OK;
    }
    if (kv == MPI_KEYVAL_INVALID)
        lmpi_err_detail("keyval is MPI_KEYVAL_INVALID");
    else if (kv >= KEYVAL_BASE && kv < KEYVAL_BASE + nkeyvals)
        lmpi_err_detail("keyval %d was freed", kv);
    else
        lmpi_err_detail("keyval %d does not exist", kv);
    return LMPI_ERR_KEYVAL;
}

static lmpi_attr *find(lmpi_attr *list, int kv);

/* Like keyval_arg, but a keyval the user freed stays usable on an object
 * whose attribute still references it (its free is deferred). */
static lmpi_status keyval_arg_on(int kv, int kind, lmpi_attr *list, keyval **out)
{
    if (kv >= KEYVAL_BASE && kv < KEYVAL_BASE + nkeyvals && !keyvals[kv - KEYVAL_BASE].in_use &&
        keyvals[kv - KEYVAL_BASE].kind == kind && find(list, kv)) {
        *out = &keyvals[kv - KEYVAL_BASE];
        return LMPI_OK;
    }
    return keyval_arg(kv, kind, out);
}

static lmpi_status keyval_free(int *kv, int kind)
{
    keyval *k;
    if (kind == KIND_COMM && is_predefined_comm_keyval(*kv)) {
        lmpi_err_detail("keyval %d is predefined and cannot be freed", *kv);
        return LMPI_ERR_KEYVAL;
    }
    lmpi_status st = keyval_arg(*kv, kind, &k);
    if (st != LMPI_OK)
        return st;
    k->in_use = false;
    keyval_unref(*kv);
    *kv = MPI_KEYVAL_INVALID;
    return LMPI_OK;
}

static lmpi_attr *find(lmpi_attr *list, int kv)
{
    for (; list; list = list->next)
        if (list->keyval == kv)
            return list;
    return NULL;
}

/* Delete one attribute, calling its delete callback first.  The attribute
 * leaves the list before the callback runs: a callback may delete or set
 * other attributes of the same object.  A callback failure puts it back
 * and is returned. */
static lmpi_status delete_one(lmpi_attr **list, void *object, int kv)
{
    lmpi_attr **p = list;
    while (*p && (*p)->keyval != kv)
        p = &(*p)->next;
    lmpi_attr *a = *p;
    if (!a)
        return LMPI_OK;
    *p = a->next;
    keyval *k = &keyvals[kv - KEYVAL_BASE];
    if (k->del) {
        /* outside the big lock: the attribute is off the list already */
        int suspended = lmpi_lock_suspend();
        int rc = k->del(object, kv, a->value, k->extra);
        lmpi_lock_resume(suspended);
        if (rc != MPI_SUCCESS) {
            a->next = *list;
            *list = a;
            lmpi_err_detail("the delete callback of keyval %d returned %d", kv, rc);
            return lmpi_status_user(rc);
        }
    }
    lmpi_free(a);
    keyval_unref(kv);
    return LMPI_OK;
}

lmpi_status lmpi_attr_delete_all(lmpi_attr **list, void *object, int kind)
{
    (void)kind;
    while (*list) {
        lmpi_status st = delete_one(list, object, (*list)->keyval);
        if (st != LMPI_OK)
            return st;
    }
    return LMPI_OK;
}

static lmpi_status set_attr(lmpi_attr **list, void *object, int kv, void *value)
{
    lmpi_attr *a = find(*list, kv);
    if (a) { /* replacing calls the delete callback on the old value */
        keyval *k = &keyvals[kv - KEYVAL_BASE];
        if (k->del) {
            int rc = k->del(object, kv, a->value, k->extra);
            if (rc != MPI_SUCCESS) {
                lmpi_err_detail("the delete callback of keyval %d returned %d", kv, rc);
                return lmpi_status_user(rc);
            }
        }
        a->value = value;
        return LMPI_OK;
    }
    a = lmpi_malloc(sizeof(*a), LMPI_MEM_COMM);
    if (!a)
        return LMPI_ERR_NO_MEM;
    a->keyval = kv;
    a->value = value;
    a->next = *list;
    *list = a;
    keyvals[kv - KEYVAL_BASE].refs++;
    return LMPI_OK;
}

/* Duplication: each attribute's copy callback decides whether the new
 * object gets it (the *_DUP_FN constants copy the value). */
static lmpi_status copy_list(lmpi_attr *from, void *old_handle, lmpi_attr **to, void *new_handle)
{
    for (lmpi_attr *a = from; a; a = a->next) {
        keyval *k = &keyvals[a->keyval - KEYVAL_BASE];
        void *out = NULL;
        int flag = 0;
        if ((uintptr_t)k->copy == (uintptr_t)MPI_COMM_DUP_FN) {
            out = a->value;
            flag = 1;
        } else if (k->copy) {
            int rc = k->copy(old_handle, a->keyval, k->extra, a->value, &out, &flag);
            if (rc != MPI_SUCCESS) {
                lmpi_err_detail("the copy callback of keyval %d returned %d", a->keyval, rc);
                return lmpi_status_user(rc);
            }
        }
        if (flag) {
            lmpi_status st = set_attr(to, new_handle, a->keyval, out);
            if (st != LMPI_OK)
                return st;
        }
    }
    return LMPI_OK;
}

lmpi_status lmpi_attr_copy_type(lmpi_datatype *old, lmpi_datatype *newt)
{
    return copy_list(old->attrs, old->handle, &newt->attrs, newt->handle);
}

lmpi_status lmpi_attr_copy_all(lmpi_comm *old, lmpi_comm *newc)
{
    return copy_list(old->attrs, old->handle, &newc->attrs, newc->handle);
}

/* ---- communicator attributes ------------------------------------------------ */

lmpi_status lmpi_impl_Comm_create_keyval(MPI_Comm_copy_attr_function *c, MPI_Comm_delete_attr_function *d, int *kv,
                                         void *extra)
{
    return keyval_new(KIND_COMM, (copy_fn)(void (*)(void))c, (delete_fn)(void (*)(void))d, extra, kv);
}

lmpi_status lmpi_impl_Keyval_create(MPI_Copy_function *c, MPI_Delete_function *d, int *kv, void *extra)
{
    return lmpi_impl_Comm_create_keyval(c, d, kv, extra);
}

lmpi_status lmpi_impl_Comm_free_keyval(int *kv) { return keyval_free(kv, KIND_COMM); }
lmpi_status lmpi_impl_Keyval_free(int *kv) { return keyval_free(kv, KIND_COMM); }

lmpi_status lmpi_impl_Comm_set_attr(lmpi_comm *comm, int kv, void *value)
{
    keyval *k;
    if (is_predefined_comm_keyval(kv)) {
        lmpi_err_detail("keyval %d is predefined and read-only", kv);
        return LMPI_ERR_KEYVAL;
    }
    lmpi_status st = keyval_arg_on(kv, KIND_COMM, comm->attrs, &k);
    if (st != LMPI_OK)
        return st;
    return set_attr(&comm->attrs, comm->handle, kv, value);
}

lmpi_status lmpi_impl_Attr_put(lmpi_comm *comm, int kv, void *value)
{
    return lmpi_impl_Comm_set_attr(comm, kv, value);
}

/* Predefined attributes are pointers to values that live as long as the
 * process. */
static bool predefined_value(lmpi_comm *comm, int kv, void **out)
{
    static int tag_ub = LMPI_TAG_UB, wtime_global = 0, host = MPI_PROC_NULL, io = MPI_ANY_SOURCE;
    static int lastused = MPI_ERR_LASTCODE, appnum, universe;
    (void)comm;
    switch (kv) {
    case MPI_TAG_UB: *out = &tag_ub; return true;
    case MPI_WTIME_IS_GLOBAL: *out = &wtime_global; return true;
    case MPI_HOST: *out = &host; return true;
    case MPI_IO: *out = &io; return true;
    case MPI_LASTUSEDCODE: lastused = lmpi_error_last_code(); *out = &lastused; return true;
    case MPI_APPNUM: appnum = lmpi_rt.appnum; *out = &appnum; return true;
    case MPI_UNIVERSE_SIZE: universe = lmpi_rt.universe_size; *out = &universe; return true;
    default: return false;
    }
}

lmpi_status lmpi_impl_Comm_get_attr(lmpi_comm *comm, int kv, void *attribute_val, int *flag)
{
    void *v;
    if (!attribute_val) {
        lmpi_err_detail("attribute_val is NULL");
        return LMPI_ERR_ARG;
    }
    if (predefined_value(comm, kv, &v)) {
        /* MPI_UNIVERSE_SIZE is unset where the launcher does not know it
         * (as MPICH's under Hydra without -usize) */
        if ((kv == MPI_APPNUM && lmpi_rt.appnum < 0) || (kv == MPI_UNIVERSE_SIZE && lmpi_rt.universe_size <= 0)) {
            *flag = 0;
            return LMPI_OK;
        }
        *(void **)attribute_val = v;
        *flag = 1;
        return LMPI_OK;
    }
    keyval *k;
    lmpi_status st = keyval_arg_on(kv, KIND_COMM, comm->attrs, &k);
    if (st != LMPI_OK)
        return st;
    lmpi_attr *a = find(comm->attrs, kv);
    *flag = a != NULL;
    if (a)
        *(void **)attribute_val = a->value;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Attr_get(lmpi_comm *comm, int kv, void *attribute_val, int *flag)
{
    return lmpi_impl_Comm_get_attr(comm, kv, attribute_val, flag);
}

lmpi_status lmpi_impl_Comm_delete_attr(lmpi_comm *comm, int kv)
{
    keyval *k;
    if (is_predefined_comm_keyval(kv)) {
        lmpi_err_detail("keyval %d is predefined and cannot be deleted", kv);
        return LMPI_ERR_KEYVAL;
    }
    lmpi_status st = keyval_arg_on(kv, KIND_COMM, comm->attrs, &k);
    if (st != LMPI_OK)
        return st;
    /* deleting an attribute that is not set does nothing (as in MPICH) */
    return delete_one(&comm->attrs, comm->handle, kv);
}

lmpi_status lmpi_impl_Attr_delete(lmpi_comm *comm, int kv) { return lmpi_impl_Comm_delete_attr(comm, kv); }

void lmpi_attr_finalize(void)
{
    lmpi_free(keyvals);
    keyvals = NULL;
    nkeyvals = capkeyvals = 0;
}

/* ---- datatype attributes ---------------------------------------------------- */

lmpi_status lmpi_impl_Type_create_keyval(MPI_Type_copy_attr_function *c, MPI_Type_delete_attr_function *d, int *kv,
                                         void *extra)
{
    return keyval_new(KIND_TYPE, (copy_fn)(void (*)(void))c, (delete_fn)(void (*)(void))d, extra, kv);
}

lmpi_status lmpi_impl_Type_free_keyval(int *kv) { return keyval_free(kv, KIND_TYPE); }

lmpi_status lmpi_impl_Type_set_attr(lmpi_datatype *dt, int kv, void *value)
{
    keyval *k;
    lmpi_status st = keyval_arg_on(kv, KIND_TYPE, dt->attrs, &k);
    return st != LMPI_OK ? st : set_attr(&dt->attrs, dt->handle, kv, value);
}

lmpi_status lmpi_impl_Type_get_attr(lmpi_datatype *dt, int kv, void *attribute_val, int *flag)
{
    keyval *k;
    lmpi_status st = keyval_arg_on(kv, KIND_TYPE, dt->attrs, &k);
    if (st != LMPI_OK)
        return st;
    lmpi_attr *a = find(dt->attrs, kv);
    *flag = a != NULL;
    if (a)
        *(void **)attribute_val = a->value;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Type_delete_attr(lmpi_datatype *dt, int kv)
{
    keyval *k;
    lmpi_status st = keyval_arg_on(kv, KIND_TYPE, dt->attrs, &k);
    if (st != LMPI_OK)
        return st;
    return delete_one(&dt->attrs, dt->handle, kv);
}

/* ---- windows (src/rma/win.c owns the objects) -------------------------------- */


static bool is_predefined_win_keyval(int kv) { return kv >= MPI_WIN_BASE && kv <= MPI_WIN_MODEL; }

lmpi_status lmpi_impl_Win_create_keyval(MPI_Win_copy_attr_function *c, MPI_Win_delete_attr_function *d, int *kv,
                                        void *extra)
{
    return keyval_new(KIND_WIN, (copy_fn)(void (*)(void))c, (delete_fn)(void (*)(void))d, extra, kv);
}

lmpi_status lmpi_impl_Win_free_keyval(int *kv)
{
    if (is_predefined_win_keyval(*kv)) {
        lmpi_err_detail("keyval %d is predefined", *kv);
        return LMPI_ERR_KEYVAL;
    }
    return keyval_free(kv, KIND_WIN);
}

lmpi_status lmpi_impl_Win_set_attr(MPI_Win win, int kv, void *value)
{
    lmpi_win *w;
    LMPI_TRY(lmpi_win_arg(win, &w));
    if (is_predefined_win_keyval(kv)) {
        lmpi_err_detail("keyval %d is predefined (read-only)", kv);
        return lmpi_win_fail(w, LMPI_ERR_KEYVAL);
    }
    keyval *k;
    lmpi_attr **list = lmpi_win_attrs(win);
    lmpi_status st = keyval_arg_on(kv, KIND_WIN, *list, &k);
    return lmpi_win_fail(w, st != LMPI_OK ? st : set_attr(list, (void *)win, kv, value));
}

lmpi_status lmpi_impl_Win_get_attr(MPI_Win win, int kv, void *attribute_val, int *flag)
{
    lmpi_win *w;
    LMPI_TRY(lmpi_win_arg(win, &w));
    if (!attribute_val || !flag) {
        lmpi_err_detail("%s is NULL", !flag ? "flag" : "attribute_val");
        return lmpi_win_fail(w, LMPI_ERR_ARG);
    }
    void *v;
    if (lmpi_win_predefined_attr(win, kv, &v)) {
        *(void **)attribute_val = v;
        *flag = 1;
        return LMPI_OK;
    }
    keyval *k;
    lmpi_attr **list = lmpi_win_attrs(win);
    lmpi_status st = keyval_arg_on(kv, KIND_WIN, *list, &k);
    if (st != LMPI_OK)
        return lmpi_win_fail(w, st);
    lmpi_attr *a = find(*list, kv);
    *flag = a != NULL;
    if (a)
        *(void **)attribute_val = a->value;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Win_delete_attr(MPI_Win win, int kv)
{
    lmpi_win *w;
    LMPI_TRY(lmpi_win_arg(win, &w));
    keyval *k;
    lmpi_attr **list = lmpi_win_attrs(win);
    lmpi_status st = keyval_arg_on(kv, KIND_WIN, *list, &k);
    return lmpi_win_fail(w, st != LMPI_OK ? st : delete_one(list, (void *)win, kv));
}
