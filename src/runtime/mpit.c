/* MPI_T: the tools interface.
 *
 * Control variables are the LMPI_* configuration table (read-only: they
 * are read from the environment at MPI_Init).  Performance variables expose
 * the matching engine (queue lengths, search depths, time spent matching)
 * and the memory accounting (current and peak bytes of every category).
 * All performance variables are continuous and read-only; counters and the
 * timer read relative to the value they had when the handle was allocated
 * or last reset. */
#include <stdio.h>
#include <string.h>

#include "binding/gen/impl.h"
#include "av/rankmap.h"
#include "comm/comm.h"
#include "match/match.h"
#include "coll/sched.h"
#include "runtime/config.h"
#include "runtime/mpit.h"
#include "runtime/wait.h"
#include "rma/win.h"
#include "topo/vtopo.h"

typedef uint64_t (*pvar_reader)(int arg);

typedef struct {
    const char *name;
    const char *desc;
    int var_class;
    pvar_reader read;
    int arg;
} pvar_def;

static uint64_t read_posted(int a) { (void)a; return lmpi_match_posted_length(); }
static uint64_t read_unexpected(int a) { (void)a; return lmpi_match_unexpected_length(); }
static uint64_t read_searches(int a) { (void)a; return lmpi_match_stat.searches; }
static uint64_t read_visits(int a) { (void)a; return lmpi_match_stat.visits; }
static uint64_t read_max_depth(int a) { (void)a; return lmpi_match_stat.max_depth; }
static uint64_t read_migrations(int a) { (void)a; return lmpi_match_stat.migrations; }
static uint64_t read_match_time(int a) { (void)a; return lmpi_match_stat.time_ns; }
static uint64_t read_match_meta(int a) { (void)a; return lmpi_match_metadata_bytes(); }
/* Strided maps with and without blocks count as one mode, "stride". */
static uint64_t read_rankmaps(int mode)
{
    return (uint64_t)(lmpi_rankmap_count(mode) + (mode == LMPI_RM_STRIDE ? lmpi_rankmap_count(LMPI_RM_BSTRIDE) : 0));
}
static uint64_t read_coll(int which)
{
    return which == 0   ? lmpi_coll_stat.scheduled
           : which == 1 ? lmpi_coll_stat.short_path
           : which == 2 ? lmpi_coll_stat.node_aware
                        : lmpi_coll_stat.shm_path;
}
static uint64_t read_rma(int which)
{
    return which == 0   ? lmpi_rma_stat.issued
           : which == 1 ? lmpi_rma_stat.buffered
           : which == 2 ? lmpi_rma_stat.lock_waits
           : which == 3 ? lmpi_rma_stat.pool_drains
                        : lmpi_rma_stat.wire;
}
static uint64_t read_topo(int which)
{
    const lmpi_topo_stats *t = &lmpi_topo_stat;
    const uint64_t v[] = {t->reorders, t->hop_bytes, t->hop_bytes_launch, t->hop_bytes_block, t->internode,
                          t->max_link, t->micros};
    return v[which];
}
static uint64_t read_wait(int which)
{
    lmpi_wait_stats w = lmpi_wait_get_stats();
    uint64_t v[] = {w.sleeps, w.wakes_sent, w.kicks, w.handoffs, w.moves};
    return v[which];
}
static uint64_t read_comms(int a) { (void)a; return (uint64_t)lmpi_comm_live(); }
static uint64_t read_rankmap_tables(int a) { (void)a; return (uint64_t)lmpi_rankmap_table_bytes(); }
static uint64_t read_mem_current(int cat) { return (uint64_t)lmpi_mem_current((lmpi_mem_cat)cat); }
static uint64_t read_mem_peak(int cat) { return (uint64_t)lmpi_mem_peak((lmpi_mem_cat)cat); }

