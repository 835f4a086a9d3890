/* PMIx client: the process manager interface of Open MPI's prterun/mpirun
 * and Slurm's srun --mpi=pmix.  libpmix is opened at run time (dlopen), only
 * when a PMIx server started the process, so jobs under our mpiexec or Hydra
 * never load it.  The library is the launcher's own where it can be found
 * (the parent process has it mapped): a client of the server's version
 * speaks its wire format exactly (Debian's 4.2 client works with Open MPI
 * 5's server, but the server logs an unpack error for every client).
 *
 * Our PMI keys map onto PMIx as global puts of strings, committed and
 * exchanged by a fence that collects data; gets name the rank that put the
 * key when the caller knows it (lmpi_pmi_get_from), which PMIx answers from
 * the local store, and search the whole namespace otherwise. */
#include <dlfcn.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pmix.h>

#include "pmi/pmix_client.h"

static struct {
    void *lib;
    pmix_status_t (*init)(pmix_proc_t *, pmix_info_t[], size_t);
    pmix_status_t (*finalize)(const pmix_info_t[], size_t);
    pmix_status_t (*abort)(int, const char[], pmix_proc_t[], size_t);
    pmix_status_t (*put)(pmix_scope_t, const char[], pmix_value_t *);
    pmix_status_t (*commit)(void);
    pmix_status_t (*fence)(const pmix_proc_t[], size_t, const pmix_info_t[], size_t);
    pmix_status_t (*get)(const pmix_proc_t *, const char[], const pmix_info_t[], size_t, pmix_value_t **);
    pmix_status_t (*publish)(const pmix_info_t[], size_t);
    pmix_status_t (*lookup)(pmix_pdata_t[], size_t, const pmix_info_t[], size_t);
    pmix_status_t (*unpublish)(char **, const pmix_info_t[], size_t);
    pmix_status_t (*spawn)(const pmix_info_t[], size_t, const pmix_app_t[], size_t, pmix_nspace_t);
    void (*value_destruct)(pmix_value_t *);
    const char *(*error_string)(pmix_status_t);
    pmix_proc_t me;
    bool on;
    char path[4096];
} px;

bool lmpi_pmix_active(void) { return px.on; }

const char *lmpi_pmix_library(void) { return px.path; }

/* The libpmix the launcher itself has loaded: the parent of a rank is the
 * PMIx server (prted, slurmstepd) unless a wrapper sits in between. */
static bool launcher_library(char *path, size_t len)
{
    char maps[64], line[4096];
    snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)getppid());
    FILE *f = fopen(maps, "r");
    if (!f)
        return false;
    bool found = false;
    while (!found && fgets(line, sizeof(line), f)) {
        char *name = strchr(line, '/');
        if (!name)
            continue;
        name[strcspn(name, "\n")] = '\0';
        const char *base = strrchr(name, '/') + 1;
        if (strncmp(base, "libpmix.so", 10) == 0 && access(name, R_OK) == 0) {
            snprintf(path, len, "%s", name);
            found = true;
        }
    }
    fclose(f);
    return found;
}

static int open_library(char *err, size_t errlen)
{
    char *path = px.path;
    size_t pathlen = sizeof(px.path);
    const char *env = getenv("LMPI_PMIX_LIB");
    if (env && *env)
        snprintf(path, pathlen, "%s", env);
    else if (!launcher_library(path, pathlen))
        snprintf(path, pathlen, "libpmix.so.2");
    px.lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!px.lib) {
        snprintf(err, errlen, "started by a PMIx launcher (PMIX_NAMESPACE=%s) but libpmix cannot be opened: %s",
                 getenv("PMIX_NAMESPACE"), dlerror());
        return -1;
    }
#define SYM(field, name)                                                                                   \
    do {                                                                                                   \
        *(void **)&px.field = dlsym(px.lib, name);                                                         \
        if (!px.field) {                                                                                   \
            snprintf(err, errlen, "%s has no %s: not a PMIx library", path, name);                         \
            return -1;                                                                                     \
        }                                                                                                  \
    } while (0)
    SYM(init, "PMIx_Init");
    SYM(finalize, "PMIx_Finalize");
    SYM(abort, "PMIx_Abort");
    SYM(put, "PMIx_Put");
    SYM(commit, "PMIx_Commit");
    SYM(fence, "PMIx_Fence");
    SYM(get, "PMIx_Get");
    SYM(publish, "PMIx_Publish");
    SYM(lookup, "PMIx_Lookup");
    SYM(unpublish, "PMIx_Unpublish");
    SYM(spawn, "PMIx_Spawn");
    SYM(value_destruct, "PMIx_Value_destruct");
    SYM(error_string, "PMIx_Error_string");
