/* Dynamic process management: the process-group registry, ports,
 * connect/accept, spawn, join and the name service (dpm.h).
 *
 * Connecting two groups takes three steps:
 *   1. the roots meet through the bridge: the connecting root sends a
 *      CONNECT control packet to the inbox of the port's owner, which
 *      answers ACCEPT (or REJECT: the port is closed) once MPI_Comm_accept
 *      takes the request;
 *   2. the two roots form a two-process peer communicator on a reserved
 *      context and run the same leader handshake as MPI_Intercomm_create
 *      (an agreed context id, each group's members as (group name, rank));
 *   3. a barrier over the new intercommunicator, so that no member sees
 *      traffic on it before it exists everywhere.
 * MPI_Comm_spawn is a PMI spawn whose children find their parents' port
 * under PARENT_ROOT_PORT_NAME and connect to it from MPI_Init. */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "binding/gen/impl.h"
#include "comm/comm.h"
#include "dpm/dpm.h"
#include "ft/ft.h"
#include "pmi/exec_check.h"
#include "pmi/pmi.h"
#include "runtime/config.h"
#include "runtime/info.h"
#include "runtime/request.h"
#include "transport/shm/bridge.h"
#include "transport/shm/shm.h"
#include "transport/transport.h"

#define UNATTACHED UINT64_MAX
#define PORT_PREFIX "lmpi-port:"

typedef struct {
    char *name;
    uint64_t key;
    int size;
    int refs;
    bool spawned; /* by a spawn this process took part in (a process set) */
    bool met;     /* through a port: its launcher may not be ours (lmpi_dpm_watch) */
    lmpi_av av;
} group;

/* WITHDRAW: a connect that timed out takes its request back; the owner
 * answers REJECT if the request was still queued, and the connector reads an
 * ACCEPT sent before that as a late success (see root_connect). */
enum { CTRL_CONNECT = 1, CTRL_ACCEPT, CTRL_REJECT, CTRL_WITHDRAW };

/* One control packet: who sends it (kvsname, rank, the size of its
 * group), for which port, and the token its answer must carry. */
typedef struct {
    uint32_t kind;
    uint32_t port;
    uint32_t token;  /* the connecting process's, unique among its connects */
    uint32_t serial; /* ACCEPT: the accepting process's, unique among its accepts */
    int32_t rank;
    int32_t size;
    char kvsname[256];
} ctrl_msg;

typedef struct pending {
    struct pending *next;
    ctrl_msg m;
} pending;

typedef struct port {
    struct port *next;
    uint32_t tag;
} port;

static struct {
    group **g; /* by pgid; [0] unused (the world) */
    int n, cap, live;
    int size_sum;
    uint64_t my_key; /* lmpi_bridge_group_key of our own kvsname */
    MPI_Comm parent;
    lmpi_rankmap parent_map; /* the parents (process set lmpi://parent) */
    bool have_parent_map;
    uint32_t next_port, next_token, next_serial;
    port *ports;
    pending *requests; /* CONNECTs waiting for an accept */
    pending *replies;  /* ACCEPT / REJECT for this process's connects */
    bool net;          /* processes of other groups may be on other hosts */
    bool net_late;     /* ... turned on after start-up: other members may lack it */
    bool published;    /* this process's network address is in the registry */
    char host[256];
} dpm = {.parent = MPI_COMM_NULL};

/* ---- the registry --------------------------------------------------------- */

static void update_size_hint(void)
{
    lmpi_rt.peer_size_hint = lmpi_rt.world_size + dpm.size_sum;
}

uint32_t lmpi_dpm_group(const char *kvsname, int size)
{
    if (!strcmp(kvsname, lmpi_rt.kvsname))
        return 0;
    uint64_t key = lmpi_bridge_group_key(kvsname);
    for (int i = 1; i < dpm.n; i++)
        if (dpm.g[i] && dpm.g[i]->key == key && !strcmp(dpm.g[i]->name, kvsname))
            return (uint32_t)i;
    int slot = 1;
    while (slot < dpm.n && dpm.g[slot])
        slot++;
    if (slot >= dpm.n) {
        if (dpm.n == dpm.cap) {
            int cap = dpm.cap ? 2 * dpm.cap : 8;
            group **g = lmpi_realloc(dpm.g, sizeof(*g) * (size_t)cap, LMPI_MEM_AV);
            if (!g)
                return UINT32_MAX;
            dpm.g = g;
            dpm.cap = cap;
        }
        if (dpm.n == 0)
            dpm.g[dpm.n++] = NULL;
        slot = dpm.n++;
    }
    group *gr = lmpi_calloc(1, sizeof(*gr), LMPI_MEM_AV);
    int *zeros = lmpi_calloc((size_t)(size > 0 ? size : 1), sizeof(int), LMPI_MEM_OTHER);
    size_t nlen = strlen(kvsname) + 1;
    char *name = lmpi_malloc(nlen, LMPI_MEM_AV);
    /* One node (the group's own segment); every address is attached on
     * first use, so the entries start out unattached. */
    if (!gr || !zeros || !name || !lmpi_av_create(&gr->av, (uint32_t)slot, size, zeros, -1, false)) {
        lmpi_free(gr);
        lmpi_free(zeros);
        lmpi_free(name);
        if (slot == dpm.n - 1)
            dpm.n--;
        return UINT32_MAX;
    }
    lmpi_free(zeros);
    for (int r = 0; r < size; r++)
        gr->av.entries[r] = UNATTACHED;
    memcpy(name, kvsname, nlen);
    gr->name = name;
    gr->key = key;
    gr->size = size;
    dpm.g[slot] = gr;
    dpm.live++;
    dpm.size_sum += size;
    update_size_hint();
    return (uint32_t)slot;
}

static group *group_of(uint32_t pgid)
{
    return pgid > 0 && (int)pgid < dpm.n ? dpm.g[pgid] : NULL;
}

const char *lmpi_dpm_group_name(uint32_t pgid)
{
    group *g = group_of(pgid);
    return pgid == 0 ? lmpi_rt.kvsname : g ? g->name : "?";
}

int lmpi_dpm_group_size(uint32_t pgid)
{
    group *g = group_of(pgid);
    return pgid == 0 ? lmpi_rt.world_size : g ? g->size : 0;
}


/* The group hook of rankmap.h: the last map of a group lets it go. */
static void group_hold(uint32_t pgid, int delta)
{
    group *g = group_of(pgid);
    if (!g)
        return;
    g->refs += delta;
    if (g->refs > 0)
        return;
    for (int r = 0; r < g->size; r++)
        if (g->av.entries[r] != UNATTACHED)
            lmpi_bridge_detach((int)g->av.entries[r]);
    lmpi_av_destroy(&g->av);
    dpm.size_sum -= g->size;
    update_size_hint();
    lmpi_free(g->name);
    lmpi_free(g);
    dpm.g[pgid] = NULL;
    dpm.live--;
}

/* ---- processes on other hosts ------------------------------------------------
 * Where a job spans hosts (or its launcher says others may: our mpiexec sets
 * LMPI_DPM_NET in jobs with remote hosts, spawned ones included), every
 * process taking part in dynamic process management publishes its network
 * address and host name in the launcher's name service, under
 * lmpi-dpm:<kvsname>:<rank>.  A peer first reached (to send, or because
 * it sent) is looked up there: on another host it becomes a network peer
 * of the bridge, on this one (or absent: a job that never uses the network)
 * its inbox is mapped as before. */
#define REGISTRY_PREFIX "lmpi-dpm:"

static void registry_service(char *out, size_t len, const char *kvsname, int rank)
{
    snprintf(out, len, REGISTRY_PREFIX "%s:%d", kvsname, rank);
}