#define MEM_PVARS(name, text)                                                                              \
    {"lmpi_mem_current_" text, "bytes allocated now in the " text " memory category", MPI_T_PVAR_CLASS_LEVEL, \
     read_mem_current, LMPI_MEM_##name},                                                                   \
    {"lmpi_mem_peak_" text, "highest bytes allocated in the " text " memory category",                     \
     MPI_T_PVAR_CLASS_HIGHWATERMARK, read_mem_peak, LMPI_MEM_##name},

static const pvar_def pvars[] = {
    {"lmpi_posted_queue_length", "posted receives waiting in all matching queues", MPI_T_PVAR_CLASS_LEVEL,
     read_posted, 0},
    {"lmpi_unexpected_queue_length", "unexpected messages waiting in all matching queues", MPI_T_PVAR_CLASS_LEVEL,
     read_unexpected, 0},
    {"lmpi_match_searches", "matching operations (posts, arrivals, probes)", MPI_T_PVAR_CLASS_COUNTER,
     read_searches, 0},
    {"lmpi_match_items_visited", "queue items and structure nodes visited by all searches (search depth sum)",
     MPI_T_PVAR_CLASS_COUNTER, read_visits, 0},
    {"lmpi_match_max_search_depth", "the deepest single search", MPI_T_PVAR_CLASS_HIGHWATERMARK, read_max_depth, 0},
    {"lmpi_match_migrations", "contexts moved between structures by LMPI_MATCH=auto", MPI_T_PVAR_CLASS_COUNTER,
     read_migrations, 0},
    {"lmpi_match_time", "time spent matching, in nanoseconds (measured while a handle of this variable exists)",
     MPI_T_PVAR_CLASS_TIMER, read_match_time, 0},
    {"lmpi_match_metadata_bytes", "bytes of matching structure beyond the queued items", MPI_T_PVAR_CLASS_SIZE,
     read_match_meta, 0},
    {"lmpi_coll_scheduled", "collectives run as schedules", MPI_T_PVAR_CLASS_COUNTER, read_coll, 0},
    {"lmpi_coll_short", "schedule-free collective phases (LMPI_COLL_SHORT)", MPI_T_PVAR_CLASS_COUNTER, read_coll, 1},
    {"lmpi_coll_node_aware", "collectives run node-aware (LMPI_COLL_NODE_AWARE)", MPI_T_PVAR_CLASS_COUNTER,
     read_coll, 2},
    {"lmpi_coll_shm", "collective phases through a communicator's shared-memory area (LMPI_COLL_SHM)",
     MPI_T_PVAR_CLASS_COUNTER, read_coll, 3},
    {"lmpi_rma_issued", "RMA operations carried out (eager at once, delayed when drained)", MPI_T_PVAR_CLASS_COUNTER,
     read_rma, 0},
    {"lmpi_rma_buffered", "RMA operations buffered by delayed issue (LMPI_RMA_ISSUE=delayed)",
     MPI_T_PVAR_CLASS_COUNTER, read_rma, 1},
    {"lmpi_rma_lock_waits", "passive-target lock acquisitions that found the lock taken and waited",
     MPI_T_PVAR_CLASS_COUNTER, read_rma, 2},
    {"lmpi_rma_pool_drains", "times buffered RMA operations were issued (flush, epoch end, full pool)",
     MPI_T_PVAR_CLASS_COUNTER, read_rma, 3},
    {"lmpi_rma_wire", "puts and gets to other hosts carried by the network's own RMA (LMPI_RMA_WIRE_MIN)",
     MPI_T_PVAR_CLASS_COUNTER, read_rma, 4},
    {"lmpi_topo_reorders", "topology creations with reorder=1 that changed the ranks", MPI_T_PVAR_CLASS_COUNTER,
     read_topo, 0},
    {"lmpi_topo_hop_bytes", "the last reordering: weighted hop-bytes of the mapping kept", MPI_T_PVAR_CLASS_LEVEL,
     read_topo, 1},
    {"lmpi_topo_hop_bytes_launch", "the last reordering: weighted hop-bytes of the placement as launched",
     MPI_T_PVAR_CLASS_LEVEL, read_topo, 2},
    {"lmpi_topo_hop_bytes_block", "the last reordering: weighted hop-bytes of block order", MPI_T_PVAR_CLASS_LEVEL,
     read_topo, 3},
    {"lmpi_topo_internode", "the last reordering: edge weight between nodes, mapping kept", MPI_T_PVAR_CLASS_LEVEL,
     read_topo, 4},
    {"lmpi_topo_max_link", "the last reordering: heaviest node uplink, mapping kept", MPI_T_PVAR_CLASS_LEVEL,
     read_topo, 5},
    {"lmpi_topo_map_time", "the last reordering: time the mapping took, in microseconds", MPI_T_PVAR_CLASS_LEVEL,
     read_topo, 6},
    {"lmpi_wait_sleeps", "times a blocking call of this process slept in the kernel until woken (runtime/wait.h)",
     MPI_T_PVAR_CLASS_COUNTER, read_wait, 0},
    {"lmpi_wait_wakes", "sleeping processes or threads this process woke", MPI_T_PVAR_CLASS_COUNTER, read_wait, 1},
    {"lmpi_wait_kicks", "writes of shared words that found ranks asleep in a word wait", MPI_T_PVAR_CLASS_COUNTER,
     read_wait, 2},
    {"lmpi_wait_handoffs", "waits that found a local rank waiting, awake, on their processor (each then moved or slept)",
     MPI_T_PVAR_CLASS_COUNTER, read_wait, 3},
    {"lmpi_wait_moves", "of those, the waits that moved to a processor where no local rank waited",
     MPI_T_PVAR_CLASS_COUNTER, read_wait, 4},
    {"lmpi_comms", "communicators alive (user and internal, not the predefined ones)", MPI_T_PVAR_CLASS_LEVEL,
     read_comms, 0},
    {"lmpi_rankmaps_direct", "rank maps (communicators and groups) in direct mode", MPI_T_PVAR_CLASS_LEVEL,
     read_rankmaps, LMPI_RM_DIRECT},
    {"lmpi_rankmaps_offset", "rank maps in offset mode", MPI_T_PVAR_CLASS_LEVEL, read_rankmaps, LMPI_RM_OFFSET},
    {"lmpi_rankmaps_stride", "rank maps in stride mode (with or without blocks)", MPI_T_PVAR_CLASS_LEVEL,
     read_rankmaps, LMPI_RM_STRIDE},
    {"lmpi_rankmaps_lut", "rank maps using a shared lookup table", MPI_T_PVAR_CLASS_LEVEL, read_rankmaps, LMPI_RM_LUT},
    {"lmpi_rankmaps_mlut", "rank maps over several process groups", MPI_T_PVAR_CLASS_LEVEL, read_rankmaps,
     LMPI_RM_MLUT},
    {"lmpi_rankmaps_table", "rank maps with a full table (LMPI_RANKMAP=table)", MPI_T_PVAR_CLASS_LEVEL, read_rankmaps,
     LMPI_RM_TABLE},
    {"lmpi_rankmap_table_bytes", "bytes of all lookup tables (each shared table once)", MPI_T_PVAR_CLASS_SIZE,
     read_rankmap_tables, 0},
    LMPI_MEM_CATEGORIES(MEM_PVARS)};

#define N_PVARS ((int)(sizeof(pvars) / sizeof(pvars[0])))

static int init_count;
static int timer_handles;

typedef struct lmpi_t_session {
    uint32_t magic;
} lmpi_t_session;

typedef struct lmpi_t_pvar_handle {
    uint32_t magic;
    int index;
    uint64_t base;
    lmpi_t_session *session;
} lmpi_t_pvar_handle;

typedef struct lmpi_t_cvar_handle {
    uint32_t magic;
    int index;
} lmpi_t_cvar_handle;

enum { MAGIC_SESSION = 0x54736573u, MAGIC_PVAR = 0x54707672u, MAGIC_CVAR = 0x54637672u };

static lmpi_status need_init(void)
{
    if (init_count == 0) {
        lmpi_err_detail("call MPI_T_init_thread first");
        return LMPI_T_ERR_NOT_INITIALIZED;
    }
    return LMPI_OK;
}

static void copy_name(const char *src, char *dst, int *len)
{
    if (!len)
        return;
    int n = (int)strlen(src);
    if (dst && *len > 0) {
        int c = n < *len - 1 ? n : *len - 1;
        memcpy(dst, src, (size_t)c);
        dst[c] = '\0';
    }
    *len = n + 1;
}

lmpi_status lmpi_impl_T_init_thread(int required, int *provided)
{
    (void)required;
    lmpi_config_ensure_loaded();
    init_count++;
    *provided = MPI_THREAD_MULTIPLE;
    return LMPI_OK;
}

lmpi_status lmpi_impl_T_finalize(void)
{
    lmpi_status st = need_init();
    if (st == LMPI_OK)
        init_count--;
    return st;
}

/* ---- performance variables --------------------------------------------- */
lmpi_status lmpi_impl_T_pvar_get_num(int *num)
{
    lmpi_status st = need_init();
    if (st == LMPI_OK)
        *num = N_PVARS;
    return st;
}

lmpi_status lmpi_impl_T_pvar_get_info(int index, char *name, int *name_len, int *verbosity, int *var_class,
                                      MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                                      int *bind, int *readonly, int *continuous, int *atomic)
{
    lmpi_status st = need_init();
    if (st != LMPI_OK)
        return st;
    if (index < 0 || index >= N_PVARS)
        return LMPI_T_ERR_INVALID_INDEX;
    const pvar_def *p = &pvars[index];
    copy_name(p->name, name, name_len);
    copy_name(p->desc, desc, desc_len);
    if (verbosity) *verbosity = MPI_T_VERBOSITY_USER_BASIC;
    if (var_class) *var_class = p->var_class;
    if (datatype) *datatype = MPI_UNSIGNED_LONG_LONG;
    if (enumtype) *enumtype = MPI_T_ENUM_NULL;
    if (bind) *bind = MPI_T_BIND_NO_OBJECT;
    if (readonly) *readonly = 1;
    if (continuous) *continuous = 1;
    if (atomic) *atomic = 0;
    return LMPI_OK;
}

lmpi_status lmpi_impl_T_pvar_get_index(const char *name, int var_class, int *index)
{
    lmpi_status st = need_init();
    if (st != LMPI_OK)
        return st;
    for (int i = 0; i < N_PVARS; i++)
        if (name && !strcmp(pvars[i].name, name) && pvars[i].var_class == var_class) {
            *index = i;
            return LMPI_OK;
        }
    return LMPI_T_ERR_INVALID_NAME;
}

lmpi_status lmpi_impl_T_pvar_session_create(MPI_T_pvar_session *session)
{
    lmpi_status st = need_init();
    if (st != LMPI_OK)
        return st;
    lmpi_t_session *s = lmpi_calloc(1, sizeof(*s), LMPI_MEM_OTHER);
    if (!s)
        return LMPI_ERR_NO_MEM;
    s->magic = MAGIC_SESSION;
    *session = (MPI_T_pvar_session)s;
    return LMPI_OK;
}

static lmpi_t_session *session_of(MPI_T_pvar_session h)
{
    lmpi_t_session *s = (lmpi_t_session *)h;
    return s && s->magic == MAGIC_SESSION ? s : NULL;
}

lmpi_status lmpi_impl_T_pvar_session_free(MPI_T_pvar_session *session)
{
    lmpi_t_session *s = session_of(*session);
    if (!s)
        return LMPI_T_ERR_INVALID_SESSION;
    s->magic = 0;
    lmpi_free(s);
    *session = MPI_T_PVAR_SESSION_NULL;
    return LMPI_OK;
}

static bool relative(const pvar_def *p)
{
    return p->var_class == MPI_T_PVAR_CLASS_COUNTER || p->var_class == MPI_T_PVAR_CLASS_TIMER;
}

lmpi_status lmpi_impl_T_pvar_handle_alloc(MPI_T_pvar_session session, int index, void *obj_handle,
                                          MPI_T_pvar_handle *handle, int *count)
{
    (void)obj_handle;
    lmpi_t_session *s = session_of(session);
    if (!s)
        return LMPI_T_ERR_INVALID_SESSION;
    if (index < 0 || index >= N_PVARS)
        return LMPI_T_ERR_INVALID_INDEX;
    lmpi_t_pvar_handle *h = lmpi_calloc(1, sizeof(*h), LMPI_MEM_OTHER);
    if (!h)
        return LMPI_ERR_NO_MEM;
    h->magic = MAGIC_PVAR;
    h->index = index;
    h->session = s;
    if (pvars[index].var_class == MPI_T_PVAR_CLASS_TIMER && timer_handles++ == 0)
        lmpi_match_stat.timing = true; /* clock reads cost: only while someone watches */
    h->base = relative(&pvars[index]) ? pvars[index].read(pvars[index].arg) : 0;
    *handle = (MPI_T_pvar_handle)h;
    *count = 1;
    return LMPI_OK;
}

static lmpi_t_pvar_handle *pvar_of(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    lmpi_t_pvar_handle *h = (lmpi_t_pvar_handle *)handle;
    if (!h || handle == MPI_T_PVAR_ALL_HANDLES || h->magic != MAGIC_PVAR || h->session != session_of(session))
        return NULL;
    return h;
}

lmpi_status lmpi_impl_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle)
{
    lmpi_t_pvar_handle *h = pvar_of(session, *handle);
    if (!h)
        return LMPI_T_ERR_INVALID_HANDLE;
    if (pvars[h->index].var_class == MPI_T_PVAR_CLASS_TIMER && --timer_handles == 0)
        lmpi_match_stat.timing = false;
    h->magic = 0;
    lmpi_free(h);
    *handle = MPI_T_PVAR_HANDLE_NULL;
    return LMPI_OK;
}

lmpi_status lmpi_impl_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    lmpi_t_pvar_handle *h = pvar_of(session, handle);
    if (!h)
        return LMPI_T_ERR_INVALID_HANDLE;
    if (!buf)
        return LMPI_T_ERR_INVALID;
    uint64_t v = pvars[h->index].read(pvars[h->index].arg);
    *(unsigned long long *)buf = v - h->base;
    return LMPI_OK;
}