#undef SYM
    return 0;
}

static void release(pmix_value_t *v)
{
    if (v) {
        px.value_destruct(v);
        free(v);
    }
}

/* A uint32 job or process attribute, widened from whatever integer type
 * the server chose; -1 when absent. */
static long get_number(uint32_t rank, const char *key)
{
    pmix_proc_t p = px.me;
    p.rank = rank;
    pmix_value_t *v = NULL;
    if (px.get(&p, key, NULL, 0, &v) != PMIX_SUCCESS || !v)
        return -1;
    long n = -1;
    switch (v->type) {
    case PMIX_UINT32: n = (long)v->data.uint32; break;
    case PMIX_UINT16: n = v->data.uint16; break;
    case PMIX_INT: n = v->data.integer; break;
    case PMIX_UINT: n = (long)v->data.uint; break;
    case PMIX_INT32: n = v->data.int32; break;
    case PMIX_SIZE: n = v->data.size > (size_t)LONG_MAX ? -1 : (long)v->data.size; break;
    default: break;
    }
    release(v);
    return n;
}

int lmpi_pmix_init(lmpi_pmi_info *info, char *err, size_t errlen)
{
    if (open_library(err, errlen) != 0)
        return -1;
    pmix_status_t rc = px.init(&px.me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        snprintf(err, errlen, "PMIx_Init failed (PMIX_NAMESPACE=%s): %s", getenv("PMIX_NAMESPACE"),
                 px.error_string(rc));
        return -1;
    }
    px.on = true;
    long size = get_number(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE);
    if (size < 1 || size > LMPI_PMI_MAX_SIZE || px.me.rank >= (uint32_t)size) {
        snprintf(err, errlen, "the PMIx server gave job size %ld for rank %u", size, px.me.rank);
        return -1;
    }
    info->rank = (int)px.me.rank;
    info->size = (int)size;
    long appnum = get_number(px.me.rank, PMIX_APPNUM);
    info->appnum = appnum < 0 || appnum > INT_MAX ? 0 : (int)appnum;
    long universe = get_number(PMIX_RANK_WILDCARD, PMIX_UNIV_SIZE);
    info->universe_size = universe < size || universe > INT_MAX ? info->size : (int)universe;
    snprintf(info->kvsname, sizeof(info->kvsname), "%s", px.me.nspace);
    return 0;
}

int lmpi_pmix_put(const char *key, const char *value)
{
    pmix_value_t v;
    memset(&v, 0, sizeof(v));
    v.type = PMIX_STRING;
    v.data.string = (char *)value;
    return px.put(PMIX_GLOBAL, key, &v) == PMIX_SUCCESS ? 0 : -1;
}

/* PMIx has no keys put into a job before it starts: a spawning parent
 * passes them in the children's environment (lmpi_pmix_spawn). */
#define PREPUT_PREFIX "LMPI_PREPUT_"

int lmpi_pmix_get(int owner, const char *key, char *value, size_t len)
{
    /* a parent's key first: asked for a key nobody in the job put, prterun's
     * server waits about 4 s before it says so, and every spawned child
     * asks for its parent's port in MPI_Init */
    char name[300];
    snprintf(name, sizeof(name), PREPUT_PREFIX "%s", key);
    const char *pre = owner < 0 ? getenv(name) : NULL;
    if (pre) {
        snprintf(value, len, "%s", pre);
        return 0;
    }
    pmix_proc_t p = px.me;
    p.rank = owner < 0 ? PMIX_RANK_UNDEF : (uint32_t)owner;
    pmix_value_t *v = NULL;
    if (px.get(&p, key, NULL, 0, &v) != PMIX_SUCCESS || !v)
        return -1;
    int rc = -1;
    if (v->type == PMIX_STRING && v->data.string) {
        snprintf(value, len, "%s", v->data.string);
        rc = 0;
    }
    release(v);
    return rc;
}

