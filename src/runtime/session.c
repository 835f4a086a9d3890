/* MPI sessions (MPI 4): the session object, its process sets, its error
 * handler and its buffer for buffered sends.
 *
 * The first MPI_Session_init starts the process's runtime if MPI_Init has
 * not; the runtime ends with the last of MPI_Finalize and
 * MPI_Session_finalize.  The process sets are the standard's two,
 * "mpi://WORLD" and "mpi://SELF", matched without regard to case as users
 * write them ("mpi://world").  The info given to MPI_Session_init may ask
 * for a thread level ("thread_level") and memory kinds
 * ("mpi_memory_alloc_kinds"); MPI_Session_get_info reports what was granted.
 * Errors of session functions go to the session's own handler, those of
 * MPI_Session_init to the handler it was given. */
#include <stdio.h>
#include <strings.h>
#include <string.h>

#include "dpm/dpm.h"
#include "runtime/info.h"

#include "binding/gen/impl.h"
#include "comm/comm.h"
#include "pt2pt/pt2pt.h"
#include "runtime/errhandler.h"

enum { LMPI_MAGIC_SESSION = 0x53657373u };

typedef struct lmpi_session {
    uint32_t magic;
    uint32_t id;                 /* never 0; communicators keep its low 16 bits */
    struct lmpi_session *next;   /* the live sessions */
    lmpi_errhandler *errh;
    lmpi_bsend_buffer *bsend;
    int thread_level;     /* granted */
    char *alloc_kinds;    /* mpi_memory_alloc_kinds as asked (NULL: none) */
} lmpi_session;

lmpi_status lmpi_session_start(int required, int *provided);
lmpi_status lmpi_session_end(void);

static lmpi_session *live_sessions;
static uint32_t next_session_id;