lmpi_status lmpi_impl_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    lmpi_t_pvar_handle *h = pvar_of(session, handle);
    if (!h)
        return LMPI_T_ERR_INVALID_HANDLE;
    if (relative(&pvars[h->index]))
        h->base = pvars[h->index].read(pvars[h->index].arg);
    return LMPI_OK;
}

lmpi_status lmpi_impl_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    lmpi_status st = lmpi_impl_T_pvar_read(session, handle, buf);
    return st == LMPI_OK ? lmpi_impl_T_pvar_reset(session, handle) : st;
}

lmpi_status lmpi_impl_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return pvar_of(session, handle) ? LMPI_T_ERR_PVAR_NO_STARTSTOP : LMPI_T_ERR_INVALID_HANDLE;
}

lmpi_status lmpi_impl_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return lmpi_impl_T_pvar_start(session, handle);
}

lmpi_status lmpi_impl_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf)
{
    (void)buf;
    return pvar_of(session, handle) ? LMPI_T_ERR_PVAR_NO_WRITE : LMPI_T_ERR_INVALID_HANDLE;
}

/* ---- control variables: the configuration table -------------------------- */
lmpi_status lmpi_impl_T_cvar_get_num(int *num)
{
    lmpi_status st = need_init();
    if (st == LMPI_OK)
        *num = lmpi_config_count;
    return st;
}