static lmpi_status registry_publish(void)
{
    if (!dpm.net || dpm.published)
        return LMPI_OK;
    char service[320], value[600], err[256];
    LMPI_TRY(lmpi_tr_net_foreign_address(lmpi_rt.world_rank, lmpi_rt.world_size, value, sizeof(value) - 258));
    size_t l = strlen(value);
    snprintf(value + l, sizeof(value) - l, "@%s", dpm.host);
    registry_service(service, sizeof(service), lmpi_rt.kvsname, lmpi_rt.world_rank);
    if (lmpi_pmi_publish(service, value, err, sizeof(err)) != 0) {
        lmpi_err_detail("dynamic processes between hosts need a launcher with a name service for the processes' "
                        "network addresses (LeanMPI's mpiexec has one): publishing %s failed: %s",
                        service, err);
        return LMPI_ERR_UNSUPPORTED_OPERATION;
    }
    dpm.published = true;
    return LMPI_OK;
}

/* (kvsname, rank)'s network address (*len bytes into addr), when it
 * published one from another host. */
static bool registry_lookup_remote(const char *kvsname, int rank, unsigned char *addr, size_t *len)
{
    if (!dpm.net)
        return false;
    char service[320], value[600], err[256];
    registry_service(service, sizeof(service), kvsname, rank);
    if (lmpi_pmi_lookup(service, value, sizeof(value), err, sizeof(err)) != 0)
        return false;
    char *at = strrchr(value, '@');
    if (!at || !strcmp(at + 1, dpm.host))
        return false;
    size_t hex = (size_t)(at - value);
    if (hex % 2 || hex / 2 > *len)
        return false;
    for (size_t i = 0; i < hex / 2; i++) {
        unsigned v;
        if (sscanf(value + 2 * i, "%2x", &v) != 1)
            return false;
        addr[i] = (unsigned char)v;
    }
    *len = hex / 2;
    return true;
}

/* The bridge index of (kvsname, rank): a network peer when it is on
 * another host, else its inbox, mapped now or on first send. */
static int bridge_peer(const char *kvsname, int rank, bool map_now)
{
    unsigned char addr[256];
    size_t len = sizeof(addr);
    if (registry_lookup_remote(kvsname, rank, addr, &len))
        return lmpi_bridge_attach_net(kvsname, rank, addr, len);
    return map_now ? lmpi_bridge_attach(kvsname, rank) : lmpi_bridge_reserve(kvsname, rank);
}

int lmpi_dpm_addr(lmpi_gpid g)
{
    if (g.pgid == 0)
        return (int)lmpi_av_addr(lmpi_av_world(), g.lpid);
    group *gr = group_of(g.pgid);
    if (!gr || (int)g.lpid >= gr->size)
        return INT_MAX;
    uint64_t *e = &gr->av.entries[g.lpid];
    if (*e == UNATTACHED) {
        int idx = bridge_peer(gr->name, (int)g.lpid, false);
        if (idx < 0)
            return INT_MAX; /* no transport takes it: the send fails */
        *e = (uint64_t)idx;
    }
    return (int)*e;
}

uint64_t lmpi_dpm_group_key(uint32_t pgid)
{
    if (pgid == 0)
        return dpm.my_key;
    return (int)pgid < dpm.n && dpm.g[pgid] ? dpm.g[pgid]->key : 0;
}

uint32_t lmpi_dpm_pgid_of_key(uint64_t key)
{
    if (key == dpm.my_key)
        return 0;
    for (int i = 1; i < dpm.n; i++)
        if (dpm.g[i] && dpm.g[i]->key == key)
            return (uint32_t)i;
    return UINT32_MAX;
}

/* Bridge resolver: a sender's (group key, rank) -> transport index. */
static int resolve_sender(uint64_t key, int rank)
{
    if (key == dpm.my_key)
        return rank < lmpi_rt.world_size ? (int)lmpi_av_addr(lmpi_av_world(), (uint32_t)rank) : -1;
    for (int i = 1; i < dpm.n; i++)
        if (dpm.g[i] && dpm.g[i]->key == key) {
            int idx = lmpi_dpm_addr((lmpi_gpid){(uint32_t)i, (uint32_t)rank});
            return idx == INT_MAX ? -1 : idx;
        }
    return -1;
}

/* ---- maps on the wire --------------------------------------------------------- */

typedef struct {
    uint32_t ngroups, n;
} blob_head;

lmpi_status lmpi_dpm_encode_map(const lmpi_rankmap *m, void **blob, size_t *len)
{
    int n = m->size;
    uint32_t *gidx = lmpi_malloc(sizeof(uint32_t) * (size_t)(n + 1), LMPI_MEM_OTHER);
    uint32_t *pg = lmpi_malloc(sizeof(uint32_t) * (size_t)(n + 1), LMPI_MEM_OTHER);
    if (!gidx || !pg) {
        lmpi_free(gidx), lmpi_free(pg);
        return LMPI_ERR_NO_MEM;
    }
    uint32_t ng = 0;
    size_t bytes = sizeof(blob_head) + 8 * (size_t)n;
    for (int r = 0; r < n; r++) {
        uint32_t p = lmpi_rankmap_gpid(m, r).pgid, k = 0;
        while (k < ng && pg[k] != p)
            k++;
        if (k == ng) {
            pg[ng++] = p;
            bytes += 8 + (strlen(lmpi_dpm_group_name(p)) + 4) / 4 * 4;
        }
        gidx[r] = k;
    }
    char *b = lmpi_calloc(1, bytes, LMPI_MEM_OTHER), *at = b;
    if (!b) {
        lmpi_free(gidx), lmpi_free(pg);
        return LMPI_ERR_NO_MEM;
    }
    *(blob_head *)at = (blob_head){ng, (uint32_t)n};
    at += sizeof(blob_head);
    for (uint32_t k = 0; k < ng; k++) {
        const char *name = lmpi_dpm_group_name(pg[k]);
        uint32_t nl = (uint32_t)strlen(name);
        int32_t size = lmpi_dpm_group_size(pg[k]);
        memcpy(at, &size, 4);
        memcpy(at + 4, &nl, 4);
        memcpy(at + 8, name, nl);
        at += 8 + (nl + 4) / 4 * 4;
    }
    for (int r = 0; r < n; r++) {
        uint32_t pair[2] = {gidx[r], lmpi_rankmap_gpid(m, r).lpid};
        memcpy(at, pair, 8);
        at += 8;
    }
    lmpi_free(gidx);
    lmpi_free(pg);
    *blob = b;
    *len = bytes;
    return LMPI_OK;
}

lmpi_status lmpi_dpm_decode_map(const void *blob, size_t len, lmpi_rankmap *out)
{
    const char *at = blob, *end = at + len;
    blob_head h;
    if (len < sizeof(h))
        return LMPI_ERR_INTERN;
    memcpy(&h, at, sizeof(h));
    at += sizeof(h);
    uint32_t *pgid = lmpi_malloc(sizeof(uint32_t) * (h.ngroups + 1), LMPI_MEM_OTHER);
    lmpi_gpid *g = lmpi_malloc(sizeof(lmpi_gpid) * (h.n + 1), LMPI_MEM_OTHER);
    lmpi_status st = pgid && g ? LMPI_OK : LMPI_ERR_NO_MEM;
    for (uint32_t k = 0; k < h.ngroups && st == LMPI_OK; k++) {
        int32_t size;
        uint32_t nl;
        char name[256];
        if (end - at < 8)
            st = LMPI_ERR_INTERN;
        else {
            memcpy(&size, at, 4);
            memcpy(&nl, at + 4, 4);
            if (nl >= sizeof(name) || (size_t)(end - at) < 8 + nl)
                st = LMPI_ERR_INTERN;
            else {
                memcpy(name, at + 8, nl);
                name[nl] = '\0';
                at += 8 + (nl + 4) / 4 * 4;
                pgid[k] = lmpi_dpm_group(name, size);
                if (pgid[k] == UINT32_MAX)
                    st = LMPI_ERR_NO_MEM;
            }
        }
    }
    if (st == LMPI_OK && (size_t)(end - at) < 8 * (size_t)h.n)
        st = LMPI_ERR_INTERN;
    for (uint32_t r = 0; r < h.n && st == LMPI_OK; r++) {
        uint32_t pair[2];
        memcpy(pair, at, 8);
        at += 8;
        if (pair[0] >= h.ngroups) {
            st = LMPI_ERR_INTERN;
            break;
        }
        g[r] = (lmpi_gpid){pgid[pair[0]], pair[1]};
    }
    if (st == LMPI_OK && !lmpi_rankmap_from_gpids(out, g, (int)h.n))
        st = LMPI_ERR_NO_MEM;
    if (st == LMPI_ERR_INTERN)
        lmpi_err_detail("a malformed group description arrived from another process group");
    lmpi_free(pgid);
    lmpi_free(g);
    return st;
}