static const char *const psets[] = {"mpi://WORLD", "mpi://SELF"};
static const struct {
    int level;
    const char *name;
} levels[] = {{MPI_THREAD_SINGLE, "MPI_THREAD_SINGLE"},
              {MPI_THREAD_FUNNELED, "MPI_THREAD_FUNNELED"},
              {MPI_THREAD_SERIALIZED, "MPI_THREAD_SERIALIZED"},
              {MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE"}};

static const char *level_name(int level)
{
    for (int l = 0; l < 4; l++)
        if (levels[l].level == level)
            return levels[l].name;
    return "MPI_THREAD_SINGLE";
}

#define NPSETS_FIXED ((int)(sizeof(psets) / sizeof(psets[0])))

int lmpi_pset_find(const char *name)
{
    for (int i = 0; i < NPSETS_FIXED; i++)
        if (!strcasecmp(name, psets[i]))
            return i;
    return -1;
}

int lmpi_pset_size(int pset)
{
    return pset == 0 ? lmpi_rt.world_size : 1;
}

/* The size of the set NAME (the fixed ones and those of other process
 * groups, src/dpm); -1: no such set. */
static int pset_size_by_name(const char *name)
{
    int p = lmpi_pset_find(name);
    if (p >= 0)
        return lmpi_pset_size(p);
    lmpi_rankmap m;
    if (!lmpi_dpm_pset_map(name, &m))
        return -1;
    int n = m.size;
    lmpi_rankmap_release(&m);
    return n;
}

static lmpi_status session_arg(MPI_Session h, lmpi_session **out)
{
    lmpi_session *s = (uintptr_t)h < LMPI_PREDEF_LIMIT ? NULL : (lmpi_session *)h;
    if (!s || s->magic != LMPI_MAGIC_SESSION) {
        lmpi_err_detail(h == MPI_SESSION_NULL ? "MPI_SESSION_NULL" : "not a session (handle %p)", (void *)h);
        return LMPI_ERR_SESSION;
    }
    *out = s;
    return LMPI_OK;
}

/* The "thread_level" info value: a level's name, MPI_THREAD_SINGLE if absent. */
static lmpi_status requested_level(const lmpi_info *i, int *level)
{
    const char *v = i ? lmpi_info_value(i, "thread_level") : NULL;
    *level = MPI_THREAD_SINGLE;
    if (!v)
        return LMPI_OK;
    for (int l = 0; l < 4; l++)
        if (!strcasecmp(v, levels[l].name)) {
            *level = levels[l].level;
            return LMPI_OK;
        }
    lmpi_err_detail("info key thread_level has value \"%s\", not one of MPI_THREAD_SINGLE ... MPI_THREAD_MULTIPLE", v);
    return LMPI_ERR_INFO_VALUE;
}

lmpi_status lmpi_impl_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
    lmpi_errhandler *e = lmpi_errhandler_from_handle(errhandler);
    if (!e || e->kind == LMPI_ERRH_NULL) {
        lmpi_err_detail("errhandler is not a valid error handler");
        return LMPI_ERR_ERRHANDLER;
    }
    if (!lmpi_errhandler_fits(e, LMPI_ERRH_USER_SESSION)) {
        lmpi_err_detail("errhandler was made for %s, not sessions", lmpi_errhandler_made_for(e));
        return LMPI_ERR_ARG;
    }
    lmpi_err_blame_handler(e); /* from here on, errors go to the handler given */
    lmpi_info *i;
    int required;
    lmpi_status st = lmpi_info_arg(info, &i);
    if (st == LMPI_OK)
        st = requested_level(i, &required);
    if (st != LMPI_OK)
        return st;
    lmpi_session *s = lmpi_calloc(1, sizeof(*s), LMPI_MEM_COMM);
    const char *kinds = i ? lmpi_info_value(i, "mpi_memory_alloc_kinds") : NULL;
    if (!s || (kinds && !(s->alloc_kinds = lmpi_strdup(kinds, LMPI_MEM_COMM)))) {
        lmpi_free(s);
        return LMPI_ERR_NO_MEM;
    }
    int provided;
    st = lmpi_session_start(required, &provided);
    if (st != LMPI_OK) {
        lmpi_free(s->alloc_kinds);
        lmpi_free(s);
        return st;
    }
    lmpi_err_blame_handler(NULL);
    do /* communicators hold 16 bits of it, and 0 means none */
        s->id = ++next_session_id;
    while ((uint16_t)s->id == 0);
    s->next = live_sessions;
    live_sessions = s;
    s->magic = LMPI_MAGIC_SESSION;
    s->errh = e;
    s->thread_level = provided;
    lmpi_errhandler_retain(e);
    *session = (MPI_Session)s;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Session_get_info(MPI_Session session, MPI_Info *info_used)
{
    lmpi_session *s;
    lmpi_status st = session_arg(session, &s);
    if (st != LMPI_OK)
        return st;
    lmpi_info *i = lmpi_info_new();
    if (!i)
        return LMPI_ERR_NO_MEM;
    st = lmpi_info_put(i, "thread_level", level_name(s->thread_level));
    /* the kinds LeanMPI supports of those asked: "mpi" and "system" */
    if (st == LMPI_OK)
        st = lmpi_info_put(i, "mpi_memory_alloc_kinds", "mpi,system");
    if (st != LMPI_OK) {
        lmpi_info_destroy(i);
        return st;
    }
    *info_used = (MPI_Info)i;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Session_get_pset_info(MPI_Session session, const char *pset_name, MPI_Info *info)
{
    lmpi_session *s;
    lmpi_status st = session_arg(session, &s);
    if (st != LMPI_OK)
        return st;
    if (!pset_name) {
        lmpi_err_detail("pset_name is NULL");
        return LMPI_ERR_ARG;
    }
    int size = pset_size_by_name(pset_name);
    if (size < 0) {
        lmpi_err_detail("no process set named \"%s\" (see MPI_Session_get_nth_pset)", pset_name);
        return LMPI_ERR_ARG;
    }
    lmpi_info *i = lmpi_info_new();
    if (!i)
        return LMPI_ERR_NO_MEM;
    char n[16];
    snprintf(n, sizeof(n), "%d", size);
    st = lmpi_info_put(i, "mpi_size", n);
    if (st != LMPI_OK) {
        lmpi_info_destroy(i);
        return st;
    }
    *info = (MPI_Info)i;
    return LMPI_OK;
}

lmpi_status lmpi_session_check(MPI_Session h)
{
    lmpi_session *s;
    return session_arg(h, &s);
}

uint32_t lmpi_session_id(MPI_Session h)
{
    lmpi_session *s;
    return session_arg(h, &s) == LMPI_OK ? s->id : 0;
}

struct lmpi_bsend_buffer *lmpi_session_buffer(uint32_t id)
{
    for (lmpi_session *s = live_sessions; s && id; s = s->next)
        if ((uint16_t)s->id == (uint16_t)id)
            return s->bsend;
    return NULL;
}

lmpi_status lmpi_impl_Session_finalize(MPI_Session *session)
{
    lmpi_session *s;
    lmpi_status st = session_arg(*session, &s);
    if (st != LMPI_OK)
        return st;
    for (lmpi_session **p = &live_sessions; *p; p = &(*p)->next)
        if (*p == s) {
            *p = s->next;
            break;
        }
    lmpi_bsend_slot_free(&s->bsend);
    lmpi_free(s->alloc_kinds);
    lmpi_errhandler_release(s->errh);
    s->magic = 0;
    lmpi_free(s);
    *session = MPI_SESSION_NULL;
    return lmpi_session_end();
}

lmpi_status lmpi_impl_Session_get_num_psets(MPI_Session session, MPI_Info info, int *npset_names)
{
    (void)info;
    lmpi_session *s;
    lmpi_status st = session_arg(session, &s);
    if (st == LMPI_OK)
        *npset_names = NPSETS_FIXED + lmpi_dpm_pset_count();
    return st;
}

/* pset_len in: the buffer size (0: just ask the length); out: the length
 * with the terminating NUL. */
lmpi_status lmpi_impl_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int *pset_len, char *pset_name)
{
    (void)info;
    lmpi_session *s;
    lmpi_status st = session_arg(session, &s);
    if (st != LMPI_OK)
        return st;
    if (!pset_len) {
        lmpi_err_detail("pset_len is NULL");
        return LMPI_ERR_ARG;
    }
    if (*pset_len > 0 && !pset_name) { /* 0 asks for the length alone */
        lmpi_err_detail("pset_name is NULL but pset_len is %d", *pset_len);
        return LMPI_ERR_ARG;
    }
    int total = NPSETS_FIXED + lmpi_dpm_pset_count();
    if (n < 0 || n >= total) {
        lmpi_err_detail("n=%d, but there are %d process sets", n, total);
        return LMPI_ERR_ARG;
    }
    char name[512];
    if (n < NPSETS_FIXED)
        snprintf(name, sizeof(name), "%s", psets[n]);
    else
        lmpi_dpm_pset_name(n - NPSETS_FIXED, name, sizeof(name));
    int need = (int)strlen(name) + 1;
    if (*pset_len > 0) {
        int c = need <= *pset_len ? need - 1 : *pset_len - 1;
        memcpy(pset_name, name, (size_t)c);
        pset_name[c] = '\0';
    }
    *pset_len = need;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler)
{
    lmpi_session *s;
    lmpi_status st = session_arg(session, &s);
    if (st != LMPI_OK)
        return st;
    lmpi_errhandler *e = lmpi_errhandler_from_handle(errhandler);
    if (!e || e->kind == LMPI_ERRH_NULL) {
        lmpi_err_detail("errhandler is not a valid error handler");
        return LMPI_ERR_ERRHANDLER;
    }
    if (!lmpi_errhandler_fits(e, LMPI_ERRH_USER_SESSION)) {
        lmpi_err_detail("errhandler was made for %s, not sessions", lmpi_errhandler_made_for(e));
        return LMPI_ERR_ARG;
    }
    lmpi_errhandler_retain(e);
    lmpi_errhandler_release(s->errh);
    s->errh = e;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Session_get_errhandler(MPI_Session session, MPI_Errhandler *errhandler)
{
    lmpi_session *s;
    lmpi_status st = session_arg(session, &s);
    if (st != LMPI_OK)
        return st;
    lmpi_errhandler_retain(s->errh);
    *errhandler = s->errh->handle;
    return LMPI_OK;
}

lmpi_status lmpi_impl_Session_attach_buffer(MPI_Session session, void *buffer, MPI_Count size)
{
    lmpi_session *s;
    lmpi_status st = session_arg(session, &s);
    return st == LMPI_OK ? lmpi_bsend_slot_attach(&s->bsend, buffer, size) : st;
}

lmpi_status lmpi_impl_Session_detach_buffer(MPI_Session session, void *buffer_addr, MPI_Count *size)
{
    lmpi_session *s;
    lmpi_status st = session_arg(session, &s);
    return st == LMPI_OK ? lmpi_bsend_slot_detach(&s->bsend, buffer_addr, size) : st;
}

lmpi_status lmpi_impl_Session_flush_buffer(MPI_Session session)
{
    lmpi_session *s;
    lmpi_status st = session_arg(session, &s);
    if (st == LMPI_OK)
        lmpi_bsend_slot_flush(s->bsend);
    return st;
}

lmpi_status lmpi_impl_Session_iflush_buffer(MPI_Session session, MPI_Request *request)
{
    lmpi_session *s;
    lmpi_status st = session_arg(session, &s);
    return st == LMPI_OK ? lmpi_bsend_slot_iflush(s->bsend, request) : st;
}

int lmpi_session_error(const char *fn, const char *arg, lmpi_status st, MPI_Session session)
{
    char msg[MPI_MAX_ERROR_STRING + 600];
    lmpi_session *s = (uintptr_t)session < LMPI_PREDEF_LIMIT ? NULL : (lmpi_session *)session;
    if (!s || s->magic != LMPI_MAGIC_SESSION)
        return lmpi_binding_error(fn, arg, st, lmpi_comm_self);
    int code = lmpi_error_message(fn, arg, st, "session", msg, sizeof(msg));
    return lmpi_errh_call(s->errh, (void *)session, code, msg);
}

lmpi_status lmpi_impl_Session_call_errhandler(MPI_Session session, int errorcode)
{
    lmpi_session *s;
    lmpi_status st = session_arg(session, &s);
    if (st == LMPI_OK)
        lmpi_errh_call(s->errh, (void *)session, errorcode, NULL);
    return st;
}