static MPI_Datatype cvar_type(const char *type)
{
    if (!strcmp(type, "STRING"))
        return MPI_CHAR;
    if (!strcmp(type, "FLOAT"))
        return MPI_DOUBLE;
    if (!strcmp(type, "BOOL"))
        return MPI_INT;
    return MPI_LONG_LONG;
}

lmpi_status lmpi_impl_T_cvar_get_info(int index, char *name, int *name_len, int *verbosity, MPI_Datatype *datatype,
                                      MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind, int *scope)
{
    lmpi_status st = need_init();
    if (st != LMPI_OK)
        return st;
    if (index < 0 || index >= lmpi_config_count)
        return LMPI_T_ERR_INVALID_INDEX;
    const lmpi_config_entry *e = &lmpi_config_entries[index];
    copy_name(e->env, name, name_len);
    copy_name(e->doc, desc, desc_len);
    if (verbosity) *verbosity = MPI_T_VERBOSITY_USER_BASIC;
    if (datatype) *datatype = cvar_type(e->type);
    if (enumtype) *enumtype = MPI_T_ENUM_NULL;
    if (bind) *bind = MPI_T_BIND_NO_OBJECT;
    if (scope) *scope = MPI_T_SCOPE_READONLY;
    return LMPI_OK;
}