/* ---- control packets ------------------------------------------------------------ */

static void push(pending **list, const ctrl_msg *m)
{
    pending *p = lmpi_malloc(sizeof(*p), LMPI_MEM_OTHER);
    if (!p)
        return; /* the peer times out on its liveness check */
    p->m = *m;
    p->next = NULL;
    while (*list)
        list = &(*list)->next;
    *list = p;
}

/* Take the first entry matching (port or token); false: none yet. */
static bool take(pending **list, bool by_port, uint32_t v, ctrl_msg *out)
{
    for (; *list; list = &(*list)->next)
        if ((by_port ? (*list)->m.port : (*list)->m.token) == v) {
            pending *p = *list;
            *out = p->m;
            *list = p->next;
            lmpi_free(p);
            return true;
        }
    return false;
}

/* Drop the queued connect request that w withdraws (same sender and
 * token); false: none queued (already accepted, or never arrived). */
static bool withdraw(pending **list, const ctrl_msg *w)
{
    for (; *list; list = &(*list)->next) {
        const ctrl_msg *q = &(*list)->m;
        if (q->token == w->token && q->port == w->port && q->rank == w->rank && !strcmp(q->kvsname, w->kvsname)) {
            pending *p = *list;
            *list = p->next;
            lmpi_free(p);
            return true;
        }
    }
    return false;
}

static bool port_open(uint32_t tag)
{
    for (port *p = dpm.ports; p; p = p->next)
        if (p->tag == tag)
            return true;
    return false;
}

/* Inboxes mapped for control packets alone (processes of no registered
 * group, or of our own, whose ordinary address is not the bridge's): the
 * last few stay mapped, as a process that connected once tends to again
 * (mapping an inbox costs an open, a stat and an mmap). */
#define CTRL_CACHE 4
static struct {
    char kvsname[256];
    int rank, idx; /* idx 0: empty (bridge indices start past the node's ranks) */
} ctrl_cache[CTRL_CACHE];
static int ctrl_cache_next;

static int ctrl_attach(const char *kvsname, int rank)
{
    for (int i = 0; i < CTRL_CACHE; i++)
        if (ctrl_cache[i].idx > 0 && ctrl_cache[i].rank == rank && !strcmp(ctrl_cache[i].kvsname, kvsname))
            return ctrl_cache[i].idx;
    int idx = bridge_peer(kvsname, rank, true);
    if (idx < 0)
        return -1;
    int slot = ctrl_cache_next++ % CTRL_CACHE;
    if (ctrl_cache[slot].idx > 0)
        lmpi_bridge_detach(ctrl_cache[slot].idx);
    snprintf(ctrl_cache[slot].kvsname, sizeof(ctrl_cache[slot].kvsname), "%s", kvsname);
    ctrl_cache[slot].rank = rank;
    ctrl_cache[slot].idx = idx;
    return idx;
}

static void ctrl_cache_clear(void)
{
    for (int i = 0; i < CTRL_CACHE; i++)
        if (ctrl_cache[i].idx > 0)
            lmpi_bridge_detach(ctrl_cache[i].idx);
    memset(ctrl_cache, 0, sizeof(ctrl_cache));
}

/* Send one control packet to (kvsname, rank): through the address of a
 * registered group (pgid > 0: the mapping stays for the traffic that
 * follows), else through the control mappings. */
static lmpi_status send_ctrl(const char *kvsname, int rank, uint32_t pgid, ctrl_msg *m)
{
    bool own = pgid == 0 || pgid == UINT32_MAX;
    int idx = own ? ctrl_attach(kvsname, rank) : lmpi_dpm_addr((lmpi_gpid){pgid, (uint32_t)rank});
    if (idx < 0 || idx == INT_MAX)
        return LMPI_ERR_PORT;
    snprintf(m->kvsname, sizeof(m->kvsname), "%s", lmpi_rt.kvsname);
    m->rank = lmpi_rt.world_rank;
    m->size = lmpi_rt.world_size;
    lmpi_pkt_hdr h = {.type = LMPI_PKT_CTRL, .tag = (int32_t)m->kind};
    lmpi_status st;
    /* the receiver frees cells whenever it polls (a network peer's packet
     * waits in the network transport instead, never here) */
    while ((st = lmpi_bridge_send(idx, &h, m, sizeof(*m), NULL, NULL)) == LMPI_ERR_PENDING)
        sched_yield();
    return st == LMPI_OK ? LMPI_OK : LMPI_ERR_PORT;
}

static void on_ctrl(uint64_t key, int rank, const lmpi_pkt_hdr *hdr, const void *payload, size_t len)
{
    (void)key, (void)rank, (void)hdr;
    ctrl_msg m;
    if (len != sizeof(m))
        return;
    memcpy(&m, payload, sizeof(m));
    m.kvsname[sizeof(m.kvsname) - 1] = '\0';
    if (m.kind == CTRL_CONNECT) {
        if (port_open(m.port)) {
            push(&dpm.requests, &m);
        } else {
            ctrl_msg r = {.kind = CTRL_REJECT, .port = m.port, .token = m.token};
            send_ctrl(m.kvsname, m.rank, UINT32_MAX, &r);
        }
    } else if (m.kind == CTRL_WITHDRAW) {
        if (withdraw(&dpm.requests, &m)) {
            ctrl_msg r = {.kind = CTRL_REJECT, .port = m.port, .token = m.token};
            send_ctrl(m.kvsname, m.rank, UINT32_MAX, &r);
        }
    } else if (m.kind == CTRL_ACCEPT || m.kind == CTRL_REJECT) {
        /* the acceptor's handshake may follow in this very poll: know its
         * group before that */
        if (m.kind == CTRL_ACCEPT)
            lmpi_dpm_group(m.kvsname, m.size);
        push(&dpm.replies, &m);
    }
}

/* The inbox, and where other hosts may take part, the network address in
 * the registry. */
static lmpi_status ensure_inbox(void)
{
    if (!lmpi_bridge_is_open()) {
        lmpi_bridge_set_handlers(resolve_sender, on_ctrl);
        LMPI_TRY(lmpi_shm_bridge_open(lmpi_rt.kvsname, lmpi_rt.world_rank));
    }
    return registry_publish();
}

lmpi_status lmpi_dpm_ensure_inbox(void) { return ensure_inbox(); }

/* ---- ports -------------------------------------------------------------------- */

/* "lmpi-port:<kvsname>:<group size>:<rank>:<tag>@<host>": the owner, its
 * group's size (so that a connecting process can register the group before
 * it sends), the port's tag and the owner's host (so that a process that
 * cannot reach it can say why; host names hold no ':' or '@'). */