int lmpi_pmix_fence(void)
{
    if (px.commit() != PMIX_SUCCESS)
        return -1;
    pmix_info_t collect;
    memset(&collect, 0, sizeof(collect));
    snprintf(collect.key, sizeof(collect.key), "%s", PMIX_COLLECT_DATA);
    collect.value.type = PMIX_BOOL;
    collect.value.data.flag = true;
    return px.fence(NULL, 0, &collect, 1) == PMIX_SUCCESS ? 0 : -1;
}

int lmpi_pmix_node_map(int size, int *node_of)
{
    for (int r = 0; r < size; r++) {
        long node = get_number((uint32_t)r, PMIX_NODEID);
        if (node < 0 || node > INT_MAX)
            return -1;
        node_of[r] = (int)node;
    }
    return 0;
}

void lmpi_pmix_abort(int code, const char *msg)
{
    /* NULL procs: the whole namespace */
    px.abort(code, msg ? msg : "", NULL, 0);
}

int lmpi_pmix_finalize(void)
{
    if (!px.on)
        return 0;
    px.on = false;
    return px.finalize(NULL, 0) == PMIX_SUCCESS ? 0 : -1;
}

int lmpi_pmix_lookup(const char *service, char *port, size_t len, char *err, size_t errlen)
{
    pmix_pdata_t d;
    memset(&d, 0, sizeof(d));
    if (strlen(service) >= sizeof(d.key)) {
        snprintf(err, errlen, "no port is published under '%s'", service);
        return -1;
    }
    snprintf(d.key, sizeof(d.key), "%s", service);
    /* no PMIX_WAIT: MPI_Lookup_name fails at once when nothing is published */
    pmix_status_t rc = px.lookup(&d, 1, NULL, 0);
    int out = -1;
    if (rc == PMIX_SUCCESS && d.value.type == PMIX_STRING && d.value.data.string) {
        snprintf(port, len, "%s", d.value.data.string);
        out = 0;
    } else {
        snprintf(err, errlen, "no port is published under '%s'", service);
    }
    px.value_destruct(&d.value);
    return out;
}

/* Is something published under service?  The data servers of prte and
 * Slurm accept a second publish of a name from the same process, and an
 * unpublish of a name never published; MPI says both are errors. */
static bool published(const char *service)
{
    char port[1024], err[256];
    return lmpi_pmix_lookup(service, port, sizeof(port), err, sizeof(err)) == 0;
}

/* The names this process published: PMIx unpublishes only the caller's
 * own, so an unpublish is checked here, without asking the data server.
 * Across hosts prte's server left a lookup unanswered now and then (a
 * child's MPI_Finalize, unpublishing its registry entry, hung in
 * PMIx_Lookup 1 run in 3 of t_dpm multiple over 2 emulated hosts). */
typedef struct mine {
    struct mine *next;
    char name[PMIX_MAX_KEYLEN + 1];
} mine;
static mine *published_here;

static mine **find_mine(const char *service)
{
    mine **m = &published_here;
    while (*m && strcmp((*m)->name, service) != 0)
        m = &(*m)->next;
    return m;
}

int lmpi_pmix_publish(const char *service, const char *port, char *err, size_t errlen)
{
    if (published(service)) {
        snprintf(err, errlen, "'%s' is already published", service);
        return -1;
    }
    pmix_info_t entry;
    memset(&entry, 0, sizeof(entry));
    snprintf(entry.key, sizeof(entry.key), "%s", service);
    if (strlen(service) >= sizeof(entry.key)) {
        snprintf(err, errlen, "service names under PMIx are at most %zu characters", sizeof(entry.key) - 1);
        return -1;
    }
    entry.value.type = PMIX_STRING;
    entry.value.data.string = (char *)port;
    mine *m = calloc(1, sizeof(*m));
    if (!m) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    pmix_status_t rc = px.publish(&entry, 1);
    if (rc != PMIX_SUCCESS) {
        free(m);
        snprintf(err, errlen, "the PMIx server refused to publish '%s': %s", service, px.error_string(rc));
        return -1;
    }
    snprintf(m->name, sizeof(m->name), "%s", service);
    m->next = published_here;
    published_here = m;
    return 0;
}