lmpi_status lmpi_impl_T_cvar_get_index(const char *name, int *index)
{
    lmpi_status st = need_init();
    if (st != LMPI_OK)
        return st;
    for (int i = 0; i < lmpi_config_count; i++)
        if (name && !strcmp(lmpi_config_entries[i].env, name)) {
            *index = i;
            return LMPI_OK;
        }
    return LMPI_T_ERR_INVALID_NAME;
}

/* The current value as the type cvar_get_info announces. */
static const void *cvar_value(int index, char *scratch, size_t len, int *count)
{
    static const size_t offsets[] = {
#define LMPI_CFG_OFFSET(field, env, type, def, doc) offsetof(lmpi_config_values, field),
        LMPI_CONFIG_TABLE(LMPI_CFG_OFFSET)
#undef LMPI_CFG_OFFSET
    };
    const char *type = lmpi_config_entries[index].type;
    const char *base = (const char *)&lmpi_config + offsets[index];
    if (!strcmp(type, "STRING")) {
        const char *s = *(const char *const *)base;
        snprintf(scratch, len, "%s", s ? s : "");
        *count = (int)strlen(scratch) + 1;
        return scratch;
    }
    *count = 1;
    return base;
}

lmpi_status lmpi_impl_T_cvar_handle_alloc(int index, void *obj_handle, MPI_T_cvar_handle *handle, int *count)
{
    (void)obj_handle;
    lmpi_status st = need_init();
    if (st != LMPI_OK)
        return st;
    if (index < 0 || index >= lmpi_config_count)
        return LMPI_T_ERR_INVALID_INDEX;
    lmpi_t_cvar_handle *h = lmpi_calloc(1, sizeof(*h), LMPI_MEM_OTHER);
    if (!h)
        return LMPI_ERR_NO_MEM;
    h->magic = MAGIC_CVAR;
    h->index = index;
    char scratch[1024];
    cvar_value(index, scratch, sizeof(scratch), count);
    *handle = (MPI_T_cvar_handle)h;
    return LMPI_OK;
}