static bool parse_port(const char *name, char *kvsname, size_t len, int *gsize, int *rank, uint32_t *tag,
                       char *host, size_t hostlen)
{
    if (!name || strncmp(name, PORT_PREFIX, strlen(PORT_PREFIX)) != 0)
        return false;
    const char *body = name + strlen(PORT_PREFIX), *end = strrchr(body, '@');
    if (!end || strchr(end, ':') || !end[1] || strlen(end + 1) >= hostlen)
        return false;
    snprintf(host, hostlen, "%s", end + 1);
    unsigned long v[3];
    for (int i = 2; i >= 0; i--) {
        const char *c = end - 1;
        while (c > body && *c != ':')
            c--;
        if (*c != ':' || c + 1 == end)
            return false;
        char *e;
        v[i] = strtoul(c + 1, &e, 10);
        if (e != end || v[i] > INT_MAX)
            return false;
        end = c;
    }
    if (end == body || (size_t)(end - body) >= len || v[0] < 1 || v[1] >= v[0])
        return false;
    memcpy(kvsname, body, (size_t)(end - body));
    kvsname[end - body] = '\0';
    *gsize = (int)v[0];
    *rank = (int)v[1];
    *tag = (uint32_t)v[2];
    return true;
}

static lmpi_status open_port(char *name)
{
#if LMPI_HAVE_OFI
    /* A job started without LMPI_DPM_NET under a launcher whose names other
     * jobs share (Hydra's -nameserver): they may connect from other hosts,
     * as they would to MPICH's ports, so this process opens the network and
     * publishes its address now; its accepts bring the other members in
     * (establish_one).  LMPI_DPM_NET=0 says no. */
    if (!dpm.net && !getenv("LMPI_DPM_NET") && lmpi_pmi_names_shared())
        dpm.net = dpm.net_late = true;
#endif
    lmpi_status st = ensure_inbox();
    if (st != LMPI_OK)
        return st;
    port *p = lmpi_malloc(sizeof(*p), LMPI_MEM_OTHER);
    if (!p)
        return LMPI_ERR_NO_MEM;
    p->tag = ++dpm.next_port;
    p->next = dpm.ports;
    dpm.ports = p;
    snprintf(name, MPI_MAX_PORT_NAME, PORT_PREFIX "%s:%d:%d:%u@%s", lmpi_rt.kvsname, lmpi_rt.world_size,
             lmpi_rt.world_rank, p->tag, dpm.host);
    return LMPI_OK;
}

/* Must the members of comm open the network for this accept or connect?
 * Asked at the root: a port on another host while this job started
 * without the network, or a job that turned it on since (some members may
 * still lack it; registry_publish does nothing where it is on). */
static bool members_need_net(bool accepting, const char *name)
{
#if LMPI_HAVE_OFI
    if (dpm.net && !dpm.net_late)
        return false;
    if (accepting)
        return dpm.net_late;
    char kvs[256], host[256];
    int rank, gsize;
    uint32_t tag;
    return parse_port(name, kvs, sizeof(kvs), &gsize, &rank, &tag, host, sizeof(host)) && strcmp(host, dpm.host) != 0;
#else
    (void)accepting, (void)name;
    return false;
#endif
}

/* A port of this process that is open: its tag. */
static lmpi_status my_port(const char *name, const char *fn, uint32_t *tag)
{
    char kvs[256], host[256];
    int rank, gsize;
    if (!parse_port(name, kvs, sizeof(kvs), &gsize, &rank, tag, host, sizeof(host))) {
        lmpi_err_detail("%s: '%s' is not a port name of MPI_Open_port", fn, name ? name : "(null)");
        return LMPI_ERR_PORT;
    }
    if (strcmp(kvs, lmpi_rt.kvsname) || rank != lmpi_rt.world_rank || !port_open(*tag)) {
        lmpi_err_detail("%s: port %s is not open in this process", fn, name);
        return LMPI_ERR_PORT;
    }
    return LMPI_OK;
}

static void close_port(uint32_t tag)
{
    for (port **p = &dpm.ports; *p; p = &(*p)->next)
        if ((*p)->tag == tag) {
            port *gone = *p;
            *p = gone->next;
            lmpi_free(gone);
            break;
        }
    ctrl_msg m;
    while (take(&dpm.requests, true, tag, &m)) {
        ctrl_msg r = {.kind = CTRL_REJECT, .port = tag, .token = m.token};
        send_ctrl(m.kvsname, m.rank, UINT32_MAX, &r);
    }
}

lmpi_status lmpi_impl_Open_port(MPI_Info info, char *port_name)
{
    lmpi_info *i;
    lmpi_status st = lmpi_info_arg(info, &i);
    if (st != LMPI_OK)
        return st;
    if (!port_name) {
        lmpi_err_detail("port_name is NULL");
        return LMPI_ERR_ARG;
    }
    return open_port(port_name);
}

lmpi_status lmpi_impl_Close_port(const char *port_name)
{
    uint32_t tag;
    lmpi_status st = my_port(port_name, "MPI_Close_port", &tag);
    if (st == LMPI_OK)
        close_port(tag);
    return st;
}

/* ---- connect / accept ------------------------------------------------------------- */

static void idle(void)
{
    static _Thread_local unsigned idle_polls;
    if (lmpi_progress_poll() > 0)
        idle_polls = 0;
    else
        /* other threads may use MPI meanwhile; the waits here also look
         * at the clock (timeouts, a peer's end) every 0.1 s */
        lmpi_progress_idle_timed(&idle_polls, 20000000u);
}