int lmpi_pmix_unpublish(const char *service, char *err, size_t errlen)
{
    mine **m = find_mine(service);
    if (!*m) {
        snprintf(err, errlen, "'%s' is not published by this process", service);
        return -1;
    }
    mine *gone = *m;
    *m = gone->next;
    free(gone);
    char *keys[2] = {(char *)service, NULL};
    pmix_status_t rc = px.unpublish(keys, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        snprintf(err, errlen, "'%s' is not published", service);
        return -1;
    }
    return 0;
}

/* Every argument that can hold a string, as one allocation each: freed by
 * free_apps whatever was filled. */
static void free_apps(pmix_app_t *a, int count)
{
    for (int i = 0; a && i < count; i++) {
        for (char **v = a[i].argv; v && *v; v++)
            free(*v);
        for (char **v = a[i].env; v && *v; v++)
            free(*v);
        free(a[i].argv);
        free(a[i].env);
        free(a[i].cmd);
        for (size_t k = 0; k < a[i].ninfo; k++)
            free(a[i].info[k].value.data.string);
        free(a[i].info);
    }
    free(a);
}

/* The MPI info keys a PMIx launcher understands (MPI 4.1 section 11.8.4):
 * wdir, host; the others are LeanMPI's mpiexec's and are ignored here. */
static const struct {
    const char *mpi, *pmix;
} info_map[] = {{"wdir", PMIX_WDIR}, {"host", PMIX_HOST}};

int lmpi_pmix_spawn(int count, const lmpi_pmi_app *apps, int npreput, const char **keys, const char **values,
                    int *spawned, char *err, size_t errlen)
{
    pmix_app_t *a = calloc((size_t)count, sizeof(*a));
    bool ok = a != NULL;
    *spawned = 0;
    for (int i = 0; ok && i < count; i++) {
        int argc = 0;
        while (apps[i].argv && apps[i].argv[argc])
            argc++;
        a[i].cmd = strdup(apps[i].command);
        a[i].maxprocs = apps[i].maxprocs;
        a[i].argv = calloc((size_t)argc + 2, sizeof(char *));
        a[i].env = calloc((size_t)npreput + 2, sizeof(char *));
        a[i].info = calloc(sizeof(info_map) / sizeof(info_map[0]), sizeof(pmix_info_t));
        ok = a[i].cmd && a[i].argv && a[i].env && a[i].info;
        for (int k = 0; ok && k <= argc; k++) /* argv[0] is the command */
            ok = (a[i].argv[k] = strdup(k ? apps[i].argv[k - 1] : apps[i].command)) != NULL;
        ok = ok && (a[i].env[0] = strdup("PMI_SPAWNED=1")) != NULL;
        for (int k = 0; ok && k < npreput; k++) {
            size_t l = strlen(PREPUT_PREFIX) + strlen(keys[k]) + strlen(values[k]) + 2;
            ok = (a[i].env[k + 1] = malloc(l)) != NULL;
            if (ok)
                snprintf(a[i].env[k + 1], l, PREPUT_PREFIX "%s=%s", keys[k], values[k]);
        }
        for (int k = 0; ok && k < apps[i].ninfo; k++)
            for (size_t m = 0; m < sizeof(info_map) / sizeof(info_map[0]); m++)
                if (!strcmp(apps[i].info_keys[k], info_map[m].mpi)) {
                    pmix_info_t *e = &a[i].info[a[i].ninfo++];
                    snprintf(e->key, sizeof(e->key), "%s", info_map[m].pmix);
                    e->value.type = PMIX_STRING;
                    ok = (e->value.data.string = strdup(apps[i].info_values[k])) != NULL;
                    break;
                }
    }
    if (!ok) {
        free_apps(a, count);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* an info array of no entries must be NULL: PMIx reads a non-NULL one
     * however many entries ninfo says (and the parent crashed) */
    for (int i = 0; i < count; i++)
        if (!a[i].ninfo) {
            free(a[i].info);
            a[i].info = NULL;
        }
    pmix_nspace_t child;
    memset(child, 0, sizeof(child));
    pmix_status_t rc = px.spawn(NULL, 0, a, (size_t)count, child);
    free_apps(a, count);
    if (rc != PMIX_SUCCESS) {
        snprintf(err, errlen, "the PMIx launcher could not start the processes: %s", px.error_string(rc));
        return -1;
    }
    *spawned = -1; /* all that was asked for: PMIx_Spawn starts everything or fails */
    return 0;
}