static lmpi_t_cvar_handle *cvar_of(MPI_T_cvar_handle handle)
{
    lmpi_t_cvar_handle *h = (lmpi_t_cvar_handle *)handle;
    return h && h->magic == MAGIC_CVAR ? h : NULL;
}

lmpi_status lmpi_impl_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    lmpi_t_cvar_handle *h = cvar_of(*handle);
    if (!h)
        return LMPI_T_ERR_INVALID_HANDLE;
    h->magic = 0;
    lmpi_free(h);
    *handle = MPI_T_CVAR_HANDLE_NULL;
    return LMPI_OK;
}

lmpi_status lmpi_impl_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    lmpi_t_cvar_handle *h = cvar_of(handle);
    if (!h)
        return LMPI_T_ERR_INVALID_HANDLE;
    if (!buf)
        return LMPI_T_ERR_INVALID;
    char scratch[1024];
    int count;
    const void *v = cvar_value(h->index, scratch, sizeof(scratch), &count);
    const char *type = lmpi_config_entries[h->index].type;
    size_t bytes = !strcmp(type, "STRING") ? (size_t)count
                   : !strcmp(type, "BOOL") ? sizeof(int)
                   : !strcmp(type, "FLOAT") ? sizeof(double)
                                            : sizeof(long long);
    memcpy(buf, v, bytes);
    return LMPI_OK;
}

lmpi_status lmpi_impl_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    (void)buf;
    return cvar_of(handle) ? LMPI_T_ERR_CVAR_SET_NEVER : LMPI_T_ERR_INVALID_HANDLE;
}

/* No categories yet: every variable is listed flat. */
lmpi_status lmpi_impl_T_category_get_num(int *num_cat)
{
    lmpi_status st = need_init();
    if (st == LMPI_OK)
        *num_cat = 0;
    return st;
}

lmpi_status lmpi_impl_T_category_changed(int *update_number)
{
    lmpi_status st = need_init();
    if (st == LMPI_OK)
        *update_number = 0;
    return st;
}

/* ---- for mpit_meta.c ------------------------------------------------------ */
lmpi_status lmpi_mpit_need_init(void) { return need_init(); }
void lmpi_mpit_copy_name(const char *src, char *dst, int *len) { copy_name(src, dst, len); }
int lmpi_mpit_pvar_count(void) { return N_PVARS; }
const char *lmpi_mpit_pvar_name(int index) { return pvars[index].name; }