static bool process_gone(const char *kvsname, int rank)
{
    /* on another host: there while its address is published (until its
     * MPI_Finalize; a killed process's job is stopped by the launcher) */
    unsigned char addr[256];
    size_t len = sizeof(addr);
    if (registry_lookup_remote(kvsname, rank, addr, &len))
        return false;
    /* the inbox holds the owner's pid */
    int idx = lmpi_bridge_attach(kvsname, rank);
    if (idx < 0)
        return true;
    pid_t pid = lmpi_bridge_pid(idx);
    lmpi_bridge_detach(idx);
    return lmpi_bridge_pid_gone(pid);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The tag of the roots' handshake: unique among the handshakes in flight
 * in both processes (threads may accept or connect at once, and every
 * two-process communicator has ranks 0 and 1 on the same context). */
static int handshake_tag(const ctrl_msg *m)
{
    return 0x20000000 | (int)((m->serial & 0x3fffu) << 14) | (int)(m->token & 0x3fffu);
}

/* The root's side of step 1.  On success *peer is the two-process map
 * (acceptor first) and *tag the handshake's tag.  wait_s > 0: give up
 * after that long without a connect. */
static lmpi_status root_accept(const char *port_name, double wait_s, lmpi_rankmap *peer, int *tag_out)
{
    double give_up = wait_s > 0 ? now_s() + wait_s : 0;
    uint32_t tag;
    lmpi_status st = my_port(port_name, "MPI_Comm_accept", &tag);
    if (st != LMPI_OK)
        return st;
    ctrl_msg m;
    /* packets already in the inbox first: a request withdrawn by a connect
     * that timed out must not be accepted (its connector is gone) */
    for (int i = 0; i < 64 && lmpi_progress_poll() > 0; i++)
        ;
    while (!take(&dpm.requests, true, tag, &m)) {
        idle();
        if (give_up > 0 && now_s() > give_up) {
            lmpi_err_detail("MPI_Comm_accept: nobody connected within %.0f s", wait_s);
            return LMPI_ERR_PORT;
        }
    }
    uint32_t pg = lmpi_dpm_group(m.kvsname, m.size);
    lmpi_gpid g[2] = {{0, (uint32_t)lmpi_rt.world_rank}, {pg, (uint32_t)m.rank}};
    if (pg == UINT32_MAX || !lmpi_rankmap_from_gpids(peer, g, 2))
        return LMPI_ERR_NO_MEM;
    ctrl_msg r = {.kind = CTRL_ACCEPT, .port = tag, .token = m.token, .serial = ++dpm.next_serial};
    *tag_out = handshake_tag(&r);
    st = send_ctrl(m.kvsname, m.rank, pg, &r);
    if (st != LMPI_OK) {
        lmpi_rankmap_release(peer);
        lmpi_err_detail("MPI_Comm_accept: the connecting process (rank %d of %s) is gone", m.rank, m.kvsname);
    }
    return st;
}

static lmpi_status root_connect(const char *port_name, double timeout_s, lmpi_rankmap *peer, int *tag_out)
{
    char kvs[256], host[256];
    int rank, gsize;
    uint32_t tag;
    if (!parse_port(port_name, kvs, sizeof(kvs), &gsize, &rank, &tag, host, sizeof(host))) {
        lmpi_err_detail("MPI_Comm_connect: '%s' is not a port name of MPI_Open_port", port_name ? port_name : "(null)");
        return LMPI_ERR_PORT;
    }
    ctrl_msg m = {.kind = CTRL_CONNECT, .port = tag, .token = ++dpm.next_token};
    uint32_t pg = lmpi_dpm_group(kvs, gsize);
    if (send_ctrl(kvs, rank, pg, &m) != LMPI_OK) {
        group_hold(pg, 0); /* registered for nothing: let it go again */
        if (strcmp(host, dpm.host))
            lmpi_err_detail("MPI_Comm_connect: port %s is on host %s, and its process published no network address "
                            "%s: a port is reached from other hosts when its job shares the name service of the "
                            "connecting job (mpiexec -nameserver, Hydra's -nameserver) and was not started with "
                            "LMPI_DPM_NET=0",
                            port_name, host, dpm.net ? "in this job's name service" : "(this LeanMPI has no network)");
        else
            lmpi_err_detail("MPI_Comm_connect: port %s does not exist (no process %d in %s)", port_name, rank, kvs);
        return LMPI_ERR_PORT;
    }
    ctrl_msg r = {.token = 0}; /* tokens start at 1 */
    double start = now_s(), next_check = start + 0.1;
    bool withdrawn = false;
    while (!take(&dpm.replies, false, m.token, &r)) {
        idle();
        double t = now_s();
        if (t > next_check) {
            if (process_gone(kvs, rank)) {
                group_hold(pg, 0);
                lmpi_err_detail("MPI_Comm_connect: the process of port %s ended before accepting", port_name);
                return LMPI_ERR_PORT;
            }
            next_check = t + 0.1;
        }
        if (timeout_s > 0 && !withdrawn && t - start > timeout_s) {
            /* take the request back; the owner's answer (REJECT, or an
             * ACCEPT it sent before it saw this) ends the wait, and an owner
             * that is not in MPI at all is not waited for */
            ctrl_msg w = {.kind = CTRL_WITHDRAW, .port = tag, .token = m.token};
            withdrawn = true;
            if (send_ctrl(kvs, rank, pg, &w) != LMPI_OK)
                break;
            start = t; /* the owner polls within this grace, or never took the request */
            timeout_s = timeout_s < 1.0 ? timeout_s : 1.0;
        } else if (withdrawn && t - start > timeout_s) {
            break;
        }
    }
    if (withdrawn && (r.token != m.token || r.kind == CTRL_REJECT)) {
        group_hold(pg, 0);
        lmpi_err_detail("MPI_Comm_connect: nobody accepted on port %s within the timeout (info key \"timeout\" or "
                        "LMPI_DPM_CONNECT_TIMEOUT)", port_name);
        return LMPI_ERR_PORT;
    }
    if (r.kind == CTRL_REJECT) {
        group_hold(pg, 0);
        lmpi_err_detail("MPI_Comm_connect: port %s is closed", port_name);
        return LMPI_ERR_PORT;
    }
    lmpi_gpid g[2] = {{pg, (uint32_t)r.rank}, {0, (uint32_t)lmpi_rt.world_rank}};
    if (pg == UINT32_MAX || !lmpi_rankmap_from_gpids(peer, g, 2))
        return LMPI_ERR_NO_MEM;
    *tag_out = handshake_tag(&r);
    return LMPI_OK;
}

/* The roots' two-process communicator of step 1 (acceptor rank 0), on
 * the stack: the leaders' exchange runs over it. */
static void roots_comm(lmpi_comm *peer, const lmpi_rankmap *map, bool accepting)
{
    memset(peer, 0, sizeof(*peer));
    peer->magic = LMPI_MAGIC_COMM;
    peer->context_id = LMPI_CTX_DPM_PEER;
    if (map)
        peer->map = *map;
    peer->rank = accepting ? 0 : 1;
    peer->size = peer->peer_size = 2;
}

/* Steps 2 and 3 for every member; the root's step 1 result arrives by
 * broadcast, so a failure there fails the call everywhere. */
static lmpi_status establish_one(bool accepting, const char *port_name, double timeout_s, int root, lmpi_comm *comm,
                                 MPI_Comm *newcomm, bool *met);

/* Threads may connect and accept at once: the handshake's context id is
 * checked by every member before it is taken (lmpi_ctx_confirm), so two
 * of them never take the same one.  (They were taken one at a time here
 * before, which deadlocked two processes whose threads took them in
 * opposite orders: MPICH's threads/spawn/th_taskmanager.) */
static lmpi_status establish(bool accepting, const char *port_name, double timeout_s, int root, lmpi_comm *comm,
                             MPI_Comm *newcomm, bool *met)
{
    bool met_here = false;
    return establish_one(accepting, port_name, timeout_s, root, comm, newcomm, met ? met : &met_here);
}

/* *met: at the root, whether the other root was reached (and so was told
 * the outcome, success or a refusal) */
static lmpi_status establish_one(bool accepting, const char *port_name, double timeout_s, int root, lmpi_comm *comm,
                                 MPI_Comm *newcomm, bool *met)
{
    *met = false;
    if (comm->is_inter) {
        lmpi_err_detail("%s is an intercommunicator; accept and connect need an intracommunicator",
                        lmpi_comm_display_name(comm));
        return LMPI_ERR_COMM;
    }
    lmpi_status st = ensure_inbox();
    lmpi_rankmap peer_map;
    bool have_peer = false;
    /* every member has an inbox before the root lets the other side in;
     * the same reduction carries the root's finding that the members need
     * the network (value 1: members_need_net) */
    uint32_t ready = st == LMPI_OK ? (comm->rank == root && members_need_net(accepting, port_name)) : 2;
    lmpi_status st2 = lmpi_icoll_allreduce_max_u32(comm, &ready);
    if (st2 != LMPI_OK)
        return st2;
    if (ready == 1) {
        /* a job started without LMPI_DPM_NET (Hydra's) reaching a port on
         * another host, or accepting on a port that other hosts may reach:
         * every member opens the network and publishes its address now, as
         * if started with it */
        dpm.net = dpm.net_late = true;
        st = registry_publish();
        ready = st == LMPI_OK ? 0 : 2;
        st2 = lmpi_icoll_allreduce_max_u32(comm, &ready);
        if (st2 != LMPI_OK)
            return st2;
    }
    if (ready >= 2)
        return st != LMPI_OK ? st : LMPI_ERR_OTHER;
    int32_t result = LMPI_OK;
    int tag = 0;
    if (comm->rank == root) {
        result = accepting ? root_accept(port_name, 0, &peer_map, &tag)
                           : root_connect(port_name, timeout_s, &peer_map, &tag);
        have_peer = *met = result == LMPI_OK;
    }
    st = lmpi_icoll_bcast(comm, &result, sizeof(result), root);
    if (st == LMPI_OK && result != LMPI_OK) {
        if (comm->rank != root)
            lmpi_err_detail("%s failed at the root (rank %d)", accepting ? "MPI_Comm_accept" : "MPI_Comm_connect",
                            root);
        st = (lmpi_status)result;
    }
    lmpi_comm peer;
    roots_comm(&peer, have_peer ? &peer_map : NULL, accepting);
    if (st == LMPI_OK)
        st = lmpi_comm_inter_handshake(comm, root, &peer, accepting ? 1 : 0, tag, true, newcomm);
    else if (have_peer)
        /* the other root was told to come (a member here failed meanwhile):
         * it must not wait for us */
        lmpi_comm_inter_refuse(&peer, accepting ? 1 : 0, tag, st);
    if (have_peer)
        lmpi_rankmap_release(&peer_map);
    if (st == LMPI_OK) {
        lmpi_comm *c = lmpi_comm_from_handle(*newcomm);
        for (int r = 0; r < c->peer_size; r++) {
            group *g = group_of(lmpi_rankmap_gpid(&c->map, r).pgid);
            if (g && !g->spawned)
                g->met = true;
        }
        st = lmpi_impl_Barrier(c);
    }
    return st;
}

void lmpi_dpm_watch(void (*gone)(uint64_t key, int rank))
{
    /* a few processes per call, taking up where the last call stopped */
    static uint32_t next_group = 1, next_rank;
    enum { PER_CALL = 64 };
    int looked = 0;
    for (int steps = 0; steps < dpm.n && looked < PER_CALL; steps++) {
        if (next_group >= (uint32_t)dpm.n) {
            next_group = 1;
            next_rank = 0;
        }
        group *g = group_of(next_group);
        bool watched = g && g->met && !g->spawned;
        for (; watched && next_rank < (uint32_t)g->size && looked < PER_CALL; next_rank++, looked++)
            if (lmpi_bridge_failed(lmpi_dpm_addr((lmpi_gpid){next_group, next_rank})))
                gone(g->key, (int)next_rank);
        if (!watched || next_rank >= (uint32_t)g->size) { /* this group is done: the next one */
            next_group++;
            next_rank = 0;
        }
    }
}

typedef struct {
    int pgid;
    uint64_t key;
    void (*gone)(uint64_t key, int rank);
} remote_seen;

static void remote_failed(int rank, void *arg)
{
    remote_seen *s = arg;
    if (lmpi_bridge_report(lmpi_dpm_addr((lmpi_gpid){(uint32_t)s->pgid, rank})))
        s->gone(s->key, rank);
}

/* Groups met through a port whose processes may be on other hosts (the
 * network is on): their mpiexec, under --with-ft with a name server, lists
 * their failed ranks there under "lmpi-ft:KVSNAME" ("2,5,7"; mpiexec.c's
 * post_failure).  One lookup per group. */
void lmpi_dpm_watch_remote(void (*gone)(uint64_t key, int rank))
{
    if (!dpm.net)
        return;
    for (int i = 1; i < dpm.n; i++) {
        group *g = dpm.g[i];
        if (!g || !g->met || g->spawned)
            continue;
        char service[320], list[2048], err[128];
        snprintf(service, sizeof(service), "lmpi-ft:%s", g->name);
        if (lmpi_pmi_lookup(service, list, sizeof(list), err, sizeof(err)) == 0) {
            remote_seen seen = {i, g->key, gone};
            lmpi_ft_each_listed(list, g->size, remote_failed, &seen);
        }
    }
}

bool lmpi_dpm_watching(void)
{
    for (int i = 1; i < dpm.n; i++)
        if (dpm.g[i] && dpm.g[i]->met && !dpm.g[i]->spawned)
            return true;
    return false;
}

/* The info key "timeout" (seconds, as MPICH's) bounds a connect's wait for
 * an accept; LMPI_DPM_CONNECT_TIMEOUT otherwise.  Used at the root only. */
static lmpi_status establish_info(bool accepting, const char *port_name, MPI_Info info, int root, lmpi_comm *comm,
                                  MPI_Comm *newcomm)
{
    lmpi_info *i;
    lmpi_status st = lmpi_info_arg(info, &i);
    if (st != LMPI_OK)
        return st;
    lmpi_config_ensure_loaded();
    double timeout_s = lmpi_config.dpm_connect_timeout;
    const char *v = i ? lmpi_info_value(i, "timeout") : NULL;
    if (v) {
        char *end;
        double t = strtod(v, &end);
        if (end != v && *end == '\0' && t >= 0)
            timeout_s = t;
    }
    return establish(accepting, port_name, timeout_s, root, comm, newcomm, NULL);
}

lmpi_status lmpi_impl_Comm_accept(const char *port_name, MPI_Info info, int root, lmpi_comm *comm, MPI_Comm *newcomm)
{
    return establish_info(true, port_name, info, root, comm, newcomm);
}

lmpi_status lmpi_impl_Comm_connect(const char *port_name, MPI_Info info, int root, lmpi_comm *comm, MPI_Comm *newcomm)
{
    return establish_info(false, port_name, info, root, comm, newcomm);
}

/* ---- join ----------------------------------------------------------------------- */

static int fd_write(int fd, const void *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p = (const char *)p + w;
        n -= (size_t)w;
    }
    return 0;
}

static int fd_read(int fd, void *p, size_t n)
{
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p = (char *)p + r;
        n -= (size_t)r;
    }
    return 0;
}

/* Both sides open a port and swap names over the socket; the smaller name
 * accepts, the other connects. */
lmpi_status lmpi_impl_Comm_join(int fd, MPI_Comm *intercomm)
{
    char mine[MPI_MAX_PORT_NAME], theirs[MPI_MAX_PORT_NAME];
    lmpi_status st = open_port(mine);
    if (st != LMPI_OK)
        return st;
    uint32_t len = (uint32_t)strlen(mine), tlen = 0;
    if (fd_write(fd, &len, sizeof(len)) || fd_write(fd, mine, len) || fd_read(fd, &tlen, sizeof(tlen)) ||
        tlen >= sizeof(theirs) || fd_read(fd, theirs, tlen)) {
        lmpi_impl_Close_port(mine);
        lmpi_err_detail("MPI_Comm_join: cannot exchange port names over socket %d: %s", fd,
                        errno ? strerror(errno) : "closed");
        return LMPI_ERR_ARG;
    }
    theirs[tlen] = '\0';
    bool accept = strcmp(mine, theirs) < 0;
    st = establish(accept, accept ? mine : theirs, 0, 0, lmpi_comm_self, intercomm, NULL);
    lmpi_impl_Close_port(mine);
    return st;
}

/* ---- spawn ------------------------------------------------------------------------- */

static const char *lmpi_info_value_or_null(MPI_Info h, const char *key)
{
    lmpi_info *i;
    return lmpi_info_arg(h, &i) == LMPI_OK && i ? lmpi_info_value(i, key) : NULL;
}

/* The info keys a launcher understands travel with the request. */
static lmpi_status app_info(MPI_Info h, lmpi_pmi_app *app, const char ***keys, const char ***vals)
{
    lmpi_info *i;
    lmpi_status st = lmpi_info_arg(h, &i);
    if (st != LMPI_OK)
        return st;
    static const char *known[] = {"host", "wdir", "path", "soft", "file", "arch", "hosts"};
    int nk = (int)(sizeof(known) / sizeof(known[0]));
    *keys = lmpi_malloc(sizeof(char *) * (size_t)nk, LMPI_MEM_OTHER);
    *vals = lmpi_malloc(sizeof(char *) * (size_t)nk, LMPI_MEM_OTHER);
    if (!*keys || !*vals)
        return LMPI_ERR_NO_MEM;
    app->ninfo = 0;
    for (int k = 0; i && k < nk; k++) {
        const char *v = lmpi_info_value(i, known[k]);
        if (!v)
            continue;
        if (strpbrk(v, "\n")) {
            lmpi_err_detail("info key %s: the value may not contain a newline", known[k]);
            return LMPI_ERR_INFO_VALUE;
        }
        (*keys)[app->ninfo] = known[k];
        (*vals)[app->ninfo++] = v;
    }
    app->info_keys = *keys;
    app->info_values = *vals;
    return LMPI_OK;
}

/* The root asks the launcher; returns how many processes started. */
static lmpi_status root_spawn(int count, char *cmds[], char **argvs[], const int maxprocs[], const MPI_Info infos[],
                              const char *port_name, int *started)
{
    lmpi_pmi_app *apps = lmpi_calloc((size_t)count, sizeof(*apps), LMPI_MEM_OTHER);
    const char ***keys = lmpi_calloc((size_t)count, sizeof(*keys), LMPI_MEM_OTHER);
    const char ***vals = lmpi_calloc((size_t)count, sizeof(*vals), LMPI_MEM_OTHER);
    lmpi_status st = apps && keys && vals ? LMPI_OK : LMPI_ERR_NO_MEM;
    int total = 0;
    for (int a = 0; a < count && st == LMPI_OK; a++) {
        if (!cmds || !cmds[a] || !*cmds[a] || strpbrk(cmds[a], " \n")) {
            lmpi_err_detail("command %d is %s", a, !cmds || !cmds[a] ? "NULL" : "empty or has a space or newline");
            st = LMPI_ERR_SPAWN;
            break;
        }
        if (maxprocs[a] <= 0) {
            lmpi_err_detail("maxprocs of command %d (%s) is %d; it must be positive", a, cmds[a], maxprocs[a]);
            st = LMPI_ERR_SPAWN;
            break;
        }
        char why[512];
        if (!lmpi_exec_check(cmds[a], lmpi_info_value_or_null(infos ? infos[a] : MPI_INFO_NULL, "wdir"),
                             lmpi_info_value_or_null(infos ? infos[a] : MPI_INFO_NULL, "path"), why, sizeof(why))) {
            lmpi_err_detail("%s", why);
            st = LMPI_ERR_SPAWN;
            break;
        }
        apps[a].command = cmds[a];
        apps[a].argv = argvs ? argvs[a] : NULL;
        apps[a].maxprocs = maxprocs[a];
        total += maxprocs[a];
        st = app_info(infos ? infos[a] : MPI_INFO_NULL, &apps[a], &keys[a], &vals[a]);
    }
    if (st == LMPI_OK) {
        char err[512];
        /* children learn that their parents may be on other hosts from
         * their key-value space (Hydra places them on any host of its own) */
        /* always put, 0 or 1: under PMI-2 Hydra holds a get of a key that
         * no one put until every child has fenced, which some never do */
        const char *k[2] = {"PARENT_ROOT_PORT_NAME", "LMPI_DPM_NET"}, *v[2] = {port_name, dpm.net ? "1" : "0"};
        int n = 0;
        if (lmpi_pmi_spawn(count, apps, 2, k, v, &n, err, sizeof(err)) != 0) {
            lmpi_err_detail("%s", err);
            st = LMPI_ERR_SPAWN;
        } else {
            *started = n < 0 ? total : n;
        }
    }
    for (int a = 0; a < count && keys && vals; a++) {
        lmpi_free(keys[a]);
        lmpi_free(vals[a]);
    }
    lmpi_free(keys);
    lmpi_free(vals);
    lmpi_free(apps);
    return st;
}

/* The children started, but the parents cannot take them (a member failed
 * meanwhile, --with-ft ulfm): the root alone accepts their connect and
 * refuses the handshake, so their MPI_Init learns that the spawn failed
 * (and they end) instead of waiting for parents who will not come.
 * Children that never connect are not waited for past 10 s. */
static void turn_away_children(const char *port_name)
{
    lmpi_rankmap peer_map;
    int tag;
    if (root_accept(port_name, 10.0, &peer_map, &tag) != LMPI_OK)
        return;
    lmpi_comm peer;
    roots_comm(&peer, &peer_map, true);
    lmpi_comm_inter_refuse(&peer, 1, tag, LMPI_ERR_PROC_FAILED);
    lmpi_rankmap_release(&peer_map);
}

/* The tests' failure at the worst moment: LMPI_FT_INJECT=spawn_late makes
 * the root, once its children started, wait until a member has failed. */
static void inject_spawn_late(void)
{
    const char *e = getenv("LMPI_FT_INJECT");
    if (lmpi_ft_enabled && e && !strcmp(e, "spawn_late"))
        while (lmpi_ft_nfailed() == 0)
            idle();
}

static lmpi_status spawn(int count, char *cmds[], char **argvs[], const int maxprocs[], const MPI_Info infos[],
                         int root, lmpi_comm *comm, MPI_Comm *intercomm, int errcodes[])
{
    if (comm->is_inter) {
        lmpi_err_detail("%s is an intercommunicator; spawn needs an intracommunicator", lmpi_comm_display_name(comm));
        return LMPI_ERR_COMM;
    }
    char port_name[MPI_MAX_PORT_NAME] = "";
    int32_t res[3] = {LMPI_OK, 0, 0}; /* status, asked for, started */
    if (comm->rank == root) {
        if (count <= 0 || !maxprocs) {
            lmpi_err_detail("count %d: at least one command is needed", count);
            res[0] = LMPI_ERR_ARG;
        } else if (LMPI_UNLIKELY(lmpi_ft_active) && (res[0] = lmpi_ft_comm_broken(comm)) != LMPI_OK) {
            /* a member failed (--with-ft ulfm): the children could never be
             * accepted by all; none is started */
            lmpi_err_detail("a member of %s failed; no process was spawned", lmpi_comm_display_name(comm));
        } else {
            for (int a = 0; a < count; a++)
                res[1] += maxprocs[a] > 0 ? maxprocs[a] : 0;
            res[0] = open_port(port_name);
            if (res[0] == LMPI_OK)
                res[0] = root_spawn(count, cmds, argvs, maxprocs, infos, port_name, &res[2]);
            if (res[0] == LMPI_OK && res[2] <= 0) {
                lmpi_err_detail("the launcher started no process");
                res[0] = LMPI_ERR_SPAWN;
            }
            if (res[0] == LMPI_OK)
                inject_spawn_late();
        }
    }
    lmpi_status st = lmpi_icoll_bcast(comm, res, sizeof(res), root);
    if (st != LMPI_OK) {
        if (comm->rank == root && res[0] == LMPI_OK)
            turn_away_children(port_name);
        if (comm->rank == root && port_name[0])
            lmpi_impl_Close_port(port_name);
        return st;
    }
    /* one code per process the root asked for, at every member (as MPICH:
     * the array is an output everywhere) */
    if (errcodes)
        for (int i = 0; i < res[1]; i++)
            errcodes[i] = res[0] == LMPI_OK && i < res[2] ? MPI_SUCCESS : MPI_ERR_SPAWN;
    if (res[0] == LMPI_OK) {
        bool met = false;
        st = establish(true, port_name, 0, root, comm, intercomm, &met);
        if (st != LMPI_OK && comm->rank == root && !met)
            turn_away_children(port_name);
        group *g = st == LMPI_OK ? group_of(lmpi_comm_from_handle(*intercomm)->map.pgid) : NULL;
        if (g)
            g->spawned = true;
    } else {
        if (comm->rank != root)
            lmpi_err_detail("the spawn failed at the root (rank %d)", root);
        st = (lmpi_status)res[0];
    }
    if (comm->rank == root && port_name[0])
        lmpi_impl_Close_port(port_name);
    return st;
}

lmpi_status lmpi_impl_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root,
                                 lmpi_comm *comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    char *cmds[1] = {(char *)command};
    char **argvs[1] = {argv};
    return spawn(1, cmds, argvs, &maxprocs, &info, root, comm, intercomm, array_of_errcodes);
}

lmpi_status lmpi_impl_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                                          const int array_of_maxprocs[], const MPI_Info array_of_info[], int root,
                                          lmpi_comm *comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    return spawn(count, array_of_commands, array_of_argv, array_of_maxprocs, array_of_info, root, comm, intercomm,
                 array_of_errcodes);
}

lmpi_status lmpi_impl_Comm_get_parent(MPI_Comm *parent)
{
    *parent = dpm.parent;
    return LMPI_OK;
}

void lmpi_dpm_comm_gone(lmpi_comm *c)
{
    if (dpm.parent != MPI_COMM_NULL && c->handle == dpm.parent) {
        dpm.parent = MPI_COMM_NULL;
        if (dpm.have_parent_map)
            lmpi_rankmap_release(&dpm.parent_map);
        dpm.have_parent_map = false;
    }
}

/* ---- process sets ------------------------------------------------------------------ */

#define PSET_PARENT "lmpi://parent"
#define PSET_SPAWNED "lmpi://spawned/"

int lmpi_dpm_pset_count(void)
{
    int n = dpm.have_parent_map;
    for (int i = 1; i < dpm.n; i++)
        n += dpm.g[i] && dpm.g[i]->spawned;
    return n;
}

int lmpi_dpm_pset_name(int n, char *out, size_t len)
{
    if (dpm.have_parent_map && n-- == 0)
        return snprintf(out, len, "%s", PSET_PARENT) + 1;
    for (int i = 1; i < dpm.n; i++)
        if (dpm.g[i] && dpm.g[i]->spawned && n-- == 0)
            return snprintf(out, len, PSET_SPAWNED "%s", dpm.g[i]->name) + 1;
    return 0;
}

bool lmpi_dpm_pset_map(const char *name, lmpi_rankmap *out)
{
    if (!strcasecmp(name, PSET_PARENT)) {
        if (!dpm.have_parent_map)
            return false;
        lmpi_rankmap_copy(out, &dpm.parent_map);
        return true;
    }
    if (strncasecmp(name, PSET_SPAWNED, strlen(PSET_SPAWNED)) != 0)
        return false;
    for (int i = 1; i < dpm.n; i++)
        if (dpm.g[i] && dpm.g[i]->spawned && !strcmp(dpm.g[i]->name, name + strlen(PSET_SPAWNED))) {
            lmpi_rankmap_direct(out, dpm.g[i]->size, (uint32_t)i);
            return true;
        }
    return false;
}

/* ---- the name service ------------------------------------------------------------ */

lmpi_status lmpi_impl_Publish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    lmpi_info *i;
    lmpi_status st = lmpi_info_arg(info, &i);
    if (st != LMPI_OK)
        return st;
    char err[512];
    if (lmpi_pmi_publish(service_name, port_name, err, sizeof(err)) != 0) {
        lmpi_err_detail("service '%s': %s", service_name ? service_name : "(null)", err);
        return LMPI_ERR_SERVICE;
    }
    return LMPI_OK;
}

lmpi_status lmpi_impl_Lookup_name(const char *service_name, MPI_Info info, char *port_name)
{
    lmpi_info *i;
    lmpi_status st = lmpi_info_arg(info, &i);
    if (st != LMPI_OK)
        return st;
    char err[512];
    if (lmpi_pmi_lookup(service_name, port_name, MPI_MAX_PORT_NAME, err, sizeof(err)) != 0) {
        lmpi_err_detail("service '%s': %s", service_name ? service_name : "(null)", err);
        return LMPI_ERR_NAME;
    }
    return LMPI_OK;
}

lmpi_status lmpi_impl_Unpublish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    (void)port_name;
    lmpi_info *i;
    lmpi_status st = lmpi_info_arg(info, &i);
    if (st != LMPI_OK)
        return st;
    char err[512];
    if (lmpi_pmi_unpublish(service_name, err, sizeof(err)) != 0) {
        lmpi_err_detail("service '%s': %s", service_name ? service_name : "(null)", err);
        return LMPI_ERR_SERVICE;
    }
    return LMPI_OK;
}

void lmpi_dpm_report(FILE *out)
{
    if (!lmpi_bridge_is_open() && dpm.live == 0)
        return;
    long long entries = 0, attached = 0;
    for (int i = 1; i < dpm.n; i++)
        if (dpm.g[i]) {
            entries += dpm.g[i]->size;
            for (int r = 0; r < dpm.g[i]->size; r++)
                attached += dpm.g[i]->av.entries[r] != UNATTACHED;
        }
    fprintf(out,
            "  other process groups (spawned, connected): %d, their address vectors %lld entries of 8 bytes "
            "(%lld attached); bridge inbox %zu bytes, %d peers mapped\n",
            dpm.live, entries, attached, lmpi_bridge_is_open() ? lmpi_bridge_bytes() : (size_t)0, lmpi_bridge_peers());
}

/* ---- runtime ------------------------------------------------------------------------ */

bool lmpi_dpm_parent_net(void)
{
    static int known = -1; /* asked at start-up and by lmpi_dpm_init: one PMI round trip */
    char flag[8];
    if (known < 0)
        known = getenv("PMI_SPAWNED") && lmpi_pmi_get("LMPI_DPM_NET", flag, sizeof(flag)) == 0 && !strcmp(flag, "1");
    return known;
}

lmpi_status lmpi_dpm_init(void)
{
    lmpi_rankmap_set_group_hook(group_hold);
    dpm.my_key = lmpi_bridge_group_key(lmpi_rt.kvsname);
    update_size_hint();
#if LMPI_HAVE_OFI
    dpm.net = lmpi_tr_net.hosts || lmpi_config.dpm_net || lmpi_dpm_parent_net();
#endif
    if (gethostname(dpm.host, sizeof(dpm.host) - 1) != 0)
        snprintf(dpm.host, sizeof(dpm.host), "?");
    if (!getenv("PMI_SPAWNED"))
        return LMPI_OK;
    char port_name[MPI_MAX_PORT_NAME];
    if (lmpi_pmi_get("PARENT_ROOT_PORT_NAME", port_name, sizeof(port_name)) != 0)
        return LMPI_OK; /* spawned by something that is not LeanMPI */
    MPI_Comm parent;
    lmpi_status st = establish(false, port_name, 0, 0, lmpi_comm_world, &parent, NULL);
    if (st == LMPI_ERR_PROC_FAILED) {
        /* the parents' MPI_Comm_spawn failed after we were started (a
         * parent failed, --with-ft ulfm; or one of us did): there is
         * nothing to join, and an MPI_Init error would end the whole job */
        fprintf(stderr, "LeanMPI: spawned process %d of %s: the parents' MPI_Comm_spawn failed (a process failed "
                        "during it); this process ends\n", lmpi_rt.world_rank, lmpi_rt.kvsname);
        _exit(1);
    }
    if (st == LMPI_OK) {
        dpm.parent = parent;
        lmpi_comm *pc = lmpi_comm_from_handle(parent);
        /* the standard names the parent intercommunicator (section "Naming Objects") */
        st = lmpi_set_object_name(&pc->name, "MPI_COMM_PARENT", "comm_name", LMPI_MEM_COMM);
        lmpi_rankmap_copy(&dpm.parent_map, &pc->map);
        dpm.have_parent_map = true;
    }
    return st;
}

void lmpi_dpm_finalize(void)
{
    ctrl_cache_clear();
    if (dpm.published) {
        char service[320], err[256];
        registry_service(service, sizeof(service), lmpi_rt.kvsname, lmpi_rt.world_rank);
        lmpi_pmi_unpublish(service, err, sizeof(err));
    }
    if (dpm.have_parent_map)
        lmpi_rankmap_release(&dpm.parent_map);
    while (dpm.ports)
        close_port(dpm.ports->tag);
    ctrl_msg m;
    while (dpm.replies)
        take(&dpm.replies, false, dpm.replies->m.token, &m);
    for (int i = 1; i < dpm.n; i++)
        if (dpm.g[i]) {
            dpm.g[i]->refs = 0;
            group_hold((uint32_t)i, 0);
        }
    lmpi_free(dpm.g);
    memset(&dpm, 0, sizeof(dpm));
    dpm.parent = MPI_COMM_NULL;
}
